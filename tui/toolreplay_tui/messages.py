"""What screens and widgets tell the debugger: messages that bubble up to `ToolReplayApp`.

The app changes the session's state (pending patches, runs) only in answer to
these; screens never call its methods to change it. The other way, screens
watch the app's reactive attributes (`trace`, `load_error`, `runner`, `notice`).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from toolreplay import JsonValue, Operation, OperationIdentity, Patch
from toolreplay_tui.model.patches import PatchKey
from toolreplay_tui.model.runs import RunHandle, RunRequest, RunResult
from toolreplay_tui.model.trace_file import LargeLine, LargeOutput

__all__ = [
    "LargeValueRequested",
    "LiveRemovalRequested",
    "Notice",
    "OutputEditRequested",
    "PatchChangeRequested",
    "PatchEdited",
    "PatchMade",
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


@dataclass
class PatchEdited(Message):
    """The user set the output of `operation` to `value`: make it a pending patch."""

    operation: Operation
    value: JsonValue


@dataclass
class PatchChangeRequested(Message):
    """From the patches list: `edit` or `remove` the patch under `key`, or `undo` the
    last change."""

    change: str
    key: PatchKey | None


@dataclass
class LiveRemovalRequested(Message):
    """From the patches list: forks no longer send new calls of `effect` live."""

    effect: str


@dataclass
class PatchMade(Message):
    """A view made `patch` for `operation` (an edit of a streamed answer): pend it."""

    operation: Operation
    patch: Patch


@dataclass
class PatchRemovalRequested(Message):
    """The user asked to drop the pending patch on the call `identity`."""

    identity: OperationIdentity


@dataclass
class OutputEditRequested(Message):
    """Edit the output of `operation`: in the built-in editor, or in `$EDITOR` (`external`)."""

    operation: Operation
    external: bool = False


@dataclass
class LargeValueRequested(Message):
    """A value too large to show whole: `save` it to a file, or `edit` it in `$EDITOR`."""

    large: LargeOutput | LargeLine
    action: str


@dataclass
class RunStarted(Message):
    """A child process started: the app kills it when the user quits."""

    handle: RunHandle


@dataclass
class RunFinished(Message):
    """A replay or fork ended."""

    request: RunRequest
    result: RunResult


@dataclass
class PromoteFinished(Message):
    """A promote ended."""

    result: RunResult
