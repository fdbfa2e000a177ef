"""Measuring and reporting, as every benchmark here does it.

Timing: each figure is the best of some repeats timed with `time.perf_counter`,
the cyclic garbage collector off (after a `gc.collect()`), and the variants of
one size interleaved so that a noisy moment hurts one repeat of every variant
rather than every repeat of one. Small sizes, whose timings last milliseconds,
get more repeats.

Reporting: plain-text tables with right-aligned columns, a header line naming
the Python, toolreplay and platform, a "best of" line, PASS/MISS/SKIP target
lines and the total run time, and the `--repeats` and `--sizes` flags.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager

import toolreplay

__all__ = [
    "DEFAULT_REPEATS",
    "SMALL_SIZE",
    "SMALL_SIZE_REPEAT_FACTOR",
    "TARGETS_HEADING",
    "add_repeats",
    "add_sizes",
    "best_of",
    "environment",
    "freeze_survivors",
    "gc_paused",
    "progress",
    "repeats_for",
    "repeats_line",
    "skip_line",
    "table",
    "target_line",
    "time_action",
    "total_run_time",
    "us_unit",
]

DEFAULT_REPEATS = 5
SMALL_SIZE = 10_000
"""Sizes below this get more repeats (see `repeats_for`)."""
SMALL_SIZE_REPEAT_FACTOR = 5
"""Small sizes get up to this many times the repeats (see `repeats_for`)."""

TARGETS_HEADING = "targets (informational; the exit status is 0 either way):"


# --- timing ---------------------------------------------------------------------------


@contextmanager
def gc_paused() -> Iterator[None]:
    """Collect, then keep the cyclic garbage collector off for the timed section."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def freeze_survivors() -> None:
    """Collect, then take every object alive now out of the collector's sight
    (`gc.freeze`): the imported modules and an SDK's lazy state after a warm-up.

    `gc_paused` collects before each timed section; with the OpenAI SDK loaded each
    of those took a fifth of a second, most of a small run's time, and after this
    scans only what the benchmark made since. Call it once, after the warm-up, in a
    benchmark that does not measure memory: cycles among frozen objects are never
    freed.
    """
    gc.collect()
    gc.freeze()


def time_action(action: Callable[[], object]) -> float:
    """Seconds to run `action()`, gc disabled; its result is freed after the clock stops."""
    with gc_paused():
        start = time.perf_counter()
        result = action()
        elapsed = time.perf_counter() - start
    del result
    return elapsed


def best_of(repeats: int, *actions: Callable[[], object]) -> list[float]:
    """The best `time_action` of each action over `repeats` rounds, in the order given.

    Each round runs every action once, one after another, so that a noisy
    moment hurts one repeat of every action rather than every repeat of one.
    """
    timings: list[list[float]] = [[] for _ in actions]
    for _ in range(repeats):
        for action, timing in zip(actions, timings, strict=True):
            timing.append(time_action(action))
    return [min(timing) for timing in timings]


def repeats_for(n: int, repeats: int, *, small: int = SMALL_SIZE) -> int:
    """More repeats for the sizes below `small`, whose short timings are the most easily
    disturbed: `repeats` times `small // n`, between 1 and `SMALL_SIZE_REPEAT_FACTOR`.

    A figure for a small N takes milliseconds, so five times the repeats costs
    little and keeps one scheduler hiccup from deciding a ratio.
    """
    return repeats * max(1, min(SMALL_SIZE_REPEAT_FACTOR, small // n))


# --- command line ---------------------------------------------------------------------


def add_repeats(
    parser: argparse.ArgumentParser,
    *,
    per: str = "measurement",
    default: int = DEFAULT_REPEATS,
    small: int = SMALL_SIZE,
    note: str = "",
) -> None:
    """`--repeats`: repeats per `per`, scaled up for small sizes by `repeats_for`.

    `note` ends the help text as given (start it with "; " or ". ").
    """
    parser.add_argument(
        "--repeats",
        type=int,
        default=default,
        help=(
            f"repeats per {per}, the best is kept (default {default}); sizes "
            f"below {small} get up to {SMALL_SIZE_REPEAT_FACTOR}x as many{note}"
        ),
    )


def add_sizes(parser: argparse.ArgumentParser, default: Sequence[int], what: str) -> None:
    """`--sizes N [N ...]`, described as `what` followed by the defaults."""
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(default),
        metavar="N",
        help=f"{what} (default: {' '.join(str(n) for n in default)})",
    )


def add_million(
    parser: argparse.ArgumentParser,
    size: int,
    what: str = "minutes, and memory for a trace that size",
) -> None:
    """`--million`: also measure N = `size`, which takes minutes, so is not a default."""
    parser.add_argument("--million", action="store_true", help=f"also measure N={size:,} ({what})")


def progress(message: str) -> None:
    """Report progress on stderr, leaving stdout to the report."""
    print(message, file=sys.stderr, flush=True)


# --- report ---------------------------------------------------------------------------


def environment(*libraries: str, cpus: bool = False) -> str:
    """The report's first line: Python, toolreplay, `libraries` ("name version"), platform,
    and the CPU count if `cpus`."""
    fields = [
        f"Python {platform.python_version()} ({platform.python_implementation()})",
        f"toolreplay {toolreplay.__version__}",
        *libraries,
        f"{platform.system()} {platform.machine()}",
    ]
    if cpus:
        fields.append(f"{os.cpu_count()} CPUs")
    return " | ".join(fields)


def repeats_line(repeats: Iterable[tuple[int, int]], per: str) -> str:
    """ "best of 25 (N=1,000), 5 (N=10,000) repeats per <per> (time.perf_counter)", from
    (N, repeats) pairs."""
    best = ", ".join(f"{count} (N={n:,})" for n, count in repeats)
    return f"best of {best} repeats per {per} (time.perf_counter)"


def us_unit() -> str:
    """ "µs", or "us" where stdout cannot encode the micro sign."""
    try:
        "µ".encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return "us"
    return "µs"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The lines of a plain-text table, every column right-aligned."""
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    lines = [" | ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines.append("-+-".join("-" * w for w in widths))
    lines.extend(
        " | ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows
    )
    return lines


def target_line(ok: bool, text: str) -> str:
    """A line under `TARGETS_HEADING`: "  [PASS] text" or "  [MISS] text"."""
    return f"  [{'PASS' if ok else 'MISS'}] {text}"


def skip_line(text: str) -> str:
    """A line under `TARGETS_HEADING` for a target that was not measured."""
    return f"  [SKIP] {text}"


def total_run_time(elapsed: float) -> str:
    """The report's last line."""
    return f"total run time {elapsed:.1f} s"
