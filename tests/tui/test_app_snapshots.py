"""SVG snapshots of the debugger at a fixed terminal size (pytest-textual-snapshot).

Each state is reached by keys against a real trace (and, for the diff and the
promote form, a real fork in a child process). Nothing on these screens depends
on the machine: no timestamps, no temporary paths, no trace ids, and no
notifications (they expire after a time, so they are cleared before the picture). Update with
`uv run pytest tests/tui/test_app_snapshots.py --snapshot-update` after checking
the new pictures.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static
from toolreplay_tui.model.runreport import describe_result
from toolreplay_tui.screens.browse import BrowseScreen
from toolreplay_tui.screens.run import RunScreen
from toolreplay_tui.widgets.run_panel import render_report

from tests.support.agent_fork import AgentFork, record_and_fork, record_sync_agent
from tests.tui.agent_project import AgentProject
from tests.tui.pilot import SIZE, loaded, make_app, wait_for
from tests.tui.support import Project
from tests.tui.test_app_new_call import agent_app, fork_at_new_model_call

SMALL = (80, 24)
"""The smallest terminal the debugger is laid out for: everything reachable in it."""


async def fork_with_manual_review(pilot: Pilot[Any], *, close: bool = True) -> None:
    app = await loaded(pilot)
    await pilot.press("G", "tab", "enter", *'"manual_review"', "enter", "shift+tab", "f")
    await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
    assert app.last_fork is not None
    assert app.last_fork.result.ok
    if close:
        await pilot.press("escape")


def test_browse_screen(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        await pilot.press("j", "j")
        pilot.app.clear_notifications()

    assert snap_compare(make_app(project), terminal_size=SIZE, run_before=before)


def test_editor_with_an_error(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        await pilot.press("G", "e", "delete", "ctrl+s")
        pilot.app.clear_notifications()

    assert snap_compare(make_app(project), terminal_size=SIZE, run_before=before)


def test_diff_at_the_first_divergence(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await fork_with_manual_review(pilot)
        await pilot.press("d")
        screen = pilot.app.screen
        await wait_for(pilot, lambda: getattr(screen, "rows", None) is not None, what="the diff")
        pilot.app.clear_notifications()

    assert snap_compare(make_app(project), terminal_size=SIZE, run_before=before)


def test_promote_form(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await fork_with_manual_review(pilot)
        await pilot.press("p")
        pilot.app.clear_notifications()

    assert snap_compare(make_app(project), terminal_size=SIZE, run_before=before)


def test_help_screen(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        await pilot.press("question_mark")
        pilot.app.clear_notifications()

    assert snap_compare(make_app(project), terminal_size=SIZE, run_before=before)


# --- an agent's model turns ------------------------------------------------------------------


@pytest.fixture
def agent_fork(tmp_path: Path) -> AgentFork:
    pytest.importorskip("pydantic_ai")
    return record_and_fork(tmp_path)


def test_browse_an_agent_trace(tmp_path: Path, snap_compare: Any) -> None:
    # Each model turn reads as its last message and its answer: the question and the
    # tool call, then the tool's output and the answer text.
    pytest.importorskip("openai")
    trace = record_sync_agent(tmp_path / "agent.trp")

    async def before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        await pilot.press("G")
        pilot.app.clear_notifications()

    assert snap_compare(make_app(Project(tmp_path, trace)), terminal_size=SIZE, run_before=before)


def test_diff_of_an_agent_fork(agent_fork: AgentFork, snap_compare: Any) -> None:
    # The model request after the changed tool output is one changed row (input and
    # output, supplied), at the tool output's path inside the request.
    async def before(pilot: Pilot[Any]) -> None:
        app = await loaded(pilot)
        await wait_for(pilot, lambda: getattr(app.screen, "rows", None) is not None)
        await pilot.press("n")
        pilot.app.clear_notifications()

    project = Project(agent_fork.source.parent, agent_fork.source)
    app = make_app(project, against=agent_fork.branch)
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_a_new_model_call_and_its_answers(agent: AgentProject, snap_compare: Any) -> None:
    # The fork stopped at the model request that carries the changed tool output: the
    # call, what the request offers, and one key per way of answering it.
    async def before(pilot: Pilot[Any]) -> None:
        await fork_at_new_model_call(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, RunScreen)
        panel = screen.panel
        result = panel.result
        assert result is not None
        assert result.error is not None
        # What depends on the machine: how long the child took, and the trace's folder.
        screen.query_one("#run-status", Static).update(Text("finished in 0.5 s", style="dim"))
        message = result.error.message.replace(str(agent.root), "<project>")
        shown = replace(result, error=replace(result.error, message=message))
        screen.query_one("#run-report", Static).update(render_report(describe_result(shown)))
        pilot.app.clear_notifications()
        # Clearing refreshes the top screen's toasts only; the screen under this modal
        # keeps its own until they expire, and a snapshot must not depend on when.
        for under in pilot.app.screen_stack:
            await under.query("Toast").remove()
            if isinstance(under, BrowseScreen):
                under.show_status()  # the fork's outcome, whenever its refresh would come

    app = agent_app(agent)
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


# --- 80x24 ---------------------------------------------------------------------------------


def test_browse_screen_at_80x24(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        await pilot.press("j", "j", "tab")

    assert snap_compare(make_app(project), terminal_size=SMALL, run_before=before)


def test_run_result_at_80x24(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await fork_with_manual_review(pilot, close=False)
        screen = pilot.app.screen
        assert isinstance(screen, RunScreen)
        # The one line that depends on the machine: how long the child took.
        screen.query_one("#run-status", Static).update(Text("finished in 0.5 s", style="dim"))

    assert snap_compare(make_app(project), terminal_size=SMALL, run_before=before)


def test_diff_at_80x24(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await fork_with_manual_review(pilot)
        await pilot.press("d")
        screen = pilot.app.screen
        await wait_for(pilot, lambda: getattr(screen, "rows", None) is not None, what="the diff")
        # A toast from the fork may outlive its timeout on a loaded machine.
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(make_app(project), terminal_size=SMALL, run_before=before)


def test_help_screen_at_80x24(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await loaded(pilot)
        await pilot.press("question_mark")

    assert snap_compare(make_app(project), terminal_size=SMALL, run_before=before)
