"""The README's walk through the bundled incident, key by key, as a newcomer does it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.diff import DiffScreen

import toolreplay
from tests.tui.pilot import SIZE, loaded, pilot_test, wait_for

ROOT = Path(__file__).resolve().parents[2]
INCIDENT = ROOT / "examples" / "incident" / "refund.trp"


def listing(folder: Path) -> list[tuple[str, int, int]]:
    """Every file below `folder`: its relative path, size and modification time."""
    return sorted(
        (str(path.relative_to(folder)), path.stat().st_size, path.stat().st_mtime_ns)
        for path in folder.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )


@pilot_test
async def test_the_bundled_incident_is_fixed_and_promoted_in_under_a_dozen_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = INCIDENT.read_bytes()
    # A user following the README may have left forks in examples/incident/.toolreplay/;
    # this walk works in tmp_path and must leave that folder exactly as it found it.
    folder_before = listing(INCIDENT.parent)
    environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    environment["PYTHONPATH"] = str(ROOT)  # the runner lives in examples.incident
    app = ToolReplayApp(
        INCIDENT,
        cwd=tmp_path,  # the promoted case goes to tmp_path/tests/cases/<name>
        env=environment,
        workdir=tmp_path / ".toolreplay",
        blink_cursors=False,
    )
    keys = 0

    async with app.run_test(size=SIZE) as pilot:

        async def press(*names: str) -> None:
            nonlocal keys
            keys += len(names)
            await pilot.press(*names)

        await loaded(pilot)
        await press("G", "tab", "slash")
        await pilot.press(*"approve")  # typing
        await press("enter", "enter")
        await pilot.press(*'"manual_review"')  # typing
        await press("enter", "f")
        await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
        assert app.last_fork is not None
        result = app.last_fork.result
        assert result.ok, (result.error, result.stderr)
        assert isinstance(result.return_value, dict)
        assert result.return_value["decision"] == "manual_review"

        await press("d")
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await wait_for(pilot, lambda: screen.rows is not None, what="the diff")
        assert screen.rows is not None
        assert screen.view.cursor == screen.rows.first_divergence == 2

        await press("escape", "p", "enter")
        await wait_for(pilot, lambda: app.last_promote is not None, what="the promotion")
        assert app.last_promote is not None
        assert app.last_promote.ok, app.last_promote.error
        case = app.last_promote.case
        assert case is not None

    assert keys <= 11, f"{keys} keys"
    monkeypatch.syspath_prepend(str(ROOT))
    verified = toolreplay.verify_case(tmp_path / case.directory)
    assert isinstance(verified.returned, dict)
    assert verified.returned["decision"] == "manual_review"
    assert INCIDENT.read_bytes() == before  # the bundled trace is never written
    assert listing(INCIDENT.parent) == folder_before
