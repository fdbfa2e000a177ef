"""An 80x24 terminal: everything reachable (footer, run and promote results, help, diff),
JSON folding and the full values of what the panes cut off."""

from __future__ import annotations

import inspect
import io
import shutil
from pathlib import Path
from typing import Any

from rich.console import Console
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static
from textual.widgets._footer import FooterKey  # pyright: ignore[reportPrivateUsage]
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.diff import DiffScreen
from toolreplay_tui.screens.full_value import FullValueScreen
from toolreplay_tui.screens.help import HelpScreen
from toolreplay_tui.screens.promote import PromoteScreen
from toolreplay_tui.screens.run import RunScreen
from toolreplay_tui.widgets.key_footer import FooterHint, KeyFooter, collapse_hints
from toolreplay_tui.widgets.scroll_box import ScrollBox
from toolreplay_tui.widgets.value_view import ValueView

from tests.tui.pilot import loaded, make_app, pilot_test, text_of, wait_for
from tests.tui.support import Project, child_env

SMALL = (80, 24)
ROOT = Path(__file__).resolve().parents[2]
INCIDENT = ROOT / "examples" / "incident" / "refund.trp"


def shown_lines(widget: Static) -> list[str]:
    """The lines a Static draws at its current width (long lines wrapped as on screen)."""
    console = Console(width=widget.content_region.width, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    output = console.file
    assert isinstance(output, io.StringIO)
    return output.getvalue().splitlines()


def on_screen(widget: Static, box: Widget, text: str) -> bool:
    """Whether the line of `widget` holding `text` is inside `box`'s visible region."""
    lines = shown_lines(widget)
    number = next(i for i, line in enumerate(lines) if text in line)
    y = widget.content_region.y + number
    visible = box.content_region
    return visible.y <= y < visible.bottom and visible.bottom <= box.screen.size.height


def incident_app(tmp_path: Path) -> ToolReplayApp:
    """The bundled incident (a copy), for its nested model response."""
    trace = tmp_path / "refund.trp"
    shutil.copy(INCIDENT, trace)
    return ToolReplayApp(trace, cwd=tmp_path, blink_cursors=False, warm_runs=False)


async def fork_tuiapp(pilot: Pilot[Any]) -> ToolReplayApp:
    app = await loaded(pilot)
    await pilot.press("G", "tab", "enter", *'"manual_review"', "enter", "shift+tab", "f")
    await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
    assert app.last_fork is not None
    assert app.last_fork.result.ok
    return app


# --- the footer ---------------------------------------------------------------------------


def hint(key: str, action: str, description: str, *, enabled: bool = True) -> FooterHint:
    return FooterHint(Binding(key, action, description, id=action), key, enabled)


def test_hints_that_fit_are_all_kept_else_help_and_the_ranked_ones() -> None:
    hints = [
        hint("/", "filter", "Filter"),
        hint("x", "remove", "Remove patch"),
        hint("f", "fork", "Fork"),
        hint("d", "diff", "Diff", enabled=False),
        hint("p", "promote", "Promote"),
        hint("?", "app.help", "Help"),
    ]
    assert collapse_hints(hints, 200, ()) == hints
    assert sum(h.width for h in hints) == 61
    kept = collapse_hints(hints, 40, ("promote", "fork"))
    assert [h.binding.action for h in kept] == ["filter", "fork", "promote", "app.help"]
    assert sum(h.width for h in kept) <= 40
    # Disabled hints are the first to go; help stays even when nothing else fits.
    assert [h.binding.action for h in collapse_hints(hints, 10, ("fork",))] == ["app.help"]


@pilot_test
async def test_the_footer_keeps_fork_and_help_at_80_columns_and_shows_all_when_wide(
    project: Project,
) -> None:
    app = make_app(project)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot)
        footer = app.screen.query_one(KeyFooter)
        every = footer.hints()
        shown = footer.shown_hints()
        actions = [h.binding.action for h in shown]
        assert "app.fork" in actions
        assert "help" in actions
        assert len(shown) < len(every)  # it collapsed
        assert sum(h.width for h in shown) <= 80
        drawn = [key.description for key in footer.query(FooterKey)]
        assert drawn == [h.binding.description for h in shown]
        # What the footer leaves out, help lists.
        await pilot.press("question_mark")
        help_text = text_of(app, "#help-text")
        for left_out in set(every) - set(shown):
            assert left_out.binding.description in help_text
    app = make_app(project)
    async with app.run_test(size=(200, 40)) as pilot:
        await loaded(pilot)
        footer = app.screen.query_one(KeyFooter)
        assert footer.shown_hints() == footer.hints()


class PaletteApp(ToolReplayApp):
    """The debugger with Textual's command palette switched on."""

    ENABLE_COMMAND_PALETTE = True
    CSS_PATH = str(Path(inspect.getfile(ToolReplayApp)).with_name("app.tcss"))


@pilot_test
async def test_a_narrow_footer_keeps_the_command_palette_key_when_there_is_one(
    project: Project,
) -> None:
    app = PaletteApp(project.trace, cwd=project.root, env=child_env(), blink_cursors=False)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot)
        shown = app.screen.query_one(KeyFooter).shown_hints()
        actions = [h.binding.action for h in shown]
        assert "command_palette" in actions
        assert "help" in actions
        assert sum(h.width for h in shown) <= 80


# --- run and promote results ----------------------------------------------------------------


@pilot_test
async def test_a_run_result_fills_the_screen_and_scrolls_by_keys(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SMALL) as pilot:
        await fork_tuiapp(pilot)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        box = screen.query_one("#run-box", ScrollBox)
        assert app.focused is box
        assert box.outer_size.width == 80  # the whole width, not 90% of it
        report = screen.query_one("#run-report", Static)
        assert on_screen(report, box, "fork succeeded")
        assert on_screen(report, box, '"outcome": "manual_review"')
    app = make_app(project)
    async with app.run_test(size=(80, 12)) as pilot:  # too short for the report
        await fork_tuiapp(pilot)
        screen = app.screen
        box = screen.query_one("#run-box", ScrollBox)
        report = screen.query_one("#run-report", Static)
        assert box.max_scroll_y > 0
        assert not on_screen(report, box, '"outcome": "manual_review"')
        await pilot.press("G")
        await pilot.pause()
        assert on_screen(report, box, '"outcome": "manual_review"')
        await pilot.press("g")
        await pilot.pause()
        assert box.scroll_y == 0
        await pilot.press("j")
        await pilot.pause()
        assert box.scroll_y == 1


@pilot_test
async def test_the_promoted_case_path_is_on_screen_at_80x24(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SMALL) as pilot:
        await fork_tuiapp(pilot)
        await pilot.press("escape", "p")
        screen = app.screen
        assert isinstance(screen, PromoteScreen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.last_promote is not None, what="the promotion")
        assert app.last_promote is not None
        assert app.last_promote.case is not None
        await pilot.pause(0.2)
        body = screen.query_one("#promote-body", ScrollBox)
        report = screen.query_one("#run-report", Static)
        folder = f"folder  {app.last_promote.case.directory}"
        assert on_screen(report, body, "promote succeeded")
        assert on_screen(report, body, folder)
        assert app.focused is body  # the keys scroll it
        footer = screen.query_one(KeyFooter)
        promote = next(h for h in footer.hints() if h.binding.action == "promote")
        assert not promote.enabled  # written once: the footer no longer offers it


# --- help ---------------------------------------------------------------------------------


@pilot_test
async def test_help_fits_80_columns_in_one_column_and_scrolls_to_its_end(
    project: Project,
) -> None:
    app = make_app(project)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        screen = app.screen
        assert isinstance(screen, HelpScreen)
        box = screen.query_one("#help-box", ScrollBox)
        text = screen.query_one("#help-text", Static)
        assert box.outer_size.width <= 80
        assert box.region.bottom <= 24
        lines = shown_lines(text)
        assert any(line.startswith("Everywhere") for line in lines)  # one column
        assert box.max_scroll_y > 0
        assert not on_screen(text, box, "Promote form")
        await pilot.press("G")
        await pilot.pause()
        assert on_screen(text, box, "Promote form")
    app = make_app(project)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        text = app.screen.query_one("#help-text", Static)
        assert not any(line.startswith("Everywhere") for line in shown_lines(text))  # two


# --- the diff -----------------------------------------------------------------------------


@pilot_test
async def test_the_diff_stacks_source_over_target_when_narrow(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SMALL) as pilot:
        await fork_tuiapp(pilot)
        await pilot.press("d")
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        await wait_for(pilot, lambda: diff.rows is not None, what="the diff")
        await pilot.pause()
        view = diff.view
        assert view.stacked
        assert view.row_height == 2
        assert "target below" in text_of(app, "#diff-header")
        first = view.cursor
        width = view.scrollable_content_region.width
        source = view.render_row_line(first, 0, width).plain
        target = view.render_row_line(first, 1, width).plain
        assert "source #2 llm.refund.decide" in source
        assert '"approve"' in source
        assert "target #2 llm.refund.decide" in target
        assert '"manual_review"' in target
        fields = text_of(app, "#diff-fields")
        assert '  source "approve"' in fields
        assert '  target "manual_review"' in fields
        # The cursor moves by row, both lines at once.
        await pilot.press("k")
        assert view.cursor == first - 1
        # v: both sides of the row in full.
        await pilot.press("j", "v")
        assert isinstance(app.screen, FullValueScreen)
        text = text_of(app, "#full-value-text")
        row = diff.rows.alignment(first) if diff.rows is not None else None
        assert row is not None
        assert row.source is not None
        assert row.target is not None
        assert row.source.identity.fingerprint in text
        assert '"decision": "approve"' in text
        assert '"decision": "manual_review"' in text
        assert text.index("source") < text.index("branch / target")
        await pilot.press("escape")
        assert app.screen is diff
    app = make_app(project)
    async with app.run_test(size=(120, 40)) as pilot:
        await fork_tuiapp(pilot)
        await pilot.press("d")
        wide = app.screen
        assert isinstance(wide, DiffScreen)
        await wait_for(pilot, lambda: wide.rows is not None, what="the diff")
        assert not wide.view.stacked
        assert wide.view.row_height == 1
        assert "│ branch / target" in text_of(app, "#diff-header")


# --- JSON folding and full values ---------------------------------------------------------


@pilot_test
async def test_space_folds_the_output_and_a_search_or_an_edit_keeps_working(
    tmp_path: Path,
) -> None:
    app = incident_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot)
        await pilot.press("j", "j", "tab")
        values = app.browse.detail.values
        assert app.focused is values
        assert values.current_path == ("status",)
        full = values.row_count()
        await pilot.press("j", "space")  # on "headers": fold it
        assert values.current_path == ("headers",)
        assert values.lines.is_folded(values.cursor)
        assert values.row_count() < full
        assert "{…}," in values.render_row(values.cursor, 70).plain
        await pilot.press("space")
        assert values.row_count() == full
        await pilot.press("minus")
        folded = values.row_count()
        assert folded < 10
        await pilot.press("s", *"approve", "enter")
        await pilot.pause()
        path = values.current_path
        assert path is not None
        assert path[-1] == "text"
        assert folded < values.row_count() < full  # only what hid the match unfolded
        await pilot.press("enter", *'"manual_review"', "enter")
        assert len(app.pending) == 1
        assert values.current_path == path  # the edit keeps the place and the folds
        assert ("headers",) in values.lines.folded
        await pilot.press("plus")
        assert values.row_count() == full


@pilot_test
async def test_v_shows_the_full_value_the_panes_cut_off(tmp_path: Path) -> None:
    app = incident_app(tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot)
        await pilot.press("j", "j", "v")
        assert isinstance(app.screen, FullValueScreen)
        trace = app.trace
        assert trace is not None
        operation = trace.operations[2]
        text = text_of(app, "#full-value-text")
        assert operation.identity.fingerprint in text  # the detail pane shows 24 characters
        assert '"model":' in text  # the inputs, in full
        await pilot.press("escape")
        assert not isinstance(app.screen, FullValueScreen)
        await pilot.press("tab", "j", "j")  # the request id, cut at 80 columns
        values = app.focused
        assert isinstance(values, ValueView)
        assert values.current_path == ("headers", "x-request-id")
        shown = values.render_row(values.cursor, 0).plain
        assert len(shown) > values.scrollable_content_region.width  # drawn cut off
        await pilot.press("v")
        text = text_of(app, "#full-value-text")
        assert '$.headers["x-request-id"]' in text
        value = values.value
        assert isinstance(value, dict)
        headers = value["headers"]
        assert isinstance(headers, dict)
        assert f'"{headers["x-request-id"]}"' in text
        await pilot.press("v")  # v closes it too
        assert app.focused is values
