"""The run protocol's documents: what the commands print reads back, versions are checked.

Every document `tests/test_cli_run.py` gets from a real `record | replay | fork`
is also read back through `RunDocument.from_json` there; these tests cover the
error objects of real failures, the promote and verify documents of real
commands, and what a reader refuses.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from tests.test_cli_run import APP, cli
from toolreplay.errors import ProtocolError, ProtocolVersionError
from toolreplay.protocol import (
    RUN_PROTOCOL_VERSION,
    ErrorReport,
    PromoteDocument,
    RunDocument,
    VerifyDocument,
)


@toolreplay.effect("test.protocol.lookup")
def lookup(key: str) -> str:
    return key.upper()


def a_replay_miss(tmp_path: Path) -> toolreplay.ReplayMiss:
    trace = tmp_path / "lookup.trp"
    with toolreplay.record(trace):
        lookup("a")
        lookup("b")
    with pytest.raises(toolreplay.ReplayMiss) as raised, toolreplay.replay(trace):
        lookup("a")
        lookup("c")
    return raised.value


def test_the_error_object_of_a_real_miss_reads_back(tmp_path: Path) -> None:
    miss = a_replay_miss(tmp_path)
    report = ErrorReport.from_exception(miss)
    assert report.type == "toolreplay.errors.ReplayMiss"
    assert report.short_type == "ReplayMiss"
    assert report.identity is not None
    assert report.identity.effect == "test.protocol.lookup"
    assert report.inputs == {"key": "c"}
    assert {"key": "b"} in [candidate.inputs for candidate in report.candidates]
    assert report.candidates[0].line is not None
    document = RunDocument("replay", outcome="replay_contract_error", runner="m:f", error=report)
    written = json.loads(document.to_json())
    assert "exit_code" not in written["error"]  # written only for application_exit
    assert "traceback" not in written["error"]  # and application_error
    assert RunDocument.from_json(document.to_json()) == document


def test_exit_codes_and_tracebacks_are_reported() -> None:
    assert ErrorReport.from_exception(SystemExit()).exit_code == 0
    assert ErrorReport.from_exception(SystemExit(3)).exit_code == 3
    assert ErrorReport.from_exception(SystemExit("bye")).exit_code == 1
    try:
        raise ValueError("boom")
    except ValueError as error:
        error.add_note("while deciding")
        report = ErrorReport.from_exception(error, with_traceback=True)
    assert report.notes == ("while deciding",)
    assert report.traceback is not None
    assert "ValueError: boom" in report.traceback
    document = RunDocument("record", outcome="application_error", error=report)
    assert RunDocument.from_dict(document.to_dict()) == document


def test_promote_and_verify_documents_of_real_commands_read_back(tmp_path: Path) -> None:
    shutil.copy(APP, tmp_path / "refund_app.py")
    recorded = cli(tmp_path, "record", "-r", "refund_app:main", "-o", "incident.trp", "-f", "json")
    assert recorded.returncode == 0, recorded.stderr
    expected = json.dumps(RunDocument.from_json(recorded.stdout).return_value)
    arguments = ("-o", "cases/refund", "-n", "refund", "-r", "refund_app:main")
    promoted = cli(
        tmp_path, "promote", "incident.trp", *arguments, "--expect-json", expected, "-f", "json"
    )
    assert promoted.returncode == 0, promoted.stderr
    document = PromoteDocument.from_json(promoted.stdout)
    assert document.outcome == "ok"
    assert document.case is not None
    assert document.case.name == "refund"
    assert document.to_json() == promoted.stdout.rstrip("\n")  # byte for byte
    refused = cli(
        tmp_path, "promote", "incident.trp", *arguments, "--expect-json", "{", "-f", "json"
    )
    assert refused.returncode == 2
    refusal = PromoteDocument.from_json(refused.stdout)
    assert refusal.outcome == "invalid_arguments"
    assert refusal.error is not None
    assert refusal.error.short_type == "PromotionError"

    verified = cli(tmp_path, "verify", "cases", "-f", "json")
    assert verified.returncode == 0, verified.stderr
    report = VerifyDocument.from_json(verified.stdout)
    assert (report.passed, report.failed, report.error) == (1, 0, None)
    assert report.cases[0].name == "refund"
    assert report.to_json() == verified.stdout.rstrip("\n")
    nothing = VerifyDocument.from_json(cli(tmp_path, "verify", "incident.trp", "-f", "json").stdout)
    assert nothing.cases == ()
    assert nothing.error is not None


def run_document(**changes: Any) -> dict[str, Any]:
    document = RunDocument(
        "fork",
        outcome="replay_contract_error",
        runner="m:f",
        error=ErrorReport("toolreplay.errors.ReplayMiss", "missed"),
        paths={"source": "s.trp", "patches": "p.json", "branch": None},
        counts={"operations_in_trace": 3},
    ).to_dict()
    document.update(changes)
    return document


def test_another_version_is_refused_before_anything_else() -> None:
    with pytest.raises(ProtocolVersionError) as raised:
        RunDocument.from_dict(run_document(protocol_version=1, outcome="what_if"))
    assert raised.value.version == 1
    assert raised.value.supported == RUN_PROTOCOL_VERSION
    assert "protocol_version 1; this toolreplay reads version 2" in str(raised.value)
    with pytest.raises(ProtocolVersionError, match="format_version null"):
        PromoteDocument.from_dict({"outcome": "ok"})
    with pytest.raises(ProtocolVersionError, match="format_version true"):
        VerifyDocument.from_dict({"format_version": True})


@pytest.mark.parametrize(
    ("document", "culprit"),
    [
        (
            run_document(protocol="toolreplay.other"),
            '$.protocol: expected "toolreplay.run", found "toolreplay.other"',
        ),
        (run_document(outcome="fine"), '$.outcome: expected one of "ok", "application_error"'),
        (
            run_document(counts={"patches": True}),
            "$.counts.patches: expected an integer, found true",
        ),
        (run_document(paths=[]), "$.paths: expected an object of strings or nulls, found []"),
        (run_document(runner=3), "$.runner: expected a string or null, found 3"),
        (run_document(return_value=float("nan")), "$.return_value: expected a finite number"),
        (
            run_document(
                error={**ErrorReport("t", "m").to_dict(), "candidates": [{"logical_id": 1}]}
            ),
            "$.error.candidates[0].line: expected an integer or null, found nothing",
        ),
        (
            run_document(error={"type": "t"}),
            "$.error.message: expected a string, found nothing (no such key)",
        ),
        (
            run_document(error={**ErrorReport("t", "m").to_dict(), "exit_code": "3"}),
            '$.error.exit_code: expected an integer, found "3"',
        ),
        (run_document(colour="red"), "$: expected only the keys protocol, protocol_version"),
        ([], "$: expected an object, found []"),
    ],
)
def test_a_malformed_document_names_the_field(document: object, culprit: str) -> None:
    with pytest.raises(ProtocolError) as raised:
        RunDocument.from_dict(document)
    assert culprit in str(raised.value)


def test_text_that_is_not_a_document() -> None:
    with pytest.raises(ProtocolError, match="not JSON"):
        RunDocument.from_json("Traceback (most recent call last):")
    with pytest.raises(
        ProtocolError, match=r"\$\.passed: expected 1, the number of cases that passed, found 0"
    ):
        VerifyDocument.from_dict(
            {"format_version": 1, "passed": 0, "failed": 0, "cases": [], "error": None}
            | {
                "cases": [{"path": "c", "name": "c", "outcome": "passed", "error": None}],
            }
        )
