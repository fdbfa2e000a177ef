"""Network guard benchmark: what its audit hook costs, in and out of a blocking session.

Run with `uv run python -m benchmarks.network_guard` (see benchmarks/README.md). An
audit hook cannot be removed once installed, so each variant is measured in a child
process of its own, all children run one after another, `--rounds` times, and each
figure is the best over every round:

- `no hook`: a process that never opened a blocking session (the replay is opened with
  `network="allow"`, which installs nothing);
- `hook, idle`: the guard's hook installed (a blocking replay was opened and closed
  before), no blocking session open;
- `blocking`: inside an open `replay(..., network="block")`.

Measured in each: `id()` (the interpreter raises an audit event for every call, so each
one calls the hook), `copy.deepcopy` of a 500-node structure (one `id()` per node), and
a replayed effect call (the runtime's replay path, which raises no audit event).
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import toolreplay
from benchmarks import measure

__all__ = ["main"]

VARIANTS = ("no hook", "hook, idle", "blocking")
DEFAULT_ROUNDS = 3
ID_CALLS = 200_000
DEEPCOPIES = 200
EFFECT_CALLS = 2_000
REPLAY_RATIO_TARGET = 1.05
"""Replayed effect call in a blocking session over one with no hook installed: at most this."""


@toolreplay.effect("bench.echo")
def echo(i: int) -> dict[str, int]:
    return {"i": i}


def _structure() -> dict[str, object]:
    return {"items": [{"id": i, "tags": ["a", "b"], "meta": {"k": i}} for i in range(100)]}


def _id_and_deepcopy(repeats: int) -> dict[str, float]:
    """Seconds per `id()` call and per `copy.deepcopy` of the structure, best of `repeats`."""
    structure = _structure()
    id_call = min(timeit.repeat("id(x)", setup="x = 1", number=ID_CALLS, repeat=repeats))
    deepcopy = min(
        timeit.repeat(lambda: copy.deepcopy(structure), number=DEEPCOPIES, repeat=repeats)
    )
    return {"id": id_call / ID_CALLS, "deepcopy": deepcopy / DEEPCOPIES}


def _replay_all(trace: Path, network: Literal["block", "allow"]) -> float:
    """Seconds per replayed call, every operation of `trace` replayed once."""
    with toolreplay.replay(trace, network=network), measure.gc_paused():
        started = time.perf_counter()
        for i in range(EFFECT_CALLS):
            echo(i)
        return (time.perf_counter() - started) / EFFECT_CALLS


def child(variant: str, repeats: int, trace: Path) -> dict[str, float]:
    """The figures of one variant, measured in this (fresh) process."""
    if variant == "blocking":
        with toolreplay.replay(trace, network="block"):
            figures = _id_and_deepcopy(repeats)  # while the session blocks
            for i in range(EFFECT_CALLS):  # a replay must call every operation
                echo(i)
        network: Literal["block", "allow"] = "block"
    else:
        if variant == "hook, idle":
            _replay_all(trace, "block")  # installs the hook; the session then closes
        figures = _id_and_deepcopy(repeats)
        network = "allow"
    figures["replay"] = min(_replay_all(trace, network) for _ in range(repeats))
    return figures


def _run_child(variant: str, repeats: int, trace: Path) -> dict[str, float]:
    result = subprocess.run(
        [
            *(sys.executable, "-m", "benchmarks.network_guard"),
            *("--child", variant, str(trace), "--repeats", str(repeats)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(result.stdout)


def report(best: dict[str, dict[str, float]], rounds: int, repeats: int) -> list[str]:
    unit = measure.us_unit()
    rows: list[list[str]] = []
    for key, label, scale, digits in (
        ("id", "id() ns", 1e9, 1),
        ("deepcopy", f"deepcopy 500 nodes {unit}", 1e6, 1),
        ("replay", f"replayed effect call {unit}", 1e6, 2),
    ):
        figures = [best[variant][key] for variant in VARIANTS]
        rows.append(
            [
                label,
                *(f"{figure * scale:.{digits}f}" for figure in figures),
                f"{figures[1] / figures[0]:.2f}x",
                f"{figures[2] / figures[0]:.2f}x",
            ]
        )
    replay_ratio = best["blocking"]["replay"] / best["no hook"]["replay"]
    return [
        measure.environment(),
        f"best of {rounds} rounds x {repeats} repeats, each variant in its own process",
        "",
        *measure.table(["measurement", *VARIANTS, "idle / no hook", "blocking / no hook"], rows),
        "",
        measure.TARGETS_HEADING,
        measure.target_line(
            replay_ratio <= REPLAY_RATIO_TARGET,
            f"a replayed effect call in a blocking session costs at most "
            f"{REPLAY_RATIO_TARGET:.2f}x one with no hook installed: {replay_ratio:.2f}x",
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.network_guard",
        description="Benchmark the network guard's audit hook (each variant in a child).",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help=f"times every variant's child is run, one after another (default {DEFAULT_ROUNDS})",
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="repeats per figure inside a child (default 5)"
    )
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("trace", nargs="?", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.child is not None:
        print(json.dumps(child(arguments.child, arguments.repeats, arguments.trace)))
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "echo.trp"
        with toolreplay.record(trace):
            for i in range(EFFECT_CALLS):
                echo(i)
        best: dict[str, dict[str, float]] = {}
        for round_number in range(arguments.rounds):
            for variant in VARIANTS:
                measure.progress(f"round {round_number + 1}: {variant}")
                figures = _run_child(variant, arguments.repeats, trace)
                kept = best.setdefault(variant, figures)
                for key, value in figures.items():
                    kept[key] = min(kept[key], value)
    for line in report(best, arguments.rounds, arguments.repeats):
        print(line)
    print(measure.total_run_time(time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
