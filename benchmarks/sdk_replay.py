"""What the model-SDK adapter benchmarks share (`anthropic_replay`, `gemini_replay`).

Each workload is N distinct calls of one SDK. For each workload and N, side by side in
one run, each call is timed alone in CPU time (`time.process_time_ns`), the bare call
and the instrumented one alternating call by call (medians per call):

- the floor: the bare SDK client over an in-memory transport serving pre-serialised
  bodies (the same SDK parsing the same bodies);
- replay: `instrument(a client whose transport refuses every request)` under
  `toolreplay.replay()` of a trace of the N calls;
- record: `instrument(the floor's client)` under `toolreplay.record()`.

Load from other processes moves both calls of a pair alike, so their ratio holds on a
shared machine where wall-clock figures do not. The targets are informational: the
process exits 0 whether they are met or not.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import toolreplay
from benchmarks import measure

__all__ = ["FLATNESS_TARGET", "FLOOR_RATIO_TARGET", "SIZES", "Adapter", "Workload", "main"]

SIZES = (100, 1_000, 10_000)
FLOOR_RATIO_TARGET = 1.2
"""Replay per call over the floor (the bare SDK over an in-memory transport): at most this."""
FLATNESS_TARGET = 1.2
"""Replay/floor at the largest N over the smallest: at most this (ideal 1.0)."""
WARM_UP = 10
"""Calls of each workload made first, to warm the SDK's and pydantic's lazy state."""


@dataclass(frozen=True, slots=True)
class Workload:
    """N calls of one kind: `body(i)` is what the API answers call `i` with (of
    `media_type`), `call(client, i)` makes it and returns what the application keeps."""

    name: str
    body: Callable[[int], bytes]
    media_type: str
    call: Callable[[Any, int], object]


@dataclass(frozen=True, slots=True)
class Adapter:
    """One SDK's clients: `bare_client(workload, bodies)` answers from the bodies in
    memory, `refusing_client()` fails on any request, `instrument` is the adapter's."""

    name: str
    bare_client: Callable[[Workload, list[bytes]], Any]
    refusing_client: Callable[[], Any]
    instrument: Callable[[Any], Any]
    environment: Callable[[], Sequence[str]]
    workloads: Sequence[Workload]


@dataclass(frozen=True, slots=True)
class SizeResult:
    """One workload at one N: medians per call (seconds) of CPU time."""

    workload: str
    n: int
    floor: float
    replay: float
    record_floor: float
    record: float

    @property
    def replay_ratio(self) -> float:
        return self.replay / self.floor

    @property
    def record_ratio(self) -> float:
        return self.record / self.record_floor


def _median(values: list[int]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] / 1e9


def _alternating(
    n: int, first: Callable[[int], object], second: Callable[[int], object]
) -> tuple[float, float, list[object], list[object]]:
    clock = time.process_time_ns
    times: tuple[list[int], list[int]] = ([], [])
    results: tuple[list[object], list[object]] = ([], [])
    with measure.gc_paused():
        for i in range(n):
            for call, spent, kept in zip((first, second), times, results, strict=True):
                started = clock()
                value = call(i)
                spent.append(clock() - started)
                kept.append(value)
    return _median(times[0]), _median(times[1]), results[0], results[1]


def measure_size(adapter: Adapter, workload: Workload, n: int, directory: Path) -> SizeResult:
    bare = adapter.bare_client(workload, [workload.body(i) for i in range(n)])
    recording = adapter.instrument(bare)
    trace = directory / f"{workload.name}-{n}.trp"
    with toolreplay.record(trace):
        record_floor, record, expected, recorded = _alternating(
            n, lambda i: workload.call(bare, i), lambda i: workload.call(recording, i)
        )
    replaying = adapter.instrument(adapter.refusing_client())
    with toolreplay.replay(trace):  # checks on exit that every operation was replayed
        floor, replay, _, replayed = _alternating(
            n, lambda i: workload.call(bare, i), lambda i: workload.call(replaying, i)
        )
    if replayed != expected or recorded != expected:
        raise RuntimeError(f"{workload.name}: the adapter's results differ from the bare SDK's")
    trace.unlink()
    return SizeResult(workload.name, n, floor, replay, record_floor, record)


def report(adapter: Adapter, results: list[SizeResult], elapsed: float) -> str:
    unit = measure.us_unit()
    lines = [
        measure.environment(*adapter.environment()),
        "CPU time per call (time.process_time_ns), the bare and the instrumented call "
        "alternating call by call: medians; gc paused; traces in a temporary directory",
        "floor: the bare SDK client over an in-memory MockTransport serving pre-serialised "
        "bodies; replay: instrument(a client whose transport refuses every request) under "
        "replay(); record: instrument(the floor's client) under record()",
        "",
    ]
    headers = ["workload", "N", f"floor cpu {unit}", f"replay cpu {unit}", "replay/floor",
               f"record floor cpu {unit}", f"record cpu {unit}", "record/floor"]  # fmt: skip
    rows = [
        [
            r.workload,
            f"{r.n:,}",
            f"{r.floor * 1e6:.1f}",
            f"{r.replay * 1e6:.1f}",
            f"{r.replay_ratio:.3f}x",
            f"{r.record_floor * 1e6:.1f}",
            f"{r.record * 1e6:.1f}",
            f"{r.record_ratio:.3f}x",
        ]
        for r in results
    ]
    lines += measure.table(headers, rows)
    lines += ["", "targets (informational; the exit status is 0 either way):"]
    for workload in adapter.workloads:
        mine = [r for r in results if r.workload == workload.name]
        for r in mine:
            lines.append(
                measure.target_line(
                    r.replay_ratio <= FLOOR_RATIO_TARGET,
                    f"{r.workload}, N={r.n:,}: replay vs the floor {r.replay_ratio:.2f}x in CPU "
                    f"time alternating (target <= {FLOOR_RATIO_TARGET}x)",
                )
            )
        if len(mine) > 1:
            flat = mine[-1].replay_ratio / mine[0].replay_ratio
            lines.append(
                measure.target_line(
                    flat <= FLATNESS_TARGET,
                    f"{workload.name}: replay flat in N, replay/floor at N={mine[-1].n:,} over "
                    f"N={mine[0].n:,}: {flat:.2f}x (target <= {FLATNESS_TARGET}x)",
                )
            )
    lines += ["", measure.total_run_time(elapsed)]
    return "\n".join(lines)


def main(adapter: Adapter, module: str, argv: Sequence[str] | None = None) -> int:
    """Measure `adapter`'s workloads at the sizes asked for and print the report."""
    parser = argparse.ArgumentParser(
        prog=f"python -m benchmarks.{module}",
        description=f"Benchmark the {adapter.name} adapter's replay and record against the "
        "bare SDK.",
    )
    measure.add_sizes(parser, SIZES, "numbers of calls per workload, smallest first")
    args = parser.parse_args(argv)
    sizes: list[int] = sorted(args.sizes)
    if sizes[0] < 1:
        parser.error("every size must be at least 1")
    started = time.perf_counter()
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix=f"toolreplay-bench-{module}-") as temporary:
        directory = Path(temporary)
        for workload in adapter.workloads:  # warm the SDK's and pydantic's lazy state
            measure_size(adapter, workload, min(WARM_UP, sizes[0]), directory)
        for workload in adapter.workloads:
            for n in sizes:
                measure.progress(f"measuring {workload.name} at N={n:,} ...")
                results.append(measure_size(adapter, workload, n, directory))
    print(report(adapter, results, time.perf_counter() - started))
    return 0
