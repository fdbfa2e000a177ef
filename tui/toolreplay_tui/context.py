"""What screens and widgets may use of the running debugger: `session(node)`.

They read the session's state through the `DebugSession` protocol, and say
something to the user with its `tell`; they change the state only by posting
the messages of `toolreplay_tui.messages` (the app hands each to the controller
that owns that part of the state). Textual's own services (a screen pushed, a
call from a worker thread, the console) come from `textual_app(node)`, which
knows nothing of Tool Replay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, cast

from rich.text import Text
from textual.app import App
from textual.dom import DOMNode

from toolreplay import JsonValue, Operation, Patch
from toolreplay_tui.model.patches import PendingPatches
from toolreplay_tui.model.rows import OperationRows
from toolreplay_tui.model.trace_file import TraceFile
from toolreplay_tui.state import BackgroundState

__all__ = ["DebugSession", "session", "textual_app"]


class DebugSession(Protocol):
    """The debugging session as screens and widgets see it (`ToolReplayApp` is one).

    `trace`, `background`, `load_error`, `runner` and `notice` are the app's reactive
    attributes: a screen watches them on `textual_app(node)` to repaint.
    """

    @property
    def trace(self) -> TraceFile | None:
        """The trace, once its header and first screen are read."""
        ...

    @property
    def background(self) -> BackgroundState:
        """How far indexing and the integrity check are."""
        ...

    @property
    def load_error(self) -> str | None:
        """Why the trace cannot be opened, if it cannot."""
        ...

    @property
    def rows(self) -> OperationRows | None:
        """The operation list's rows (filtered or not), once the trace is open."""
        ...

    @property
    def pending(self) -> PendingPatches:
        """The pending patches (read here; changed by messages)."""
        ...

    @property
    def live_effects(self) -> Sequence[str]:
        """Effects whose new calls the next forks send live."""
        ...

    @property
    def effect_width(self) -> int:
        """Cells the operation list gives effect names."""
        ...

    @property
    def blink_cursors(self) -> bool:
        """Whether text fields blink their cursor (tests and snapshots switch it off)."""
        ...

    @property
    def trace_label(self) -> str:
        """The trace's path as the user reads it."""
        ...

    def runner_spec(self) -> str | None:
        """The runner a run calls: the one given (or typed), else the trace's."""
        ...

    def status_text(self) -> Text:
        """The status line: pending patches, live effects, the last run."""
        ...

    def patched_output(
        self, operation: Operation, patch: Patch | None
    ) -> tuple[JsonValue, str | None]:
        """What `operation` gives with `patch`, and why a recipe could not be resolved."""
        ...

    def can_diff(self) -> bool:
        """Whether there is something to compare (a fork's branch, or `--against`)."""
        ...

    def can_promote(self) -> bool:
        """Whether the last fork succeeded (it can be promoted)."""
        ...

    def tell(self, message: str, *, error: bool = False, toast: bool = True) -> None:
        """Say `message` (a notification, kept in the message log)."""
        ...


def session(node: DOMNode) -> DebugSession:
    """The debugging session `node` belongs to."""
    return cast("DebugSession", textual_app(node))


def textual_app(node: DOMNode) -> App[object]:
    """The Textual app `node` belongs to, for Textual's own services."""
    app = node.app  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return cast("App[object]", app)
