"""The operation list and the picker at real widths: a model call's summary has its room,
and no column of a trace (a lane, an effect, metadata) grows past the screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.picker import CELL_LIMITS, TracePickerApp, TracePickerScreen

import toolreplay
from tests.support.hostile import INCIDENT, EditableTrace
from tests.tui.pilot import SIZE, loaded, make_app, pilot_test, wait_for
from tests.tui.support import Project

SMALL = (80, 24)


def rows_as_shown(app: ToolReplayApp) -> list[Text]:
    listing = app.browse.operations
    width = listing.size.width
    return [listing.render_row(position, width) for position in range(listing.row_count())]


@pilot_test
async def test_at_120_columns_a_model_call_shows_what_it_was_asked_and_what_it_answered(
    tmp_path: Path,
) -> None:
    pytest.importorskip("openai")
    from tests.support.agent_fork import record_sync_agent

    trace = record_sync_agent(tmp_path / "agent.trp")
    app = make_app(Project(tmp_path, trace))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        first, _, second = (row.plain for row in rows_as_shown(app))
        # The effect whole, then both parts of the summary: the question and the tool
        # call, then the tool's output and the answer.
        assert "openai.responses.create  ok" in first
        assert "user: Please" in first
        assert "→ lookup_order(" in first
        assert "tool " in second
        assert "→ Order 8812" in second
    app = make_app(Project(tmp_path, trace))
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot)  # 80x24: the list still shows every column, the call cut
        first = rows_as_shown(app)[0].plain
        assert first.startswith("0  openai.respons")
        assert "ok" in first


def hostile_lanes(path: Path) -> Path:
    """The incident with every call on a lane whose name is long and escapes, and an
    effect name hundreds of characters long."""
    trace = EditableTrace.read(INCIDENT)
    for number, operation in enumerate(trace.operations):
        operation["lane"] = f"\x1b]52;c;{'A' * 400}\x07{number % 2}"
    trace.operations[0]["name"] = "customer." + "get" * 150
    return trace.write(path, "complete")


@pilot_test
async def test_a_hostile_lane_or_effect_never_pushes_the_state_column_off_screen(
    tmp_path: Path,
) -> None:
    trace = hostile_lanes(tmp_path / "lanes.trp")
    for size in (SIZE, SMALL, (200, 40)):
        app = make_app(Project(tmp_path, trace))
        async with app.run_test(size=size) as pilot:
            await loaded(pilot)
            width = app.browse.operations.size.width
            for row in rows_as_shown(app):
                # The state column (`ok`) is on the line (which the list cuts at its
                # width), after bounded lane and effect columns.
                row.truncate(width)
                assert "  ok  " in row.plain, (size, row.plain)
            header = app.browse.operations.header_text()
            assert "state" in header
            assert len(header) <= width


@pilot_test
async def test_the_pickers_columns_are_bounded_whatever_the_metadata(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    capture = toolreplay.capture(
        folder, metadata=lambda n: {"note": "x" * 2000, "lane": f"\x1b[2J{'y' * 500}"}
    )

    @capture
    def handle(n: int) -> int:
        return n

    handle(1)
    app = TracePickerApp(folder)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TracePickerScreen) and app.screen.rows)
        screen = app.screen
        assert isinstance(screen, TracePickerScreen)
        table = screen.table
        widths = [column.get_render_width(table) for column in table.columns.values()]
        padding = 2 * table.cell_padding
        assert all(w - padding <= limit for w, limit in zip(widths, CELL_LIMITS, strict=True))
        # The operation count and the ending stay on screen, right of the metadata.
        assert sum(widths[:4]) <= SIZE[0]
