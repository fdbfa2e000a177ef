"""Refused commands refuse before the application is imported, and never with a traceback.

Each command runs as a real child process; the runner's module leaves a marker file
when it is imported, so any refusal that came after the import would leave it behind.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import toolreplay
from tests.support.case_app import EXPECTED, App, run_cli


@pytest.fixture
def workdir(app: App, tmp_path: Path) -> Path:
    """A folder holding a recorded trace, a patch file, a case and other files to refuse."""
    trace = app.record(tmp_path / "incident.trp")
    toolreplay.promote(
        trace, tmp_path / "taken", name="taken", runner=app.runner(), expected=EXPECTED
    )
    toolreplay.write_patches(
        tmp_path / "stray.json",
        [toolreplay.replace_output(effect="crm.customer.get", inputs={"customer_id": 7}, value={})],
    )
    (tmp_path / "garbage.trp").write_text("this is not a trace\n")
    (tmp_path / "existing.trp").write_bytes(trace.read_bytes())
    (tmp_path / "deep.json").write_text("[" * 3000 + "]" * 3000)
    app.forget_import()
    return tmp_path


def run(app: App, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(app, cwd, *args, "--format", "json")


def promote_args(app: App, *, trace: str = "incident.trp", output: str = "cases/new") -> list[str]:
    return ["promote", trace, "-o", output, "-n", "new", "-r", app.runner()]


REFUSALS: dict[str, tuple[list[str], str, str]] = {
    # name: (arguments after the runner-free part, error type, part of the message)
    "promote a file that is not a trace": (
        ["--trace", "garbage.trp", "--expect-json", "1"],
        "TraceFormatError",
        "garbage.trp:1",
    ),
    "promote a missing trace": (
        ["--trace", "missing.trp", "--expect-json", "1"],
        "PromotionError",
        "no such trace file",
    ),
    "promote onto an existing case": (
        ["--output", "taken", "--expect-json", "1"],
        "PromotionError",
        "already exists",
    ),
    "promote with invalid expected JSON": (
        ["--expect-json", "{oops"],
        "PromotionError",
        "--expect-json: not valid JSON",
    ),
    "promote a 5,000-digit expected integer": (
        ["--expect-json", "9" * 5000],
        "PromotionError",
        "--expect-json: not portable JSON",
    ),
    "promote a 3,000-deep expected value": (
        ["--expect-file", "deep.json"],
        "PromotionError",
        "--expect-file deep.json: nested too deeply to read",
    ),
}


@pytest.mark.parametrize("refusal", REFUSALS)
def test_promote_refusals_import_nothing(app: App, workdir: Path, refusal: str) -> None:
    extra, error_type, message = REFUSALS[refusal]
    options = dict(zip(extra[::2], extra[1::2], strict=True))
    arguments = promote_args(
        app,
        trace=options.pop("--trace", "incident.trp"),
        output=options.pop("--output", "cases/new"),
    )
    for option, value in options.items():
        arguments += [option, value]
    result = run(app, workdir, *arguments)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    assert document["outcome"] == "invalid_arguments"
    assert document["error"]["type"] == f"toolreplay.errors.{error_type}"
    assert message in document["error"]["message"]
    assert not app.marker.exists(), f"{refusal}: the runner module was imported"
    assert not (workdir / "cases").exists()


def test_record_onto_an_existing_trace_imports_nothing(app: App, workdir: Path) -> None:
    before = (workdir / "existing.trp").read_bytes()
    for output, message in [
        ("existing.trp", "a trace already exists here"),
        ("no/such/folder/t.trp", "does not exist; create it first"),
        ("taken", "is a directory"),
    ]:
        result = run(app, workdir, "record", "-r", app.runner(), "-o", output)
        assert result.returncode == 2, result.stderr
        document = json.loads(result.stdout)
        assert document["outcome"] == "invalid_arguments"
        assert message in document["error"]["message"]
        assert not app.marker.exists(), f"record -o {output}: the runner module was imported"
    assert (workdir / "existing.trp").read_bytes() == before


def test_fork_refusals_import_nothing(app: App, workdir: Path) -> None:
    for arguments, message in [
        (["-p", "stray.json", "-o", "branch.trp"], "crm.customer.get"),
        (["-p", "stray.json", "-o", "existing.trp"], "crm.customer.get"),
    ]:
        result = run(app, workdir, "fork", "incident.trp", "-r", app.runner(), *arguments)
        assert result.returncode == 2, result.stderr
        assert message in json.loads(result.stdout)["error"]["message"]
        assert not app.marker.exists()
    toolreplay.write_patches(workdir / "none.json", [])
    result = run(app, workdir, "fork", "incident.trp", "-p", "none.json", "-o", "existing.trp")
    assert result.returncode == 2, result.stderr
    assert "a trace already exists here" in json.loads(result.stdout)["error"]["message"]
    assert not app.marker.exists()
    assert not (workdir / "branch.trp").exists()


def test_a_command_that_is_not_refused_does_import_the_runner(app: App, workdir: Path) -> None:
    # The marker works: the same runner, accepted, is imported.
    result = run(app, workdir, *promote_args(app), "--expect-json", json.dumps(EXPECTED))
    assert result.returncode == 0, result.stderr
    assert app.marker.exists()
