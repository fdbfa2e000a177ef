"""Malformed traces in the debugger: a precise message (which line, what is wrong), exit
status 2, never a crash, never "checked" for a trace whose lines do not decode, and no
pending patch lost to a crash.

Audit of issue 26 first: a NUL in the runner crashed with `ValueError: embedded null
byte` and a crash file of one line; a malformed operation line exited 1 "tui crashed
(TraceFormatError)"; invalid UTF-8 at operation 300 under a valid footer showed
"complete · checked", and `:300` then crashed the UI and lost the unsaved patches.
Then a fuzz: real traces corrupted at many positions (byte flips, truncations, invalid
UTF-8, NUL, deep nesting, huge numbers, duplicate keys), each opened in the app and
walked row by row, the app's verdict compared with `read_trace`'s.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import shlex
import shutil
import signal
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.worker import WorkerFailed
from toolreplay_tui.app import CANNOT_OPEN_EXIT_CODE, ToolReplayApp
from toolreplay_tui.model.rows import OperationRows
from toolreplay_tui.model.trace_file import TraceFile
from toolreplay_tui.screens.full_value import FullValueScreen

import toolreplay
from tests.tui.pilot import SIZE, pilot_test, said, text_of, wait_for
from tests.tui.terminal import TMUX, TmuxTerminal
from tests.tui.test_terminal_walk import tui_command

ROOT = Path(__file__).resolve().parents[2]
REAL_TRACES = {
    "incident": ROOT / "examples" / "incident" / "refund.trp",
    "concurrent-v4": ROOT / "tests" / "fixtures" / "concurrent-v4.trp",
    "sequential-v3": ROOT / "tests" / "fixtures" / "sequential-v3.trp",
}


@toolreplay.effect("kv.get")
def kv_get(i: int) -> dict[str, object]:
    return {"i": i, "text": f"value {i}"}


def kv_trace(path: Path, count: int, runner: str = "nothere:main") -> Path:
    with toolreplay.record(path, metadata={"runner": runner}):
        for i in range(count):
            kv_get(i)
    return path


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def with_footer(lines: list[bytes], footer: bytes) -> bytes:
    """`lines` (header and operations) and `footer` with its count and digest made to fit,
    as a hand editor who knows the format would make them."""
    body = b"".join(line + b"\n" for line in lines)
    document = json.loads(footer)
    document["digest"] = hashlib.sha256(body).hexdigest()
    document["operation_count"] = len(lines) - 1
    return body + json.dumps(document, separators=(",", ":")).encode() + b"\n"


def open_app(trace: Path, **options: Any) -> ToolReplayApp:
    options.setdefault("cwd", trace.parent)
    options.setdefault("blink_cursors", False)
    options.setdefault("warm_runs", False)
    return ToolReplayApp(trace, **options)


async def settled(pilot: Pilot[Any]) -> ToolReplayApp:
    """The app once the trace is opened (or refused) and its check has ended."""
    app = pilot.app
    assert isinstance(app, ToolReplayApp)
    await wait_for(
        pilot,
        lambda: (
            app.load_error is not None
            or (app.trace is not None and app.background.integrity.state != "checking")
        ),
        what="the trace opened and checked",
    )
    return app


def crash_files(folder: Path) -> list[Path]:
    return list(folder.glob(".toolreplay/*-crash-*.txt"))


# --- the audit's cases ----------------------------------------------------------------------


@pilot_test
async def test_a_nul_in_the_runner_is_shown_escaped_and_never_run(tmp_path: Path) -> None:
    trace = tmp_path / "nul.trp"
    lines = lines_of(kv_trace(tmp_path / "base.trp", 3))
    header = json.loads(lines[0])
    header["metadata"]["runner"] = "a\x00b:c"
    trace.write_bytes(with_footer([json.dumps(header).encode(), *lines[1:-1]], lines[-1]))
    app = open_app(trace, warm_runs=True)  # the warm runner was what crashed
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert app.background.integrity.state == "ok"
        assert app.trace is not None
        app.set_patch(app.trace.operations[0], {"i": 0, "text": "patched"})
        for key in ("r", "f"):
            await pilot.press(key)
            await wait_for(pilot, lambda: bool(app.screen.query(".dialog-question")), what=key)
            question = " ".join(text_of(app, ".dialog-question").split())
            assert question.startswith(
                "The runner 'a\\x00b:c' (named by the trace's header) is not module:callable."
            ), question
            await pilot.press("escape")
        assert app.last_run is None
        await pilot.press("ctrl+q")
    assert app.return_code in (None, 0)
    assert crash_files(tmp_path) == []


@pilot_test
async def test_a_malformed_operation_line_is_named_and_exits_2(tmp_path: Path) -> None:
    trace = tmp_path / "bad.trp"
    lines = lines_of(kv_trace(tmp_path / "base.trp", 20))
    lines[11] = b'{"kind":"operation","oops":1}'
    trace.write_bytes(b"".join(line + b"\n" for line in lines[:-1]))  # no footer
    app = open_app(trace)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        problem = f"{trace}:12: operation: missing end_ns, fingerprint, inputs"
        assert app.background.integrity.state == "failed"
        assert (app.background.integrity.problem or "").startswith(problem)
        assert "integrity check failed" in text_of(app, "#trace-header")
        app.browse.operations.move_to(10)
        await pilot.pause()
        assert "this line cannot be read" in text_of(app, "#detail-info")
        assert problem in " ".join(text_of(app, "#detail-info").split())
        await pilot.press("q")
    assert app.return_code == CANNOT_OPEN_EXIT_CODE
    assert crash_files(tmp_path) == []


@pilot_test
async def test_invalid_utf8_under_a_valid_footer_is_never_checked(tmp_path: Path) -> None:
    trace = tmp_path / "utf8.trp"
    lines = lines_of(kv_trace(tmp_path / "base.trp", 400))
    lines[301] = lines[301].replace(b'"i":300', b'"i":"\xff\xfe"', 1)
    trace.write_bytes(with_footer(lines[:-1], lines[-1]))
    with pytest.raises(toolreplay.TraceFormatError, match=r":302: not UTF-8"):
        toolreplay.read_trace(trace)  # what the debugger must agree with
    app = open_app(trace)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert app.background.integrity.state == "failed"
        assert "checked" not in text_of(app, "#trace-header").replace("check failed", "")
        assert app.trace is not None
        patched = app.set_patch(app.trace.operations[5], {"i": 5, "text": "patched"})
        assert patched is not None
        await pilot.press("colon", "3", "0", "0", "enter")
        await pilot.pause(0.2)
        assert app.browse.operations.current_index == 300
        assert ":302: not UTF-8 (byte" in " ".join(text_of(app, "#detail-info").split())
        await pilot.press("v", "escape", "e", "escape")  # nothing to show or edit there
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("y")  # quit without saving the patch
    assert app.return_code == CANNOT_OPEN_EXIT_CODE
    assert crash_files(tmp_path) == []


async def crash_with_two_patches(app: ToolReplayApp, unsaved: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert app.trace is not None
        app.set_patch(app.trace.operations[1], {"i": 1, "text": "first"})
        app.set_patch(app.trace.operations[3], {"i": 3, "text": "second"})
        assert len(toolreplay.read_patches(unsaved)) == 2  # kept at once, before any crash

        def crash() -> None:
            raise RuntimeError("an unforeseen bug")

        app.call_later(crash)
        await pilot.pause(0.5)


@pilot_test
async def test_a_crash_keeps_the_pending_patches_and_the_next_session_restores_them(
    tmp_path: Path,
) -> None:
    trace = kv_trace(tmp_path / "t.trp", 5)
    app = open_app(trace)
    unsaved = tmp_path / ".toolreplay" / "t-unsaved.patches.json"
    with pytest.raises(RuntimeError, match="an unforeseen bug"):  # run_test re-raises it
        await crash_with_two_patches(app, unsaved)
    assert app.return_code == 1
    [report] = crash_files(tmp_path)
    assert "Traceback" in report.read_text()
    assert "RuntimeError: an unforeseen bug" in report.read_text()
    assert unsaved.is_file()

    again = open_app(trace)
    async with again.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert len(again.pending) == 2
        assert again.pending.dirty  # unsaved: quitting asks
        assert "restored 2 pending patches an earlier session left unsaved" in said(again)
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("y")  # quit without saving: the user decided
    assert not unsaved.exists()


@pilot_test
async def test_a_worker_crash_saves_its_own_traceback(tmp_path: Path) -> None:
    trace = kv_trace(tmp_path / "t.trp", 2)
    app = open_app(trace)

    def fails() -> None:
        raise ValueError("in a worker")

    with pytest.raises(WorkerFailed):
        async with app.run_test(size=SIZE) as pilot:
            await settled(pilot)
            app.run_worker(fails, thread=True)
            await pilot.pause(0.5)
    [report] = crash_files(tmp_path)
    text = report.read_text()
    assert "Traceback (most recent call last)" in text
    assert "ValueError: in a worker" in text


@pilot_test
async def test_w_never_writes_over_the_trace(tmp_path: Path) -> None:
    trace = kv_trace(tmp_path / "t.trp", 2)
    before = trace.read_bytes()
    app = open_app(trace)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        assert app.trace is not None
        app.set_patch(app.trace.operations[0], {"i": 0})
        assert not app.save_patches_to("./t.trp")
        assert "t.trp is the source" in said(app)
        assert "the trace being debugged is never written" in said(app)
        await pilot.press("ctrl+q")
    assert trace.read_bytes() == before


# --- the fuzz -------------------------------------------------------------------------------

Mutation = Callable[[bytes, random.Random], bytes]


def _positions(data: bytes, rng: random.Random, count: int) -> list[int]:
    return sorted(rng.sample(range(len(data)), min(count, len(data))))


def _flip(data: bytes, at: int, byte: int) -> bytes:
    return data[:at] + bytes([byte]) + data[at + 1 :]


def _refoot(data: bytes) -> bytes:
    """The same lines with a footer whose count and digest fit them (if it had one)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    try:
        last = json.loads(lines[-1])
    except (ValueError, IndexError):
        return data
    if not isinstance(last, dict) or last.get("kind") != "footer":
        return data
    return with_footer(lines[:-1], lines[-1])


def _value_spans(data: bytes) -> list[tuple[int, int]]:
    """Where each operation line's `"i":<n>`, `"customer_id":<n>` or first number is."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in data.split(b"\n"):
        found = line.find(b'"logical_id":')
        if found >= 0:
            start = offset + found + len(b'"logical_id":')
            end = start
            while end < len(data) and data[end : end + 1].isdigit():
                end += 1
            spans.append((start, end))
        offset += len(line) + 1
    return spans


def _replace_values(data: bytes, rng: random.Random, replacement: bytes) -> list[bytes]:
    """`data` with the outcome of one operation at a time replaced by `replacement`."""
    out: list[bytes] = []
    for index, line in enumerate(data.split(b"\n")):
        marker = line.find(b'"outcome":')
        if marker < 0:
            continue
        end = line.find(b',"origin":')
        if end < 0:
            continue
        lines = data.split(b"\n")
        lines[index] = (
            line[:marker] + b'"outcome":{"status":"ok","value":' + replacement + b"}" + line[end:]
        )
        out.append(b"\n".join(lines))
    rng.shuffle(out)
    return out


def mutations(data: bytes, seed: int, count: int) -> dict[str, list[bytes]]:
    """Named families of corrupted copies of `data`, about `count` each, at positions
    chosen by `seed`."""
    rng = random.Random(seed)
    families: dict[str, list[bytes]] = {
        "byte flipped": [_flip(data, at, data[at] ^ 0x20) for at in _positions(data, rng, count)],
        "quote or brace": [
            _flip(data, at, rng.choice(b'"{}[],:\\')) for at in _positions(data, rng, count)
        ],
        "truncated": [data[:at] for at in _positions(data, rng, count)],
        "invalid UTF-8": [
            data[:at] + b"\xff\xfe" + data[at:] for at in _positions(data, rng, count)
        ],
        "NUL": [_flip(data, at, 0) for at in _positions(data, rng, count)],
        "deep nesting": _replace_values(data, rng, b"[" * 100_000 + b"]" * 100_000)[:count]
        + _replace_values(data, rng, b"[" * 300 + b"1" + b"]" * 300)[:count],
        "huge numbers": _replace_values(data, rng, b"1e400")[:count]
        + _replace_values(data, rng, b"9" * 5000)[:count]
        + [data[:start] + b"9" * 5000 + data[end:] for start, end in _value_spans(data)[:count]],
        "duplicate keys": [
            data.replace(b'{"kind":"operation",', b'{"kind":"operation","kind":"footer",', 1),
            data.replace(
                b'"outcome":{"status":"ok"', b'"outcome":{"status":"error","status":"ok"', 1
            ),
            data.replace(b'"inputs":{', b'"inputs":{"x":1,"x":', 1),
        ],
    }
    return families


def verdict_of_read_trace(path: Path) -> str | None:
    """What `read_trace` says is wrong with the file (None: it reads)."""
    try:
        toolreplay.read_trace(path)
    except toolreplay.TraceError as error:
        return str(error)
    return None


def corrupted(source: Path, count: int, *, both: bool = True) -> list[tuple[str, bytes]]:
    """Corrupted copies of `source` (`mutations`), each with a footer made to fit when it
    has one (so that only decoding its lines can tell it is wrong), and, with `both`, as
    corrupted."""
    data = source.read_bytes()
    cases: list[tuple[str, bytes]] = []
    for family, copies in mutations(data, zlib.crc32(source.name.encode()), count).items():
        for number, copy in enumerate(copies[:count] if not both else copies):
            refooted = _refoot(copy)
            if both or refooted == copy:
                cases.append((f"{source.name}: {family} {number}", copy))
            if refooted != copy:
                cases.append((f"{source.name}: {family} {number}, footer made to fit", refooted))
    return cases


def test_the_trace_file_agrees_with_read_trace_on_every_corruption(tmp_path: Path) -> None:
    """The debugger's reader (open, every row, the check) against `read_trace`, on many
    positions of every real trace and of a recording of 40 calls."""
    sources = [*REAL_TRACES.values(), kv_trace(tmp_path / "kv.trp", 40)]
    cases = [case for source in sources for case in corrupted(source, 12)]
    assert len(cases) > 500
    problems: list[str] = []
    trace = tmp_path / "t.trp"
    for label, copy in cases:
        trace.write_bytes(copy)
        expected = verdict_of_read_trace(trace)
        try:
            opened = TraceFile.open(trace)
        except toolreplay.TraceError as error:
            if str(error) != expected:
                problems.append(f"{label}: open says {error}, read_trace {expected!r}")
            continue
        with opened:
            for index in range(len(opened)):
                opened.entry(index)  # never raises for a bad line: it is the error
            integrity = opened.check()
            rows = OperationRows(opened)
            for position in range(len(rows)):
                rows.row(position)
                rows.timeline(position, position, 10)
            verdict = integrity.problem if integrity.state == "failed" else None
            if verdict != expected:
                problems.append(f"{label}: the check says {verdict!r}, read_trace {expected!r}")
    assert problems == [], "\n".join(problems)


async def walk(trace: Path) -> tuple[ToolReplayApp, str | None]:
    """Open `trace`, visit every row (`v` on the first), quit; the app and its verdict."""
    app = open_app(trace)
    async with app.run_test(size=SIZE) as pilot:
        await settled(pilot)
        verdict = app.load_error or app.background.integrity.problem
        if app.trace is not None:
            listing = app.browse.operations
            for position in range(listing.row_count()):
                listing.move_to(position)
                await pilot.pause()
            listing.move_to(0)
            await pilot.press("v")
            if isinstance(app.screen, FullValueScreen):
                await pilot.press("escape")
        await pilot.press("ctrl+q")
        await pilot.pause()
    return app, verdict


@pytest.mark.parametrize(
    ("name", "count"), [("incident", 2), ("concurrent-v4", 1), ("sequential-v3", 1)]
)
def test_corrupted_real_traces_never_crash_the_app_and_agree_with_read_trace(
    tmp_path: Path, name: str, count: int
) -> None:
    cases = corrupted(REAL_TRACES[name], count, both=False)
    assert len(cases) >= 8 * count

    async def run_all() -> list[str]:
        problems: list[str] = []
        for label, copy in cases:
            folder = tmp_path / f"case-{zlib.crc32(label.encode())}"
            folder.mkdir()
            trace = folder / "t.trp"
            trace.write_bytes(copy)
            expected = verdict_of_read_trace(trace)
            app, verdict = await walk(trace)
            crashed = crash_files(folder)
            if crashed or app.return_code == 1:
                problems.append(f"{label}: crashed: {crashed[0].read_text() if crashed else ''}")
            elif expected is None and verdict is not None:
                problems.append(f"{label}: read_trace reads it, the app says {verdict!r}")
            elif expected is not None and verdict != expected:
                problems.append(f"{label}: read_trace says {expected!r}, the app {verdict!r}")
            elif expected is not None and app.return_code != CANNOT_OPEN_EXIT_CODE:
                problems.append(f"{label}: exit status {app.return_code}, not 2")
            shutil.rmtree(folder)
        return problems

    problems = asyncio.run(run_all())
    assert problems == [], "\n".join(problems)


# --- in a real terminal -----------------------------------------------------------------------

needs_tmux = pytest.mark.skipif(TMUX is None, reason="needs tmux, the real terminal this drives")


def terminal_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k and not k.startswith("TMUX")}
    env["TERM"] = "xterm-256color"
    return env


@needs_tmux
def test_the_command_prints_the_line_and_exits_2_for_an_unreadable_trace(tmp_path: Path) -> None:
    lines = lines_of(kv_trace(tmp_path / "base.trp", 40))
    lines[31] = lines[31].replace(b'"i":30', b'"i":"\xff"', 1)
    (tmp_path / "bad.trp").write_bytes(with_footer(lines[:-1], lines[-1]))
    command = " ".join(shlex.quote(part) for part in tui_command())
    script = f"{command} bad.trp; echo exit-status-$?"
    terminal = TmuxTerminal(["sh", "-c", script], cwd=tmp_path, env=terminal_env(), width=200)
    with terminal as term:
        term.wait_for("integrity check failed", ":32: not UTF-8")
        term.keys("q")
        term.wait_for("exit-status-2")
        printed = " ".join(term.scrollback().split())
    assert "the trace failed its integrity check: " in printed
    assert "bad.trp:32: not UTF-8" in printed
    assert crash_files(tmp_path) == []


@needs_tmux
def test_a_killed_session_loses_no_pending_patch(tmp_path: Path) -> None:
    kv_trace(tmp_path / "t.trp", 5)
    env = terminal_env()
    with TmuxTerminal([*tui_command(), "t.trp"], cwd=tmp_path, env=env) as term:
        term.wait_for("checked", "kv.get")
        term.keys("Tab")
        term.wait_for("Edit value")
        term.keys("Enter")
        term.wait_for("esc Cancel edit")
        term.type("12345")
        term.keys("Enter")
        term.wait_for("1 pending patch")
        pid = int(term.pane_pid())
        os.kill(pid, signal.SIGKILL)  # no chance to save anything now
        term.wait_until_dead()
    with TmuxTerminal([*tui_command(), "t.trp"], cwd=tmp_path, env=env) as term:
        screen = term.wait_for("1 pending patch", "restored 1 pending patch")
        assert "w saves them" in " ".join(screen.split())
