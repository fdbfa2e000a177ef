"""The command line's start-up: this tree against an earlier one, side by side.

    uv run python -m benchmarks.cli_startup                  # best of 15
    uv run python -m benchmarks.cli_startup --repeats 3
    uv run python -m benchmarks.cli_startup --before main    # any git revision

The earlier tree ("before", by default `ARGPARSE_REVISION`, the last command line on
`argparse`) is exported with `git archive` into a temporary folder (only its
`toolreplay/` package); nothing in the repository or its worktrees changes. Each
command runs as `python -m toolreplay ...` in a child process, from the temporary
folder, with `PYTHONPATH` set to one tree or the other, so both run on the same
interpreter and installed packages (`PYTHONPATH` comes before the environment's
editable install of this tree on `sys.path`).
The two trees' runs of one command alternate, and a warm-up run of each writes its
bytecode first (as an installed command has it). Each figure is the best of
`--repeats`: wall time, and the child's CPU time (user + system, from `wait4`), which a
busy machine disturbs less.

A second table takes this tree's start-up apart: the interpreter alone, `import argparse`
(the earlier parser), `import typer`, and `show` with Typer converting the option values
itself (through pydantic), which `toolreplay.cli.command` does instead.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import toolreplay
from benchmarks.measure import (
    TARGETS_HEADING,
    environment,
    progress,
    table,
    target_line,
    total_run_time,
)

ROOT = Path(__file__).resolve().parent.parent

ARGPARSE_REVISION = "8ae172a22d8035308671490b2078a057628ca39c"
"""The last commit whose command line was built on `argparse` (issue 25 moved it to Typer)."""

DEFAULT_REPEATS = 15

TYPER_CONVERTS = (
    "import sys\n"
    "import toolreplay.cli.command as command\n"
    "command.convert_values_here = lambda params: None  # leave the values to Typer\n"
    "from toolreplay.cli import main\n"
    "main(sys.argv[1:])\n"
)
"""`toolreplay ARGV` with Typer's own conversion of the values (a pydantic TypeAdapter each)."""

VERSION_TARGET = 1.15
"""`--version` after / before, CPU: the fast path imports no parser."""
COMMAND_TARGET_MS = 60.0
"""`show` and `find`: what Typer may add to a command's start-up, CPU ms."""


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def run_once(argv: Sequence[str], pythonpath: Path) -> Timing:
    """Run `argv` with `PYTHONPATH=pythonpath`, output discarded: its wall and CPU time."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(pythonpath)
    start = time.perf_counter()
    pid = os.posix_spawn(
        argv[0],
        list(argv),
        env,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ],
    )
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} (PYTHONPATH={pythonpath}) exited {code}")
    return Timing(wall, usage.ru_utime + usage.ru_stime)


def best_of(repeats: int, runs: Sequence[tuple[Sequence[str], Path]]) -> list[Timing]:
    """The best wall and CPU time of each run, the runs alternating, after one warm-up."""
    for argv, tree in runs:
        run_once(argv, tree)  # writes the bytecode
    timings: list[list[Timing]] = [[] for _ in runs]
    for _ in range(repeats):
        for (argv, tree), timing in zip(runs, timings, strict=True):
            timing.append(run_once(argv, tree))
    return [Timing(min(t.wall for t in timing), min(t.cpu for t in timing)) for timing in timings]


def export_tree(revision: str, folder: Path) -> Path:
    """The `toolreplay/` package at `revision`, exported into `folder`."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision, "toolreplay"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise SystemExit(
            f"cannot export toolreplay/ at {revision}: {archive.stderr.decode().strip()}"
        )
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return folder


@toolreplay.effect("bench.echo")
def echo(index: int) -> dict[str, int]:
    return {"index": index}


def record_trace(folder: Path) -> Path:
    """A small trace to show and find: 20 calls of one effect."""
    folder.mkdir()
    path = folder / "echo.trp"
    with toolreplay.record(path):
        for index in range(20):
            echo(index)
    return path


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description="toolreplay's start-up, before and after")
    parser.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help=f"runs of each command in each tree, the best is kept (default {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--before",
        default=ARGPARSE_REVISION,
        metavar="REVISION",
        help="the git revision to compare with (default: the last argparse command line)",
    )
    arguments = parser.parse_args()
    started = time.perf_counter()
    python = sys.executable
    print(environment(cpus=True))
    print(f"before: {arguments.before}; after: this tree ({ROOT})")
    with tempfile.TemporaryDirectory(prefix="toolreplay-startup-") as scratch:
        before = export_tree(arguments.before, Path(scratch, "before"))
        trace = record_trace(Path(scratch, "traces"))
        # Python puts the working directory first on `sys.path`: it must hold neither tree.
        os.chdir(scratch)
        commands = {
            "toolreplay --version": ["--version"],
            "toolreplay show TRACE": ["show", str(trace)],
            "toolreplay find DIR -e bench.echo": ["find", str(trace.parent), "-e", "bench.echo"],
            "toolreplay --help": ["--help"],
        }
        rows: list[list[str]] = []
        measured: dict[str, tuple[Timing, Timing]] = {}
        for label, argv in commands.items():
            progress(f"timing {label}")
            command = [python, "-m", "toolreplay", *argv]
            old, new = best_of(arguments.repeats, [(command, before), (command, ROOT)])
            measured[label] = (old, new)
            rows.append(
                [
                    label,
                    ms(old.wall),
                    ms(new.wall),
                    ms(old.cpu),
                    ms(new.cpu),
                    f"{new.cpu / old.cpu:.2f}",
                    f"{(new.cpu - old.cpu) * 1000:+.0f}",
                ]
            )
        progress("timing the parts of this tree's start-up")
        show = ["show", str(trace)]
        parts = {
            "python -c pass": [python, "-c", "pass"],
            "python -c 'import argparse'": [python, "-c", "import argparse"],
            "python -c 'import typer'": [python, "-c", "import typer"],
            "toolreplay show TRACE": [python, "-m", "toolreplay", *show],
            "show TRACE, Typer converting (pydantic)": [python, "-c", TYPER_CONVERTS, *show],
        }
        timings = best_of(arguments.repeats, [(argv, ROOT) for argv in parts.values()])
        os.chdir(ROOT)
    print(f"best of {arguments.repeats} runs of each (wall: time.perf_counter; CPU: wait4)")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print()
    headers = [
        "command",
        "before ms",
        "after ms",
        "before CPU ms",
        "after CPU ms",
        "CPU after/before",
        "CPU after-before ms",
    ]
    print("\n".join(table(headers, rows)))
    print()
    part_rows = [[label, ms(t.wall), ms(t.cpu)] for label, t in zip(parts, timings, strict=True)]
    print("\n".join(table(["this tree", "ms", "CPU ms"], part_rows)))
    print()
    print(TARGETS_HEADING)
    old, new = measured["toolreplay --version"]
    print(
        target_line(
            new.cpu / old.cpu <= VERSION_TARGET,
            f"--version costs at most {VERSION_TARGET}x before (CPU): "
            f"{new.cpu / old.cpu:.2f}x, no parser imported",
        )
    )
    for label in ("toolreplay show TRACE", "toolreplay find DIR -e bench.echo"):
        old, new = measured[label]
        added = (new.cpu - old.cpu) * 1000
        print(
            target_line(
                added <= COMMAND_TARGET_MS,
                f"{label} adds at most {COMMAND_TARGET_MS:.0f} ms of CPU: {added:+.0f} ms",
            )
        )
    print(total_run_time(time.perf_counter() - started))


if __name__ == "__main__":
    main()
