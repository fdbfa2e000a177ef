"""A trace recorded with concurrent effects: the lane column and the compact timeline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from toolreplay_tui.model.rows import TIMELINE_RADIUS, OperationRows, timeline_bar
from toolreplay_tui.model.trace_file import TraceFile

import toolreplay
from tests.support import concurrent_app
from tests.support.traces import write_trace
from tests.tui.pilot import loaded, make_app, pilot_test, text_of
from tests.tui.support import Project
from toolreplay import Operation, OperationIdentity, Returned
from toolreplay.trace import SessionEnding, TraceHeader, TraceWriter


def timed(start_ns: int, end_ns: int, lane: str = "main") -> Operation:
    inputs: dict[str, toolreplay.JsonValue] = {"at": start_ns}
    return Operation(
        logical_id=0,
        identity=OperationIdentity("work", "item", toolreplay.fingerprint(inputs), 0),
        inputs=inputs,
        outcome=Returned(None),
        lane=lane,
        start_ns=start_ns,
        end_ns=end_ns,
    )


def rows_of(path: Path, operations: Sequence[Operation]) -> OperationRows:
    """The rows of `operations` written (numbered in order) to a trace at `path`."""
    writer = TraceWriter(path, TraceHeader(trace_id="lanes", mode="record", library_version="t"))
    for number, operation in enumerate(operations):
        writer.append(replace(operation, logical_id=number))
    writer.close(SessionEnding("completed"))
    trace = TraceFile.open(path)
    trace.index()
    return OperationRows(trace)


def test_the_bar_draws_the_span_within_the_window() -> None:
    assert timeline_bar(timed(0, 50), (0, 100), 10) == "━━━━━·····"
    assert timeline_bar(timed(50, 100), (0, 100), 10) == "·····━━━━━"
    assert timeline_bar(timed(30, 30), (0, 100), 10) == "···━······"  # instantaneous
    assert timeline_bar(timed(100, 100), (0, 100), 10) == "·········━"
    untimed = Operation(0, timed(0, 1).identity, {"at": 0}, Returned(None))
    assert timeline_bar(untimed, (0, 100), 10) == " " * 10


def test_rows_know_their_lanes_and_the_timeline_follows_the_cursor(tmp_path: Path) -> None:
    operations = [timed(k * 10, k * 10 + 25, f"thread-{k % 3 + 1}") for k in range(40)]
    rows = rows_of(tmp_path / "lanes.trp", operations)
    assert rows.lanes == ("thread-1", "thread-2", "thread-3")
    assert rows.concurrent
    assert rows.row(4).lane == "thread-2"
    # Around the cursor the rows are drawn over their shared window; farther rows are blank.
    assert rows.neighbourhood(20) == range(20 - TIMELINE_RADIUS, 20 + TIMELINE_RADIUS + 1)
    assert rows.timeline_window(20) == (120, 305)
    assert rows.timeline(12, 20, 10).startswith("━")
    assert rows.timeline(28, 20, 10).endswith("━")
    assert rows.timeline(20, 20, 10).strip("·") == "━━"
    assert rows.timeline(30, 20, 10) == " " * 10
    assert not rows_of(tmp_path / "one.trp", [timed(0, 1), timed(2, 3)]).concurrent


def test_a_format_3_trace_has_no_lanes(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.trp", [("kv.get", {"key": "a"}, 1)])
    rows = OperationRows(TraceFile.open(path))
    assert rows.lanes == ()
    assert not rows.concurrent
    assert rows.timeline(0, 0, 6) == " " * 6


def test_the_list_shows_lanes_and_a_timeline_for_a_concurrent_trace(tmp_path: Path) -> None:
    path = tmp_path / "pool.trp"
    with toolreplay.record(path, metadata={"runner": "tests.support.concurrent_app:catalogue"}):
        concurrent_app.catalogue()  # runs its own event loop: record before the app's
    browse_concurrent_trace(Project(tmp_path, path))


@pilot_test
async def browse_concurrent_trace(project: Project) -> None:
    trace = toolreplay.read_trace(project.trace)
    app = make_app(project)
    # From about 150 columns the lane and timeline columns fit beside a call column of
    # full room (narrower, they yield to it: tests/tui/test_list_columns.py).
    async with app.run_test(size=(160, 40)) as pilot:
        await loaded(pilot)
        header = text_of(app, "#list-header")
        assert "lane" in header
        assert "timeline" in header
        assert "format v5" in text_of(app, "#trace-header")
        listing = app.browse.operations
        first = listing.render_row(0, 120).plain
        assert f"  {trace.operations[0].lane}  " in first
        assert "━" in first
        far = TIMELINE_RADIUS + 5
        assert "━" not in listing.render_row(far, 120).plain
        await pilot.press(*["j"] * far)
        assert listing.current_index == far
        assert "━" in listing.render_row(far, 120).plain
        assert "━" not in listing.render_row(0, 120).plain
