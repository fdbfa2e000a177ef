"""What screens and widgets tell the debugger: messages that bubble up to `ToolReplayApp`.

The app changes the session's state (pending patches, runs) only in answer to
these; screens never call its methods to change it. The other way, screens
watch the app's reactive attributes (`trace`, `load_error`, `runner`, `notice`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

from toolreplay import JsonValue, Operation, Patch

if TYPE_CHECKING:
    from toolreplay_tui.model.runs import RunHandle, RunRequest, RunResult

__all__ = [
    "Notice",
    "OutputEditRequested",
    "PatchChangeRequested",
    "PatchEdited",
    "PatchRemovalRequested",
    "PromoteFinished",
    "RunFinished",
    "RunStarted",
]


@dataclass(frozen=True, slots=True)
class Notice:
    """What the app just did, for the status line: a message (or none), and whether it
    is an error. Each change of the session's state sets a new one."""

    text: str | None = None
    error: bool = False


class PatchEdited(Message):
    """The user set the output of `operation` to `value`: make it a pending patch."""

    def __init__(self, operation: Operation, value: JsonValue) -> None:
        super().__init__()
        self.operation = operation
        self.value = value


class PatchChangeRequested(Message):
    """From the patches list: `edit` or `remove` `patch`, or `undo` the last change."""

    def __init__(self, change: str, patch: Patch | None) -> None:
        super().__init__()
        self.change = change
        self.patch = patch


class PatchRemovalRequested(Message):
    """The user asked to drop the pending patch on `operation`."""

    def __init__(self, operation: Operation) -> None:
        super().__init__()
        self.operation = operation


class OutputEditRequested(Message):
    """Edit the output of `operation`: in the built-in editor, or in `$EDITOR` (`external`)."""

    def __init__(self, operation: Operation, *, external: bool = False) -> None:
        super().__init__()
        self.operation = operation
        self.external = external


class RunStarted(Message):
    """A child process started: the app kills it when the user quits."""

    def __init__(self, handle: RunHandle) -> None:
        super().__init__()
        self.handle = handle


class RunFinished(Message):
    """A replay or fork ended."""

    def __init__(self, request: RunRequest, result: RunResult) -> None:
        super().__init__()
        self.request = request
        self.result = result


class PromoteFinished(Message):
    """A promote ended."""

    def __init__(self, result: RunResult) -> None:
        super().__init__()
        self.result = result
