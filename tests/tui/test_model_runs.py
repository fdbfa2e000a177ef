"""The run-protocol client, against real child processes."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from toolreplay_tui.model.runreport import describe_result, headline
from toolreplay_tui.model.runs import RunClient, RunHandle, RunRequest, RunResult, parse_document

import toolreplay
from tests.tui.support import (
    DECIDE_INPUTS,
    RUN_TIMEOUTS,
    RUNNER,
    Project,
    child_env,
    sleepy_started,
    verify_promoted,
)


def run(request: RunRequest) -> RunResult:
    """Run a request to the end, as the debugger's worker thread does."""
    return RunHandle(request).wait()


def project_client(project: Project, **options: Any) -> RunClient:
    """Requests running in the project folder, with the test environment."""
    return RunClient(cwd=project.root, env=child_env(), **options)


def write_fix(project: Project, value: object, name: str = "fix.json") -> Path:
    patch = toolreplay.replace_output(effect="llm.refund.decide", inputs=DECIDE_INPUTS, value=value)
    return toolreplay.write_patches(project.root / name, [patch])


def test_argv_of_each_command(tmp_path: Path) -> None:
    client = RunClient(python="py")
    replay = client.replay(tmp_path / "t.trp")
    assert replay.argv == (
        "py",
        "-m",
        "toolreplay",
        "replay",
        str(tmp_path / "t.trp"),
        "--format",
        "json",
    )
    fork = client.fork(Path("s.trp"), Path("p.json"), Path("b.trp"), runner="m:f")
    assert fork.argv[3:] == (
        "fork",
        "s.trp",
        "--patches",
        "p.json",
        "--output",
        "b.trp",
        "--allow-unobserved",
        "--runner",
        "m:f",
        "--format",
        "json",
    )
    promote = client.promote(
        Path("b.trp"), Path("tests/cases/x"), name="x", runner="m:f", expect_file=Path("e.json")
    )
    assert promote.command == "promote"
    assert promote.argv[3:] == (
        "promote",
        "b.trp",
        "--output",
        "tests/cases/x",
        "--name",
        "x",
        "--runner",
        "m:f",
        "--expect-file",
        "e.json",
        "--format",
        "json",
    )


def test_a_real_fork_in_a_child_process(project: Project) -> None:
    fix = write_fix(
        project, {"decision": "manual_review", "reason": "over 1000", "confidence": 1.0}
    )
    branch = project.root / "branch.trp"
    result = run(project_client(project).fork(project.trace, fix, branch))
    assert result.ok, (result.error, result.stderr)
    assert result.exit_code == 0
    assert result.runner == RUNNER  # from the trace header
    assert result.return_value == {"customer": "Ada", "amount": 1200.0, "outcome": "manual_review"}
    assert result.counts["operations_patched"] == 1
    assert result.branch == str(branch)
    assert branch.is_file()
    assert "deciding the refund" in result.stderr  # the application's output, kept apart
    assert result.elapsed > 0
    assert headline(result) == "fork succeeded"
    texts = [line.text for line in describe_result(result)]
    assert '  "outcome": "manual_review"' in texts


def test_a_fork_that_leaves_the_recording_reports_the_miss_and_candidates(project: Project) -> None:
    fix = write_fix(project, {"decision": "escalate", "reason": "x", "confidence": 0.5})
    result = run(project_client(project).fork(project.trace, fix, project.root / "b.trp"))
    assert result.outcome == "replay_contract_error"
    assert result.exit_code == 1
    error = result.error
    assert error is not None
    assert error.type == "toolreplay.errors.ReplayMiss"
    assert error.identity is not None
    assert error.identity.effect == "billing.refund.escalate"
    assert error.inputs == {"customer_id": 42}
    assert any("toolreplay diff" in note for note in error.notes)
    assert result.branch is not None
    assert Path(result.branch).is_file()
    assert headline(result) == "fork failed: the run left the recording (ReplayMiss)"
    texts = [line.text for line in describe_result(result)]
    assert "missing call" in texts


def test_a_miss_with_candidates(project: Project) -> None:
    # Replaying with a different runner that calls decide with other inputs: nearest calls.
    (project.root / "other.py").write_text(
        "from tuiapp import get_customer, refund_policy, decide\n"
        "def main():\n"
        "    get_customer(42); refund_policy('eu'); return decide(999.0, 'gold')\n",
        encoding="utf-8",
    )
    result = run(project_client(project).replay(project.trace, runner="other:main"))
    assert result.outcome == "replay_contract_error"
    assert result.error is not None
    assert result.error.candidates
    candidate = result.error.candidates[0]
    assert candidate.effect == "llm.refund.decide"
    assert candidate.inputs == DECIDE_INPUTS
    texts = [line.text for line in describe_result(result)]
    assert "nearest recorded calls" in texts
    assert any("$.amount: recorded 1200.0, called 999.0" in text for text in texts)
    # The message's own list of nearest calls is not printed a second time.
    assert sum("$.amount: recorded 1200.0, called 999.0" in text for text in texts) == 1
    assert not any(text.startswith("Nearest recorded calls of") for text in texts)
    assert any(text.startswith("What to do:") for text in texts)  # the rest of the message


def test_unapplied_patch_and_unconsumed_operations(project: Project) -> None:
    (project.root / "partial.py").write_text(
        "from tuiapp import get_customer\ndef main():\n    return get_customer(42)\n",
        encoding="utf-8",
    )
    fix = write_fix(project, {"decision": "manual_review"})
    forked = run(
        project_client(project).fork(
            project.trace,
            fix,
            project.root / "b.trp",
            runner="partial:main",
        )
    )
    assert forked.error is not None
    assert forked.error.type == "toolreplay.errors.UnappliedPatchError"
    assert len(forked.error.patch_ids) == 1
    replayed = run(project_client(project).replay(project.trace, runner="partial:main"))
    assert replayed.error is not None
    assert len(replayed.error.operations) == 2
    assert "recorded operations never called" in [line.text for line in describe_result(replayed)]


def test_an_application_error_keeps_the_traceback_and_a_refusal_says_nothing_ran(
    project: Project,
) -> None:
    crashed = run(project_client(project).replay(project.trace, runner="tuiapp:crashes"))
    assert crashed.outcome in ("application_error", "replay_contract_error")
    refused = run(project_client(project).replay(project.root / "nope.trp"))
    assert refused.refused
    assert refused.exit_code == 2
    assert refused.error is not None
    assert "nope.trp" in refused.error.message


def test_timeout_kills_the_child_and_says_so(project: Project) -> None:
    for timeout in RUN_TIMEOUTS:
        request = project_client(project, timeout=timeout).replay(
            project.trace, runner="tuiapp:sleepy"
        )
        result = run(request)
        assert result.outcome == "timed_out"
        assert result.message == f"timed out after {timeout:g} s: the child process was killed"
        if sleepy_started(project.root):  # it reached the runner: what it printed is kept
            assert "sleeping in the runner" in result.stderr
            return
    pytest.fail(f"the child never reached its runner within {RUN_TIMEOUTS[-1]} s")


def test_cancel_kills_the_process_group(project: Project) -> None:
    request = project_client(project, timeout=120).replay(project.trace, runner="tuiapp:sleepy")
    handle = RunHandle(request)
    results = []
    waiter = threading.Thread(target=lambda: results.append(handle.wait()))
    waiter.start()
    deadline = time.monotonic() + 30
    while handle.pid is None and time.monotonic() < deadline:
        time.sleep(0.05)  # polling for the child to start; bounded by the deadline
    pid = handle.pid
    assert pid is not None
    time.sleep(0.5)  # let the child get into the runner, so the cancel meets a live process
    handle.cancel()
    waiter.join(30)
    assert not waiter.is_alive()
    (result,) = results
    assert result.outcome == "cancelled"
    assert headline(result) == "replay was cancelled: the child process was killed"
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        pass  # the whole group is gone
    else:
        raise AssertionError("the child's process group is still alive")


def test_cancel_before_start() -> None:
    handle = RunHandle(RunClient().replay(Path("x.trp")))
    handle.cancel()
    assert handle.wait().outcome == "cancelled"


def test_a_child_that_cannot_start_or_prints_no_document(tmp_path: Path) -> None:
    missing = RunClient(python=str(tmp_path / "no-python")).replay(Path("x.trp"))
    result = run(missing)
    assert result.outcome == "not_started"
    assert result.message is not None
    crashed = parse_document("fork", "Traceback ...", exit_code=1, stderr="boom")
    assert crashed.outcome == "no_document"
    assert crashed.stderr == "boom"
    assert crashed.message is not None
    assert "Traceback" in crashed.message
    other = parse_document("replay", json.dumps({"protocol": "other"}), exit_code=0)
    assert other.outcome == "no_document"
    empty = parse_document("replay", "", exit_code=-9)
    assert "printed nothing" in (empty.message or "")


def test_a_document_of_another_version_or_shape_is_not_read(tmp_path: Path) -> None:
    newer = {"protocol": "toolreplay.run", "protocol_version": 3, "outcome": "ok"}
    result = parse_document("replay", json.dumps(newer), exit_code=0)
    assert result.outcome == "no_document"
    assert result.message is not None
    assert "protocol_version 3" in result.message
    assert "reads version 2" in result.message
    promoted = parse_document("promote", json.dumps({"format_version": 7}), exit_code=0)
    assert promoted.outcome == "no_document"
    assert "format_version 7" in (promoted.message or "")
    broken = {
        "protocol": "toolreplay.run",
        "protocol_version": 2,
        "command": "replay",
        "outcome": "ok",
        "runner": None,
        "return_value": None,
        "return_value_portable": True,
        "error": None,
        "paths": {},
        "counts": {"operations_consumed": "three"},
    }
    unreadable = parse_document("replay", json.dumps(broken), exit_code=0)
    assert unreadable.outcome == "no_document"
    assert "$.counts" in (unreadable.message or "")


def test_parse_a_promote_document() -> None:
    document = {
        "format_version": 1,
        "outcome": "ok",
        "case": {
            "directory": "tests/cases/x",
            "name": "x",
            "trace_path": "tests/cases/x/trace-sha256-ab.trp",
            "trace_sha256": "ab",
            "test_path": "tests/cases/x/test_case.py",
        },
        "error": None,
    }
    result = parse_document("promote", json.dumps(document), exit_code=0)
    assert result.ok
    assert result.case is not None
    assert result.case.trace_sha256 == "ab"
    failed = parse_document(
        "promote",
        json.dumps(
            {
                "format_version": 1,
                "outcome": "case_failed",
                "case": None,
                "error": {"type": "toolreplay.errors.BehavioralRegressionError", "message": "m"},
            }
        ),
        exit_code=1,
    )
    assert not failed.ok
    assert failed.error is not None
    assert failed.error.short_type == "BehavioralRegressionError"


def test_a_real_promote_in_a_child_process(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    fix = write_fix(project, {"decision": "manual_review", "reason": "r", "confidence": 1.0})
    branch = project.root / "branch.trp"
    forked = run(project_client(project).fork(project.trace, fix, branch))
    assert forked.ok
    expected = project.root / "expected.json"
    expected.write_text(json.dumps(forked.return_value), encoding="utf-8")
    result = run(
        project_client(project).promote(
            branch,
            Path("tests/cases/refund_review"),
            name="refund_review",
            runner=RUNNER,
            expect_file=expected,
        )
    )
    assert result.ok, result.error
    assert result.case is not None
    assert result.case.directory == "tests/cases/refund_review"
    assert (
        verify_promoted(project, project.root / "tests/cases/refund_review", monkeypatch)
        == "refund_review"
    )
