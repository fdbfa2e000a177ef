"""`toolreplay tui TRACE|FOLDER`: open a trace in the terminal UI (the `toolreplay-tui` package).

Given a folder, the UI lists its traces to pick one from first.

The UI is an optional extra. It is imported only when this command runs, so
`import toolreplay` and every other command stay free of Textual; when it is
not installed the command says how to install it.

Exit status: 2 when the command was refused before the UI started (a missing
trace, or the UI not installed) or when the UI could not open the trace (it says
why first); 1 when the UI crashed (the saved traceback's path is printed); 0 after
a normal quit.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated, Protocol

import typer

from toolreplay.cli.output import Output

__all__ = ["INSTALL_HINT", "tui"]

INSTALL_HINT = (
    'install it with: uv sync --all-extras (from a clone), or: pip install "toolreplay[tui]"'
)


class _Run(Protocol):
    """`toolreplay_tui.run(trace, runner, against, *, workdir)`, the UI's entry point; it
    returns the exit status."""

    def __call__(
        self, trace: Path, runner: str | None, against: Path | None, *, workdir: Path | None
    ) -> int: ...


# The distributions whose absence means "the UI is not installed", by top-level module.
_UI_MODULES = frozenset({"toolreplay_tui", "textual"})


def _refuse(message: str) -> typer.Exit:
    Output.error(message)
    return typer.Exit(2)


def _check_trace_file(path: Path, label: str = "", *, folder_ok: bool = False) -> None:
    """Refuse (exit 2) unless `path` is a regular file (or, if `folder_ok`, a folder);
    `label` names the option."""
    if path.is_file() or (folder_ok and path.is_dir()):
        return
    shown = f"{label}{path}"
    if path.is_dir():
        raise _refuse(f"{shown}: is a directory, not a trace file")
    if path.exists():
        raise _refuse(f"{shown}: is not a regular file, not a trace file")
    raise _refuse(f"{shown}: no such trace file")


def tui(
    trace: Annotated[
        Path,
        typer.Argument(
            metavar="TRACE",
            help="The trace to open, or a folder of traces to pick one from (newest first).",
        ),
    ],
    runner: Annotated[
        str | None,
        typer.Option(
            "--runner",
            "-r",
            metavar="MODULE:CALLABLE",
            help=(
                "The application entry point, called with no arguments, for replays and forks "
                "(default: the trace's; asked for when neither is given)."
            ),
        ),
    ] = None,
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            metavar="OTHER.trp",
            help="A second trace to compare TRACE with: the diff view opens on it.",
        ),
    ] = None,
    workdir: Annotated[
        Path | None,
        typer.Option(
            "--workdir",
            metavar="FOLDER",
            help="Where branch traces and patch files go (default: .toolreplay/ next to TRACE).",
        ),
    ] = None,
) -> None:
    """Browse, fork, diff and promote a trace in the terminal UI.

    Given a folder (a capture folder), a picker lists its traces first. Needs the
    tui extra, which `uv sync --all-extras` installs. Exit 2 when the trace is
    neither a file nor a folder, a trace (or --against) cannot be opened, or the
    UI is not installed; exit 1 when the UI crashed (the traceback's file is named).
    """
    _check_trace_file(trace, folder_ok=True)
    if against is not None:
        _check_trace_file(against, "--against ")
    try:
        # By name, not `import toolreplay_tui`: the core package neither needs the extra
        # to import nor to type-check.
        ui = importlib.import_module("toolreplay_tui")
        importlib.import_module("textual")  # its dependency: a broken install says so here
    except ImportError as error:
        missing = (error.name or "").partition(".")[0]
        if missing not in _UI_MODULES:
            raise  # the UI is installed but broken: show the real import error
        raise _refuse(
            f"the terminal UI is not installed (no module named {missing!r}); {INSTALL_HINT}"
        ) from None
    run: _Run = ui.run
    status = run(trace, runner, against, workdir=workdir)
    if status:
        raise typer.Exit(status)
