"""The pytest plugin, run through pytester: collection of promoted cases, their failure
reports, the record-or-replay marker in each mode, update mode, and xdist.

Every scenario runs a real inner pytest session on real case folders and traces made
with `toolreplay.promote` and `toolreplay.record`. The application module is written
into the pytester folder; environment variables choose what it does, so one imported
module can behave differently from one inner run to the next.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

import toolreplay

pytest_plugins = ["pytester"]

APP_SOURCE = '''\
"""The application the plugin tests run (written by tests/test_pytest_plugin.py)."""

import os

import toolreplay

LIVE_CALLS = []


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict:
    LIVE_CALLS.append(customer_id)
    return {"id": customer_id, "tier": "gold"}


@toolreplay.effect("crm.customer.aget")
async def aget_customer(customer_id: int) -> dict:
    LIVE_CALLS.append(customer_id)
    return {"id": customer_id, "tier": "gold"}


def _decision(customer: dict) -> dict:
    if os.environ.get("APP_RAISE"):
        raise RuntimeError("the decision table is empty")
    return {
        "customer": customer["id"],
        "decision": os.environ.get("APP_DECISION", "manual_review"),
        "tier": customer["tier"],
    }


def decide() -> dict:
    return _decision(get_customer(int(os.environ.get("APP_CUSTOMER", "42"))))


async def decide_async() -> dict:
    return _decision(await aget_customer(int(os.environ.get("APP_CUSTOMER", "42"))))
'''

EXPECTED = {"customer": 42, "decision": "manual_review", "tier": "gold"}


@dataclass
class Project:
    """A pytester folder holding the application module, and ways to make cases in it."""

    pytester: pytest.Pytester
    module: str

    @property
    def path(self) -> Path:
        return self.pytester.path

    def trace(self, name: str = "incident", *, asynchronous: bool = False) -> Path:
        path = self.path / "recorded" / f"{name}.trp"
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            app = __import__(self.module)
            with toolreplay.record(path):
                if asynchronous:
                    asyncio.run(app.decide_async())
                else:
                    app.decide()
        return path

    def case(
        self,
        folder: str,
        name: str,
        *,
        asynchronous: bool = False,
        expected: dict[str, object] = EXPECTED,
    ) -> Path:
        trace = self.trace("async" if asynchronous else "sync", asynchronous=asynchronous)
        if asynchronous:
            promoted = asyncio.run(
                toolreplay.promote_async(
                    trace,
                    self.path / folder,
                    name=name,
                    runner=f"{self.module}:decide_async",
                    expected=expected,
                )
            )
        else:
            promoted = toolreplay.promote(
                trace,
                self.path / folder,
                name=name,
                runner=f"{self.module}:decide",
                expected=expected,
            )
        return promoted.directory


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Project:
    # A module name of its own per test: every inner run shares this process.
    module = f"plugin_app_{uuid.uuid4().hex[:12]}"
    (pytester.path / f"{module}.py").write_text(APP_SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(pytester.path)
    for variable in ("CI", "APP_DECISION", "APP_CUSTOMER", "APP_RAISE"):
        monkeypatch.delenv(variable, raising=False)
    # The SVG snapshot plugin cleans up a folder of its own at every session's end,
    # which an inner session in this process must not do; the cache writes files.
    monkeypatch.setenv(
        "PYTEST_ADDOPTS",
        "-p no:textual-snapshot -p no:cacheprovider -o asyncio_default_fixture_loop_scope=function",
    )
    return Project(pytester, module)


def manifest(case: Path) -> dict[str, object]:
    return json.loads((case / "case.json").read_text(encoding="utf-8"))


# --- collection -------------------------------------------------------------------------


def test_cases_are_collected_from_case_json_once_each_named_after_the_case(
    project: Project,
) -> None:
    project.case("tests/cases/refund", "refund_needs_review")
    project.case("tests/cases/refund_async", "refund_async", asynchronous=True)
    bare = project.case("tests/cases/bare", "bare_case")
    (bare / "test_case.py").unlink()  # a folder with only case.json and its trace
    project.case("tests/deeper/a/b/c/nested", "nested_case")
    # Another tool's case.json, with nothing of a case beside it: not ours.
    other = project.path / "tests" / "fixtures" / "other"
    other.mkdir(parents=True)
    (other / "case.json").write_text('{"format": "someone.else", "steps": []}')

    collected = project.pytester.runpytest("--collect-only", "-q", "tests")
    assert collected.ret == 0
    assert [line for line in collected.outlines if "::" in line] == [
        "tests/cases/bare/case.json::bare_case",
        "tests/cases/refund/case.json::refund_needs_review",
        "tests/cases/refund_async/case.json::refund_async",
        "tests/deeper/a/b/c/nested/case.json::nested_case",
    ]
    result = project.pytester.runpytest("tests")
    result.assert_outcomes(passed=4)


@pytest.mark.parametrize(
    "argument",
    [
        "tests/cases/refund",
        "tests/cases/refund/case.json",
        "tests/cases/refund/test_case.py",
        "tests/cases/refund/case.json::refund_needs_review",
    ],
)
def test_a_case_named_on_the_command_line_is_collected_once_through_its_manifest(
    project: Project, argument: str
) -> None:
    project.case("tests/cases/refund", "refund_needs_review")
    project.case("tests/cases/other", "other_case")
    result = project.pytester.runpytest("-v", argument)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*::refund_needs_review PASSED*"])


def test_without_the_plugin_the_generated_modules_still_run_each_case(project: Project) -> None:
    project.case("tests/cases/one", "one")
    project.case("tests/cases/two", "two", asynchronous=True)
    result = project.pytester.runpytest("-p", "no:toolreplay", "--import-mode=importlib", "tests")
    result.assert_outcomes(passed=2)
    result.stdout.no_fnmatch_line("*case.json*")
    plugin = project.pytester.runpytest("--collect-only", "-q", "tests")
    plugin.stdout.no_fnmatch_line("*test_case.py*")


def test_verbose_shows_each_cases_scope_and_trace_digest(project: Project) -> None:
    case = project.case("tests/cases/refund", "refund_needs_review")
    digest = manifest(case)["trace"]["sha256"]  # type: ignore[index]  # JSON object
    result = project.pytester.runpytest("-v", "tests")
    result.stdout.fnmatch_lines(
        [
            "tests/cases/refund/case.json::refund_needs_review PASSED (scope: crm.customer.get "
            f"(1 operation); trace sha256 {digest[:12]})*"
        ]
    )


# --- failure reports --------------------------------------------------------------------


def test_a_behavioural_regression_shows_expected_and_actual_by_json_path(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.case("tests/cases/refund", "refund_needs_review")
    monkeypatch.setenv("APP_DECISION", "approved")
    result = project.pytester.runpytest("tests")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ toolreplay case refund_needs_review _*",
            "behavioural regression (BehavioralRegressionError): replay was clean (every "
            "recorded call matched, no effect ran), but the runner returned a different value",
            "",
            "expected (case.json) != actual (returned), by JSON path:",
            '  $.decision: expected "manual_review", actual "approved"',
            "",
            "Full diff (- expected, + actual):",
            "    {",
            '      "customer": 42,',
            '  -   "decision": "manual_review",',
            '  +   "decision": "approved",',
            '      "tier": "gold"',
            "    }",
            "",
            "If the new value is intended: pytest --toolreplay-update "
            "tests/cases/refund/case.json::refund_needs_review",
            "case folder: tests/cases/refund",
        ]
    )
    result.stdout.fnmatch_lines(
        ["FAILED tests/cases/refund/case.json::refund_needs_review - behavioural regres*"]
    )
    result.stdout.no_fnmatch_line("*Traceback*")


def test_an_integrity_failure_is_short_and_says_what_to_do(project: Project) -> None:
    case = project.case("tests/cases/refund", "refund_needs_review")
    trace = next(case.glob("trace-sha256-*.trp"))
    trace.write_bytes(trace.read_bytes().replace(b"gold", b"gilt"))
    result = project.pytester.runpytest("tests")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "integrity failure (CaseIntegrityError): the case folder is damaged, or was "
            "edited by hand",
            "  case tests/cases/refund: trace trace-sha256-* has SHA-256 * but the manifest "
            "says *; the trace was changed after promotion",
            "",
            "The case's trace was not replayed. Restore the folder from version control, or "
            "promote the case again.",
        ]
    )


def test_a_manifest_that_cannot_be_read_is_still_collected_and_fails_as_integrity(
    project: Project,
) -> None:
    case = project.case("tests/cases/refund", "refund_needs_review")
    (case / "case.json").write_text("{oops")
    result = project.pytester.runpytest("-v", "tests")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "tests/cases/refund/case.json::refund FAILED*",
            "integrity failure (CaseIntegrityError): *",
            "  case tests/cases/refund: case.json is not valid JSON*",
        ]
    )


def test_a_broken_replay_contract_is_reported_as_such(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.case("tests/cases/refund", "refund_needs_review")
    monkeypatch.setenv("APP_CUSTOMER", "7")
    result = project.pytester.runpytest("tests")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "replay contract broken (ReplayContractError): the application no longer makes "
            "the recorded calls",
            "  case refund_needs_review (tests/cases/refund): strict replay of its trace under *",
            "*crm.customer.get*",
            "No effect ran live. If the new calls are intended, record the scenario again and "
            "promote the new trace; --toolreplay-update cannot do it, because a case never goes "
            "live.",
        ]
    )


def test_an_application_error_shows_the_runners_traceback(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.case("tests/cases/refund", "refund_needs_review")
    monkeypatch.setenv("APP_RAISE", "1")
    result = project.pytester.runpytest("tests")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "application error (ApplicationExecutionError): the runner failed under replay",
            "  case refund_needs_review: *:decide raised RuntimeError: the decision table is empty",
            "",
            "the runner's traceback (innermost last):",
            "*raise RuntimeError(*",
            "*RuntimeError: the decision table is empty",
            "",
            "Replay was clean up to the failure. Fix the application, or, if the case is "
            "wrong, promote it again.",
        ]
    )


# --- update mode ------------------------------------------------------------------------


def test_update_rewrites_the_expectation_and_keeps_the_trace(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = project.case("tests/cases/refund", "refund_needs_review")
    monkeypatch.setenv("APP_DECISION", "approved")
    # Promoted while the application already answers "approved": it holds as it is.
    untouched = project.case(
        "tests/cases/other", "other_case", expected={**EXPECTED, "decision": "approved"}
    )
    before = {path.name: path.read_bytes() for path in case.iterdir()}
    other_before = manifest(untouched)

    result = project.pytester.runpytest("tests", "--toolreplay-update")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*= toolreplay =*",
            "1 case expectation(s) rewritten by --toolreplay-update:",
            "  tests/cases/refund/case.json::refund_needs_review: expectation rewritten "
            "(tests/cases/refund)",
            '    $.decision: was "manual_review", now "approved"',
        ]
    )
    after = {path.name: path.read_bytes() for path in case.iterdir()}
    assert sorted(after) == sorted(before)  # the same three assets, the trace by its digest
    trace_name = next(name for name in after if name.startswith("trace-sha256-"))
    assert trace_name == f"trace-sha256-{hashlib.sha256(after[trace_name]).hexdigest()}.trp"
    assert after[trace_name] == before[trace_name]
    assert manifest(case)["expectation"] == {
        "kind": "return_equals",
        "value": {**EXPECTED, "decision": "approved"},
    }
    assert manifest(untouched) == other_before
    assert sorted(p.name for p in case.parent.iterdir()) == ["other", "refund"]  # no leftovers
    project.pytester.runpytest("tests").assert_outcomes(passed=2)


def test_update_refuses_a_case_folder_holding_foreign_files(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = project.case("tests/cases/refund", "refund_needs_review")
    (case / "NOTES.md").write_text("why this case exists")
    before = (case / "case.json").read_bytes()
    monkeypatch.setenv("APP_DECISION", "approved")
    result = project.pytester.runpytest("tests", "--toolreplay-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*CaseUpdateError: case refund_needs_review (*): not rewritten, because the folder "
            "also holds NOTES.md; move those out of the case folder and run the update again"
        ]
    )
    assert (case / "case.json").read_bytes() == before
    assert (case / "NOTES.md").exists()


def test_update_in_ci_must_be_typed_on_the_command_line(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = project.case("tests/cases/refund", "refund_needs_review")
    before = (case / "case.json").read_bytes()
    monkeypatch.setenv("APP_DECISION", "approved")
    monkeypatch.setenv("CI", "true")
    project.pytester.makeini("[pytest]\naddopts = --toolreplay-update\n")
    refused = project.pytester.runpytest("tests")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(
        ["ERROR: --toolreplay-update came from addopts or PYTEST_ADDOPTS while CI is set*"]
    )
    assert (case / "case.json").read_bytes() == before
    (project.path / "tox.ini").unlink()
    project.pytester.runpytest("tests", "--toolreplay-update").assert_outcomes(passed=1)
    assert (case / "case.json").read_bytes() != before


# --- the marker -------------------------------------------------------------------------

MARKED_TESTS = """\
import pytest

import {module} as app


@pytest.mark.toolreplay
def test_sync(toolreplay_session):
    assert app.decide()["tier"] == "gold"
    print(f"SYNC {{toolreplay_session.action}} live={{len(app.LIVE_CALLS)}}")


@pytest.mark.toolreplay
@pytest.mark.asyncio
async def test_pytest_asyncio(toolreplay_session):
    assert (await app.decide_async())["tier"] == "gold"
    print(f"ASYNCIO {{toolreplay_session.action}} live={{len(app.LIVE_CALLS)}}")


@pytest.mark.toolreplay
@pytest.mark.anyio
async def test_anyio(toolreplay_session):
    assert (await app.decide_async())["tier"] == "gold"
    print(f"ANYIO {{toolreplay_session.action}}")


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_fixture_alone(toolreplay_session):
    assert app.decide()["customer"] == 42
"""
TRACES = ["test_anyio.trp", "test_fixture_alone.trp", "test_pytest_asyncio.trp", "test_sync.trp"]


@pytest.fixture
def marked(project: Project) -> Project:
    project.pytester.makepyfile(test_marked=MARKED_TESTS.format(module=project.module))
    return project


def traces_of(project: Project) -> dict[str, bytes]:
    folder = project.path / "traces" / "test_marked"
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*"))}


def test_once_records_missing_traces_then_replays_them(marked: Project) -> None:
    first = marked.pytester.runpytest("-s", "--toolreplay-mode=once")
    first.assert_outcomes(passed=4)
    assert list(traces_of(marked)) == TRACES
    # Each inner run imports the application afresh: live= counts that run's body calls.
    first.stdout.fnmatch_lines(
        ["*SYNC record live=1", "*ASYNCIO record live=2", "*ANYIO record", "4 trace(s) recorded:"]
    )
    recorded = traces_of(marked)

    again = marked.pytester.runpytest("-s", "--toolreplay-mode=once")
    again.assert_outcomes(passed=4)
    again.stdout.fnmatch_lines(["*SYNC replay live=0", "*ASYNCIO replay live=0", "*ANYIO replay"])
    again.stdout.no_fnmatch_line("*trace(s) recorded*")
    assert traces_of(marked) == recorded


def test_none_fails_a_missing_trace_without_going_live(marked: Project) -> None:
    result = marked.pytester.runpytest("--toolreplay-mode=none", "-k", "test_sync")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*toolreplay: no trace for this test at traces/test_marked/test_sync.trp, and "
            "--toolreplay-mode=none (the default in CI) never records, so nothing ran live.*"
        ]
    )
    assert not (marked.path / "traces").exists()


def test_the_default_mode_is_none_in_ci_and_once_elsewhere(
    marked: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    in_ci = marked.pytester.runpytest("-k", "test_sync")
    in_ci.assert_outcomes(errors=1)
    in_ci.stdout.fnmatch_lines(["toolreplay: --toolreplay-mode=none"])
    monkeypatch.setenv("CI", "false")
    local = marked.pytester.runpytest("-k", "test_sync")
    local.assert_outcomes(passed=1)
    local.stdout.fnmatch_lines(["toolreplay: --toolreplay-mode=once"])
    monkeypatch.setenv("CI", "1")
    marked.pytester.runpytest("-k", "test_sync").assert_outcomes(passed=1)  # replays


def test_all_records_every_trace_again(marked: Project) -> None:
    marked.pytester.runpytest("--toolreplay-mode=once").assert_outcomes(passed=4)
    recorded = traces_of(marked)
    result = marked.pytester.runpytest("-s", "--toolreplay-mode=all")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*SYNC record live=1", "4 trace(s) recorded:"])
    again = traces_of(marked)
    assert list(again) == TRACES
    assert all(again[name] != recorded[name] for name in TRACES)  # new trace ids


def test_new_rerecords_a_trace_whose_calls_changed(
    marked: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    marked.pytester.runpytest("--toolreplay-mode=once").assert_outcomes(passed=4)
    monkeypatch.setenv("APP_CUSTOMER", "43")  # the tests now make another call
    strict = marked.pytester.runpytest("--toolreplay-mode=once", "-k", "test_sync")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(["*ReplayMiss*"])

    result = marked.pytester.runpytest("-s", "--toolreplay-mode=new", "-k", "sync or asyncio")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*SYNC record live=1", "2 trace(s) recorded:"])
    replayed = marked.pytester.runpytest("-s", "--toolreplay-mode=none", "-k", "sync or asyncio")
    replayed.assert_outcomes(passed=2)
    replayed.stdout.fnmatch_lines(["*SYNC replay live=0"])


def test_a_failing_recording_leaves_no_trace(
    marked: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APP_RAISE", "1")
    result = marked.pytester.runpytest("--toolreplay-mode=once", "-k", "test_sync")
    result.assert_outcomes(failed=1)
    folder = marked.path / "traces" / "test_marked"
    assert list(folder.iterdir()) == []


def test_update_rerecords_marked_tests(marked: Project) -> None:
    marked.pytester.runpytest("--toolreplay-mode=once").assert_outcomes(passed=4)
    recorded = traces_of(marked)
    result = marked.pytester.runpytest("--toolreplay-update")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["toolreplay: --toolreplay-mode=all, updating cases and traces"])
    assert all(traces_of(marked)[name] != recorded[name] for name in TRACES)
    clash = marked.pytester.runpytest("--toolreplay-update", "--toolreplay-mode=none")
    assert clash.ret == pytest.ExitCode.USAGE_ERROR


def test_trace_names_are_safe_and_distinct_for_parametrized_tests(project: Project) -> None:
    project.pytester.makepyfile(
        test_params=f"""
import pytest
import {project.module} as app

class TestGroup:
    @pytest.mark.toolreplay
    @pytest.mark.parametrize("label", ["a/b", "a b", "plain"])
    def test_case(self, label):
        assert app.decide()["tier"] == "gold"
"""
    )
    project.pytester.runpytest().assert_outcomes(passed=3)
    names = sorted(p.name for p in (project.path / "traces" / "test_params").iterdir())
    assert len(names) == 3
    assert "TestGroup.test_case-plain-.trp" not in names
    assert all(name.startswith("TestGroup.test_case_") for name in names)
    assert all(
        set(name) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
        for name in names
    )


# --- xdist ------------------------------------------------------------------------------


def test_cases_and_marked_tests_run_on_xdist_workers(
    marked: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(8):
        marked.case(
            f"tests/cases/case_{index:02d}", f"case_{index:02d}", asynchronous=index % 2 == 1
        )
    first = marked.pytester.runpytest("-n", "2", "-p", "xdist", "--toolreplay-mode=once")
    first.assert_outcomes(passed=12)
    first.stdout.fnmatch_lines(["4 trace(s) recorded:"])
    monkeypatch.setenv("APP_DECISION", "approved")
    failing = marked.pytester.runpytest("-n", "2", "--toolreplay-mode=none", "tests")
    failing.assert_outcomes(failed=8)
    failing.stdout.fnmatch_lines(['  $.decision: expected "manual_review", actual "approved"'])
    updated = marked.pytester.runpytest("-n", "2", "--toolreplay-update")
    updated.assert_outcomes(passed=12)
    updated.stdout.fnmatch_lines(
        ["8 case expectation(s) rewritten by --toolreplay-update:", "4 trace(s) recorded:"]
    )
    assert all(
        manifest(marked.path / "tests" / "cases" / f"case_{index:02d}")["expectation"]
        == {"kind": "return_equals", "value": {**EXPECTED, "decision": "approved"}}
        for index in range(8)
    )


# --- the OpenAI example, and a project that only installed the wheel ----------------------

ROOT = Path(__file__).resolve().parent.parent


def offline_environment(**extra: str) -> dict[str, str]:
    """No credentials, no CI flag, and a proxy that goes nowhere."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if "API_KEY" not in key and key not in ("CI", "PYTEST_ADDOPTS", "VIRTUAL_ENV")
    }
    environment.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    environment.update(extra)
    return environment


MARKER_EXAMPLES = {
    "openai": (
        "test_openai_refund.py",
        [
            "test_a_large_refund_goes_to_manual_review.trp",
            "test_the_async_client_is_recorded_and_replayed_the_same_way.trp",
        ],
    ),
    "anthropic": (
        "test_anthropic_refund.py",
        [
            "test_a_streamed_answer_on_the_async_client_replays_the_same.trp",
            "test_claude_refunds_the_lost_order.trp",
        ],
    ),
}


@pytest.mark.parametrize("sdk", list(MARKER_EXAMPLES))
def test_a_marker_example_records_once_then_replays_offline(sdk: str, tmp_path: Path) -> None:
    pytest.importorskip(sdk)
    name, expected = MARKER_EXAMPLES[sdk]
    example = tmp_path / name
    shutil.copyfile(ROOT / "examples" / "pytest_marker" / name, example)

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args, example.name],
            cwd=tmp_path,
            env=offline_environment(PYTHONPATH=str(ROOT), **extra),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    recorded = run()
    assert recorded.returncode == 0, recorded.stdout[-3000:]
    assert "2 trace(s) recorded:" in recorded.stdout
    traces = sorted(p.name for p in (tmp_path / "traces" / example.stem).iterdir())
    assert traces == expected
    # In CI the default mode is none: the tests replay, and their provider counts stay 0.
    replayed = run(CI="true")
    assert replayed.returncode == 0, replayed.stdout[-3000:]
    assert "toolreplay: --toolreplay-mode=none" in replayed.stdout
    assert "2 passed" in replayed.stdout
    assert "recorded" not in replayed.stdout


def test_a_fresh_project_with_only_the_wheel_runs_its_cases_with_plain_pytest(
    tmp_path: Path,
) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH; it builds the wheel and the fresh environment")
    # The package registry stays reachable (for the wheel's dependencies and pytest).
    environment = {
        key: value
        for key, value in os.environ.items()
        if "API_KEY" not in key and key not in ("CI", "PYTEST_ADDOPTS", "VIRTUAL_ENV", "PYTHONPATH")
    }

    def run(*command: str | Path, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(part) for part in command],
            cwd=cwd,
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        return result

    run(uv, "build", "--wheel", "--out-dir", tmp_path / "dist", cwd=ROOT)
    (wheel,) = (tmp_path / "dist").glob("toolreplay-*.whl")
    python = tmp_path / "venv" / "bin" / "python"
    run(uv, "venv", "--python", sys.executable, tmp_path / "venv")
    run(uv, "pip", "install", "--python", python, wheel, "pytest")

    project = tmp_path / "project"
    project.mkdir()
    (project / "refunds.py").write_text(APP_SOURCE, encoding="utf-8")
    promote_script = """
import asyncio, toolreplay, refunds
with toolreplay.record("incident.trp"):
    expected = refunds.decide()
toolreplay.promote("incident.trp", "tests/cases/refund_review", name="refund_review",
                   runner="refunds:decide", expected=expected)
with toolreplay.record("incident-async.trp"):
    asyncio.run(refunds.decide_async())
asyncio.run(toolreplay.promote_async("incident-async.trp", "tests/cases/refund_async",
            name="refund_async", runner="refunds:decide_async", expected=expected))
"""
    run(python, "-c", promote_script, cwd=project)
    pytest_command = tmp_path / "venv" / "bin" / "pytest"
    collected = run(pytest_command, "--collect-only", "-q", cwd=project)
    assert collected.stdout.splitlines()[:2] == [
        "tests/cases/refund_async/case.json::refund_async",
        "tests/cases/refund_review/case.json::refund_review",
    ]
    result = run(pytest_command, cwd=project)
    assert "2 passed" in result.stdout


DEFERRED = (
    "asyncio",
    "ctypes",
    "toolreplay.pytest_plugin.reports",
    "toolreplay.pytest_plugin.update",
)
"""What the plugin imports only when a run needs it: async runners, failure reports, updates."""


def test_the_plugin_imports_reports_updates_and_asyncio_only_when_a_run_needs_them(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = (
        "import sys, pytest, toolreplay.pytest_plugin; "
        f"print(sorted(m for m in {DEFERRED!r} if m in sys.modules))"
    )
    imported = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert imported.stdout.strip() == "[]"

    project.case("tests/cases/holds", "holds")
    project.case("tests/cases/regressed", "regressed")
    project.pytester.makeconftest(
        "import sys\n"
        "def pytest_unconfigure():\n"
        f"    print('LOADED', sorted(m for m in {DEFERRED!r} if m in sys.modules))\n"
    )
    # Only this plugin, in a process of its own: autoloaded plugins import asyncio.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:cacheprovider")
    environment = ("-p", "toolreplay")
    passing = project.pytester.runpytest_subprocess(*environment, "tests/cases/holds")
    passing.assert_outcomes(passed=1)
    passing.stdout.fnmatch_lines(["LOADED []"])
    monkeypatch.setenv("APP_DECISION", "approve")
    failing = project.pytester.runpytest_subprocess(*environment, "tests/cases/regressed")
    failing.assert_outcomes(failed=1)
    failing.stdout.fnmatch_lines(
        ["*behavioural regression*", "LOADED ['toolreplay.pytest_plugin.reports']"]
    )


def test_importing_toolreplay_loads_neither_pytest_nor_the_plugin() -> None:
    probe = (
        "import sys, toolreplay; "
        "print(sorted(m for m in ('pytest', '_pytest', 'toolreplay.pytest_plugin') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"
