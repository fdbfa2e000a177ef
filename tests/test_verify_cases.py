"""`verify_cases`: discover every case under some paths and return one result each."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import toolreplay
from tests.support.case_app import APP, EXPECTED, App
from toolreplay import CaseResult, CaseSearchError


def promote(app: App, tmp_path: Path, output: Path, name: str, function: str = "run") -> Path:
    trace = app.record(tmp_path / f"{name}.trp", function)
    expected = {"decision": "approve"} if function == "run_async" else EXPECTED
    if function == "run_async":
        promoted = asyncio.run(
            toolreplay.promote_async(
                trace, output, name=name, runner=app.runner(function), expected=expected
            )
        )
    else:
        promoted = toolreplay.promote(
            trace, output, name=name, runner=app.runner(function), expected=expected
        )
    return promoted.directory


def test_results_for_passing_failing_and_broken_cases(app: App, tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    held = promote(app, tmp_path, cases / "b_held", "held")
    awaited = promote(app, tmp_path, cases / "nested" / "c_async", "awaited", "run_async")
    drifted = promote(app, tmp_path, cases / "a_drifted", "drifted")
    manifest = json.loads((drifted / "case.json").read_text())
    manifest["expectation"]["value"] = {"decision": "rejected"}
    (drifted / "case.json").write_text(json.dumps(manifest))
    broken = cases / "d_broken"
    broken.mkdir()
    (broken / "case.json").write_text("{oops")
    (cases / ".staging-leftover").mkdir()
    (cases / ".staging-leftover" / "case.json").write_text("{}")

    results = toolreplay.verify_cases([cases, held])  # `held` twice: reported once

    assert [r.path for r in results] == [drifted, held, broken, awaited]
    assert all(isinstance(r, CaseResult) for r in results)
    by_name = {r.name: r for r in results}
    assert set(by_name) == {"drifted", "held", "d_broken", "awaited"}  # broken: folder name
    assert by_name["held"].ok
    assert by_name["held"].outcome == "passed"
    assert by_name["held"].error is None
    assert by_name["held"].error_type is None
    assert by_name["held"].verified is not None
    assert by_name["held"].verified.returned == EXPECTED
    assert by_name["awaited"].ok
    drift = by_name["drifted"]
    assert not drift.ok
    assert drift.outcome == "failed"
    assert isinstance(drift.error, toolreplay.BehavioralRegressionError)
    assert drift.error_type == "toolreplay.errors.BehavioralRegressionError"
    assert drift.error_message is not None
    assert "$.decision" in drift.error_message
    assert isinstance(by_name["d_broken"].error, toolreplay.CaseIntegrityError)
    assert "is not valid JSON" in str(by_name["d_broken"].error_message)
    assert all(r.duration_seconds >= 0 for r in results)


def test_no_case_is_an_empty_list_and_a_missing_path_an_error(tmp_path: Path) -> None:
    assert toolreplay.verify_cases([tmp_path]) == []
    assert toolreplay.find_cases([tmp_path]) == []
    with pytest.raises(CaseSearchError, match="does not exist") as caught:
        toolreplay.verify_cases([tmp_path / "nowhere"])
    assert caught.value.missing
    assert caught.value.path == tmp_path / "nowhere"
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(CaseSearchError, match="symbolic link to nothing") as caught:
        toolreplay.verify_cases([tmp_path / "loop"])
    assert not caught.value.missing


def test_a_runner_that_changed_is_a_failed_result_not_an_exception(
    app: App, tmp_path: Path
) -> None:
    case = promote(app, tmp_path, tmp_path / "cases" / "one", "one")
    app.forget_import()
    app.path.write_text(APP.replace('RESULT_TIER = "gold"', 'RESULT_TIER = "platinum"'))
    [result] = toolreplay.verify_cases([case])
    assert isinstance(result.error, toolreplay.BehavioralRegressionError)
    assert result.error.differences[0].path == "$.tier"


def test_the_case_api_is_the_same_from_the_package_and_the_cases_package() -> None:
    import toolreplay.cases as cases

    for name in cases.__all__:
        if not name.isupper() and name not in {"MANIFEST_NAME", "TEST_NAME"}:
            assert name in toolreplay.__all__, name
            assert getattr(toolreplay, name) is getattr(cases, name)
    for module in ("manifest", "assets", "verification", "publishing"):
        assert hasattr(cases, module)
