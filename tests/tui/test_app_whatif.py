"""Forking the bundled incident through a path the recording never took: supplying an
error, and every patch kind listed, edited, removed and restored in one place."""

from __future__ import annotations

import os
from pathlib import Path

from textual.widgets import OptionList
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.dialogs import PromptScreen
from toolreplay_tui.screens.patches import PatchesScreen
from toolreplay_tui.screens.run import RunScreen

import toolreplay
from tests.tui.pilot import SIZE, loaded, pilot_test, wait_for

ROOT = Path(__file__).resolve().parents[2]
INCIDENT = ROOT / "examples" / "incident" / "refund.trp"


@pilot_test
async def test_a_supplied_error_reruns_the_fork_and_patches_are_managed_in_one_list(
    tmp_path: Path,
) -> None:
    environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    environment["PYTHONPATH"] = str(ROOT)
    app = ToolReplayApp(
        INCIDENT, cwd=tmp_path, env=environment, workdir=tmp_path / ".tr", blink_cursors=False
    )
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("j", "j", "tab", "s", *"approve", "enter", "enter")
        await pilot.press(*'"manual_review"', "enter", "f")
        first = app.screen
        await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
        assert isinstance(first, RunScreen)
        assert first.stopped_at is not None
        assert "review.queue.add occurrence 0" in str(
            first.query_one("#run-offer").render()  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]  # Static.render is untyped here
        )
        stopped = app.last_fork

        await pilot.press("z")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("enter")  # the offered default: TimeoutError: review.queue.add timed out
        await wait_for(
            pilot,
            lambda: app.last_fork is not stopped and app.last_fork is not None,
            what="the second fork",
        )
        assert app.last_fork is not None
        result = app.last_fork.result
        assert result.outcome == "application_error"  # the incident does not catch it
        assert result.error is not None
        assert result.error.type == "builtins.TimeoutError"
        assert [p.kind for p in app.pending] == ["replace_output", "supply_error"]

        await pilot.press("escape", "L")
        screen = app.screen
        assert isinstance(screen, PatchesScreen)
        listing = screen.query_one(OptionList)
        assert listing.option_count == 2
        await pilot.press("x")
        assert len(app.pending) == 1
        assert listing.option_count == 1
        await pilot.press("u")
        assert len(app.pending) == 2
        await pilot.press("down", "e")  # the supplied error: its type and message
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("ctrl+u", *"ConnectionError: queue unreachable", "enter")
        (error_patch,) = (p for p in app.pending if p.supplies)
        assert isinstance(error_patch, toolreplay.ErrorPatch)
        assert (error_patch.error_type, error_patch.message) == (
            "builtins.ConnectionError",
            "queue unreachable",
        )
        assert len(app.pending) == 2
