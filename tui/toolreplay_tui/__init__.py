"""The Tool Replay incident debugger (a Textual app), launched by `toolreplay tui`.

    from toolreplay_tui import run
    status = run(Path("incident.trp"), runner=None, against=None)
    status = run(Path("traces/"))  # a folder: pick one of its traces first

Importing this package imports no Textual: `run` imports the app when called.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["run"]


def run(
    trace: Path,
    runner: str | None = None,
    against: Path | None = None,
    *,
    workdir: Path | None = None,
) -> int:
    """Open `trace` in the debugger; when the user quits, return the exit status.

    `trace` may be a folder: a picker lists its traces first (newest first) and
    the one chosen opens.

    `runner` (`module:callable`) overrides the runner in the trace header;
    `against` is another trace to compare with (`d`) before any fork has run;
    `workdir` is where branch traces and patch files go (default: `.toolreplay/`
    next to the trace). The application only ever runs in child processes.

    The status is 0 after a normal quit, 2 when the trace could not be opened
    or failed its integrity check (the reason is printed), 1 when the UI
    crashed (the path of the saved traceback is printed, and where the pending
    patches are kept).
    """
    if trace.is_dir():  # a folder of traces (a capture folder): pick one first
        from toolreplay_tui.screens.picker import pick_trace

        picked = pick_trace(trace)
        if picked is None:  # the user left the picker: a normal quit
            return 0
        assert isinstance(picked, Path)  # a folder's picker gives paths (a prefix's, URLs)
        trace = picked
    from toolreplay_tui.app import ToolReplayApp

    app = ToolReplayApp(trace, runner=runner, against=against, workdir=workdir)
    app.run()
    return app.return_code or 0
