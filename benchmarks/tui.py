"""TUI benchmark: how soon the debugger shows a big trace, what it keeps in memory, and filtering.

Run with `uv run python -m benchmarks.tui` (see benchmarks/README.md). For each
trace size N it writes a complete trace of N calls of `bench.kv.get` (with
`write_kv_trace`: every line the trace codec's encoding) to a temporary
directory and measures, side by side in one run, each in a fresh child process
so that memory figures are that process's own:

- `read_trace`: seconds to load the file with `toolreplay.read_trace`, and the
  child's peak RSS;
- the debugger, `toolreplay_tui.app.ToolReplayApp` headless
  (`App.run_test(size=(120, 40))`, its own modules imported before): first rows,
  from constructing the app to the first frame in which the operation list drew
  its first row; indexed and
  checked, when the background index and the integrity check finished; the
  child's peak RSS at the end (after the filters below);
- `G` after indexing: from posting the key to the frame showing the last row
  under the cursor;
- filtering as you type: `777` (matches spread through the trace, the first at
  operation 777), from posting the last key to the first frame showing a match;
  the last operation's unique key (one match, at the end), from the last key to
  the scan having read the whole trace; and a key typed while a scan runs, from
  posting it to the filter field holding it.

Frames are observed, not waited for: the app is a subclass that notes each frame
the screen composes (`App._display`, called even headless), and the list's
`render_line` notes which row it drew with the cursor on it. The targets are
informational: the process exits 0 whether they are met or not.

With `--forks K`, it also times the fork round trip on the bundled incident
(`examples/incident/refund.trp`, with the README walk's three patches pending):
from pressing `f` to the diff screen holding its rows after `d`, K times each with
cold child processes (`python -m toolreplay fork ...`, as before the warm runner)
and through the warm runner (started before the first timing: it has imported the
command line, and imports the application from the first run on), side by side,
the first fork of each session reported apart. With `--promotes K` (default 5), the same
for the promote round trip: from pressing `P` on the corrected fork to the run screen
showing the published case, with a cold `python -m toolreplay promote` child per promote
and through the warm runner.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import hashlib
import importlib
import inspect
import json
import os
import pty
import resource
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any
from unittest import mock

from rich.console import RenderableType
from textual import events
from textual.screen import Screen
from textual.strip import Strip
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.widgets.operation_list import OperationList

import toolreplay
from benchmarks import measure
from toolreplay import Operation, OperationIdentity, Returned
from toolreplay.trace import SessionEnding, TraceFooter, TraceHeader
from toolreplay.trace.codec import encode_footer, encode_header, encode_operation

__all__ = ["main", "write_kv_trace"]

SIZES = (1_000, 100_000, 1_000_000)
DEFAULT_REPEATS = 1
"""Child processes per size and kind (the best is kept); 1 keeps a full run near a few minutes."""
PRESSES = 3
"""Timed presses of `G` per app start; the best is kept."""
SCREEN_SIZE = (120, 40)
TIMEOUT = 600.0
"""Seconds to wait for any one frame or state before giving up (the app is broken then)."""

FIRST_ROWS_TARGET_S = 0.2
FILTER_FIRST_TARGET_S = 0.3
KEYSTROKE_TARGET_S = 0.1
SPREAD_QUERY = "777"
"""Filtered for first matches: keys and values holding 777 recur through the trace."""
NEEDLE = "needle-at-the-end"
"""The last operation's key: a query for it matches once, after a scan of the whole trace."""
KEYS = 4096
"""Distinct keys (`key-0000` ...) before they recur as later occurrences."""
FIRST_ROW_TEXT = b"bench.kv"
"""What the terminal receives once the first row is drawn (every operation's effect)."""


# --- writing traces ---------------------------------------------------------------------


def _kv_operation(logical_id: int, key: str, occurrence: int, fingerprint: str) -> Operation:
    identity = OperationIdentity("bench", "kv", fingerprint, occurrence)
    return Operation(logical_id, identity, {"key": key}, Returned({"value": logical_id}))


def write_kv_trace(path: Path, n: int) -> None:
    """A complete trace of `n` calls `bench.kv(key=...) -> {"value": i}`, quickly.

    The keys cycle through `KEYS` distinct values (later rounds are later
    occurrences) and the last call's key is `NEEDLE`. Each line is the codec's
    encoding of one operation: the codec encodes a template operation once, and
    each line fills in its fields; the first and last lines are checked against
    `encode_operation` of the real operation.
    """
    sentinels = {"logical_id": 9_876_543_210, "occurrence": 8_765_432_109, "value": 7_654_321_098}
    template = encode_operation(
        Operation(
            sentinels["logical_id"],
            OperationIdentity("bench", "kv", "f" * 64, sentinels["occurrence"]),
            {"key": "KEY-SENTINEL"},
            Returned({"value": sentinels["value"]}),
        )
    ).replace(b"%", b"%%")
    template = template.replace(b'"logical_id":9876543210', b'"logical_id":%(id)d', 1)
    template = template.replace(b'"occurrence":8765432109', b'"occurrence":%(occ)d', 1)
    template = template.replace(b'"value":7654321098', b'"value":%(id)d', 1)
    template = template.replace(b"f" * 64, b"%(fp)s", 1).replace(b"KEY-SENTINEL", b"%(key)s", 1)
    keys = [f"key-{k:04d}" for k in range(KEYS)]
    fingerprints = [toolreplay.fingerprint({"key": key}).encode() for key in keys]

    def line(i: int) -> bytes:
        if i == n - 1:
            return encode_operation(
                _kv_operation(i, NEEDLE, 0, toolreplay.fingerprint({"key": NEEDLE}))
            )
        k = i % KEYS
        fields = {b"id": i, b"occ": i // KEYS, b"fp": fingerprints[k], b"key": keys[k].encode()}
        return template % fields

    for i in (0, min(KEYS + 1, n - 1)):
        expected = _kv_operation(i, keys[i % KEYS], i // KEYS, fingerprints[i % KEYS].decode())
        if i < n - 1 and line(i) != encode_operation(expected):
            raise AssertionError(f"the template does not encode operation {i} as the codec does")
    digest = hashlib.sha256()
    header = TraceHeader(
        trace_id=f"bench-tui-{n}",
        mode="record",
        library_version=toolreplay.__version__,
        metadata={"benchmark": "benchmarks.tui", "runner": "bench:main"},
    )
    with path.open("wb") as out:
        first = encode_header(header)
        digest.update(first)
        out.write(first)
        for start in range(0, n, 8192):
            block = b"".join(line(i) for i in range(start, min(n, start + 8192)))
            digest.update(block)
            out.write(block)
        out.write(encode_footer(TraceFooter(n, digest.hexdigest(), SessionEnding("completed"))))


# --- observing frames -----------------------------------------------------------------


@dataclass(slots=True)
class FrameProbe:
    """What the screen painted: the first frame in which `condition` held."""

    started: float = field(default_factory=time.perf_counter)
    first_frame: float | None = None
    target: int | None = None
    drawn: bool = False
    condition: Callable[[], bool] | None = None
    painted: float | None = None
    event: asyncio.Event = field(default_factory=asyncio.Event)
    failed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by the app when it fails (it then never paints the awaited frame)."""

    def expect_row(self, row: int) -> None:
        """Wait for a frame in which the list draws `row` with the cursor on it."""
        self.target, self.drawn = row, False
        self.expect(lambda: self.drawn)

    def expect(self, condition: Callable[[], bool]) -> None:
        self.condition, self.painted = condition, None
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
        if self.first_frame is None:
            self.first_frame = time.perf_counter()
        if self.condition is not None and self.painted is None and self.condition():
            self.painted = time.perf_counter()
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
    """The debugger, noting each frame it composes."""

    CSS_PATH = Path(inspect.getfile(ToolReplayApp)).with_name("app.tcss")

    def __init__(self, trace: Path, directory: Path) -> None:
        self.probe = FrameProbe()
        super().__init__(trace, cwd=directory, blink_cursors=False, warm_runs=False)
        self.probe.failed = self._exception_event

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


def _post_key(app: ToolReplayApp, key: str) -> float:
    """Post `key` (as typed) to the app; the `time.perf_counter()` just before."""
    character = key if len(key) == 1 else None
    event = events.Key(key, character)
    event.set_sender(app)
    started = time.perf_counter()
    app.post_message(event)
    return started


async def _until(condition: Callable[[], object], what: str, poll: float = 0.001) -> float:
    """Poll (every millisecond, or `poll` seconds) until `condition()`; the
    `time.perf_counter()` then."""
    deadline = time.perf_counter() + TIMEOUT
    while not condition():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"not within {TIMEOUT:g} s: {what}")
        await asyncio.sleep(poll)
    return time.perf_counter()


BACKGROUND_POLL = 0.01
"""How often the waits for the index and the check look (seconds): polling every
millisecond for seconds would take a core from the work being waited for."""


def _peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """This process's peak resident set size (Linux reports kilobytes, macOS bytes); with
    `RUSAGE_CHILDREN`, that of its largest child that has ended."""
    peak = resource.getrusage(who).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


# --- a large value ----------------------------------------------------------------------

LARGE_SHAPES = ("records", "text")
"""A large value as a list of small objects (an API's page of rows), or as one string (a
file's content)."""
LARGE_TARGET_S = 0.5
"""Seconds to the first frame, and from `v` to the value's screen, with a large value."""
LARGE_MEMORY_TARGET = 4.0
"""Memory a large value may cost the debugger, in times its size."""


def _large_value(shape: str, size: int) -> toolreplay.JsonValue:
    if shape == "text":
        line = "the quick brown fox jumps over the lazy dog; "
        return (line * (size // len(line) + 1))[:size]
    row_size = len(json.dumps({"id": 0, "name": "customer 0", "note": "x" * 40}))
    count = max(1, size // (row_size + 1))
    return {"rows": [{"id": i, "name": f"customer {i}", "note": "x" * 40} for i in range(count)]}


def write_large_value_trace(path: Path, shape: str, size: int) -> int:
    """A complete trace: `bench.fetch(page=1)` returning a value of about `size` bytes
    (`shape`: records or text), then three small calls; returns the value's size as
    its line holds it."""
    value = _large_value(shape, size)
    fetch = toolreplay.fingerprint({"page": 1})
    operations = [
        Operation(0, OperationIdentity("bench", "fetch", fetch, 0), {"page": 1}, Returned(value))
    ]
    for i in range(1, 4):
        operations.append(
            _kv_operation(i, f"key-{i}", 0, toolreplay.fingerprint({"key": f"key-{i}"}))
        )
    header = TraceHeader(
        trace_id=f"bench-tui-large-{shape}",
        mode="record",
        library_version=toolreplay.__version__,
        metadata={"benchmark": "benchmarks.tui", "runner": "bench:main"},
    )
    from toolreplay.trace.writer import write_whole_trace

    write_whole_trace(
        path, header, operations, SessionEnding("completed"), overwrite=True, what="t"
    )
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


async def _measure_large(trace: Path) -> dict[str, float]:
    """First frame, first rows and `v` (on the first operation, the large one) to the
    frame showing the value's screen; the integrity check; the peak RSS."""
    app = BenchApp(trace, trace.parent)
    probe = app.probe
    probe.expect_row(0)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        first_rows = await probe.wait("the first row") - probe.started
        browse = app.screen
        probe.expect(lambda: app.screen is not browse)
        started = _post_key(app, "v")
        full_value = await probe.wait("the value's screen") - started
        checked = (
            await _until(
                lambda: app.background.integrity.state != "checking", "checked", BACKGROUND_POLL
            )
            - probe.started
        )
        if app.background.integrity.state != "ok":
            raise RuntimeError(f"the check failed: {app.background.integrity.problem}")
        await pilot.press("escape")
        await pilot.pause()
    assert probe.first_frame is not None
    return {
        "first_frame": probe.first_frame - probe.started,
        "first_rows": first_rows,
        "v": full_value,
        "checked": checked,
        "peak_rss_mb": _peak_rss_mb(),
        "check_rss_mb": _peak_rss_mb(resource.RUSAGE_CHILDREN),
    }


def child_large(trace: Path) -> dict[str, float]:
    for module in HARNESS_MODULES:
        importlib.import_module(module)  # before the clock
    with mock.patch.object(OperationList, "render_line", _noting_render_line):
        return asyncio.run(_measure_large(trace))


@dataclass(slots=True)
class LargeResult:
    """One shape of large value: its size, and the debugger with it and with a small one."""

    shape: str
    value_bytes: int
    large: dict[str, float]
    small: dict[str, float]


def measure_large(shape: str, size: int, repeats: int, directory: Path) -> LargeResult:
    """The debugger on a trace holding a `size`-byte value of `shape`, and on the same
    trace with a 1 KB value (whose peak RSS is the baseline the large value adds to)."""
    trace, small_trace = directory / f"large-{shape}.trp", directory / f"small-{shape}.trp"
    # Written by children: a process forked from one that built the value would start
    # with its peak RSS (Linux keeps `ru_maxrss` across fork and exec).
    written = _in_child("--child-write-large", shape, str(size), str(trace))
    value_bytes = int(written["value_bytes"])
    _in_child("--child-write-large", shape, "1000", str(small_trace))
    larges: list[dict[str, float]] = []
    smalls: list[dict[str, float]] = []
    for _ in range(repeats):
        smalls.append(_in_child("--child-large", str(small_trace)))
        larges.append(_in_child("--child-large", str(trace)))
    trace.unlink()
    small_trace.unlink()

    def best(runs: list[dict[str, float]]) -> dict[str, float]:
        return {key: min(run[key] for run in runs) for key in runs[0]}

    return LargeResult(shape, value_bytes, best(larges), best(smalls))


def large_report(results: Sequence[LargeResult]) -> str:
    out = [
        "",
        "a large value: `bench.fetch` returning it first, three small calls after; first frame "
        "and first rows from constructing the app; v: from posting `v` (the list on the large "
        "operation) to the frame showing its screen; checked: to the integrity check passing; "
        "RSS: the debugger's peak, what the large value adds to it (against the same session "
        "with a 1 KB value), and the peak of the child process the check runs in",
        "",
    ]
    headers = [
        "value",
        "MB",
        "first frame s",
        "first rows s",
        "v s",
        "checked s",
        "RSS MB",
        "RSS, 1 KB value MB",
        "added / value",
        "check child RSS MB",
    ]
    rows = []
    for r in results:
        added = (r.large["peak_rss_mb"] - r.small["peak_rss_mb"]) * 1024 * 1024
        rows.append(
            [
                r.shape,
                f"{r.value_bytes / 1e6:.1f}",
                f"{r.large['first_frame']:.3f}",
                f"{r.large['first_rows']:.3f}",
                f"{r.large['v']:.3f}",
                f"{r.large['checked']:.3f}",
                f"{r.large['peak_rss_mb']:.0f}",
                f"{r.small['peak_rss_mb']:.0f}",
                f"{added / r.value_bytes:.2f}x",
                f"{r.large['check_rss_mb']:.0f}",
            ]
        )
    out.extend(measure.table(headers, rows))
    out += ["", measure.TARGETS_HEADING]
    for r in results:
        slowest = max(r.large["first_rows"], r.large["v"])
        added = (r.large["peak_rss_mb"] - r.small["peak_rss_mb"]) * 1024 * 1024
        out.append(
            measure.target_line(
                slowest < LARGE_TARGET_S,
                f"{r.shape}: first rows and v under {LARGE_TARGET_S:g} s with a "
                f"{r.value_bytes / 1e6:.0f} MB value: {r.large['first_rows']:.3f} s and "
                f"{r.large['v']:.3f} s",
            )
        )
        out.append(
            measure.target_line(
                added < LARGE_MEMORY_TARGET * r.value_bytes,
                f"{r.shape}: the value adds under {LARGE_MEMORY_TARGET:g}x its size to the "
                f"peak RSS: {added / 1e6:.0f} MB, {added / r.value_bytes:.2f}x",
            )
        )
    return "\n".join(out)


# --- in a child process: one app start, or one read_trace --------------------------------


async def _measure_app(trace: Path, n: int, presses: int) -> dict[str, float]:
    app = BenchApp(trace, trace.parent)
    probe = app.probe
    probe.expect_row(0)
    async with app.run_test(size=SCREEN_SIZE) as pilot:
        first_rows = await probe.wait("the first row") - probe.started
        indexed = (
            await _until(lambda: app.background.indexed, "indexed", BACKGROUND_POLL) - probe.started
        )
        checked = (
            await _until(
                lambda: app.background.integrity.state != "checking", "checked", BACKGROUND_POLL
            )
            - probe.started
        )
        if app.background.integrity.state != "ok":
            raise RuntimeError(f"the check failed: {app.background.integrity.problem}")
        listing = app.browse.operations
        rows = app.rows
        assert rows is not None
        await pilot.pause()
        if listing.row_count() != n:
            raise RuntimeError(f"expected {n} operations listed, got {listing.row_count()}")
        g_times: list[float] = []
        for _ in range(presses):
            probe.expect_row(n - 1)
            started = _post_key(app, "G")
            g_times.append(await probe.wait("the last row after G") - started)
            await pilot.press("g")
            await pilot.pause()

        # Typing `777`: the list shows the first matches while the scan goes on.
        await pilot.press("slash")
        for key in SPREAD_QUERY[:-1]:
            _post_key(app, key)
        probe.expect(lambda: rows.query == SPREAD_QUERY and listing.shown_count > 0)
        started = _post_key(app, SPREAD_QUERY[-1])
        filter_first = await probe.wait("the first match") - started
        await _until(lambda: not rows.scanning, "the spread filter's scan")

        # The needle: one match, found once the scan has read everything.
        await pilot.press("ctrl+a", "ctrl+k")  # empty the field (clears the filter)
        for key in NEEDLE[:-1]:
            _post_key(app, key)
        started = _post_key(app, NEEDLE[-1])
        await _until(
            lambda: rows.query == NEEDLE and not rows.scanning and len(rows) == 1, "the needle"
        )
        filter_whole = time.perf_counter() - started
        if rows.index_at(0) != n - 1:
            raise RuntimeError(f"the needle was found at {rows.index_at(0)}, not {n - 1}")

        # A key typed while a scan reads the trace (one that matches nothing: a whole scan).
        await pilot.press("ctrl+a", "ctrl+k")
        for key in "zzz":
            _post_key(app, key)
        field_widget = app.browse.query_one("#filter")
        await _until(lambda: rows.query == "zzz" and rows.scanning, "the zzz scan")
        started = _post_key(app, "q")
        keystroke = (
            await _until(lambda: getattr(field_widget, "value", "") == "zzzq", "the keystroke")
            - started
        )
    assert probe.first_frame is not None
    return {
        "first_frame": probe.first_frame - probe.started,
        "first_rows": first_rows,
        "indexed": indexed,
        "checked": checked,
        "g": min(g_times),
        "filter_first": filter_first,
        "filter_whole": filter_whole,
        "keystroke": keystroke,
        "peak_rss_mb": _peak_rss_mb(),
    }


HARNESS_MODULES = ("textual.pilot", "textual.drivers.headless_driver")
"""What `App.run_test` imports when it starts: the harness's, not the app's (a terminal
start imports its own driver instead, which the cold figures time)."""


def child_app(trace: Path, n: int, presses: int) -> dict[str, float]:
    for module in HARNESS_MODULES:
        importlib.import_module(module)  # before the clock
    with mock.patch.object(OperationList, "render_line", _noting_render_line):
        return asyncio.run(_measure_app(trace, n, presses))


def child_read(trace: Path) -> dict[str, float]:
    started = time.perf_counter()
    loaded = toolreplay.read_trace(trace)
    seconds = time.perf_counter() - started
    del loaded
    return {"read_trace": seconds, "peak_rss_mb": _peak_rss_mb()}


def cold_first_rows(trace: Path, directory: Path, *, bytecode_cache: Path | None) -> float:
    """Seconds from starting `python -m toolreplay tui TRACE` in a pseudo-terminal of
    `SCREEN_SIZE` to its output holding the first row (`ctrl+q` then quits it).

    Everything a user waits for: the interpreter, the imports, the app, the warm
    runner starting beside it. `bytecode_cache`: a `PYTHONPYCACHEPREFIX` the child
    may write compiled modules to (as an installed package has them); None keeps the
    environment's setting (here `PYTHONDONTWRITEBYTECODE=1`: every module compiled anew).
    """
    environment = {**os.environ, "TERM": "xterm-256color"}
    if bytecode_cache is not None:
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        environment["PYTHONPYCACHEPREFIX"] = str(bytecode_cache)
    leader, follower = pty.openpty()
    width, height = SCREEN_SIZE
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))
    command = [sys.executable, "-m", "toolreplay", "tui", str(trace)]
    command += ["--workdir", str(directory / "cold-workdir")]
    started = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=directory,
        env=environment,
        start_new_session=True,
    )
    os.close(follower)
    try:
        seen = b""
        while FIRST_ROW_TEXT not in seen:  # the first row's effect, as the terminal gets it
            if select.select([leader], [], [], 0.5)[0]:
                seen = seen[-4096:] + os.read(leader, 1 << 16)
            if process.poll() is not None or time.perf_counter() - started > TIMEOUT:
                raise RuntimeError(f"toolreplay tui showed no row: {seen[-2000:]!r}")
        elapsed = time.perf_counter() - started
        os.write(leader, b"\x11")  # ctrl+q
        deadline = time.perf_counter() + 30
        while process.poll() is None and time.perf_counter() < deadline:
            if select.select([leader], [], [], 0.1)[0]:
                try:
                    os.read(leader, 1 << 16)  # drained, so the app never blocks writing
                except OSError:
                    break  # the terminal closed: the app has exited
        return elapsed
    finally:
        if process.poll() is None:
            os.killpg(process.pid, 9)
            process.wait()
        os.close(leader)


def _in_child(*args: str) -> dict[str, float]:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.tui", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT * 3,
        check=False,
        cwd=ROOT,
    )
    if result.returncode != 0:
        raise RuntimeError(f"the child {' '.join(args)} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


# --- measurements ---------------------------------------------------------------------


@dataclass(slots=True)
class SizeResult:
    """Best-of-repeats figures for one trace size (seconds, megabytes)."""

    n: int
    trace_bytes: int
    read: dict[str, float]
    app: dict[str, float]


def measure_size(n: int, repeats: int, presses: int, directory: Path) -> SizeResult:
    """`repeats` rounds of a read_trace child, an app child and the two cold starts of
    `toolreplay tui` on one trace, interleaved."""
    trace = directory / f"kv-{n}.trp"
    write_kv_trace(trace, n)
    bytecode = directory / "pycache"
    if not bytecode.exists():
        cold_first_rows(trace, directory, bytecode_cache=bytecode)  # compiles, untimed
    reads: list[dict[str, float]] = []
    apps: list[dict[str, float]] = []
    for _ in range(repeats):
        reads.append(_in_child("--child-read", str(trace)))
        apps.append(_in_child("--child-app", str(trace), str(n), "--presses", str(presses)))
        apps[-1]["cold"] = cold_first_rows(trace, directory, bytecode_cache=None)
        apps[-1]["cold_cached"] = cold_first_rows(trace, directory, bytecode_cache=bytecode)
    size = trace.stat().st_size
    trace.unlink()

    def best(runs: list[dict[str, float]]) -> dict[str, float]:
        return {key: min(run[key] for run in runs) for key in runs[0]}

    return SizeResult(n=n, trace_bytes=size, read=best(reads), app=best(apps))


# --- report ---------------------------------------------------------------------------


def report(results: Sequence[SizeResult], repeats: int, presses: int, elapsed: float) -> str:
    out = [
        measure.environment(f"textual {version('textual')}", cpus=True),
        f"best of {repeats} child process(es) per size for read_trace and for the debugger; "
        f"headless App.run_test(size={SCREEN_SIZE}); traces written by write_kv_trace to a "
        "temporary directory: bench.kv(key='key-<i mod 4096>') -> {'value': i}.",
        "first frame / first rows: from constructing the app to the first frame composed / to "
        "the first frame in which the operation list drew its first row; indexed / checked: "
        "until the background index / integrity check finished; RSS: the child's peak "
        "resident set size.",
        "",
    ]
    headers = [
        "N",
        "trace MB",
        "read_trace s",
        "read_trace RSS MB",
        "first frame s",
        "first rows s",
        "indexed s",
        "checked s",
        "RSS MB",
        "RSS / file",
        "G ms",
    ]
    rows = [
        [
            f"{r.n:,}",
            f"{r.trace_bytes / 1e6:.1f}",
            f"{r.read['read_trace']:.3f}",
            f"{r.read['peak_rss_mb']:.0f}",
            f"{r.app['first_frame']:.3f}",
            f"{r.app['first_rows']:.3f}",
            f"{r.app['indexed']:.3f}",
            f"{r.app['checked']:.3f}",
            f"{r.app['peak_rss_mb']:.0f}",
            f"{r.app['peak_rss_mb'] * 1024 * 1024 / r.trace_bytes:.2f}",
            f"{r.app['g'] * 1e3:.1f}",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))
    out += [
        "",
        f"filtering as you type: '{SPREAD_QUERY}' (matches recur through the trace) from the "
        "last key to the first frame showing a match; the last operation's key (one match) "
        "from the last key to the whole trace scanned; a key typed during a scan, from posting "
        "it to the field holding it",
        "",
    ]
    headers = [
        "N",
        "read_trace s",
        "first matches s",
        "whole scan s",
        "over read_trace",
        "key during scan ms",
    ]
    rows = [
        [
            f"{r.n:,}",
            f"{r.read['read_trace']:.3f}",
            f"{r.app['filter_first']:.3f}",
            f"{r.app['filter_whole']:.3f}",
            f"{r.app['filter_whole'] / r.read['read_trace']:.2f}x",
            f"{r.app['keystroke'] * 1e3:.1f}",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))

    out += [
        "",
        "from process start to first rows: `python -m toolreplay tui TRACE` in a "
        f"{SCREEN_SIZE[0]}x{SCREEN_SIZE[1]} pseudo-terminal (interpreter, imports, app, warm "
        "runner) until the terminal receives the first row; without a bytecode cache "
        "(PYTHONDONTWRITEBYTECODE as set here: every module compiled) and with one (as an "
        "installed package has)",
        "",
    ]
    headers = ["N", "first rows s (in process)", "cold, no bytecode s", "cold, bytecode s"]
    rows = [
        [
            f"{r.n:,}",
            f"{r.app['first_rows']:.3f}",
            f"{r.app['cold']:.3f}",
            f"{r.app['cold_cached']:.3f}",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))

    out += ["", measure.TARGETS_HEADING]
    largest, smallest = results[-1], results[0]
    at = f"N={largest.n:,}"
    first_rows = largest.app["first_rows"]
    out.append(
        measure.target_line(
            first_rows < FIRST_ROWS_TARGET_S,
            f"first rows under {FIRST_ROWS_TARGET_S:g} s at {at}: {first_rows:.3f} s "
            f"(N={smallest.n:,}: {smallest.app['first_rows']:.3f} s)",
        )
    )
    rss = largest.app["peak_rss_mb"] * 1024 * 1024
    out.append(
        measure.target_line(
            rss < largest.trace_bytes,
            f"peak RSS below the trace's size at {at}: {rss / 1e6:.0f} MB vs "
            f"{largest.trace_bytes / 1e6:.0f} MB (read_trace: "
            f"{largest.read['peak_rss_mb'] * 1024 * 1024 / 1e6:.0f} MB)",
        )
    )
    first_matches = largest.app["filter_first"]
    out.append(
        measure.target_line(
            first_matches < FILTER_FIRST_TARGET_S,
            f"first filter matches under {FILTER_FIRST_TARGET_S:g} s at {at}: "
            f"{first_matches:.3f} s",
        )
    )
    keystroke = largest.app["keystroke"]
    out.append(
        measure.target_line(
            keystroke < KEYSTROKE_TARGET_S,
            f"a key typed during a scan shows under {KEYSTROKE_TARGET_S * 1e3:g} ms at {at}: "
            f"{keystroke * 1e3:.1f} ms",
        )
    )
    out += ["", measure.total_run_time(elapsed)]
    return "\n".join(out)


ROOT = Path(__file__).resolve().parent.parent
INCIDENT = ROOT / "examples" / "incident" / "refund.trp"
FORK_TARGET = 0.5
"""Seconds from `f` to a ready diff through the warm runner."""
PROMOTE_TARGET = 0.5
"""Seconds from `P` to the promoted case shown, through the warm runner."""


def _incident_patches(operations: Sequence[Operation]) -> list[toolreplay.Patch]:
    """The README walk's patches: the model says manual_review; the queue and notice answer."""
    import copy

    model = next(op for op in operations if op.effect == "openai.responses.create")
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
        while app.trace is None or app.background.integrity.state != "ok":
            await pilot.pause(0.05)
        for patch in _incident_patches(app.trace.operations):
            app.pending.put(patch)
        if app.warm is not None:
            # Started and prepared before any timing (the command line and, for this
            # OpenAI trace, the adapter and SDK imported), as while a user browses.
            while [w for w in app.workers if w.group == "warm" and not w.is_finished]:
                await asyncio.sleep(0.01)
            app.warm.warm_up()
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


async def promote_round_trips(directory: Path, *, warm: bool, promotes: int) -> list[float]:
    """Seconds from `P` on the incident's corrected fork to the run screen showing the
    case, `promotes` times, through a cold child per promote or the warm runner."""
    import os
    import shutil

    from toolreplay_tui.screens.run import RunScreen

    environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    environment["PYTHONPATH"] = str(ROOT)
    workdir = directory / ("promote-warm" if warm else "promote-cold")
    app = ToolReplayApp(
        INCIDENT,
        cwd=directory,
        env=environment,
        workdir=workdir,
        blink_cursors=False,
        warm_runs=warm,
    )
    timings: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        while app.trace is None or app.background.integrity.state != "ok":
            await pilot.pause(0.05)
        for patch in _incident_patches(app.trace.operations):
            app.pending.put(patch)
        if app.warm is not None:
            app.warm.warm_up()  # started and probed before any timing
        _post_key(app, "f")
        while app.last_fork is None:
            await asyncio.sleep(0.005)
        fork = app.last_fork
        assert fork.result.ok, (fork.result.error, fork.result.stderr)
        await pilot.press("escape")
        for _ in range(promotes):
            app.last_promote = None
            started = time.perf_counter()
            _post_key(app, "P")
            while app.last_promote is None or not isinstance(app.screen, RunScreen):
                await asyncio.sleep(0.005)
            timings.append(time.perf_counter() - started)
            promoted = app.last_promote
            assert promoted.ok, (promoted.error, promoted.stderr)
            assert promoted.case is not None
            await pilot.press("escape")
            shutil.rmtree(directory / promoted.case.directory)  # the next P makes it again
    return timings


def promote_report(cold: list[float], warm: list[float]) -> str:
    cold_median, warm_median = statistics.median(cold), statistics.median(warm)
    rows = [
        ["cold child per promote", f"{cold_median:.3f}", f"{min(cold):.3f}", "1.00x"],
        [
            "warm runner (os.fork)",
            f"{warm_median:.3f}",
            f"{min(warm):.3f}",
            f"{cold_median / warm_median:.2f}x faster",
        ],
    ]
    out = [
        "",
        "promote round trip on the bundled incident's corrected fork, P to the case shown "
        f"({len(cold)} promotes each)",
        *measure.table(["runs", "median s", "best s", "ratio"], rows),
        "",
        measure.TARGETS_HEADING,
        measure.target_line(
            warm_median < PROMOTE_TARGET,
            f"warm promote round trip under {PROMOTE_TARGET:g} s: {warm_median:.3f} s "
            f"(cold {cold_median:.3f} s)",
        ),
    ]
    return "\n".join(out)


def fork_report(cold: list[float], warm: list[float]) -> str:
    """The first fork of a session, and the median and best of the later ones."""
    later_cold, later_warm = cold[1:] or cold, warm[1:] or warm
    cold_median, warm_median = statistics.median(later_cold), statistics.median(later_warm)
    rows = [
        [
            "cold child per fork",
            f"{cold[0]:.3f}",
            f"{cold_median:.3f}",
            f"{min(later_cold):.3f}",
            "1.00x",
        ],
        [
            "warm runner (os.fork)",
            f"{warm[0]:.3f}",
            f"{warm_median:.3f}",
            f"{min(later_warm):.3f}",
            f"{cold_median / warm_median:.2f}x faster",
        ],
    ]
    out = [
        "",
        f"fork round trip on the bundled incident, f to diff ready ({len(cold)} forks each; "
        "the first of the session apart: the warm runner imports the application only once "
        "a run has imported it)",
        *measure.table(["runs", "first s", "later median s", "later best s", "ratio"], rows),
        "",
        measure.TARGETS_HEADING,
        measure.target_line(
            warm_median < FORK_TARGET,
            f"warm fork round trip (after the first) under {FORK_TARGET:g} s: "
            f"{warm_median:.3f} s (cold {cold_median:.3f} s)",
        ),
    ]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.tui",
        description=(
            "Benchmark the debugger on big traces (first rows, memory, G, filtering) beside "
            "read_trace, and the fork round trip."
        ),
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help=f"child processes per size for each of read_trace and the debugger, the best is "
        f"kept (default {DEFAULT_REPEATS})",
    )
    parser.add_argument(
        "--presses",
        type=int,
        default=PRESSES,
        help=f"timed presses of G per app start (default {PRESSES})",
    )
    measure.add_sizes(parser, SIZES, "trace sizes, smallest first")
    parser.add_argument(
        "--forks",
        type=int,
        default=5,
        help="timed fork round trips on the bundled incident, cold and warm (0 skips them)",
    )
    parser.add_argument(
        "--large-mb",
        type=float,
        default=50.0,
        help="the size of the large value, in MB (0 skips it; default 50)",
    )
    parser.add_argument("--child-large", metavar="TRACE", help=argparse.SUPPRESS)
    parser.add_argument("--child-write-large", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument(
        "--promotes",
        type=int,
        default=5,
        help="timed promote round trips on the bundled incident's corrected fork, cold and "
        "warm (0 skips them)",
    )
    parser.add_argument("--child-app", nargs=2, metavar=("TRACE", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--child-read", metavar="TRACE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_app is not None:
        trace, n = args.child_app
        print(json.dumps(child_app(Path(trace), int(n), args.presses)))
        return 0
    if args.child_write_large is not None:
        shape, size, path = args.child_write_large
        print(json.dumps({"value_bytes": write_large_value_trace(Path(path), shape, int(size))}))
        return 0
    if args.child_large is not None:
        print(json.dumps(child_large(Path(args.child_large))))
        return 0
    if args.child_read is not None:
        print(json.dumps(child_read(Path(args.child_read))))
        return 0
    repeats: int = args.repeats
    presses: int = args.presses
    sizes: list[int] = sorted(args.sizes)
    if repeats < 1 or presses < 1 or sizes[0] < 1000:
        parser.error("--repeats and --presses must be at least 1, and every size at least 1000")

    started = time.perf_counter()
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-") as temporary:
        directory = Path(temporary)
        for n in sizes:
            measure.progress(f"measuring N={n:,} ...")
            results.append(measure_size(n, repeats, presses, directory))
        large_text = ""
        if args.large_mb > 0:
            large: list[LargeResult] = []
            for shape in LARGE_SHAPES:
                measure.progress(f"measuring a {args.large_mb:g} MB value of {shape} ...")
                large.append(measure_large(shape, int(args.large_mb * 1e6), repeats, directory))
            large_text = large_report(large)
        fork_text = ""
        if args.forks > 0:
            measure.progress("timing fork round trips (cold, then warm) ...")
            cold = asyncio.run(fork_round_trips(directory, warm=False, forks=args.forks))
            warm = asyncio.run(fork_round_trips(directory, warm=True, forks=args.forks))
            fork_text = fork_report(cold, warm)
        if args.promotes > 0:
            measure.progress("timing promote round trips (cold, then warm) ...")
            cold = asyncio.run(promote_round_trips(directory, warm=False, promotes=args.promotes))
            warm = asyncio.run(promote_round_trips(directory, warm=True, promotes=args.promotes))
            fork_text += "\n" + promote_report(cold, warm)
    print(report(results, repeats, presses, time.perf_counter() - started) + large_text + fork_text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
