"""Browsing a trace by keys: the list, the detail pane, filters, help and quitting."""

from __future__ import annotations

from pathlib import Path

from toolreplay_tui.screens.dialogs import ConfirmScreen
from toolreplay_tui.screens.help import HelpScreen
from toolreplay_tui.widgets.value_view import ValueView

from tests.support.traces import write_trace
from tests.tui.pilot import SIZE, loaded, make_app, pilot_test, text_of, wait_for
from tests.tui.support import Project


@pilot_test
async def test_the_header_the_list_and_the_detail_follow_the_cursor(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        header = text_of(app, "#trace-header")
        assert "refund.trp" in header
        assert "format v5" in header
        assert "3 operations" in header
        assert "complete" in header
        assert "runner tuiapp:main" in header
        listing = app.browse.operations
        assert listing.current_index == 0
        assert "crm.customer.get" in text_of(app, "#detail-info")
        assert "fingerprint" in text_of(app, "#detail-info")
        assert "origin recorded" in text_of(app, "#detail-info")
        await pilot.press("j", "j")
        assert listing.current_index == 2
        assert "llm.refund.decide" in text_of(app, "#detail-info")
        assert '"tier": "gold"' in text_of(app, "#detail-info")
        await pilot.press("k")
        assert listing.current_index == 1
        await pilot.press("G")
        assert listing.current_index == 2
        await pilot.press("g")
        assert listing.current_index == 0
        await pilot.press("pagedown")
        assert listing.current_index == 2
        await pilot.press("pageup", "down")
        assert listing.current_index == 1
        await pilot.press("up")
        assert listing.current_index == 0


@pilot_test
async def test_tab_moves_between_the_panes_and_values_are_navigable(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G")
        await pilot.press("tab")
        values = app.browse.detail.values
        assert app.focused is values
        assert values.current_path == ("decision",)
        assert "$.decision" in text_of(app, "#detail-path")
        await pilot.press("j")
        assert values.current_path == ("reason",)
        assert "$.reason" in text_of(app, "#detail-path")
        await pilot.press("tab")
        assert app.focused is not None
        assert app.focused.id == "detail-info-scroll"
        await pilot.press("tab")
        assert app.focused is app.browse.operations
        await pilot.press("shift+tab")
        assert app.focused is not None
        assert app.focused.id == "detail-info-scroll"


@pilot_test
async def test_filter_narrows_the_list_and_n_steps_through_matches(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        rows = app.rows
        assert rows is not None
        await pilot.press("slash", *"effect:refund", "enter")
        await wait_for(pilot, lambda: rows.filtered, what="filter")
        assert len(rows) == 2
        assert "filter 'effect:refund': 2 of 3 operations" in text_of(app, "#status")
        listing = app.browse.operations
        assert listing.current_index == 1
        await pilot.press("n")
        assert listing.current_index == 2
        await pilot.press("n")
        assert listing.current_index == 1  # wraps
        await pilot.press("N")
        assert listing.current_index == 2
        await pilot.press("escape")  # clears the filter, stays on the operation
        assert not rows.filtered
        assert len(rows) == 3
        assert listing.current_index == 2
        await pilot.press("n")  # the last query still steps, in context
        assert listing.current_index == 1
        await pilot.press("slash", *"approve", "enter")  # any text: the outcome
        await wait_for(pilot, lambda: rows.query == "approve")
        assert len(rows) == 1
        assert listing.current_index == 2


@pilot_test
async def test_search_inside_the_output(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "tab", "slash", *"confidence", "enter")
        values = app.browse.detail.values
        assert app.focused is values
        assert values.current_path == ("confidence",)
        await pilot.press("slash", *"nothing here", "enter")
        assert "nothing in this output matches" in text_of(app, "#status")


@pilot_test
async def test_a_large_trace_opens_and_G_reaches_the_end(tmp_path: Path) -> None:
    count = 20_000
    trace = write_trace(
        tmp_path / "big.trp",
        [("kv.get", {"key": f"k{i}"}, {"value": i}) for i in range(count)],
    )
    app = make_app(Project(tmp_path, trace))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G")
        assert app.browse.operations.current_index == count - 1
        assert f"#{count - 1}" in text_of(app, "#detail-info")
        await pilot.press("pageup")
        assert app.browse.operations.current_index < count - 1
        await pilot.press("g")
        assert app.browse.operations.current_index == 0


@pilot_test
async def test_a_trace_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    app = make_app(Project(tmp_path, tmp_path / "missing.trp"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "cannot be opened" in text_of(app, "#trace-header"))
        await pilot.press("f")  # nothing to fork: nothing happens
        assert app.last_run is None


@pilot_test
async def test_help_lists_every_key(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = text_of(app, "#help-text")
        for expected in (
            "Fork",
            "Edit output",
            "Make patch",
            "Next difference",
            "Promote",
            "Filter",
        ):
            assert expected in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


@pilot_test
async def test_quit_asks_when_patches_are_unsaved(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "tab", "enter", *'"deny"', "enter")
        assert len(app.pending) == 1
        assert isinstance(app.focused, ValueView)
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert not isinstance(app.screen, ConfirmScreen)
        assert app.is_running
        await pilot.press("q", "y")
        await wait_for(pilot, lambda: not app.is_running, timeout=10)


@pilot_test
async def test_quit_without_patches_does_not_ask(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, timeout=10)
