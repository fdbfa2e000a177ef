"""Promoted cases: integrity before import, strict replay, typed failures, nothing half-written."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from tests.support.case_app import APP, EXPECTED, App, run_cli
from tests.support.case_pytest import case_pytest
from toolreplay import (
    ApplicationExecutionError,
    BehavioralRegressionError,
    CaseIntegrityError,
    PromotionError,
    ReplayContractError,
    ReplayMiss,
    RunnerImportError,
)
from toolreplay.cases import publishing as case_module
from toolreplay.runners import resolve_runner


@pytest.fixture
def case(app: App, tmp_path: Path) -> Path:
    trace = app.record(tmp_path / "incident.trp")
    promoted = toolreplay.promote(
        trace, tmp_path / "cases" / "refund", name="refund", runner=app.runner(), expected=EXPECTED
    )
    app.forget_import()
    return promoted.directory


def run_pytest(case_dir: Path, app: App, *extra: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    environment["PYTHONPATH"] = str(app.folder)
    return subprocess.run(
        case_pytest(*extra, str(case_dir), xdist="-n" in extra),
        cwd=case_dir.parent,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_case_is_exactly_three_self_describing_files(case: Path, tmp_path: Path) -> None:
    data = (tmp_path / "incident.trp").read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    trace_name = f"trace-sha256-{digest}.trp"
    assert sorted(p.name for p in case.iterdir()) == ["case.json", "test_case.py", trace_name]
    copy = case / trace_name
    assert not copy.is_symlink()
    assert copy.read_bytes() == data
    manifest_bytes = (case / "case.json").read_bytes()
    manifest = json.loads(manifest_bytes)
    assert manifest_bytes == toolreplay.canonical_json(manifest) + b"\n"
    assert manifest == {
        "format": "toolreplay.case",
        "format_version": 1,
        "name": "refund",
        "trace": {"path": trace_name, "sha256": digest, "size_bytes": len(data)},
        "runner": {"target": manifest["runner"]["target"], "kind": "sync"},
        "replay": {"mode": "strict"},
        "expectation": {"kind": "return_equals", "value": EXPECTED},
        "scope": {
            "effects": ["crm.customer.get"],
            "operation_count": 1,
            "covers": "the instrumented effects recorded in the trace, and nothing else",
        },
    }
    assert str(tmp_path) not in manifest_bytes.decode()
    assert (
        "toolreplay.verify_case(Path(__file__).resolve().parent)"
        in (case / "test_case.py").read_text()
    )
    assert not list(case.parent.glob(".*staging*"))


def test_the_generated_test_passes_under_plain_pytest_offline(case: Path, app: App) -> None:
    result = run_pytest(case, app)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_verify_case_returns_what_it_checked_and_writes_nothing(case: Path, app: App) -> None:
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in case.iterdir()}
    verified = toolreplay.verify_case(case)
    assert verified.returned == EXPECTED
    assert verified.operations_replayed == 1
    assert verified.manifest.name == "refund"
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in case.iterdir()} == before


def test_a_changed_application_turns_the_case_red_with_the_json_path(case: Path, app: App) -> None:
    app.path.write_text(APP.replace('RESULT_TIER = "gold"', 'RESULT_TIER = "platinum"'))
    with pytest.raises(BehavioralRegressionError) as caught:
        toolreplay.verify_case(case)
    error = caught.value
    assert error.expected == EXPECTED
    assert error.actual == {"decision": "approved", "tier": "platinum"}
    assert [d.path for d in error.differences] == ["$.tier"]
    assert '$.tier: expected "gold", actual "platinum"' in str(error)
    result = run_pytest(case, app)
    assert result.returncode == 1
    assert "BehavioralRegressionError" in result.stdout
    assert '$.tier: expected "gold", actual "platinum"' in result.stdout


def test_a_replay_miss_is_a_contract_error_with_the_miss_as_cause(app: App, tmp_path: Path) -> None:
    trace = app.record(tmp_path / "incident.trp")
    case_dir = tmp_path / "case"
    with pytest.raises(ReplayContractError) as caught:
        toolreplay.promote(
            trace, case_dir, name="c", runner=app.runner("different_call"), expected={}
        )
    assert isinstance(caught.value.__cause__, ReplayMiss)
    assert "strict replay of its trace" in str(caught.value)
    assert str(case_dir / "trace-sha256-") in str(caught.value)  # named where it would live
    assert "staging" not in str(caught.value)
    assert not case_dir.exists()


def test_verify_case_inside_a_session_is_a_nesting_error(case: Path, tmp_path: Path) -> None:
    with toolreplay.record(tmp_path / "outer.trp"), pytest.raises(toolreplay.SessionNestingError):
        toolreplay.verify_case(case)


def test_a_case_under_a_file_is_refused(app: App, tmp_path: Path) -> None:
    trace = app.record(tmp_path / "t.trp")
    (tmp_path / "file").write_text("")
    with pytest.raises(PromotionError, match="is a file"):
        toolreplay.promote(
            trace, tmp_path / "file" / "case", name="c", runner=app.runner(), expected=EXPECTED
        )


@pytest.mark.parametrize("function", ["crashes", "returns_bytes"])
def test_application_failures_are_wrapped_with_their_cause(
    app: App, tmp_path: Path, function: str
) -> None:
    trace = app.record(tmp_path / "t.trp", function="run")
    with pytest.raises(ApplicationExecutionError) as caught:
        # The runner's trace must match its calls: each of these calls get_customer(42) once.
        toolreplay.promote(
            trace, tmp_path / "c", name="c", runner=app.runner(function), expected=None
        )
    if function == "crashes":
        assert isinstance(caught.value.__cause__, ValueError)
        assert "refund pipeline exploded" in str(caught.value)
    else:
        assert "b'raw' (type bytes) is not portable JSON" in str(caught.value)
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    ("function", "kind"), [("interrupted", KeyboardInterrupt), ("exits", SystemExit)]
)
def test_keyboard_interrupt_and_system_exit_are_never_wrapped(
    app: App, tmp_path: Path, function: str, kind: type[BaseException]
) -> None:
    trace = app.record(tmp_path / "t.trp")
    with pytest.raises(kind):
        toolreplay.promote(
            trace, tmp_path / "c", name="c", runner=app.runner(function), expected=None
        )
    assert not (tmp_path / "c").exists()


def test_async_cases(app: App, tmp_path: Path) -> None:
    trace = app.record(tmp_path / "async.trp", function="run_async")
    runner = app.runner("run_async")
    with pytest.raises(CaseIntegrityError, match="is an async function"):
        toolreplay.promote(trace, tmp_path / "sync", name="s", runner=runner, expected={})
    case = asyncio.run(
        toolreplay.promote_async(
            trace,
            tmp_path / "cases" / "async",
            name="a",
            runner=runner,
            expected={"decision": "approve"},
        )
    )
    assert "asyncio.run(toolreplay.verify_case_async(" in case.test_path.read_text()
    with pytest.raises(CaseIntegrityError, match=r"verify it with verify_case_async\(\)"):
        toolreplay.verify_case(case.directory)
    assert asyncio.run(toolreplay.verify_case_async(case.directory)).returned == {
        "decision": "approve"
    }
    app.forget_import()
    result = run_pytest(case.directory, app)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_async_expectation_on_a_sync_runner_is_refused(app: App, tmp_path: Path) -> None:
    trace = app.record(tmp_path / "t.trp")
    with pytest.raises(CaseIntegrityError, match="is a sync function"):
        asyncio.run(
            toolreplay.promote_async(
                trace, tmp_path / "c", name="c", runner=app.runner(), expected=EXPECTED
            )
        )


@pytest.mark.parametrize(
    ("function", "message"),
    [("needs", "requires argument(s) arg"), ("missing", "has no attribute 'missing'")],
)
def test_runner_targets_that_cannot_run(
    app: App, tmp_path: Path, function: str, message: str
) -> None:
    trace = app.record(tmp_path / "t.trp")
    with pytest.raises(CaseIntegrityError, match=re.escape(message)):
        toolreplay.promote(
            trace, tmp_path / "c", name="c", runner=app.runner(function), expected=None
        )
    # Not the case's fault: the environment cannot import the runner's module.
    with pytest.raises(RunnerImportError, match="no module named 'no_such_module'") as raised:
        toolreplay.promote(
            trace, tmp_path / "c", name="c", runner="no_such_module:run", expected=None
        )
    assert raised.value.missing
    assert raised.value.module == "no_such_module"
    assert isinstance(raised.value.__cause__, ModuleNotFoundError)
    assert not (tmp_path / "c").exists()


def test_promotion_refusals_leave_nothing_behind(case: Path, app: App, tmp_path: Path) -> None:
    trace = tmp_path / "incident.trp"
    before = sorted(p.name for p in case.iterdir())
    with pytest.raises(PromotionError, match="already exists"):
        toolreplay.promote(trace, case, name="x", runner=app.runner(), expected=EXPECTED)
    assert sorted(p.name for p in case.iterdir()) == before
    with pytest.raises(PromotionError, match=r"\$\.score: float\('nan'\)"):
        toolreplay.promote(
            trace, tmp_path / "n", name="n", runner=app.runner(), expected={"score": float("nan")}
        )
    with pytest.raises(PromotionError, match="case name"):
        toolreplay.promote(trace, tmp_path / "n", name="../evil", runner=app.runner(), expected=1)
    deep = tmp_path / "new" / "deeper" / "case"
    with pytest.raises(BehavioralRegressionError):
        toolreplay.promote(trace, deep, name="d", runner=app.runner(), expected={"decision": "no"})
    assert not (tmp_path / "new").exists()  # the parents promotion created are gone too
    assert not list(tmp_path.glob("**/.*staging*"))


def test_a_folder_given_as_the_trace_is_named_as_such(app: App, tmp_path: Path) -> None:
    with pytest.raises(PromotionError, match="is a directory, not a trace file"):
        toolreplay.promote(tmp_path, tmp_path / "c", name="c", runner=app.runner(), expected=1)
    with pytest.raises(PromotionError, match="no such trace file"):
        toolreplay.promote(
            tmp_path / "none.trp", tmp_path / "c", name="c", runner=app.runner(), expected=1
        )
    assert not (tmp_path / "c").exists()


def test_an_unreadable_trace_is_a_promotion_error(app: App, tmp_path: Path) -> None:
    # A loop of links cannot be opened, whoever runs the test (root reads a chmod 000 file).
    trace = tmp_path / "t.trp"
    trace.symlink_to(trace)
    with pytest.raises(
        PromotionError, match="cannot read the trace: Too many levels of symbolic links"
    ):
        toolreplay.promote(trace, tmp_path / "c", name="c", runner=app.runner(), expected=1)
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("failure", [OSError(18, "Invalid cross-device link"), KeyboardInterrupt()])
def test_a_failed_publish_leaves_nothing_and_a_retry_works(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    trace = app.record(tmp_path / "t.trp")

    def rename(source: object, destination: object) -> None:
        raise failure

    output = tmp_path / "new" / "case"
    expected = PromotionError if isinstance(failure, OSError) else KeyboardInterrupt
    with monkeypatch.context() as patched, pytest.raises(expected) as caught:
        patched.setattr(case_module.os, "rename", rename)
        toolreplay.promote(trace, output, name="c", runner=app.runner(), expected=EXPECTED)
    if isinstance(failure, OSError):
        assert str(caught.value) == (
            f"cannot move the verified case to {output}: Invalid cross-device link"
        )
    assert not (tmp_path / "new").exists()  # the parent folder promotion created is gone
    assert not list(tmp_path.glob("**/.*staging*"))
    # Nothing blocks a retry.
    assert toolreplay.promote(trace, output, name="c", runner=app.runner(), expected=EXPECTED)


def test_messages_during_promotion_name_the_destination_only(
    app: App, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = app.record(tmp_path / "t.trp")
    stage = case_module._stage  # pyright: ignore[reportPrivateUsage]  # the seam under test

    def damaging_stage(*args: Any) -> Any:
        staged = stage(*args)
        manifest_path = staged.folder / "case.json"
        manifest = json.loads(manifest_path.read_text())
        manifest["trace"]["path"] = "../" + manifest["trace"]["path"]
        manifest_path.write_text(json.dumps(manifest))
        return staged

    monkeypatch.setattr(case_module, "_stage", damaging_stage)
    output = tmp_path / "c"
    with pytest.raises(CaseIntegrityError, match="leaves the case folder") as caught:
        toolreplay.promote(trace, output, name="c", runner=app.runner(), expected=EXPECTED)
    assert str(caught.value).startswith(f"case {output}: ")
    assert "staging" not in str(caught.value)


def test_a_path_that_cannot_be_read_is_an_integrity_error(tmp_path: Path) -> None:
    with pytest.raises(CaseIntegrityError, match="cannot be read: File name too long"):
        toolreplay.verify_case(tmp_path / ("x" * 300))


# --- integrity, always before the application is imported -----------------------------


def corrupt(case: Path, edit: object) -> None:
    manifest_path = case / "case.json"
    manifest = json.loads(manifest_path.read_text())
    edit(manifest)  # type: ignore[operator]  # the parametrised edit
    manifest_path.write_text(json.dumps(manifest))


def trace_name(case: Path) -> str:
    return next(p.name for p in case.iterdir() if p.suffix == ".trp")


def symlink_manifest(case: Path) -> None:
    """Replace case.json with a link to the same bytes elsewhere (refused by the open)."""
    elsewhere = case.parent / "elsewhere.json"
    (case / "case.json").rename(elsewhere)
    (case / "case.json").symlink_to(elsewhere)


def manifest_folder(case: Path) -> None:
    (case / "case.json").unlink()
    (case / "case.json").mkdir()


def symlink_trace(case: Path) -> None:
    """Replace the trace copy with a link to the same bytes elsewhere."""
    name = trace_name(case)
    elsewhere = case.parent / "elsewhere.trp"
    (case / name).rename(elsewhere)
    (case / name).symlink_to(elsewhere)


INTEGRITY_CASES = {
    "missing manifest": (lambda c: (c / "case.json").unlink(), "has no case.json"),
    "symlinked manifest": (symlink_manifest, "has no case.json (a regular file)"),
    "manifest that is a folder": (manifest_folder, "has no case.json (a regular file)"),
    "malformed manifest": (lambda c: (c / "case.json").write_text("{oops"), "is not valid JSON"),
    "wrong version": (
        lambda c: corrupt(c, lambda m: m.update(format_version=2)),
        "case.json: $.format_version: expected 1, the version this toolreplay reads",
    ),
    "unknown keys": (
        lambda c: corrupt(c, lambda m: m.update(extra=1)),
        "case.json: $: expected only the keys format, format_version, name, trace, runner, "
        'replay, expectation, scope, found the key "extra"',
    ),
    "a count that is text": (
        lambda c: corrupt(c, lambda m: m["scope"].update(operation_count="12")),
        'case.json: $.scope.operation_count: expected an integer, found "12"',
    ),
    "a missing digest": (
        lambda c: corrupt(c, lambda m: m["trace"].pop("sha256")),
        "case.json: $.trace.sha256: expected 64 lowercase hexadecimal digits, found nothing",
    ),
    "another document": (
        lambda c: corrupt(c, lambda m: m.update(format="toolreplay.patches")),
        'case.json: $.format: expected "toolreplay.case" (a case manifest), found '
        '"toolreplay.patches"',
    ),
    "absolute trace path": (
        lambda c: corrupt(c, lambda m: m["trace"].update(path=str(c / trace_name(c)))),
        "is absolute",
    ),
    "escaping trace path": (
        lambda c: corrupt(c, lambda m: m["trace"].update(path="../" + trace_name(c))),
        "leaves the case folder",
    ),
    "symlinked trace": (lambda c: symlink_trace(c), "is a symbolic link"),
    "digest mismatch": (
        lambda c: (c / trace_name(c)).write_bytes(
            (c / trace_name(c)).read_bytes().replace(b'"gold"', b'"GOLD"')
        ),
        "has SHA-256",
    ),
    "size mismatch": (
        lambda c: (c / trace_name(c)).write_bytes((c / trace_name(c)).read_bytes() + b"\n"),
        "bytes but the manifest says",
    ),
    "missing trace": (lambda c: (c / trace_name(c)).unlink(), "no such trace file"),
    "non-portable expectation": (
        lambda c: (c / "case.json").write_text(
            (c / "case.json").read_text().replace('"tier":"gold"}', '"tier":NaN}')
        ),
        "$.expectation.value.tier: float('nan')",
    ),
    "huge integer": (
        lambda c: (c / "case.json").write_text(
            (c / "case.json")
            .read_text()
            .replace('"operation_count":1', '"operation_count":' + "9" * 5000)
        ),
        "is not valid JSON",
    ),
    "scope that does not describe the trace": (
        lambda c: corrupt(c, lambda m: m["scope"].update(effects=["other.effect"])),
        "does not describe its trace",
    ),
    "bad runner target": (
        lambda c: corrupt(c, lambda m: m["runner"].update(target="not a target")),
        "case.json: $.runner.target: expected module:callable, like myapp.agent:handle, found "
        '"not a target"',
    ),
}


@pytest.mark.parametrize("problem", INTEGRITY_CASES)
def test_integrity_failures_come_before_any_application_import(
    case: Path, app: App, problem: str
) -> None:
    damage, message = INTEGRITY_CASES[problem]
    damage(case)
    with pytest.raises(CaseIntegrityError) as caught:
        toolreplay.verify_case(case)
    assert message in str(caught.value)
    assert str(case) in str(caught.value)
    assert not app.marker.exists(), "the runner module was imported before integrity was checked"
    assert app.name not in sys.modules


def test_a_folder_that_is_not_a_case(tmp_path: Path) -> None:
    with pytest.raises(CaseIntegrityError, match="is not a folder"):
        toolreplay.verify_case(tmp_path / "nothing")
    (tmp_path / "file").write_text("{}")
    with pytest.raises(CaseIntegrityError, match="is not a folder"):
        toolreplay.verify_case(tmp_path / "file")


def test_a_runner_is_resolved_once_until_its_module_or_function_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = f"resolved_runner_{os.getpid()}"
    (tmp_path / f"{module}.py").write_text("def run():\n    return 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(tmp_path)
    spec = f"{module}:run"
    first = resolve_runner(spec)
    assert resolve_runner(spec) is first
    # A patched function is looked up afresh, and so is a module imported again.
    monkeypatch.setattr(sys.modules[module], "run", lambda: 2)
    patched = resolve_runner(spec)
    assert patched is not first
    assert patched() == 2
    monkeypatch.delitem(sys.modules, module)
    reloaded = resolve_runner(spec)
    assert reloaded is not patched
    assert reloaded() == 1
    assert resolve_runner(spec) is reloaded


# --- the command line -----------------------------------------------------------------


def test_promote_and_verify_commands(app: App, tmp_path: Path) -> None:
    trace = app.record(tmp_path / "incident.trp")
    (tmp_path / "expected.json").write_text(json.dumps(EXPECTED))
    result = run_cli(
        app,
        tmp_path,
        "promote",
        "incident.trp",
        "--output",
        "cases/one",
        "--name",
        "one",
        "--runner",
        app.runner(),
        "--expect-file",
        "expected.json",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    digest = hashlib.sha256(trace.read_bytes()).hexdigest()
    assert lines[:5] == [
        "case    cases/one",
        "name    one",
        f"trace   cases/one/trace-sha256-{digest}.trp",
        f"sha256  {digest}",
        "test    cases/one/test_case.py",
    ]
    assert lines[5].startswith("promoted: ")
    second = run_cli(
        app,
        tmp_path,
        "promote",
        "incident.trp",
        "-o",
        "cases/nested/two",
        "-n",
        "two",
        "-r",
        app.runner(),
        "--expect-json",
        json.dumps(EXPECTED),
        "--format",
        "json",
    )
    assert json.loads(second.stdout)["case"]["trace_sha256"] == digest

    refused = run_cli(
        app,
        tmp_path,
        "promote",
        "incident.trp",
        "-o",
        "cases/one",
        "-n",
        "x",
        "-r",
        app.runner(),
        "--expect-json",
        "{}",
    )
    assert refused.returncode == 2
    assert "already exists" in refused.stderr
    bad_json = run_cli(
        app,
        tmp_path,
        "promote",
        "incident.trp",
        "-o",
        "cases/three",
        "-n",
        "x",
        "-r",
        app.runner(),
        "--expect-json",
        "{not json",
    )
    assert bad_json.returncode == 2
    assert "--expect-json: not valid JSON" in bad_json.stderr
    failing = run_cli(
        app,
        tmp_path,
        "promote",
        "incident.trp",
        "-o",
        "cases/four",
        "-n",
        "x",
        "-r",
        app.runner(),
        "--expect-json",
        '{"decision": "rejected"}',
    )
    assert failing.returncode == 1
    assert "BehavioralRegressionError" in failing.stderr
    assert not (tmp_path / "cases" / "three").exists()
    assert not (tmp_path / "cases" / "four").exists()

    verified = run_cli(app, tmp_path, "verify", "cases")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.splitlines() == [
        "PASS  two  (cases/nested/two)",
        "PASS  one  (cases/one)",
        "2 cases held, 0 failed",
    ]
    (tmp_path / "cases" / "one" / "case.json").write_text("{}")
    report = json.loads(run_cli(app, tmp_path, "verify", "cases", "--format", "json").stdout)
    assert (report["passed"], report["failed"]) == (1, 1)
    assert report["cases"][1]["error"]["type"] == "toolreplay.errors.CaseIntegrityError"
    assert run_cli(app, tmp_path, "verify", "cases").returncode == 1
    assert run_cli(app, tmp_path, "verify", "incident.trp").returncode == 2


def test_hundreds_of_cases_run_in_parallel_on_xdist(app: App, tmp_path: Path) -> None:
    trace = app.record(tmp_path / "incident.trp")
    suite = tmp_path / "suite"
    for index in range(200):
        toolreplay.promote(
            trace,
            suite / f"case_{index:03d}",
            name=f"case_{index:03d}",
            runner=app.runner(),
            expected=EXPECTED,
        )
    # Every case's module is named test_case: importlib mode keeps them apart.
    result = run_pytest(suite, app, "-n", "2", "--import-mode=importlib")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "200 passed" in result.stdout


def test_a_failing_case_shows_its_whole_message_under_fail(app: App, tmp_path: Path) -> None:
    trace = app.record(tmp_path / "incident.trp")
    case = toolreplay.promote(
        trace, tmp_path / "cases" / "wide", name="wide", runner=app.runner(), expected=EXPECTED
    )
    manifest = json.loads((case.directory / "case.json").read_text())
    manifest["expectation"]["value"] = {f"key_{index:02d}": index for index in range(30)}
    (case.directory / "case.json").write_text(json.dumps(manifest))
    result = run_cli(app, tmp_path, "verify", "cases")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "FAIL  wide  (cases/wide): BehavioralRegressionError: case wide: replay succeeded"
    )
    # The message's own lines, indented under FAIL (they carry their own indent too).
    assert lines[1] == '        $.decision: expected (absent), actual "approved"'
    assert all(line.startswith("      ") for line in lines[1:22])
    assert lines[20] == "        $.key_18: expected 18, actual (absent)"  # 20 lines shown
    assert lines[21] == "      ... 1 more line"  # the message's own "... and 12 more"
    assert lines[22] == "0 cases held, 1 failed"


def test_verify_without_cases_still_answers_in_json(app: App, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for args, message in [
        (["empty"], "no case folder (a folder holding case.json) under empty"),
        (["missing"], "missing does not exist"),
        (["x" * 300], "cannot search " + "x" * 300 + " for cases: File name too long"),
    ]:
        result = run_cli(app, tmp_path, "verify", *args, "--format", "json")
        assert result.returncode == 2
        assert json.loads(result.stdout) == {
            "format_version": 1,
            "passed": 0,
            "failed": 0,
            "cases": [],
            "error": message,
        }
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for args in (["x" * 300], ["loop"]):
        text = run_cli(app, tmp_path, "verify", *args)
        assert text.returncode == 2
        assert text.stdout == ""
        assert text.stderr.startswith("error: cannot search ")
        assert "Traceback" not in text.stderr
    missing = run_cli(app, tmp_path, "verify", "missing")
    assert missing.returncode == 2
    assert "missing does not exist" in missing.stderr  # a usage error in text mode


def test_verify_json_of_cases_has_a_null_error(case: Path, app: App, tmp_path: Path) -> None:
    report = json.loads(run_cli(app, tmp_path, "verify", str(case), "--format", "json").stdout)
    assert report["error"] is None
    assert (report["passed"], report["failed"]) == (1, 0)


def test_promote_failures_in_text_and_a_runner_that_opens_a_session(
    app: App, tmp_path: Path
) -> None:
    app.record(tmp_path / "incident.trp")
    args = ["promote", "incident.trp", "-n", "x", "-r", app.runner(), "--expect-json", "{}"]
    failed = run_cli(app, tmp_path, *args, "-o", "cases/x")
    assert failed.returncode == 1
    lines = failed.stderr.splitlines()
    assert lines[0].startswith("error: BehavioralRegressionError: case x: replay succeeded")
    assert lines[-1] == "nothing was written"  # on its own line, after the whole message
    assert not (tmp_path / "cases").exists()

    nested = ["promote", "incident.trp", "-o", "cases/n", "-n", "n", "-r", app.runner("nests")]
    result = run_cli(app, tmp_path, *nested, "--expect-json", "{}", "--format", "json")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["outcome"] == "case_failed"
    assert document["error"]["type"] == "toolreplay.errors.SessionNestingError"
    assert not (tmp_path / "cases").exists()
