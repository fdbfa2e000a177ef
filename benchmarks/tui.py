"""TUI benchmark: how soon the debugger shows a big trace, and what jumping in it costs.

Run with `uv run python -m benchmarks.tui` (see benchmarks/README.md). For each
trace size N it starts `toolreplay_tui.app.ToolReplayApp` headless
(`App.run_test(size=(120, 40))`) on a trace recorded with `toolreplay.record`
and measures, side by side in one run:

- first paint: from constructing the app to the first frame in which the
  operation list drew its first row (the trace loaded off the event loop, rows
  set), with the garbage collector off and, in a separate start, on;
- `G`: from posting the key to the first frame in which the list drew its last
  row with the cursor on it; then `k` (one row up) and `j` (back to the last
  row), the same way.

Frames are observed, not waited for: the app is a subclass that notes each frame
the screen composes (`App._display`, called even headless), and the list's
`render_line` notes which row it drew with the cursor on it. So no figure
includes the 20 ms idle waits of `Pilot.pause()` and `Pilot.press()`, which are
used only between timings. The targets are informational: the process exits 0
whether they are met or not.

With `--forks K`, it also times the fork round trip on the bundled incident
(`examples/incident/refund.trp`, with the README walk's three patches pending):
from pressing `f` to the diff screen holding its rows after `d`, K times each with
cold child processes (`python -m toolreplay fork ...`, as before the warm runner)
and through the warm runner (started and probed before the first timing), side by
side.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import inspect
import statistics
import tempfile
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any
from unittest import mock

from rich.console import RenderableType
from textual import events
from textual.pilot import Pilot
from textual.screen import Screen
from textual.strip import Strip
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.model.rows import OperationRows
from toolreplay_tui.widgets.operation_list import OperationList

import toolreplay
from benchmarks import measure

__all__ = ["main"]

SIZES = (1_000, 10_000, 100_000)
DEFAULT_REPEATS = 3
"""Rounds per size, each one app start with gc off and one with gc on (more rounds for
small sizes, see `measure.repeats_for`); 3 rather than 5 keeps a full run near a minute."""
PRESSES = 5
"""Timed presses of each key per app start; the best over all starts is kept."""
KEYS = ("G", "k", "j")
"""Timed in this order from the first row: to the last row, one up, one down again."""
SCREEN_SIZE = (120, 40)
TIMEOUT = 60.0
"""Seconds to wait for any one frame before giving up (the app is broken then)."""

FIRST_PAINT_TARGET_S = 1.0
"""First paint at the largest N (100,000 by default), gc off: at most this."""
FIRST_PAINT_TARGET_N = 100_000
G_FLATNESS_TARGET = 3.0
"""`G` cost at the largest N over the smallest: at most this (ideal 1.0)."""


def kv_get_plain(key: str) -> dict[str, int]:
    """The recorded effect: distinct inputs (`key`), a small output."""
    return {"value": len(key)}


kv_get = toolreplay.effect("bench.kv.get")(kv_get_plain)


def write_trace(path: Path, n: int) -> None:
    with toolreplay.record(path):
        for i in range(n):
            kv_get(f"key-{i:06d}")


# --- observing frames -----------------------------------------------------------------


@dataclass(slots=True)
class FrameProbe:
    """What the screen painted: the first frame, and the frame showing the awaited row."""

    started: float = field(default_factory=time.perf_counter)
    first_frame: float | None = None
    loaded: float | None = None
    target: int | None = None
    drawn: bool = False
    painted: float | None = None
    event: asyncio.Event = field(default_factory=asyncio.Event)
    failed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by the app when it fails (it then never paints the awaited frame)."""

    def expect(self, row: int) -> None:
        """Wait for a frame in which the list draws `row` with the cursor on it."""
        self.target, self.drawn, self.painted = row, False, None
        self.event.clear()

    def row_drawn(self, listing: OperationList, y: int) -> None:
        position = round(listing.scroll_offset.y) + y
        if (
            position == self.target
            and listing.cursor == position
            and position < listing.row_count()
        ):
            self.drawn = True

    def frame(self) -> None:
        now = time.perf_counter()
        if self.first_frame is None:
            self.first_frame = now
        if self.drawn and self.painted is None:
            self.painted = now
            self.event.set()

    async def wait(self, what: str) -> float:
        """The `time.perf_counter()` of the awaited frame, once it is composed."""
        waits = [
            asyncio.ensure_future(self.event.wait()),
            asyncio.ensure_future(self.failed.wait()),
        ]
        await asyncio.wait(waits, timeout=TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        for waiting in waits:
            waiting.cancel()
        if self.painted is None:
            problem = "the app failed" if self.failed.is_set() else f"not within {TIMEOUT:g} s"
            raise RuntimeError(f"no frame showed {what}: {problem}")
        return self.painted


class BenchApp(ToolReplayApp):
    """The debugger, noting when it has loaded the trace and each frame it composes."""

    CSS_PATH = Path(inspect.getfile(ToolReplayApp)).with_name("app.tcss")

    def __init__(self, trace: Path, directory: Path) -> None:
        self.probe = FrameProbe()
        super().__init__(trace, cwd=directory, blink_cursors=False)
        self.probe.failed = self._exception_event

    def _loaded(self, trace: toolreplay.Trace, rows: OperationRows, effect_width: int) -> None:
        self.probe.loaded = time.perf_counter()
        super()._loaded(trace, rows, effect_width)

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        super()._display(screen, renderable)
        if renderable is not None and not self._batch_count:
            self.probe.frame()


_render_line = OperationList.render_line


def _noting_render_line(self: OperationList, y: int) -> Strip:
    strip = _render_line(self, y)
    app = self.app
    if isinstance(app, BenchApp):
        app.probe.row_drawn(self, y)
    return strip


# --- one app start --------------------------------------------------------------------


@dataclass(slots=True)
class StartResult:
    """Seconds, for one start of the app on one trace."""

    first_frame: float
    loaded: float
    first_rows: float
    keys: dict[str, list[float]]


async def _press(app: BenchApp, key: str, row: int) -> float:
    """Seconds from posting `key` to the frame showing the cursor on `row`."""
    probe = app.probe
    probe.expect(row)
    event = events.Key(key, key)
    event.set_sender(app)
    start = time.perf_counter()
    app.post_message(event)
    return await probe.wait(f"row {row} under the cursor after {key!r}") - start


def _check(app: BenchApp, n: int, cursor: int) -> None:
    listing = app.browse.operations
    if app.trace is None or len(app.trace) != n or listing.row_count() != n:
        raise RuntimeError(f"expected {n} operations listed, got {listing.row_count()}")
    if listing.current_index != cursor:
        raise RuntimeError(f"expected the cursor on {cursor}, got {listing.current_index}")


async def _settle(pilot: Pilot[None], app: BenchApp, n: int, cursor: int) -> None:
    await pilot.pause()
    _check(app, n, cursor)
    if app.trace is None or app.browse.detail.operation is not app.trace.operations[cursor]:
        raise RuntimeError(f"the detail pane does not show operation #{cursor}")


async def run_start(trace: Path, n: int, directory: Path, presses: int) -> StartResult:
    """Start the app on `trace`; time the first paint, then `presses` rounds of G, k, j."""
    app = BenchApp(trace, directory)
    probe = app.probe
    probe.expect(0)
    keys: dict[str, list[float]] = {key: [] for key in KEYS}
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        first_rows = await probe.wait("the first row") - probe.started
        await _settle(pilot, app, n, 0)
        last = n - 1
        for _ in range(presses):
            keys["G"].append(await _press(app, "G", last))
            await _settle(pilot, app, n, last)
            keys["k"].append(await _press(app, "k", last - 1))
            await _settle(pilot, app, n, last - 1)
            keys["j"].append(await _press(app, "j", last))
            await _settle(pilot, app, n, last)
            await pilot.press("g")
            await _settle(pilot, app, n, 0)
    if probe.first_frame is None or probe.loaded is None:
        raise RuntimeError("the app never noted a frame or a loaded trace")
    return StartResult(
        first_frame=probe.first_frame - probe.started,
        loaded=probe.loaded - probe.started,
        first_rows=first_rows,
        keys=keys,
    )


def start(trace: Path, n: int, directory: Path, *, gc_on: bool, presses: int) -> StartResult:
    paused: AbstractContextManager[None] = nullcontext() if gc_on else measure.gc_paused()
    if gc_on:
        gc.collect()
    with mock.patch.object(OperationList, "render_line", _noting_render_line), paused:
        return asyncio.run(run_start(trace, n, directory, presses))


# --- measurements ---------------------------------------------------------------------


@dataclass(slots=True)
class SizeResult:
    """Best-of-repeats timings (seconds) for one trace size."""

    n: int
    trace_bytes: int
    read_trace: float
    first_frame: float
    loaded: float
    first_rows: float
    first_rows_gc_on: float
    keys: dict[str, float]
    g_median: float


def measure_size(n: int, repeats: int, presses: int, directory: Path) -> SizeResult:
    """All timings for one N: `repeats` rounds of read_trace, a start with gc off (first
    paint, then the keys) and a start with gc on (first paint only), interleaved."""
    trace = directory / f"kv-{n}.trp"
    write_trace(trace, n)
    read: list[float] = []
    runs: list[StartResult] = []
    gc_on: list[float] = []
    for _ in range(repeats):
        read.append(measure.time_action(lambda: toolreplay.read_trace(trace)))
        runs.append(start(trace, n, directory, gc_on=False, presses=presses))
        gc_on.append(start(trace, n, directory, gc_on=True, presses=0).first_rows)
    size = trace.stat().st_size
    trace.unlink()
    return SizeResult(
        n=n,
        trace_bytes=size,
        read_trace=min(read),
        first_frame=min(r.first_frame for r in runs),
        loaded=min(r.loaded for r in runs),
        first_rows=min(r.first_rows for r in runs),
        first_rows_gc_on=min(gc_on),
        keys={key: min(t for r in runs for t in r.keys[key]) for key in KEYS},
        g_median=statistics.median(t for r in runs for t in r.keys["G"]),
    )


# --- report ---------------------------------------------------------------------------


def report(results: Sequence[SizeResult], repeats: int, presses: int, elapsed: float) -> str:
    out = [
        measure.environment(f"textual {version('textual')}"),
        measure.repeats_line(
            ((r.n, measure.repeats_for(r.n, repeats)) for r in results), "figure (app starts)"
        ),
        f"headless App.run_test(size={SCREEN_SIZE}); gc disabled (gc.collect() first) except "
        "in 'first rows gc on s'; traces written with toolreplay.record to a temporary "
        "directory. Effect: bench.kv.get(key='key-<i>') -> {'value': 10}, key distinct.",
        "first paint: from constructing the app to the first frame composed (first frame), "
        "to the trace handed to the app by its loading thread (loaded), and to the first "
        "frame in which the operation list drew its first row (first rows).",
        "",
    ]
    headers = [
        "N",
        "trace MB",
        "read_trace s",
        "first frame s",
        "loaded s",
        "first rows s",
        "over read_trace s",
        "first rows gc on s",
    ]
    rows = [
        [
            f"{r.n:,}",
            f"{r.trace_bytes / 1e6:.2f}",
            f"{r.read_trace:.3f}",
            f"{r.first_frame:.3f}",
            f"{r.loaded:.3f}",
            f"{r.first_rows:.3f}",
            f"{r.first_rows - r.read_trace:.3f}",
            f"{r.first_rows_gc_on:.3f}",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))
    out += [
        "",
        f"keys: from posting the key to the first frame in which the list drew the target row "
        f"under the cursor; presses of each key per start (gc off): {presses}, the best of all "
        "kept (and the median for G)",
        "",
    ]
    headers = ["N", "G ms", "G median ms", "k after G ms", "j after k ms"]
    rows = [
        [
            f"{r.n:,}",
            f"{r.keys['G'] * 1e3:.1f}",
            f"{r.g_median * 1e3:.1f}",
            f"{r.keys['k'] * 1e3:.1f}",
            f"{r.keys['j'] * 1e3:.1f}",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))

    out += ["", measure.TARGETS_HEADING]
    largest = results[-1]
    target_sizes = [r for r in results if r.n == FIRST_PAINT_TARGET_N]
    if target_sizes:
        first_rows = target_sizes[0].first_rows
        out.append(
            measure.target_line(
                first_rows < FIRST_PAINT_TARGET_S,
                f"first paint with rows under {FIRST_PAINT_TARGET_S:g} s at "
                f"N={FIRST_PAINT_TARGET_N:,}: {first_rows:.3f} s",
            )
        )
    else:
        out.append(
            measure.skip_line(
                f"first paint with rows under {FIRST_PAINT_TARGET_S:g} s at "
                f"N={FIRST_PAINT_TARGET_N:,} (that size was not run)"
            )
        )
    if len(results) >= 2:
        small = results[0]
        ratio = largest.keys["G"] / small.keys["G"]
        out.append(
            measure.target_line(
                ratio <= G_FLATNESS_TARGET,
                f"G cost flat in N, N={largest.n:,} vs N={small.n:,}: "
                f"{largest.keys['G'] * 1e3:.1f} ms vs {small.keys['G'] * 1e3:.1f} ms = "
                f"{ratio:.2f}x (target within {G_FLATNESS_TARGET:g}x, ideal 1.0)",
            )
        )
    else:
        out.append(measure.skip_line("G cost flat in N (needs two sizes)"))
    out += ["", measure.total_run_time(elapsed)]
    return "\n".join(out)


ROOT = Path(__file__).resolve().parent.parent
INCIDENT = ROOT / "examples" / "incident" / "refund.trp"
FORK_TARGET = 0.5
"""Seconds from `f` to a ready diff through the warm runner."""


def _incident_patches(trace: toolreplay.Trace) -> list[toolreplay.Patch]:
    """The README walk's patches: the model says manual_review; the queue and notice answer."""
    import copy

    model = next(op for op in trace.operations if op.effect == "openai.responses.create")
    outcome = model.outcome
    assert isinstance(outcome, toolreplay.Returned)
    envelope: Any = copy.deepcopy(outcome.value)
    envelope["body"]["output"][1]["content"][0]["text"] = "manual_review"
    return [
        toolreplay.replace_output(effect=model.effect, inputs=model.inputs, value=envelope),
        toolreplay.supply_output(
            effect="review.queue.add",
            inputs={
                "order_id": "ord_1042",
                "amount": 1200.0,
                "reason": "above the manual review limit",
            },
            value={"ticket": "rv_ord_1042", "queue": "refunds"},
        ),
        toolreplay.supply_output(
            effect="notify.customer",
            inputs={
                "customer_id": 5817,
                "message": "Your refund request for order ord_1042 is being reviewed by our team.",
            },
            value={"sent": True, "channel": "email"},
        ),
    ]


async def fork_round_trips(directory: Path, *, warm: bool, forks: int) -> list[float]:
    """Seconds from `f` to the diff's rows, `forks` times, cold or through the warm runner."""
    import os

    from toolreplay_tui.screens.diff import DiffScreen

    environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    environment["PYTHONPATH"] = str(ROOT)
    app = ToolReplayApp(
        INCIDENT,
        cwd=directory,
        env=environment,
        workdir=directory / ("warm" if warm else "cold"),
        blink_cursors=False,
        warm_runs=warm,
    )
    timings: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        while app.trace is None:
            await pilot.pause(0.05)
        for patch in _incident_patches(app.trace):
            app.pending.put(patch)
        if app.warm is not None:
            app.warm.warm_up()  # started and probed before any timing
        for _ in range(forks):
            before = app.last_fork
            # Keys are posted, not pressed: `Pilot.press` waits for the app to be idle,
            # which a running fork's spinner never is.
            started = time.perf_counter()
            _post_key(app, "f")
            while app.last_fork is before:
                await asyncio.sleep(0.005)
            _post_key(app, "d")
            screen = app.screen
            while not (isinstance(screen, DiffScreen) and screen.rows is not None):
                await asyncio.sleep(0.005)
                screen = app.screen
            timings.append(time.perf_counter() - started)
            fork = app.last_fork
            assert fork is not None
            assert fork.result.ok, (fork.result.error, fork.result.stderr)
            await pilot.press("escape")
    return timings


def _post_key(app: ToolReplayApp, key: str) -> None:
    event = events.Key(key, key)
    event.set_sender(app)
    app.post_message(event)


def fork_report(cold: list[float], warm: list[float]) -> str:
    cold_median, warm_median = statistics.median(cold), statistics.median(warm)
    rows = [
        ["cold child per fork", f"{cold_median:.3f}", f"{min(cold):.3f}", "1.00x"],
        [
            "warm runner (os.fork)",
            f"{warm_median:.3f}",
            f"{min(warm):.3f}",
            f"{cold_median / warm_median:.2f}x faster",
        ],
    ]
    out = [
        "",
        f"fork round trip on the bundled incident, f to diff ready ({len(cold)} forks each)",
        *measure.table(["runs", "median s", "best s", "ratio"], rows),
        "",
        measure.TARGETS_HEADING,
        measure.target_line(
            warm_median < FORK_TARGET,
            f"warm fork round trip under {FORK_TARGET:g} s: {warm_median:.3f} s "
            f"(cold {cold_median:.3f} s)",
        ),
    ]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.tui",
        description="Benchmark the debugger's first paint and G (jump to the last operation).",
    )
    measure.add_repeats(
        parser, per="size (app starts with gc off, and as many with gc on)", default=DEFAULT_REPEATS
    )
    parser.add_argument(
        "--presses",
        type=int,
        default=PRESSES,
        help=f"timed presses of each key per app start with gc off (default {PRESSES})",
    )
    measure.add_sizes(parser, SIZES, "trace sizes, smallest first")
    parser.add_argument(
        "--forks",
        type=int,
        default=5,
        help="timed fork round trips on the bundled incident, cold and warm (0 skips them)",
    )
    args = parser.parse_args(argv)
    repeats: int = args.repeats
    presses: int = args.presses
    sizes: list[int] = sorted(args.sizes)
    if repeats < 1 or presses < 1 or sizes[0] < 2:
        parser.error("--repeats and --presses must be at least 1, and every size at least 2")

    started = time.perf_counter()
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-") as temporary:
        directory = Path(temporary)
        warmup = directory / "warmup.trp"
        write_trace(warmup, 100)
        start(warmup, 100, directory, gc_on=False, presses=1)
        warmup.unlink()
        for n in sizes:
            measure.progress(f"measuring N={n:,} ...")
            count = measure.repeats_for(n, repeats)
            results.append(measure_size(n, count, presses, directory))
        fork_text = ""
        if args.forks > 0:
            measure.progress("timing fork round trips (cold, then warm) ...")
            cold = asyncio.run(fork_round_trips(directory, warm=False, forks=args.forks))
            warm = asyncio.run(fork_round_trips(directory, warm=True, forks=args.forks))
            fork_text = fork_report(cold, warm)
    print(report(results, repeats, presses, time.perf_counter() - started) + fork_text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
