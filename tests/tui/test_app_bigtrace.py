"""A big trace in the debugger: rows at once, indexed and checked behind them, quit any time."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from rich.console import RenderableType
from textual.screen import Screen
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.dialogs import PromptScreen

from benchmarks.tui import NEEDLE, write_kv_trace
from tests.tui.pilot import SIZE, pilot_test, said, text_of, wait_for

COUNT = 200_000


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "kv.trp"
    write_kv_trace(path, COUNT)
    return path


@pytest.fixture(scope="module")
def incomplete_trace(big_trace: Path) -> Path:
    """The big trace without its footer: its check decodes every line (seconds)."""
    data = big_trace.read_bytes()
    path = big_trace.with_name("incomplete.trp")
    path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])
    return path


class WatchedApp(ToolReplayApp):
    """The debugger, noting what the header said and how far indexing was at the first
    frame showing rows."""

    CSS_PATH = Path(inspect.getfile(ToolReplayApp)).with_name("app.tcss")

    def __init__(self, trace: Path) -> None:
        super().__init__(trace, cwd=trace.parent, blink_cursors=False, warm_runs=False)
        self.first_rows: tuple[str, bool] | None = None
        self.filtering_while: str | None = None  # the check's state at the first filtered frame

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        super()._display(screen, renderable)
        trace = self.trace
        if (
            self.first_rows is None
            and trace is not None
            and self.browse.query("#operations")
            and self.browse.operations.shown_count > 0
        ):
            self.first_rows = (text_of(self, "#trace-header"), trace.indexed)
        if self.filtering_while is None and trace is not None and self.rows and self.rows.query:
            self.filtering_while = trace.integrity.state


@pilot_test
async def test_rows_show_before_indexing_ends_with_progress_in_the_header(
    big_trace: Path,
) -> None:
    app = WatchedApp(big_trace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_rows is not None, what="the first rows")
        assert app.first_rows is not None
        header, indexed = app.first_rows
        assert not indexed
        assert f"{COUNT:,} operations (" in header  # the footer's count, and how many indexed
        assert "indexing" in header
        listing = app.browse.operations
        assert listing.current_index == 0
        assert "bench.kv" in text_of(app, "#detail-info")
        await wait_for(pilot, lambda: app.background.integrity.state == "ok", what="the check")
        header = text_of(app, "#trace-header")
        assert f"{COUNT:,} operations  ·  complete  ·  checked" in header
        await pilot.press("G")
        assert listing.current_index == COUNT - 1
        assert NEEDLE in text_of(app, "#detail-info")


@pytest.mark.parametrize("key", ["q", "ctrl+c", "ctrl+q"])
@pilot_test
async def test_quitting_while_indexing_stops_the_background_work(
    incomplete_trace: Path, key: str
) -> None:
    app = WatchedApp(incomplete_trace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_rows is not None, what="the first rows")
        trace = app.trace
        assert trace is not None
        assert trace.integrity.state == "checking"
        await pilot.press(key)
        await wait_for(pilot, lambda: not app.is_running, timeout=10, what="the exit")
    # The check was stopped, not waited for: it never finished.
    assert trace.closed
    assert trace.integrity.state == "checking"
    assert not app.workers._workers  # pyright: ignore[reportPrivateUsage]


@pilot_test
async def test_filtering_while_the_trace_is_checked_finds_the_last_operation(
    incomplete_trace: Path,
) -> None:
    # (The scan following a growing index is tested on the model: indexing 200,000
    # operations outruns typing; checking an incomplete trace's fingerprints does not.)
    app = WatchedApp(incomplete_trace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_rows is not None, what="the first rows")
        rows = app.rows
        assert rows is not None
        await pilot.press("slash", *NEEDLE)
        await wait_for(
            pilot,
            lambda: rows.query == NEEDLE and not rows.scanning,
            what="the filter's scan",
        )
        assert app.filtering_while == "checking"
        assert [rows.index_at(p) for p in range(len(rows))] == [COUNT - 1]
        assert f"filter '{NEEDLE}': 1 of {COUNT} operations" in text_of(app, "#status")
        assert app.browse.operations.current_index == COUNT - 1
        await pilot.press("enter", "escape")  # keep the filter, then clear it
        assert not rows.filtered
        assert app.browse.operations.current_index == COUNT - 1


@pilot_test
async def test_typing_on_replaces_the_running_scan(big_trace: Path) -> None:
    app = WatchedApp(big_trace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_rows is not None, what="the first rows")
        rows = app.rows
        assert rows is not None
        await pilot.press("slash", "k", "e", "y")  # matches everything: a long scan
        await pilot.press(*"-0042")
        await wait_for(pilot, lambda: rows.query == "key-0042" and not rows.scanning)
        found = [rows.index_at(p) for p in range(len(rows))]
        assert found == list(range(42, COUNT - 1, 4096))  # keys cycle through 4096
        await pilot.press("escape")  # cancels the field: back to no filter
        assert not rows.filtered
        assert len(rows) == COUNT


@pilot_test
async def test_actions_needing_the_whole_trace_wait_for_the_check(
    incomplete_trace: Path,
) -> None:
    app = WatchedApp(incomplete_trace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_rows is not None, what="the first rows")
        assert app.background.integrity.state == "checking"
        await pilot.press("o")  # load patches: they are checked against the whole trace
        assert not isinstance(app.screen, PromptScreen)
        assert "load patches waits for the trace's integrity check" in said(app)
        assert "checking" in text_of(app, "#trace-header") or "indexing" in text_of(
            app, "#trace-header"
        )
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, PromptScreen),
            timeout=120,
            what="the prompt once checked",
        )
        assert app.background.integrity.state == "ok"
        await pilot.press("escape")
        assert "incomplete (no footer" in text_of(app, "#trace-header")
        assert "checked" in text_of(app, "#trace-header")


@pilot_test
async def test_a_corrupted_tail_is_reported_when_the_check_finds_it(
    big_trace: Path, tmp_path: Path
) -> None:
    data = bytearray(big_trace.read_bytes())
    spot = data.rindex(NEEDLE.encode())
    data[spot : spot + 6] = b"NEEDLE"
    corrupted = tmp_path / "corrupted.trp"
    corrupted.write_bytes(bytes(data))
    app = WatchedApp(corrupted)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_rows is not None, what="the first rows")
        await pilot.press("r")  # replay waits for the check
        await wait_for(
            pilot, lambda: app.background.integrity.state == "failed", timeout=120, what="check"
        )
        await pilot.pause()
        header = text_of(app, "#trace-header")
        assert "integrity check failed" in header  # cut to the header's height; in full below
        assert "cannot replay" in said(app)
        assert "footer digest" in said(app)
        await pilot.press("G")  # still browsable
        assert app.browse.operations.current_index == COUNT - 1


@pilot_test
async def test_jumps_and_effect_filters_wait_for_the_index(big_trace: Path) -> None:
    app = WatchedApp(big_trace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.first_rows is not None, what="the first rows")
        # Beyond the first screen: the jump waits for the index if it is not there yet.
        await pilot.press("colon", *str(COUNT - 1), "enter")
        listing = app.browse.operations
        await wait_for(
            pilot, lambda: listing.current_index == COUNT - 1, timeout=120, what="the jump"
        )
        await pilot.press("colon", *str(COUNT), "enter")
        assert f"no operation #{COUNT}: this trace numbers them 0 to {COUNT - 1}" in said(app)

        await pilot.press("colon", *"effect nosuch.effect", "enter")
        await wait_for(
            pilot,
            lambda: "no operation of effect 'nosuch.effect' in this trace" in said(app),
            what="the refusal",
        )
        await pilot.press("colon", *"effect bench.kv", "enter")
        rows = app.rows
        assert rows is not None
        await wait_for(
            pilot, lambda: rows.query == "effect:bench.kv" and len(rows) > 0, what="the filter"
        )
        assert rows.operation_at(0).effect == "bench.kv"
