"""The warm runner: forks of an already imported child, each as isolated as a cold run."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

import pytest
from toolreplay_tui.model.runs import RunClient, RunHandle, RunResult, WarmRunner

import toolreplay
from tests.tui.support import DECIDE_INPUTS, Project, child_env, cli


@pytest.fixture
def warm(project: Project) -> Iterator[WarmRunner]:
    runner = WarmRunner(cwd=project.root, env=child_env())
    runner.warm_up()
    yield runner
    runner.close()


def client(project: Project, warm: WarmRunner, timeout: float = 300.0) -> RunClient:
    return RunClient(cwd=project.root, env=child_env(), warm=warm, timeout=timeout)


def fork(project: Project, warm: WarmRunner, value: object, name: str) -> RunResult:
    patch = toolreplay.replace_output(effect="llm.refund.decide", inputs=DECIDE_INPUTS, value=value)
    patches = toolreplay.write_patches(project.root / f"{name}.json", [patch])
    request = client(project, warm).fork(project.trace, patches, project.root / f"{name}.trp")
    return RunHandle(request).wait()


def test_forks_through_the_warm_runner_match_a_cold_fork(
    project: Project, warm: WarmRunner
) -> None:
    result = fork(project, warm, {"decision": "manual_review"}, "one")
    assert result.ok, (result.error, result.stderr)
    assert isinstance(result.return_value, dict)
    assert result.return_value["outcome"] == "manual_review"
    assert "deciding the refund" in result.stderr  # the application's output is kept
    again = fork(project, warm, {"decision": "approve"}, "two")
    assert isinstance(again.return_value, dict)
    assert again.return_value["outcome"] == "approved"
    stopped = fork(project, warm, {"decision": "escalate"}, "three")
    assert stopped.outcome == "replay_contract_error"
    assert stopped.error is not None
    assert stopped.error.identity is not None
    assert stopped.error.identity.effect == "billing.refund.escalate"
    assert warm.starts == 1  # one warm child served all three, each in its own process


def test_a_crash_a_hang_and_a_cancel_stay_in_their_own_process(
    project: Project, warm: WarmRunner
) -> None:
    crashed = RunHandle(client(project, warm).replay(project.trace, runner="tuiapp:crashes")).wait()
    assert crashed.outcome in ("application_error", "replay_contract_error")
    hang = RunHandle(
        client(project, warm, timeout=2.0).replay(project.trace, runner="tuiapp:sleepy")
    )
    result = hang.wait()
    assert result.outcome == "timed_out"
    pid = hang.pid
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)  # the run's whole process group is gone
    cancelled = RunHandle(client(project, warm).replay(project.trace, runner="tuiapp:sleepy"))
    cancelled.cancel()
    assert cancelled.wait().outcome == "cancelled"
    after = fork(project, warm, {"decision": "manual_review"}, "after")
    assert after.ok, (after.error, after.stderr)
    assert warm.starts == 1  # the warm child itself survived all of them


PROBE_RUNNER = """\
import json, os
import tuiapp

def main():
    with open("promote-verified-in.json", "w") as out:
        json.dump({"pid": os.getpid(), "parent": os.getppid()}, out)
    return tuiapp.main()
"""


def test_a_promote_is_verified_in_a_fork_of_the_warm_runner(
    project: Project, warm: WarmRunner
) -> None:
    # A runner that says which process verified the case, and whose parent it was.
    (project.root / "promoteprobe.py").write_text(PROBE_RUNNER, encoding="utf-8")
    expected = project.root / "expected.json"
    expected.write_text('{"customer": "Ada", "amount": 1200.0, "outcome": "approved"}')
    runs = client(project, warm)
    request = runs.promote(
        project.trace,
        project.root / "tests" / "cases" / "warm",
        name="warm",
        runner="promoteprobe:main",
        expect_file=expected,
    )
    assert request.warm is warm
    handle = RunHandle(request)
    result = handle.wait()
    assert result.ok, (result.error, result.stderr)
    assert result.case is not None
    verified_in = json.loads((project.root / "promote-verified-in.json").read_text())
    # Verified end to end before it was published, in a process of its own: a fork of
    # the warm child (not the warm child itself, and not this process).
    assert verified_in["parent"] == warm.pid
    assert verified_in["pid"] == handle.pid
    assert verified_in["pid"] not in (warm.pid, os.getpid())
    verified = cli(project.root, "verify", result.case.directory)
    assert verified.returncode == 0, verified.stdout + verified.stderr

    # A case that does not hold is not written, through the warm runner too.
    expected.write_text('{"outcome": "refused"}')
    failed = RunHandle(
        runs.promote(
            project.trace,
            project.root / "tests" / "cases" / "wrong",
            name="wrong",
            runner="tuiapp:main",
            expect_file=expected,
        )
    ).wait()
    assert failed.outcome == "case_failed"
    assert failed.error is not None
    assert failed.error.type == "toolreplay.errors.BehavioralRegressionError"
    assert not (project.root / "tests" / "cases" / "wrong").exists()
    assert warm.starts == 1


def test_a_changed_application_is_imported_again(project: Project, warm: WarmRunner) -> None:
    first = fork(project, warm, {"decision": "approve"}, "first")  # the warm child learns it
    assert isinstance(first.return_value, dict)
    assert first.return_value["outcome"] == "approved"
    source = project.root / "tuiapp.py"
    time.sleep(0.01)  # a later modification time than the one the warm child imported
    source.write_text(
        source.read_text().replace('"approved" if', '"approved (v2)" if'), encoding="utf-8"
    )
    os.utime(source, ns=(time.time_ns(), time.time_ns() + 10**9))
    result = fork(project, warm, {"decision": "approve"}, "changed")
    assert isinstance(result.return_value, dict)
    assert result.return_value["outcome"] == "approved (v2)"
    assert warm.starts == 2


def test_a_timeout_or_a_cancel_does_not_wait_for_the_warm_child_to_start(
    project: Project, tmp_path: Path
) -> None:
    # A warm child whose interpreter takes two minutes to start: the run would wait that
    # long, and then hang as long again in the sleepy runner.
    python = tmp_path / "slow-python"
    python.write_text(f'#!/bin/sh\nsleep 120\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    slow = WarmRunner(python=str(python), cwd=project.root, env=child_env())
    request = client(project, slow, timeout=3.0).replay(project.trace, runner="tuiapp:sleepy")
    try:
        timed = RunHandle(request)
        assert waiting(timed).result(timeout=90).outcome == "timed_out"
        assert slow.starts == 1
        assert timed.pid is None  # nothing was forked, so nothing is left to kill

        cancelled = RunHandle(replace(request, timeout=300.0))
        result = waiting(cancelled)
        deadline = time.monotonic() + 60
        while slow.starts < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # until the second warm child is starting for this run
        assert slow.starts == 2
        cancelled.cancel()
        assert result.result(timeout=90).outcome == "cancelled"
    finally:
        slow.close()


IMPORT_LOG_APP = """
import os

with open("imports.log", "a") as log:
    log.write(f"{os.getpid()}\\n")

def run():
    return "ran"
"""


def test_the_first_run_teaches_the_warm_child_its_imports(
    project: Project, warm: WarmRunner
) -> None:
    (project.root / "importlog.py").write_text(IMPORT_LOG_APP)
    trace = project.root / "empty.trp"
    with toolreplay.record(trace, metadata={"runner": "importlog:run"}):
        pass
    log = project.root / "imports.log"
    assert not log.exists()  # started, and nothing of the application imported

    def replay() -> RunResult:
        return RunHandle(client(project, warm).replay(trace)).wait()

    assert replay().return_value == "ran"
    deadline = time.monotonic() + 60
    while len(log.read_text().split()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # the warm child imports it once the run has ended
    first_run, warm_child = log.read_text().split()
    assert first_run != warm_child
    assert replay().return_value == "ran"
    assert replay().return_value == "ran"
    assert log.read_text().split() == [first_run, warm_child]  # later runs inherit it
    assert warm.starts == 1


def waiting(handle: RunHandle) -> Future[RunResult]:
    """`handle.wait()` in a daemon thread: a run that hangs fails the test, not hangs it."""
    future: Future[RunResult] = Future()
    threading.Thread(target=lambda: future.set_result(handle.wait()), daemon=True).start()
    return future
