"""`Host`: what a controller needs of the app that composes it (`ToolReplayApp` is one).

The session's paths and state (the `DebugSession` screens read, and the parts the
controllers set), a way to report a change (`changed`), and the few Textual
services controllers use: pushing a screen, workers, a timer, suspending for an
external editor, exiting.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from rich.console import RenderableType
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker

from toolreplay.files import source_conflict
from toolreplay_tui.context import DebugSession
from toolreplay_tui.model.rows import OperationRows
from toolreplay_tui.model.trace_file import TraceFile
from toolreplay_tui.model.workspace import Workspace
from toolreplay_tui.state import BackgroundState

__all__ = ["Host", "overwrites_debugged_trace"]

R = TypeVar("R")


class Host(DebugSession, Protocol):
    """The app as its controllers see it."""

    @property
    def trace_file(self) -> Path:
        """The trace being debugged (never written)."""
        ...

    @property
    def against(self) -> Path | None:
        """The trace `--against` named, to compare with before any fork."""
        ...

    @property
    def workspace(self) -> Workspace:
        """The work folder: branches, patch files, scratch files."""
        ...

    @property
    def trace(self) -> TraceFile | None: ...
    @trace.setter
    def trace(self, value: TraceFile | None) -> None: ...

    @property
    def background(self) -> BackgroundState: ...
    @background.setter
    def background(self, value: BackgroundState) -> None: ...

    @property
    def load_error(self) -> str | None: ...
    @load_error.setter
    def load_error(self, value: str | None) -> None: ...

    @property
    def rows(self) -> OperationRows | None: ...
    @rows.setter
    def rows(self, value: OperationRows | None) -> None: ...

    @property
    def effect_width(self) -> int: ...
    @effect_width.setter
    def effect_width(self, value: int) -> None: ...

    @property
    def runner(self) -> str | None:
        """The runner given with `--runner`, or typed when asked (else None)."""
        ...

    @runner.setter
    def runner(self, value: str | None) -> None: ...

    def path_label(self, path: Path) -> str:
        """A path as the user reads it (relative to the working directory when inside)."""
        ...

    def absolute(self, path: Path) -> Path:
        """`path`, relative to the working directory unless absolute."""
        ...

    def changed(self, message: str | None = None, *, error: bool = False) -> None:
        """The session's state changed: keep the pending patches, repaint, say `message`."""
        ...

    # --- Textual's services ------------------------------------------------------------

    def push_screen(
        self, screen: Screen[R], callback: Callable[[R | None], None] | None = None
    ) -> object: ...

    def call_from_thread(self, callback: Callable[..., R], *args: Any, **kwargs: Any) -> R: ...

    def run_worker(
        self,
        work: Callable[[], None],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[None]: ...

    def set_interval(self, interval: float, callback: Callable[[], object]) -> Timer: ...

    def suspend(self) -> AbstractContextManager[None]: ...

    @property
    def is_headless(self) -> bool: ...

    def exit(
        self, result: None = None, return_code: int = 0, message: RenderableType | None = None
    ) -> None: ...


def overwrites_debugged_trace(host: Host, path: Path, *, instead: str) -> bool:
    """Whether writing `path` would write over the trace being debugged; if so, the
    debugger says so and what to do `instead` ("choose another file")."""
    problem = source_conflict(path, [host.trace_file])
    if problem is None:
        return False
    host.changed(
        f"{host.path_label(path)} {problem}: the trace being debugged is never written; {instead}",
        error=True,
    )
    return True
