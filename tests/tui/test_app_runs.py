"""Fork, replay, diff and promote by keys, each run in a real child process."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input
from toolreplay_tui.screens.dialogs import PromptScreen
from toolreplay_tui.screens.diff import DiffScreen
from toolreplay_tui.screens.promote import PromoteScreen
from toolreplay_tui.screens.run import RunScreen

from tests.support.traces import Call, write_trace
from tests.tui.pilot import SIZE, loaded, make_app, pilot_test, text_of, wait_for
from tests.tui.support import RUN_TIMEOUTS, Project, sleepy_started, verify_promoted


async def patch_decision(pilot: Pilot[Any], decision: str) -> None:
    """From the browse screen: put `decision` into the model's answer, by keys."""
    await pilot.press("G", "tab", "enter", *f'"{decision}"', "enter", "shift+tab")


@pilot_test
async def test_fork_diff_and_promote_by_keys(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    source_bytes = project.trace.read_bytes()
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("p")  # promote is disabled until a fork succeeded
        assert not isinstance(app.screen, PromoteScreen)
        await patch_decision(pilot, "manual_review")
        await pilot.press("f")
        assert isinstance(app.screen, RunScreen)
        await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
        assert app.last_fork is not None
        result = app.last_fork.result
        assert result.ok, (result.error, result.stderr)
        assert result.return_value == {
            "customer": "Ada",
            "amount": 1200.0,
            "outcome": "manual_review",
        }
        branch = project.root / ".toolreplay" / "refund-fork-1.trp"
        assert app.last_fork.branch == branch
        assert branch.is_file()
        report = text_of(app, "#run-report")
        assert "fork succeeded" in report
        assert '"outcome": "manual_review"' in report
        assert "deciding the refund" in report  # the child's stderr

        await pilot.press("d")
        assert isinstance(app.screen, DiffScreen)
        screen = app.screen
        await wait_for(pilot, lambda: screen.rows is not None, what="the diff")
        assert screen.rows is not None
        assert screen.rows.first_divergence == 2
        assert screen.view.cursor == 2  # the first divergence is selected
        fields = text_of(app, "#diff-fields")
        assert "row 2: output_changed" in fields
        assert "$.output.decision" in fields
        assert '"approve"' in fields
        assert '"manual_review"' in fields
        assert "set by patch p-" in fields
        assert "1 difference (output_changed 1)" in text_of(app, "#diff-summary")
        await pilot.press("g")
        assert screen.view.cursor == 0
        await pilot.press("n")
        assert screen.view.cursor == 2
        await pilot.press("N")  # no difference before the first
        assert screen.view.cursor == 2
        await pilot.press("escape")
        assert not isinstance(app.screen, DiffScreen)

        await pilot.press("p")
        assert isinstance(app.screen, PromoteScreen)
        promote = app.screen
        name = promote.query_one("#promote-name", Input).value
        assert name.startswith("refund_llm_refund_decide_")
        assert promote.query_one("#promote-folder", Input).value == f"tests/cases/{name}"
        assert promote.query_one("#promote-runner", Input).value == "tuiapp:main"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.last_promote is not None, what="the promotion")
        assert app.last_promote is not None
        assert app.last_promote.ok, app.last_promote.error
        case = app.last_promote.case
        assert case is not None
        assert case.directory == f"tests/cases/{name}"
        assert case.trace_sha256 in text_of(app, "#run-report")
        folder = project.root / "tests" / "cases" / name
        assert verify_promoted(project, folder, monkeypatch) == name
    assert project.trace.read_bytes() == source_bytes  # the source trace is never written


@pilot_test
async def test_promote_form_checks_the_expected_value(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await patch_decision(pilot, "manual_review")
        await pilot.press("f")
        await wait_for(pilot, lambda: app.last_fork is not None)
        await pilot.press("p")
        assert isinstance(app.screen, PromoteScreen)
        await pilot.press(
            "tab", "tab", "tab", "delete", "ctrl+s"
        )  # the expected value loses its brace
        assert "expected value: line 2, column" in text_of(app, "#promote-problem")
        assert app.last_promote is None
        await pilot.press("ctrl+z")
        # A wrong expected value: the case does not hold, and nothing is left behind.
        for _ in range(3):
            await pilot.press("down")
        await pilot.press("end", *["backspace"] * len('"manual_review"'), *'"approved"', "ctrl+s")
        await wait_for(pilot, lambda: app.last_promote is not None)
        assert app.last_promote is not None
        assert not app.last_promote.ok
        assert "BehavioralRegressionError" in text_of(app, "#run-report")
        assert not (project.root / "tests" / "cases").exists() or not any(
            (project.root / "tests" / "cases").iterdir()
        )


@pilot_test
async def test_a_fork_that_leaves_the_recording_shows_the_missing_call(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await patch_decision(pilot, "escalate")
        await pilot.press("f")
        await wait_for(pilot, lambda: app.last_fork is not None)
        assert app.last_fork is not None
        assert app.last_fork.result.outcome == "replay_contract_error"
        report = text_of(app, "#run-report")
        assert "fork failed: the run left the recording (ReplayMiss)" in report
        assert "missing call" in report
        assert "billing.refund.escalate occurrence 0" in report
        await pilot.press("p")  # nothing to promote
        assert isinstance(app.screen, RunScreen)
        await pilot.press("d")  # the branch, kept up to the miss, can be compared
        assert isinstance(app.screen, DiffScreen)
        screen = app.screen
        await wait_for(pilot, lambda: screen.rows is not None)
        assert "ended with toolreplay.errors.ReplayMiss" in text_of(app, "#diff-title")


@pilot_test
async def test_strict_replay_and_a_runner_asked_for_once(tmp_path: Path, project: Project) -> None:
    # The same calls as the recording, written without a runner in the header.
    bare = write_trace(
        project.root / "bare.trp",
        [
            ("crm.customer.get", {"customer_id": 42}, {"id": 42, "name": "Ada", "tier": "gold"}),
            ("policy.refund.get", {"region": "eu"}, {"region": "eu", "manual_review_over": 1000.0}),
            (
                "llm.refund.decide",
                {"amount": 1200.0, "tier": "gold"},
                {"decision": "approve", "reason": "gold customer", "confidence": 0.93},
            ),
        ],
    )
    app = make_app(Project(project.root, bare))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        assert "(none: f will ask)" in text_of(app, "#trace-header")
        await pilot.press("r")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"not a runner", "enter")
        assert isinstance(app.screen, PromptScreen)  # refused, asked again
        await pilot.press(*["backspace"] * 12, *"tuiapp:main", "enter")
        await wait_for(pilot, lambda: app.last_run is not None)
        assert app.last_run is not None
        assert app.last_run.ok
        assert "replay succeeded" in text_of(app, "#run-report")
        await pilot.press("escape", "r")  # not asked again
        assert isinstance(app.screen, RunScreen)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await wait_for(pilot, lambda: not screen.panel.running)


@pilot_test
async def test_a_runner_module_that_raises_at_import_is_reported_as_such(
    project: Project,
) -> None:
    module = project.root / "tuiapp.py"
    source = module.read_text()
    module.write_text(source + '\nTOKEN = os.environ["TUIAPP_SERVICE_TOKEN"]\n')
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.last_run is not None, what="the replay")
        assert app.last_run is not None
        assert app.last_run.refused
        report = text_of(app, "#run-report")
        assert (
            "replay was refused: the runner's module cannot be imported (nothing was written) "
            "(RunnerImportError)"
        ) in report
        assert "importing tuiapp raised KeyError: 'TUIAPP_SERVICE_TOKEN'" in report
        assert "The environment variable TUIAPP_SERVICE_TOKEN is probably not set" in report
        assert 'TOKEN = os.environ["TUIAPP_SERVICE_TOKEN"]' in report  # the traceback


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
@pilot_test
async def test_a_key_cancels_a_run_and_kills_the_child(project: Project, key: str) -> None:
    app = make_app(project, runner="tuiapp:sleepy")
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await wait_for(pilot, lambda: screen.panel.handle is not None and screen.panel.handle.pid)
        handle = screen.panel.handle
        assert handle is not None
        pid = handle.pid
        assert pid is not None
        await wait_for(pilot, lambda: "running replay" in text_of(app, "#run-status"))
        await pilot.press(key)
        await wait_for(pilot, lambda: app.last_run is not None, timeout=30)
        assert app.last_run is not None
        assert app.last_run.outcome == "cancelled"
        assert "replay was cancelled: the child process was killed" in text_of(app, "#run-report")
        with pytest.raises(ProcessLookupError):
            os.killpg(pid, 0)
        assert isinstance(app.screen, RunScreen)
        await pilot.press("escape")  # now it closes
        assert not isinstance(app.screen, RunScreen)


async def run_past_timeout(project: Project, timeout: float) -> tuple[str, int]:
    """Run the hanging runner in the debugger with `timeout`: the report it shows, the pid."""
    app = make_app(project, runner="tuiapp:sleepy", run_timeout=timeout)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await wait_for(pilot, lambda: screen.panel.handle is not None and screen.panel.handle.pid)
        assert screen.panel.handle is not None
        pid = screen.panel.handle.pid
        assert pid is not None
        await wait_for(pilot, lambda: app.last_run is not None, timeout=timeout + 60)
        assert app.last_run is not None
        assert app.last_run.outcome == "timed_out"
        return text_of(app, "#run-report"), pid


@pilot_test
async def test_a_run_past_its_timeout_is_killed_and_says_so(project: Project) -> None:
    for timeout in RUN_TIMEOUTS:
        report, pid = await run_past_timeout(project, timeout)
        assert f"timed out after {timeout:g} s: the child process was killed" in report
        if sleepy_started(project.root, pid):  # it reached the runner: its output is shown
            assert "sleeping in the runner" in report
            return
    pytest.fail(f"the child never reached its runner within {RUN_TIMEOUTS[-1]} s")


@pilot_test
async def test_diff_against_another_trace(project: Project) -> None:
    other = write_trace(
        project.root / "other.trp",
        [("crm.customer.get", {"customer_id": 42}, {"id": 42, "name": "Ada", "tier": "silver"})],
    )
    app = make_app(project, against=other)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))  # opens at once
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await wait_for(pilot, lambda: screen.rows is not None)
        assert screen.view.cursor == 0
        assert "$.output.tier" in text_of(app, "#diff-fields")
        await pilot.press("n")
        assert screen.view.cursor == 1  # the operations missing from the other trace


@pilot_test
async def test_quitting_during_a_run_kills_the_child(project: Project) -> None:
    app = make_app(project, runner="tuiapp:sleepy")
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("r")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        await wait_for(pilot, lambda: screen.panel.handle is not None and screen.panel.handle.pid)
        handle = screen.panel.handle
        assert handle is not None
        pid = handle.pid
        assert pid is not None
        await pilot.press("ctrl+q")
        await wait_for(pilot, lambda: not app.is_running, timeout=30)
    assert handle.cancelled
    for _ in range(100):
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the child outlived the app")


@pilot_test
async def test_the_first_divergence_far_down_is_scrolled_into_view(tmp_path: Path) -> None:
    calls: list[Call] = [("kv.get", {"key": i}, {"value": i}) for i in range(500)]
    source = write_trace(tmp_path / "source.trp", calls)
    changed: list[Call] = [*calls[:400], ("kv.get", {"key": 400}, {"value": -1}), *calls[401:]]
    target = write_trace(tmp_path / "target.trp", changed)
    app = make_app(Project(tmp_path, source), against=target)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("d")
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await wait_for(pilot, lambda: screen.rows is not None)
        await pilot.pause()
        view = screen.view
        assert view.cursor == 400
        top = round(view.scroll_offset.y)
        assert top < 400 < top + view.scrollable_content_region.height
        assert "$.output.value" in text_of(app, "#diff-fields")
