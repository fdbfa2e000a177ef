"""A value too large to show whole: listed, shown and checked through a bounded view.

Audit of issue 26: `v` on a 50 MB value kept the debugger busy for about 65 s at full CPU
and 2.2 GB of memory, and the first frame took 12 s. Here a trace holds a value of a few
MB (larger than `LARGE_LINE_BYTES`): it is listed and shown by its size and its first and
last bytes, read from the file without decoding it; `v` shows its first and last pages
with keys to save it or open it in $EDITOR; the integrity check still checks it under
the reader's rules (and agrees with `read_trace` on a value corrupted inside). The times
and memory at 50 MB are `benchmarks.tui`'s to measure.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.model.rows import OperationRows
from toolreplay_tui.model.trace_file import LARGE_LINE_BYTES, LargeLine, LargeOutput, TraceFile
from toolreplay_tui.screens.dialogs import PromptScreen
from toolreplay_tui.screens.full_value import LargeValueScreen

import toolreplay
from tests.tui.pilot import SIZE, pilot_test, said, text_of, wait_for
from toolreplay import JsonValue
from toolreplay.trace.writer import write_whole_trace

ROWS = [{"id": i, "name": f"customer {i}", "note": "x" * 40} for i in range(40_000)]
BIG = {"rows": ROWS, "last": "the very end"}
BIG_TEXT = json.dumps(BIG, separators=(",", ":")).encode()


@toolreplay.effect("bench.fetch")
def fetch(page: int) -> object:
    return BIG


@toolreplay.effect("bench.small")
def small(i: int) -> dict[str, int]:
    return {"i": i}


def large_trace(path: Path) -> Path:
    with toolreplay.record(path, metadata={"runner": "nothere:main"}):
        small(0)
        fetch(1)
        small(2)
    return path


def test_the_value_is_large_enough() -> None:
    assert len(BIG_TEXT) > 2 * LARGE_LINE_BYTES


def test_a_large_output_is_listed_from_its_start_and_end(tmp_path: Path) -> None:
    trace = large_trace(tmp_path / "t.trp")
    recorded = toolreplay.read_trace(trace).operations
    with TraceFile.open(trace) as opened:
        assert len(opened) == 1  # the first screen: up to the large line
        opened.index()
        assert len(opened) == 3
        large = opened.entry(1)
        assert isinstance(large, LargeOutput)
        assert (large.identity, large.inputs, large.lane) == (
            recorded[1].identity,
            recorded[1].inputs,
            recorded[1].lane,
        )
        assert large.value_size == len(BIG_TEXT)
        assert opened.value_text(large) == BIG_TEXT
        first, last = opened.value_pages(large, 100)
        assert (first, last) == (BIG_TEXT[:100], BIG_TEXT[-100:])
        assert opened.entry(0) == recorded[0]
        assert opened.entry(2) == recorded[2]
        assert opened.operation(1) == recorded[1]  # in full, when an action needs it
        assert opened.effects == {"bench.small": 0, "bench.fetch": 1}
        row = OperationRows(opened).row(1)
        assert (row.effect, row.logical_id, row.status) == ("bench.fetch", 1, "ok")
        assert opened.check().state == "ok"
        assert opened.check_elsewhere().state == "ok"


def _refooted(data: bytes) -> bytes:
    lines = data.split(b"\n")[:-1]
    body = b"".join(line + b"\n" for line in lines[:-1])
    footer = json.loads(lines[-1])
    footer["digest"] = hashlib.sha256(body).hexdigest()
    return body + json.dumps(footer, separators=(",", ":")).encode() + b"\n"


@pytest.mark.parametrize(
    ("name", "corrupt"),
    [
        ("NaN", lambda data: data.replace(b'"the very end"', b"NaN", 1)),
        ("overflowing float", lambda data: data.replace(b'"the very end"', b"1e400", 1)),
        ("invalid UTF-8", lambda data: data.replace(b"the very end", b"the \xff end", 1)),
        ("lone surrogate", lambda data: data.replace(b"the very end", b"the \\ud800 end", 1)),
        ("202 levels", lambda data: data.replace(b'"the very end"', b"[" * 201 + b"]" * 201, 1)),
        ("203 levels", lambda data: data.replace(b'"the very end"', b"[" * 202 + b"]" * 202, 1)),
        ("bad JSON", lambda data: data.replace(b'"the very end"', b'"the very end', 1)),
        (
            "duplicate logical id",
            lambda data: data.replace(b'"logical_id":1,', b'"logical_id":0,', 1),
        ),
    ],
)
def test_the_check_agrees_with_read_trace_inside_a_large_value(
    tmp_path: Path, name: str, corrupt: Callable[[bytes], bytes]
) -> None:
    trace = large_trace(tmp_path / "t.trp")
    trace.write_bytes(_refooted(corrupt(trace.read_bytes())))
    try:
        toolreplay.read_trace(trace)
    except toolreplay.TraceError as error:
        expected: str | None = str(error)
    else:
        expected = None
    assert (expected is None) == (name == "202 levels"), expected
    with TraceFile.open(trace) as opened:
        for integrity in (opened.check(), opened.check_elsewhere()):
            assert integrity.problem == expected


def test_a_large_line_not_laid_out_as_written_is_shown_raw(tmp_path: Path) -> None:
    trace = tmp_path / "t.trp"
    header = toolreplay.TraceHeader("t", "record", toolreplay.__version__, {})
    operation = toolreplay.Operation(
        0,
        toolreplay.OperationIdentity("bench", "upload", toolreplay.fingerprint({"b": "x"}), 0),
        {"b": "x"},
        toolreplay.Returned(1),
    )
    write_whole_trace(trace, header, [operation], None, overwrite=False, what="t")
    # Large inputs: its output is not in the first bytes of its line.
    line = trace.read_bytes().split(b"\n")[1]
    big_inputs: dict[str, JsonValue] = {"b": "y" * (2 * LARGE_LINE_BYTES)}
    widened = line.replace(
        b'"inputs":{"b":"x"}', b'"inputs":' + json.dumps(big_inputs).encode(), 1
    ).replace(
        operation.identity.fingerprint.encode(), toolreplay.fingerprint(big_inputs).encode(), 1
    )
    trace.write_bytes(trace.read_bytes().split(b"\n")[0] + b"\n" + widened + b"\n")
    with TraceFile.open(trace) as opened:
        entry = opened.entry(0)
        assert isinstance(entry, LargeLine)
        assert entry.effect == "bench.upload"
        assert opened.value_text(entry) == widened
        assert opened.check().state == "ok"  # read the reader's way, in full
        assert opened.operation(0).inputs == big_inputs


# --- in the app ------------------------------------------------------------------------------


def app_for(trace: Path) -> ToolReplayApp:
    return ToolReplayApp(trace, cwd=trace.parent, blink_cursors=False, warm_runs=False)


async def _checked(pilot: object, app: ToolReplayApp) -> None:
    await wait_for(
        pilot,  # type: ignore[arg-type]
        lambda: app.trace is not None and app.background.integrity.state == "ok",
        what="checked",
    )


@pilot_test
async def test_the_app_shows_a_large_value_by_its_pages_and_saves_it(tmp_path: Path) -> None:
    trace = large_trace(tmp_path / "t.trp")
    app = app_for(trace)
    async with app.run_test(size=SIZE) as pilot:
        await _checked(pilot, app)
        await pilot.press("j")
        detail = " ".join(text_of(app, "#detail-info").split())
        assert f"output: {len(BIG_TEXT):,} bytes" in detail
        assert '{"rows":[{"id":0,"name":"customer 0"' in detail
        await pilot.press("v")
        assert isinstance(app.screen, LargeValueScreen)
        shown = " ".join(text_of(app, "#full-value-text").split())
        assert f"{len(BIG_TEXT):,} bytes" in shown
        assert "bytes not shown" in shown
        assert shown.endswith('"last":"the very end"}')
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), what="the prompt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "saved the value" in said(app), what="saved")
        [saved] = (tmp_path / ".toolreplay").glob("t-value-*.json")
        assert saved.read_bytes() == BIG_TEXT
        assert json.loads(saved.read_bytes()) == BIG
        await pilot.press("escape")
        await pilot.press("e")
        assert "too large for the built-in editor: E edits it in $EDITOR" in said(app)
        await pilot.press("slash", *"very", "enter")
        await pilot.pause(0.5)
        assert app.rows is not None
        assert [app.rows.index_at(p) for p in range(len(app.rows))] == [1]
        await pilot.press("ctrl+q")


@pilot_test
async def test_E_edits_a_large_value_into_a_pending_patch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "editor.py"
    script.write_text(
        "import json, sys\n"
        "value = json.load(open(sys.argv[1]))\n"
        "value['last'] = 'edited'\n"
        "json.dump(value, open(sys.argv[1], 'w'))\n",
        encoding="utf-8",
    )
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    trace = large_trace(tmp_path / "t.trp")
    app = app_for(trace)
    async with app.run_test(size=SIZE) as pilot:
        await _checked(pilot, app)
        await pilot.press("j", "E")
        await wait_for(pilot, lambda: len(app.pending) == 1, what="the patch")
        [patch] = list(app.pending)
        assert isinstance(patch, toolreplay.OutputPatch)
        assert patch.value == {**BIG, "last": "edited"}
        assert "patch" in " ".join(text_of(app, "#detail-info").split())
        await pilot.press("x")
        assert len(app.pending) == 0
        await pilot.press("ctrl+q")
