"""`toolreplay tui TRACE|FOLDER`: open a trace in the terminal UI (the `toolreplay-tui` package).

Given a folder, the UI lists its traces to pick one from first. Given the URL of one
trace object (`s3://bucket/.../NAME.trp`, also gs://, az://, file://), its copy is
fetched into the local cache and checked first (`toolreplay.cli.traces`); the work
folder is then `.toolreplay/` in the current folder unless --workdir says otherwise,
never the cache. The URL of a bucket prefix is for the picker over object storage.

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

from toolreplay.cli.output import Output, drawn_by_the_ui
from toolreplay.cli.traces import is_url, trace_file
from toolreplay.errors import ObjectStoreError

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


def _trace_file_problem(path: Path, label: str = "", *, folder_ok: bool = False) -> str | None:
    """Why `path` is refused, unless it is a regular file (or, if `folder_ok`, a folder);
    `label` names the option."""
    if path.is_file() or (folder_ok and path.is_dir()):
        return None
    shown = f"{label}{path}"
    if path.is_dir():
        return f"{shown}: is a directory, not a trace file"
    if path.exists():
        return f"{shown}: is not a regular file, not a trace file"
    return f"{shown}: no such trace file"


def tui(
    trace: Annotated[
        str,
        typer.Argument(
            metavar="TRACE",
            help="The trace to open (a file, or its URL), or a folder of traces (or an "
            "object-storage prefix, s3://BUCKET/PREFIX) to pick one from (newest first).",
        ),
    ],
    runner: Annotated[
        str | None,
        typer.Option(
            "--runner",
            "-r",
            metavar="MODULE:CALLABLE",
            help="The application entry point, called with no arguments, for replays and "
            "forks (default: the trace's; asked for when neither is given).",
        ),
    ] = None,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            metavar="OTHER.trp",
            help="A second trace (a file, or its URL) to compare TRACE with: the diff view "
            "opens on it.",
        ),
    ] = None,
    workdir: Annotated[
        Path | None,
        typer.Option(
            "--workdir",
            metavar="FOLDER",
            help="Where branch traces and patch files go (default: .toolreplay/ next to TRACE; "
            "in the current folder for a URL).",
        ),
    ] = None,
) -> int:
    """Given a folder (a capture folder), a picker lists its traces first. Needs the
    tui extra, which `uv sync --all-extras` installs. Exit 2 when the trace is
    neither a file nor a folder, a trace (or --against) cannot be opened, or the
    UI is not installed; exit 1 when the UI crashed (the traceback's file is named).
    """
    prefix = trace if is_url(trace) and not trace.endswith(".trp") else None
    try:
        trace_path = Path(trace) if prefix is not None else trace_file(trace)
        against_path = None if against is None else trace_file(against)
    except ObjectStoreError as error:
        Output.error(str(error), (trace, against))
        return 2
    if workdir is None and is_url(trace):
        workdir = Path(".toolreplay")  # the current folder's, not the cache's
    problem = None if prefix is not None else _trace_file_problem(trace_path, folder_ok=True)
    if problem is None and against_path is not None:
        problem = _trace_file_problem(against_path, "--against ")
    if problem is not None:
        Output.error(problem, (trace, against))
        return 2
    try:
        # By name, not `import toolreplay_tui`: the core package neither needs the extra
        # to import nor to type-check.
        ui = importlib.import_module("toolreplay_tui")
        importlib.import_module("textual")  # its dependency: a broken install says so here
    except ImportError as error:
        missing = (error.name or "").partition(".")[0]
        if missing not in _UI_MODULES:
            raise  # the UI is installed but broken: show the real import error
        Output.error(
            f"the terminal UI is not installed (no module named {missing!r}); {INSTALL_HINT}"
        )
        return 2
    run: _Run = ui.run
    if prefix is not None:
        picked = _pick_from_prefix(prefix)
        if not isinstance(picked, Path):
            return picked
        trace_path = picked
    with drawn_by_the_ui():  # it escapes every trace's text itself (toolreplay.terminal)
        return run(trace_path, runner, against_path, workdir=workdir)


def _pick_from_prefix(prefix: str) -> Path | int:
    """The picker over the search of `prefix`; the chosen trace fetched into the local
    cache and checked (its path), or the exit status (0: the user left; 2: it could not
    be fetched)."""
    picker = importlib.import_module("toolreplay_tui.screens.picker")
    with drawn_by_the_ui():
        picked: object = picker.pick_trace(prefix)
    if picked is None:
        return 0
    try:
        return trace_file(str(picked))
    except ObjectStoreError as error:
        Output.error(str(error), (str(picked),))
        return 2
