"""Concurrency benchmark: effect calls from 1, 4 and 16 threads against sequential calls.

Run with `uv run python -m benchmarks.concurrency` (see benchmarks/README.md).
For each thread count T it measures, side by side in one run, N calls of a
trivial sync effect split evenly over T threads of a `toolreplay.SessionExecutor`
(each thread calls the effect in a loop), and the same N calls made
sequentially on the calling thread:

- record: wall time per call under `toolreplay.record()`;
- replay overhead: wall time per call under `toolreplay.replay()` of the trace
  just recorded with the same T, minus the undecorated function's per-call
  time under the same threading.

With the GIL, T threads do not call in parallel; what this measures is what a
session's lock, lanes and the writer cost when calls interleave across
threads. The targets are ratios against the sequential figures of the same
run, and informational: the process exits 0 whether they are met or not.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import toolreplay
from benchmarks import measure

__all__ = ["main"]

THREADS = (1, 4, 16)
CALLS = 40_000
RECORD_RATIO_TARGET = 2.0
"""Record per call with 16 threads over sequential record per call: at most this."""
REPLAY_RATIO_TARGET = 2.0
"""Replay overhead per call with T threads over the sequential one: at most this."""


def echo_plain(i: int) -> dict[str, int]:
    return {"i": i}


echo = toolreplay.effect("bench.echo")(echo_plain)


def _sequential(function: Callable[[int], object], n: int) -> float:
    with measure.gc_paused():
        start = time.perf_counter()
        for i in range(n):
            function(i)
        return time.perf_counter() - start


def _calls(function: Callable[[int], object], first: int, count: int) -> None:
    for i in range(first, first + count):
        function(i)


def _threaded(function: Callable[[int], object], n: int, threads: int) -> float:
    """Seconds for n calls split over `threads` worker threads (pool started beforehand)."""
    share = n // threads
    with toolreplay.SessionExecutor(max_workers=threads) as pool:
        # Start every worker before the clock does: thread creation is not an effect cost.
        list(pool.map(lambda _: None, range(threads * 4)))
        with measure.gc_paused():
            start = time.perf_counter()
            futures = [pool.submit(_calls, function, k * share, share) for k in range(threads)]
            for future in futures:
                future.result()
            return time.perf_counter() - start


def _run(function: Callable[[int], object], n: int, threads: int | None) -> float:
    return _sequential(function, n) if threads is None else _threaded(function, n, threads)


@dataclass(slots=True)
class Result:
    """Best-of-repeats seconds for N calls with `threads` threads (None: sequential)."""

    threads: int | None
    n: int
    undecorated: float
    record: float
    replay: float
    lanes: int

    def per_call_us(self, seconds: float) -> float:
        return seconds / self.n * 1e6

    @property
    def replay_overhead_us(self) -> float:
        return self.per_call_us(self.replay) - self.per_call_us(self.undecorated)


def measure_all(n: int, repeats: int, directory: Path) -> list[Result]:
    """Every variant, interleaved round-robin across repeats."""
    variants: list[int | None] = [None, *THREADS]
    timings: dict[int | None, tuple[list[float], list[float], list[float]]] = {
        threads: ([], [], []) for threads in variants
    }
    lanes: dict[int | None, int] = {}
    for repeat in range(repeats):
        for threads in variants:
            undecorated, recorded, replayed = timings[threads]
            undecorated.append(_run(echo_plain, n, threads))
            path = directory / f"echo-{threads}-{repeat}.trp"
            with toolreplay.record(path):
                recorded.append(_run(echo, n, threads))
            trace = toolreplay.read_trace(path)
            if len(trace) != n:
                raise RuntimeError(f"{path}: expected {n} operations, got {len(trace)}")
            lanes[threads] = len(trace.lanes)
            with toolreplay.replay(trace):
                replayed.append(_run(echo, n, threads))
            path.unlink()
    return [
        Result(threads, n, min(u), min(rec), min(rep), lanes[threads])
        for threads, (u, rec, rep) in timings.items()
    ]


def report(results: Sequence[Result], repeats: int, elapsed: float) -> str:
    us = measure.us_unit()
    sequential = results[0]
    out = [
        measure.environment(cpus=True),
        f"best of {repeats} repeats per figure (time.perf_counter); N = {sequential.n:,} calls "
        "of bench.echo(i) -> {'i': i} per figure, split evenly over the threads",
        "gc disabled during every timed section; threads of a started SessionExecutor; traces "
        "written to a temporary directory",
        "",
    ]
    headers = [
        "threads",
        "lanes",
        f"undecorated {us}",
        f"record {us}",
        "record vs seq",
        f"replay {us}",
        f"replay overhead {us}",
        "overhead vs seq",
    ]
    rows = [
        [
            "sequential" if r.threads is None else str(r.threads),
            str(r.lanes),
            f"{r.per_call_us(r.undecorated):.3f}",
            f"{r.per_call_us(r.record):.2f}",
            f"{r.record / sequential.record:.2f}x",
            f"{r.per_call_us(r.replay):.2f}",
            f"{r.replay_overhead_us:.2f}",
            f"{r.replay_overhead_us / sequential.replay_overhead_us:.2f}x",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))
    out += ["", measure.TARGETS_HEADING]
    widest = results[-1]
    record_ratio = widest.record / sequential.record
    out.append(
        measure.target_line(
            record_ratio <= RECORD_RATIO_TARGET,
            f"record per call, {widest.threads} threads vs sequential: {record_ratio:.2f}x "
            f"(target <= {RECORD_RATIO_TARGET:g}x)",
        )
    )
    for r in results[1:]:
        ratio = r.replay_overhead_us / sequential.replay_overhead_us
        out.append(
            measure.target_line(
                ratio <= REPLAY_RATIO_TARGET,
                f"replay overhead per call, {r.threads} threads vs sequential: {ratio:.2f}x "
                f"(target <= {REPLAY_RATIO_TARGET:g}x)",
            )
        )
    out += ["", measure.total_run_time(elapsed)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.concurrency",
        description="Benchmark record and replay with 1, 4 and 16 threads against sequential.",
    )
    measure.add_repeats(parser, per="figure")
    parser.add_argument(
        "--calls", type=int, default=CALLS, help=f"calls per figure (default {CALLS:,})"
    )
    args = parser.parse_args(argv)
    repeats: int = args.repeats
    n: int = args.calls
    if repeats < 1 or n < max(THREADS):
        parser.error(f"--repeats must be at least 1 and --calls at least {max(THREADS)}")
    n -= n % max(THREADS)  # every thread count divides N evenly
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-") as temporary:
        measure.progress(f"measuring N={n:,} with sequential calls and {THREADS} threads ...")
        results = measure_all(n, repeats, Path(temporary))
    print(report(results, repeats, time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
