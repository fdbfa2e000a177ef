"""What the debugger leaves when it crashes: the traceback in a file of the work folder
(without the frames' local variables, which may hold the children's environment), and
the line printed after the terminal is restored."""

from __future__ import annotations

import traceback
from pathlib import Path

from rich.text import Text
from textual.worker import WorkerFailed

from toolreplay import terminal_safe_text
from toolreplay_tui.model.workspace import Workspace
from toolreplay_tui.state import count_of

__all__ = ["crash_message", "write_crash_report"]


def write_crash_report(workspace: Workspace, error: BaseException) -> Path | None:
    """Write the traceback of `error` to a new file in `workspace`; None when it cannot."""
    # A worker's failure wraps what the worker raised, traceback and all.
    original = error.error if isinstance(error, WorkerFailed) else error
    text = "".join(traceback.format_exception(original))
    try:
        return workspace.write_text("crash", ".txt", text)
    except OSError:
        return None


def crash_message(
    error: BaseException, report: Path | None, kept: Path | None, pending: int
) -> Text:
    """`toolreplay tui crashed (...); the traceback is in ...`, and where the `pending`
    patches are `kept` (when they are)."""
    where = (
        f"the traceback is in {report}"
        if report is not None
        else "the traceback could not be saved"
    )
    if kept is not None:
        where += (
            f"; {count_of(pending, 'pending patch')} {'is' if pending == 1 else 'are'} kept in "
            f"{kept} and restored when you open this trace again"
        )
    return terminal_safe_text(
        f"toolreplay tui crashed ({type(error).__name__}: {error}); {where}", "bold red"
    )
