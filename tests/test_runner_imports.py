"""A runner module that cannot be imported is its own error, `RunnerImportError`.

Not a damaged case (`CaseIntegrityError`), not a bad argument: the environment the
application runs in cannot import it. Every scenario runs real child processes
(`python -m pytest`, `python -m toolreplay ...`) on a real project folder: one whose
module builds a pydantic-ai agent at import time and so raises without
OPENAI_API_KEY, one that reads a variable with `os.environ[...]`, and one whose module
is gone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.case_pytest import CASE_PYTEST
from toolreplay.protocol import PromoteDocument, RunDocument, VerifyDocument

AGENT_APP = textwrap.dedent(
    """
    import toolreplay
    from pydantic_ai import Agent

    # Built when the module is imported, as pydantic-ai's examples do: without
    # OPENAI_API_KEY this raises before any of the application runs.
    support_agent = Agent("openai:gpt-4o", instructions="You answer refund questions.")


    @toolreplay.effect("crm.customer.get")
    def get_customer(customer_id: int) -> dict:
        return {"id": customer_id, "tier": "gold"}


    def run() -> dict:
        return get_customer(42)
    """
)

SETTINGS_APP = textwrap.dedent(
    """
    import os

    import toolreplay

    SERVICE_TOKEN = os.environ["REFUND_SERVICE_TOKEN"]


    @toolreplay.effect("crm.customer.get")
    def get_customer(customer_id: int) -> dict:
        return {"id": customer_id, "tier": "gold"}


    def run() -> dict:
        return get_customer(42)
    """
)

PROMOTE = textwrap.dedent(
    """
    import sys, toolreplay
    module = __import__(sys.argv[1])
    with toolreplay.record("incident.trp"):
        expected = module.run()
    toolreplay.promote("incident.trp", "tests/cases/refund", name="refund",
                       runner=sys.argv[1] + ":run", expected=expected)
    """
)


def _environment(**extra: str) -> dict[str, str]:
    """No credentials and no CI flag; the variables each scenario sets, nothing else."""
    kept = {
        key: value
        for key, value in os.environ.items()
        if "API_KEY" not in key
        and not key.startswith("REFUND_")
        and key not in ("CI", "PYTEST_ADDOPTS", "PYTHONPATH")
    }
    return {**kept, "PYTHONIOENCODING": "utf-8", **extra}


def _run(project: Path, *command: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *command],
        cwd=project,
        env=_environment(**extra),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _project(tmp_path: Path, module: str, source: str, **promote_environment: str) -> Path:
    """A project folder holding `module` and a promoted case of its `run`."""
    project = tmp_path / "project"
    project.mkdir()
    (project / f"{module}.py").write_text(source, encoding="utf-8")
    promoted = _run(project, "-c", PROMOTE, module, **promote_environment)
    assert promoted.returncode == 0, promoted.stderr
    return project


def _pytest(project: Path) -> subprocess.CompletedProcess[str]:
    return _run(project, *CASE_PYTEST, "tests/cases")


def test_a_case_whose_runner_raises_at_import_is_a_runner_import_error(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai")
    project = _project(tmp_path, "support_agent", AGENT_APP, OPENAI_API_KEY="sk-placeholder")

    result = _pytest(project)  # OPENAI_API_KEY is not set here
    assert result.returncode == 1, result.stdout[-3000:]
    report = result.stdout
    assert "1 failed" in report
    assert "integrity failure" not in report
    assert "CaseIntegrityError" not in report
    assert "restore the folder" not in report.lower()
    # The headline names the module and what importing it raised.
    assert (
        "runner import failure (RunnerImportError): support_agent, the module of the case's "
        "runner, cannot be imported here"
    ) in report
    assert "importing support_agent raised UserError: Set the `OPENAI_API_KEY`" in report
    # The import's own traceback, from the application's line on.
    assert "the import's traceback (innermost last):" in report
    assert 'support_agent = Agent("openai:gpt-4o"' in report
    assert "frozen importlib" not in report
    assert "an environment variable that is not set" in report
    assert "nothing is wrong with the case folder" in report

    verified = _run(project, "-m", "toolreplay", "verify", "tests/cases")
    assert verified.returncode == 1
    assert (
        "FAIL  refund  (tests/cases/refund): RunnerImportError: case tests/cases/refund: "
        "runner 'support_agent:run': importing support_agent raised UserError: Set the "
        "`OPENAI_API_KEY`"
    ) in verified.stdout
    assert "      the import's traceback (innermost last):" in verified.stdout
    assert 'support_agent = Agent("openai:gpt-4o"' in verified.stdout
    as_json = _run(project, "-m", "toolreplay", "verify", "tests/cases", "--format", "json")
    (case,) = VerifyDocument.from_json(as_json.stdout).cases
    assert case.error is not None
    assert case.error.type == "toolreplay.errors.RunnerImportError"

    # With the variable set (a placeholder: replay sends no request) the case holds.
    held = _run(project, *CASE_PYTEST, "tests/cases", OPENAI_API_KEY="x")
    assert held.returncode == 0, held.stdout[-3000:]


def test_a_missing_variable_read_at_import_is_named(tmp_path: Path) -> None:
    project = _project(tmp_path, "refund_settings", SETTINGS_APP, REFUND_SERVICE_TOKEN="t")

    report = _pytest(project).stdout
    assert "runner import failure (RunnerImportError)" in report
    assert "importing refund_settings raised KeyError: 'REFUND_SERVICE_TOKEN'" in report
    assert "The environment variable REFUND_SERVICE_TOKEN is probably not set" in report
    assert 'SERVICE_TOKEN = os.environ["REFUND_SERVICE_TOKEN"]' in report


def test_a_case_whose_runner_module_is_gone_says_where_it_looks(tmp_path: Path) -> None:
    project = _project(tmp_path, "refund_settings", SETTINGS_APP, REFUND_SERVICE_TOKEN="t")
    (project / "refund_settings.py").rename(project / "moved_away.py")

    result = _pytest(project)
    assert result.returncode == 1
    report = result.stdout
    assert "integrity failure" not in report
    assert "runner import failure (RunnerImportError): refund_settings" in report
    assert (
        "cannot import refund_settings: no module named 'refund_settings' on this Python's "
        "search path (sys.path)"
    ) in report
    assert "Run from the project's root folder" in report
    assert "the import's traceback" not in report  # no application code ran


def test_the_command_line_reports_a_runner_import_failure_as_its_own_kind(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, "refund_settings", SETTINGS_APP, REFUND_SERVICE_TOKEN="t")
    patches = project / "patches.json"
    patches.write_text(
        json.dumps({"format": "toolreplay.patches", "format_version": 2, "patches": []})
    )
    for arguments in (
        ("replay", "incident.trp"),
        ("fork", "incident.trp", "-p", str(patches), "-o", "branch.trp"),
    ):
        arguments = (*arguments, "--runner", "refund_settings:run")
        result = _run(project, "-m", "toolreplay", *arguments, "--format", "json")
        assert result.returncode == 2, result.stderr
        document = RunDocument.from_json(result.stdout)
        assert document.outcome == "invalid_arguments"
        assert document.error is not None
        assert document.error.type == "toolreplay.errors.RunnerImportError"
        assert document.error.message.startswith(
            "runner 'refund_settings:run': importing refund_settings raised KeyError: "
            "'REFUND_SERVICE_TOKEN'\n"
        )
        assert document.error.traceback is not None
        assert 'os.environ["REFUND_SERVICE_TOKEN"]' in document.error.traceback
        text = _run(project, "-m", "toolreplay", *arguments)
        assert text.returncode == 2
        assert 'os.environ["REFUND_SERVICE_TOKEN"]' in text.stderr
        assert (
            "error: invalid_arguments: toolreplay.errors.RunnerImportError: runner "
            "'refund_settings:run': importing refund_settings raised KeyError"
        ) in text.stderr
    assert not (project / "branch.trp").exists()

    promoted = _run(
        project,
        "-m",
        "toolreplay",
        "promote",
        "incident.trp",
        "-o",
        "tests/cases/again",
        "-n",
        "again",
        "-r",
        "refund_settings:run",
        "--expect-json",
        "{}",
        "--format",
        "json",
    )
    assert promoted.returncode == 2
    document = PromoteDocument.from_json(promoted.stdout)
    assert document.error is not None
    assert document.error.type == "toolreplay.errors.RunnerImportError"
    assert not (project / "tests" / "cases" / "again").exists()
