"""The README's walk through the bundled incident, key by key, as a newcomer does it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.diff import DiffScreen
from toolreplay_tui.screens.editor import EditorScreen
from toolreplay_tui.screens.run import RunScreen

import toolreplay
from tests.tui.pilot import SIZE, loaded, pilot_test, text_of, wait_for

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
async def test_the_bundled_incident_is_forked_through_review_and_promoted_in_15_keys(
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

        async def fork_finished(count: int) -> RunScreen:
            await wait_for(pilot, lambda: forks() == count, what=f"fork {count}")
            screen = app.screen
            assert isinstance(screen, RunScreen)
            return screen

        forks_seen: list[object] = []

        def forks() -> int:
            fork = app.last_fork
            if fork is not None and (not forks_seen or forks_seen[-1] is not fork):
                forks_seen.append(fork)
            return len(forks_seen)

        await loaded(pilot)
        # Find the model's answer and change it.
        await press("j", "j", "tab", "s")
        await pilot.press(*"approve")  # typing
        await press("enter", "enter")
        await pilot.press(*'"manual_review"')  # typing
        await press("enter", "f")
        # The fork goes to the review queue, which the recording never called: it asks.
        screen = await fork_finished(1)
        assert screen.stopped_at is not None
        assert screen.stopped_at.effect == "review.queue.add"
        assert screen.stopped_at.nearest_id is None
        await press("s")
        assert isinstance(app.screen, EditorScreen)
        await pilot.press(*'{"ticket": "rv_ord_1042", "queue": "refunds"}')  # typing
        await press("ctrl+s")
        # Supplied, the fork runs again and stops at the customer notice, whose message
        # differs from the recorded one: the editor starts from the recorded output.
        screen = await fork_finished(2)
        assert screen.stopped_at is not None
        assert screen.stopped_at.effect == "notify.customer"
        assert screen.stopped_at.nearest_id == 4
        await press("s", "ctrl+s")
        screen = await fork_finished(3)
        assert app.last_fork is not None
        result = app.last_fork.result
        assert result.ok, (result.error, result.stderr)
        assert isinstance(result.return_value, dict)
        assert result.return_value["decision"] == "manual_review"
        assert result.return_value["review_ticket"] == "rv_ord_1042"
        assert [p.kind for p in app.pending] == [
            "replace_output",
            "supply_output",
            "supply_output",
        ]

        await press("d")
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        await wait_for(pilot, lambda: diff.rows is not None, what="the diff")
        assert diff.rows is not None
        assert diff.view.cursor == diff.rows.first_divergence == 2
        report = diff.rows.report
        assert [(d.type, d.effect) for d in report.differences] == [
            ("output_changed", "openai.responses.create"),
            ("operation_missing", "billing.refund.create"),
            ("operation_added", "review.queue.add"),
            ("input_changed", "notify.customer"),  # answered with the recorded answer
        ]
        notice = diff.rows.row(len(diff.rows) - 1)
        assert notice.marker == "I"
        assert "#4 notify.customer [supplied]" in notice.right
        assert diff.rows.fields(len(diff.rows) - 1)[0].path == "$.inputs.message"
        assert "stands where the recording's #4 stood" in str(
            diff.rows.attribution(len(diff.rows) - 1)
        )

        await press("escape", "P")  # promotes at once, with the form's defaults
        await wait_for(pilot, lambda: app.last_promote is not None, what="the promotion")
        assert app.last_promote is not None
        assert app.last_promote.ok, app.last_promote.error
        case = app.last_promote.case
        assert case is not None
        shown = app.screen
        assert isinstance(shown, RunScreen)
        assert f"folder  {case.directory}" in text_of(app, "#run-report")

    assert keys == 15, f"{keys} keys"  # as the README counts them; under 20
    monkeypatch.syspath_prepend(str(ROOT))
    verified = toolreplay.verify_case(tmp_path / case.directory)
    assert isinstance(verified.returned, dict)
    assert verified.returned["decision"] == "manual_review"
    assert INCIDENT.read_bytes() == before  # the bundled trace is never written
    assert listing(INCIDENT.parent) == folder_before
