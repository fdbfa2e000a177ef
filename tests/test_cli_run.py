"""record, replay, fork and diff from the command line, as real child processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from toolreplay.protocol import RunDocument

APP = Path(__file__).parent / "support" / "refund_app.py"
DECIDE_INPUTS = {"amount": 1200.0, "tier": "gold"}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copy(APP, tmp_path / "refund_app.py")
    return tmp_path


def cli(workdir: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("REFUND_")}
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=workdir,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def protocol(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    document = json.loads(result.stdout)  # stdout is exactly one JSON document
    assert document["protocol"] == "toolreplay.run"
    assert document["protocol_version"] == 2
    assert RunDocument.from_json(result.stdout).to_dict() == document  # the typed reader agrees
    return document


def record(workdir: Path, name: str = "incident.trp", runner: str = "refund_app:main") -> Path:
    result = cli(workdir, "record", "--runner", runner, "--output", name, "--format", "json")
    assert result.returncode == 0, result.stderr
    return workdir / name


def write_patch_file(workdir: Path, value: Any) -> Path:
    patch = toolreplay.replace_output(effect="llm.refund.decide", inputs=DECIDE_INPUTS, value=value)
    return toolreplay.write_patches(workdir / "fix.json", [patch])


def test_the_refund_incident_end_to_end(workdir: Path) -> None:
    recorded = cli(
        workdir, "record", "-r", "refund_app:main", "-o", "incident.trp", "--format", "json"
    )
    assert recorded.returncode == 0, recorded.stderr
    document = protocol(recorded)
    assert document["outcome"] == "ok"
    assert document["return_value"]["outcome"] == "approved"
    assert document["counts"] == {"operations_recorded": 3}
    assert toolreplay.read_trace(workdir / "incident.trp").header.runner == "refund_app:main"

    replayed = protocol(cli(workdir, "replay", "incident.trp", "--format", "json"))
    assert replayed["outcome"] == "ok"
    assert replayed["runner"] == "refund_app:main"  # taken from the trace header
    assert replayed["counts"] == {"operations_in_trace": 3, "operations_consumed": 3}
    assert replayed["network_refused"] == []

    write_patch_file(workdir, {"decision": "manual_review", "reason": "over 1000"})
    forked = cli(
        workdir,
        "fork",
        "incident.trp",
        "--patches",
        "fix.json",
        "--output",
        "branch.trp",
        "--format",
        "json",
    )
    assert forked.returncode == 0, forked.stderr
    fork_document = protocol(forked)
    assert fork_document["return_value"]["outcome"] == "manual_review"
    assert fork_document["counts"]["operations_patched"] == 1
    assert fork_document["paths"]["branch"] == "branch.trp"

    text = cli(workdir, "diff", "incident.trp", "branch.trp")
    assert text.returncode == 0
    assert (
        "first observable divergence, row 2: output_changed at llm.refund.decide occurrence 0"
        in text.stdout
    )
    assert '$.output.decision: source "approve", target "manual_review"' in text.stdout
    report = json.loads(cli(workdir, "diff", "incident.trp", "branch.trp", "-f", "json").stdout)
    first = report["first_divergence"]
    assert first["effect"] == "llm.refund.decide"
    assert first["fields"][0]["path"] == "$.output.decision"
    assert first["patch_id"] == toolreplay.read_patches(workdir / "fix.json")[0].patch_id
    assert (
        cli(workdir, "diff", "incident.trp", "branch.trp", "--fail-on-difference").returncode == 1
    )
    assert (
        cli(workdir, "diff", "incident.trp", "incident.trp", "--fail-on-difference").returncode == 0
    )


def test_text_output_for_people(workdir: Path) -> None:
    result = cli(workdir, "record", "-r", "refund_app:main", "-o", "incident.trp")
    assert result.stdout.splitlines() == [
        "recorded refund_app:main to incident.trp: 3 operations",
        'returned {"amount": 1200.0, "customer": "Ada", "outcome": "approved"}',
    ]
    replayed = cli(workdir, "replay", "incident.trp")
    assert replayed.stdout.splitlines()[0] == (
        "replayed incident.trp with refund_app:main: 3 of 3 operations served, no effect body ran"
    )


def test_application_prints_never_corrupt_the_protocol(workdir: Path) -> None:
    record(workdir)
    result = cli(workdir, "replay", "incident.trp", "--format", "json", REFUND_PRINT="1")
    assert protocol(result)["outcome"] == "ok"
    assert "application chatter on stdout" in result.stderr
    assert "child process chatter" in result.stderr


def test_sys_exit_in_the_application_is_reported(workdir: Path) -> None:
    record(workdir)
    result = cli(workdir, "replay", "incident.trp", "--format", "json", REFUND_EXIT="3")
    assert result.returncode == 1
    document = protocol(result)
    assert document["outcome"] == "application_exit"
    assert document["error"]["exit_code"] == 3


def test_a_changed_application_is_a_replay_contract_error(workdir: Path) -> None:
    record(workdir)
    result = cli(workdir, "replay", "incident.trp", "--format", "json", REFUND_AMOUNT="1500")
    assert result.returncode == 1
    error = protocol(result)["error"]
    assert error["type"] == "toolreplay.errors.ReplayMiss"
    assert error["identity"]["effect"] == "llm.refund.decide"
    assert error["identity"]["occurrence"] == 0
    assert error["inputs"] == {"amount": 1500.0, "tier": "gold"}
    assert error["candidates"][0]["inputs"] == DECIDE_INPUTS
    assert error["candidates"][0]["outcome"]["status"] == "ok"
    text = cli(workdir, "replay", "incident.trp", REFUND_AMOUNT="1500")
    assert text.stdout == ""
    assert "$.amount: recorded 1200.0, called 1500.0" in text.stderr


def test_an_application_exception_carries_its_traceback(workdir: Path) -> None:
    result = cli(workdir, "record", "-r", "refund_app:crashes", "-o", "t.trp", "-f", "json")
    assert result.returncode == 1
    error = protocol(result)["error"]
    assert error["type"] == "builtins.RuntimeError"
    assert "refund pipeline exploded" in error["message"]
    assert "refund_app.py" in error["traceback"]
    assert len(toolreplay.read_trace(workdir / "t.trp")) == 1


def test_text_failures_show_the_traceback_and_where_the_trace_was_kept(workdir: Path) -> None:
    crashed = cli(workdir, "record", "-r", "refund_app:crashes", "-o", "t.trp")
    assert crashed.returncode == 1
    assert crashed.stdout == ""
    stderr = crashed.stderr
    assert stderr.startswith("Traceback (most recent call last):")
    assert 'refund_app.py", line' in stderr
    assert "error: application_error: builtins.RuntimeError: refund pipeline exploded" in stderr
    assert stderr.splitlines()[-1] == "the trace recorded up to the failure is kept at t.trp"
    assert stderr.index("Traceback") < stderr.index("error: application_error")
    assert len(toolreplay.read_trace(workdir / "t.trp")) == 1

    record(workdir)
    write_patch_file(workdir, {"decision": "manual_review"})
    missed = cli(
        workdir, "fork", "incident.trp", "-p", "fix.json", "-o", "b.trp", REFUND_AMOUNT="1500"
    )
    assert missed.returncode == 1
    assert "error: replay_contract_error: toolreplay.errors.ReplayMiss" in missed.stderr
    assert "Traceback" not in missed.stderr  # only an application error carries one
    assert missed.stderr.splitlines()[-1] == (
        "the branch, holding what the application observed up to the failure, is kept at "
        "b.trp; compare: toolreplay diff incident.trp b.trp"
    )
    assert len(toolreplay.read_trace(workdir / "b.trp")) == 2  # the calls served before the miss
    compared = cli(workdir, "diff", "incident.trp", "b.trp").stdout.splitlines()
    assert compared[1] == (
        "target  b.trp (fork, 2 operations, complete, ended with toolreplay.errors.ReplayMiss)"
    )

    refused = cli(workdir, "fork", "incident.trp", "-p", "fix.json", "-o", "b.trp")
    assert refused.returncode == 2
    assert "kept at" not in refused.stderr  # a refusal writes nothing, and keeps nothing


@pytest.mark.parametrize("command", ["record", "replay", "fork"])
def test_the_help_states_the_exit_codes(workdir: Path, command: str) -> None:
    text = " ".join(cli(workdir, command, "--help", COLUMNS="200").stdout.split())
    assert "Exit 0 when the run succeeded" in text
    assert "1 when the application ran and failed" in text
    assert "2 when the command was refused before the application ran" in text


def test_a_class_method_runner(workdir: Path) -> None:
    path = record(workdir, "cases.trp", runner="refund_app:Cases.refund")
    assert toolreplay.read_trace(path).header.runner == "refund_app:Cases.refund"
    assert protocol(cli(workdir, "replay", "cases.trp", "-f", "json"))["outcome"] == "ok"


def test_an_async_runner(workdir: Path) -> None:
    record(workdir, "async.trp", runner="refund_app:main_async")
    assert protocol(cli(workdir, "replay", "async.trp", "-f", "json"))["outcome"] == "ok"


@pytest.mark.parametrize(
    ("runner", "message", "kind"),
    [
        ("nope_module:main", "no module named 'nope_module'", "RunnerImportError"),
        ("refund_app:missing", "refund_app has no attribute 'missing'", "RunnerError"),
        ("refund_app:NOT_CALLABLE", "is a int, not a callable", "RunnerError"),
        ("refund_app:needs_arguments", "requires argument(s) customer_id", "RunnerError"),
        ("refund_app", "is not of the form module:callable", "RunnerError"),
    ],
)
def test_a_bad_runner_is_refused_and_nothing_is_written(
    workdir: Path, runner: str, message: str, kind: str
) -> None:
    result = cli(workdir, "record", "-r", runner, "-o", "t.trp", "--format", "json")
    assert result.returncode == 2
    document = protocol(result)
    assert document["outcome"] == "invalid_arguments"
    assert document["error"]["type"] == f"toolreplay.errors.{kind}"
    assert message in document["error"]["message"]
    assert not (workdir / "t.trp").exists()
    text = cli(workdir, "record", "-r", runner, "-o", "t.trp")
    assert text.returncode == 2
    assert message in text.stderr


def test_an_effect_called_while_the_runner_imports_never_runs_live(workdir: Path) -> None:
    shutil.copy(APP.with_name("import_effect_app.py"), workdir / "import_effect_app.py")
    record(workdir)
    result = cli(
        workdir, "replay", "incident.trp", "-r", "import_effect_app:main", "--format", "json"
    )
    assert result.returncode == 2
    document = protocol(result)  # the import's print went to stderr, not into the JSON
    assert "import-time chatter" in result.stderr
    assert "SessionContextError" in document["error"]["message"]
    assert "a live effect body ran" not in result.stderr


def test_fork_refusals_write_nothing(workdir: Path) -> None:
    record(workdir)
    write_patch_file(workdir, {"decision": "manual_review"})
    (workdir / "taken.trp").write_text("keep")
    before = (workdir / "incident.trp").read_bytes()

    def refused(*args: str) -> dict[str, Any]:
        result = cli(workdir, "fork", "incident.trp", *args, "--format", "json")
        assert result.returncode == 2, result.stdout
        document = protocol(result)
        assert document["outcome"] == "invalid_arguments"
        return document["error"]

    assert "already exists" in refused("-p", "fix.json", "-o", "taken.trp")["message"]
    assert (workdir / "taken.trp").read_text() == "keep"
    assert "its own source trace" in refused("-p", "fix.json", "-o", "incident.trp")["message"]
    (workdir / "broken.json").write_text("{not json")
    assert "not valid JSON" in refused("-p", "broken.json", "-o", "b1.trp")["message"]
    wrong = toolreplay.replace_output(
        effect="llm.refund.decide", inputs={"amount": 1.0, "tier": "gold"}, value="x"
    )
    toolreplay.write_patches(workdir / "wrong.json", [wrong])
    error = refused("-p", "wrong.json", "-o", "b2.trp")
    assert error["type"] == "toolreplay.errors.PatchTargetError"
    assert "$.amount: recorded 1200.0, patch 1.0" in error["message"]
    assert not (workdir / "b1.trp").exists()
    assert not (workdir / "b2.trp").exists()
    assert (workdir / "incident.trp").read_bytes() == before


def test_replay_refusals(workdir: Path) -> None:
    missing = protocol(cli(workdir, "replay", "missing.trp", "-f", "json"))
    assert missing["outcome"] == "invalid_arguments"
    assert "no such trace file" in missing["error"]["message"]
    with toolreplay.record(workdir / "bare.trp"):
        pass
    no_runner = cli(workdir, "replay", "bare.trp")
    assert no_runner.returncode == 2
    assert "the trace records no runner; pass --runner" in no_runner.stderr


def test_diff_refusals(workdir: Path) -> None:
    record(workdir)
    (workdir / "notes.txt").write_text("hello\n")
    lines = (workdir / "incident.trp").read_text().splitlines()
    header = json.loads(lines[0]) | {"format_version": 6}
    (workdir / "future.trp").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    future = cli(workdir, "diff", "incident.trp", "future.trp")
    assert future.returncode == 2
    assert "trace format version 6 is not supported" in future.stderr
    for args in (("incident.trp", "missing.trp"), ("incident.trp", "notes.txt")):
        result = cli(workdir, "diff", *args)
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr.startswith("error: ")


def test_a_missing_dependency_of_the_runner_module_is_named_as_such(workdir: Path) -> None:
    (workdir / "needs_dependency.py").write_text(
        "import not_installed_anywhere\n\ndef main(): ...\n"
    )
    result = cli(workdir, "record", "-r", "needs_dependency:main", "-o", "t.trp")
    assert result.returncode == 2
    assert "importing needs_dependency raised ModuleNotFoundError" in result.stderr
    assert "needs 'not_installed_anywhere', which this Python" in result.stderr
    assert "Run from the project's root folder" not in result.stderr
    # The traceback starts at the application's own line, not in importlib.
    assert 'needs_dependency.py", line 1, in <module>' in result.stderr
    assert "importlib" not in result.stderr
