"""Instruction counts of the runtime's hot paths: what a call costs, without the noise.

Run with `uv run python -m benchmarks.instructions` (see benchmarks/README.md). It
needs Valgrind (`valgrind` on the PATH) and says so, exiting 0, when there is none.

`benchmarks.runtime` times the same work, but on a shared machine its figures move
by a third from one run to the next, more than most changes to these paths. The
number of instructions a CPU executes for them does not: each workload below runs
in a child Python under Valgrind's callgrind, with the hash seed fixed, once for K
units and once for 2K, and the difference divided by K is what one unit costs, with
start-up and set-up cancelled out. Replay and `read_trace` also subtract a child that
does their set-up alone (loading the trace, reading the file) at both sizes.

Instructions are not time: they leave out cache misses (so they cannot show how cost
grows with a trace's size) and system calls (a recording's write per call), and
under Valgrind OpenSSL cannot use the CPU's SHA instructions, so hashing counts
several times what it costs natively. Compare figures with each other, from one
commit to the next; the runtime benchmark is the one with targets in microseconds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import toolreplay
from benchmarks import measure

__all__ = ["WORKLOADS", "main"]

WORKLOADS = ("undecorated", "replay", "record", "record-off", "read_trace", "json.loads")
"""What is counted, per call (or per trace line for the last two)."""
_SET_UP_OF = {"replay": "replay-set-up", "read_trace": "read-set-up", "json.loads": "read-set-up"}
_COLLECTED = re.compile(r"Collected : (\d+)")


# --- the child: one workload, K units ------------------------------------------------


def _child(workload: str, units: int, directory: Path) -> None:
    """Run `units` units of `workload` (in a process of its own, under Valgrind)."""

    def echo_plain(i: int) -> dict[str, int]:
        return {"i": i}

    echo = toolreplay.effect("bench.echo")(echo_plain)
    trace_path = directory / f"echo-{units}.trp"
    if workload == "undecorated":
        for i in range(units):
            echo_plain(i)
    elif workload in ("record", "record-off"):
        path = directory / f"{workload}-{units}.trp"
        with toolreplay.record(path, secrets="off" if workload == "record-off" else None):
            for i in range(units):
                echo(i)
        path.unlink()
    elif workload in ("replay", "replay-set-up"):
        trace = toolreplay.read_trace(trace_path)
        if workload == "replay":
            with toolreplay.replay(trace):
                for i in range(units):
                    echo(i)
        else:
            _ = trace.duplicates  # what opening a replay session indexes
    elif workload in ("read_trace", "json.loads", "read-set-up"):
        lines = trace_path.read_bytes().splitlines()
        if workload == "read_trace":
            toolreplay.read_trace(trace_path)
        elif workload == "json.loads":
            for line in lines:
                json.loads(line)
    elif workload == "prepare":  # not counted: the traces replay and read_trace use
        with toolreplay.record(trace_path, secrets="off"):
            for i in range(units):
                echo(i)
    else:
        raise SystemExit(f"unknown workload {workload!r}")


# --- the parent -----------------------------------------------------------------------


def _run(valgrind: str | None, workload: str, units: int, directory: Path) -> int:
    """Instructions the child ran (0 when not under Valgrind: `prepare`)."""
    command = [sys.executable, "-m", "benchmarks.instructions", "--child", workload]
    command += ["--units", str(units), "--directory", str(directory)]
    if valgrind is not None:
        command = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run(command, capture_output=True, text=True, env=environment, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{workload} x {units} failed:\n{result.stderr[-2000:]}")
    if valgrind is None:
        return 0
    found = _COLLECTED.search(result.stderr)
    if found is None:
        raise SystemExit(f"{workload}: callgrind printed no count:\n{result.stderr[-2000:]}")
    return int(found.group(1))


def count(valgrind: str, workload: str, units: int, directory: Path) -> int:
    """Instructions one unit of `workload` costs, from K and 2K units (set-up subtracted)."""
    once = _run(valgrind, workload, units, directory)
    twice = _run(valgrind, workload, 2 * units, directory)
    set_up = _SET_UP_OF.get(workload)
    if set_up is not None:
        once -= _run(valgrind, set_up, units, directory)
        twice -= _run(valgrind, set_up, 2 * units, directory)
    return round((twice - once) / units)


def report(counts: dict[str, int], units: int, elapsed: float) -> str:
    out = [
        measure.environment(),
        f"instructions (Valgrind callgrind, PYTHONHASHSEED=0) per unit, from {units:,} and "
        f"{2 * units:,} units; replay and read_trace less their set-up at both sizes",
        "",
    ]
    rows = [[name, f"{counts[name]:,}"] for name in WORKLOADS if name in counts]
    out.extend(measure.table(["workload", "instructions per unit"], rows))
    ratios: list[str] = []
    if "record" in counts and "record-off" in counts:
        ratios.append(
            f"record with the secret scan / off: {counts['record'] / counts['record-off']:.2f}x"
        )
    if "read_trace" in counts and "json.loads" in counts:
        ratios.append(
            f"read_trace / json.loads per line: {counts['read_trace'] / counts['json.loads']:.2f}x"
        )
    if "replay" in counts and "undecorated" in counts:
        ratios.append(f"replay overhead: {counts['replay'] - counts['undecorated']:,} per call")
    if ratios:
        out += ["", *ratios]
    out += ["", measure.total_run_time(elapsed)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.instructions",
        description="Count the instructions of effect calls and trace loading under Valgrind.",
    )
    parser.add_argument(
        "--units", type=int, default=2_000, help="K: each workload runs K and 2K units"
    )
    parser.add_argument(
        "--only", nargs="+", choices=WORKLOADS, default=list(WORKLOADS), help="workloads to count"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--directory", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    units: int = args.units
    if args.child is not None:
        _child(args.child, units, args.directory)
        return 0
    if units < 1:
        parser.error("--units must be at least 1")
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print(measure.environment())
        print(measure.skip_line("no valgrind on the PATH: nothing counted (install valgrind)"))
        return 0
    started = time.perf_counter()
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="toolreplay-instructions-") as temporary:
        directory = Path(temporary)
        for size in (units, 2 * units):
            _run(None, "prepare", size, directory)
        for workload in args.only:
            measure.progress(f"counting {workload} ...")
            counts[workload] = count(valgrind, workload, units, directory)
    print(report(counts, units, time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
