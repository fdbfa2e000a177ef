"""SVG snapshots of the debugger at a fixed terminal size (pytest-textual-snapshot).

Each state is reached by keys against a real trace (and, for the diff and the
promote form, a real fork in a child process). Nothing on these screens depends
on the machine: no timestamps, no temporary paths, no trace ids, and no
notifications (they expire after a time, so they are cleared before the picture). Update with
`uv run pytest tests/tui/test_app_snapshots.py --snapshot-update` after checking
the new pictures.
"""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot

from tests.tui.pilot import SIZE, loaded, make_app, wait_for
from tests.tui.support import Project


async def fork_with_manual_review(pilot: Pilot[Any]) -> None:
    app = await loaded(pilot)
    await pilot.press("G", "tab", "enter", *'"manual_review"', "enter", "shift+tab", "f")
    await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
    assert app.last_fork is not None
    assert app.last_fork.result.ok
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
