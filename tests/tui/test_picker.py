"""The trace picker of `toolreplay tui FOLDER`, driven through Textual's Pilot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from toolreplay_tui.screens.picker import TracePickerApp, TracePickerScreen

import toolreplay
from tests.tui.pilot import SIZE, pilot_test, wait_for


@toolreplay.effect("billing.refund.create")
def create_refund(order_id: int) -> dict[str, object]:
    if order_id == 2:
        raise TimeoutError("billing timed out")
    return {"refund_id": f"rf-{order_id}"}


def capture_folder(folder: Path) -> Path:
    capture = toolreplay.capture(
        folder, metadata=lambda order_id: {"request_id": f"r-{order_id}", "route": "/refund"}
    )

    @capture
    def handle(order_id: int) -> str:
        try:
            create_refund(order_id)
        except TimeoutError:
            return "retry"
        return "ok"

    for order_id in (1, 2, 3):
        handle(order_id)
    return folder


def picker(pilot: Pilot[Any]) -> TracePickerScreen:
    screen = pilot.app.screen
    assert isinstance(screen, TracePickerScreen)
    return screen


def table_rows(screen: TracePickerScreen) -> list[list[str]]:
    table = screen.table
    return [[str(cell) for cell in table.get_row_at(index)] for index in range(table.row_count)]


@pilot_test
async def test_the_picker_lists_traces_newest_first_filters_and_opens_one(tmp_path: Path) -> None:
    folder = capture_folder(tmp_path / "traces")
    app = TracePickerApp(folder)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TracePickerScreen) and app.screen.rows)
        screen = picker(pilot)
        rows = table_rows(screen)
        assert [row[1] for row in rows] == [
            "request_id=r-3 route=/refund",
            "request_id=r-2 route=/refund",
            "request_id=r-1 route=/refund",
        ]
        assert all(row[2] == "1" and row[3] == "completed" for row in rows)
        header = screen.header
        assert "3 traces, newest first" in str(header.render())

        await pilot.press("slash", "r", "-", "2")
        assert [row[1] for row in table_rows(screen)] == ["request_id=r-2 route=/refund"]
        assert "1 match the filter" in str(header.render())
        await pilot.press("enter")  # back to the list
        await pilot.press("enter")  # open the highlighted trace
    chosen = app.return_value
    assert chosen is not None
    trace = toolreplay.read_trace(chosen)
    assert trace.header.metadata["request_id"] == "r-2"


@pilot_test
async def test_leaving_the_picker_opens_nothing_and_escape_clears_the_filter_first(
    tmp_path: Path,
) -> None:
    folder = capture_folder(tmp_path / "traces")
    app = TracePickerApp(folder)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, TracePickerScreen) and app.screen.rows)
        screen = picker(pilot)
        # "!" is in no cell; letters can be: each file name ends in random ones ("zz" was).
        await pilot.press("slash", "exclamation_mark")
        assert table_rows(screen) == []
        await pilot.press("escape")
        assert len(table_rows(screen)) == 3
        await pilot.press("escape")
    assert app.return_value is None


@pilot_test
async def test_an_empty_or_missing_folder_says_so(tmp_path: Path) -> None:
    app = TracePickerApp(tmp_path / "nowhere")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, TracePickerScreen) and app.screen.problem
        )
        header = str(picker(pilot).header.render())
        assert "0 traces" in header
        assert "does not exist" in header
        await pilot.press("enter")  # nothing to open: stays
        assert isinstance(app.screen, TracePickerScreen)
        await pilot.press("q")
    assert app.return_value is None
