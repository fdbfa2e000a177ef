"""Traces of the first OpenAI adapter: refused with a pointer to `toolreplay migrate`, and
migrated into traces that replay through today's adapter (the bundled incident's old trace).

`data/legacy_refund.trp` is `examples/incident/refund.trp` as the first adapter recorded it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai
import pytest

import toolreplay
from examples.incident import app
from examples.local_openai import LocalOpenAI, refusing
from tests.adapters.support import sync_client
from toolreplay.adapters.openai import instrument
from toolreplay.portable import fingerprint
from toolreplay.trace.codec import encode_footer, encode_header, encode_operation
from toolreplay.trace.model import Operation, Raised, SessionEnding, TraceFooter
from toolreplay.trace.writer import write_whole_trace

LEGACY = Path(__file__).parent / "data" / "legacy_refund.trp"
ROOT = Path(__file__).resolve().parents[2]


def test_replaying_a_legacy_trace_names_the_migration() -> None:
    with pytest.raises(toolreplay.LegacyOpenAITraceError, match="toolreplay migrate"):
        with toolreplay.replay(LEGACY):
            app.run_incident()


def test_a_migrated_trace_replays_forks_and_keeps_the_source(tmp_path: Path) -> None:
    before = LEGACY.read_bytes()
    migrated = toolreplay.migrate_trace(LEGACY, tmp_path / "refund.trp")
    assert (migrated.converted, migrated.operations) == (1, 3)
    assert LEGACY.read_bytes() == before
    trace = toolreplay.read_trace(migrated.path)
    assert trace.complete
    assert trace.header.runner == app.RUNNER
    model_call = trace.operations[2]
    assert model_call.effect == "openai.responses.create"
    assert model_call.inputs["path"] == "/responses"
    assert model_call.inputs["body"] == {
        "input": toolreplay.read_trace(LEGACY).operations[2].inputs["input"],
        "max_output_tokens": 64,
        "model": "gpt-5-mini",
        "reasoning": {"effort": "minimal"},
    }
    # The legacy recording predates the incident's refund, review and notice effects
    # (pure local functions): the fork lets them run, and answers the rest from the trace.
    local = ["billing.*", "review.*", "notify.*"]
    with toolreplay.fork(migrated.path, tmp_path / "same.trp", live=local) as session:
        assert app.run_incident()["decision"] == "approved"
    assert session.consumed_count == 3

    outcome = model_call.outcome
    assert isinstance(outcome, toolreplay.Returned)
    corrected: Any = json.loads(json.dumps(outcome.value))
    corrected["body"]["output"][1]["content"][0]["text"] = "manual_review"
    patch = toolreplay.replace_output(
        effect=model_call.effect, inputs=model_call.inputs, value=corrected
    )
    with toolreplay.fork(migrated.path, tmp_path / "fixed.trp", patches=[patch], live=local):
        assert app.run_incident()["decision"] == "manual_review"


def test_migrated_errors_replay_as_the_errors_the_first_adapter_recorded(tmp_path: Path) -> None:
    """A legacy status error and timeout, written as the first adapter wrote them."""
    source = toolreplay.read_trace(LEGACY)
    legacy_call = source.operations[2]
    error = {
        "envelope": "openai.error",
        "version": 1,
        "class": "RateLimitError",
        "message": "Error code: 429 - {'message': 'slow down', 'type': 'requests', 'code': 'rate'}",
        "status_code": 429,
        "body": {"message": "slow down", "type": "requests", "code": "rate"},
        "request_id": "req_429",
    }
    timeout = {"envelope": "openai.error", "version": 1, "class": "APITimeoutError", "message": "x"}
    legacy = tmp_path / "legacy.trp"
    operations = [
        Operation(
            logical_id=index,
            identity=legacy_call.identity._replace(occurrence=index),
            inputs=legacy_call.inputs,
            outcome=Raised(f"openai.{envelope['class']}", "recorded", [envelope]),
        )
        for index, envelope in enumerate([error, timeout])
    ]
    lines = [encode_header(source.header)] + [encode_operation(op) for op in operations]
    footer = TraceFooter(2, hashlib.sha256(b"".join(lines)).hexdigest(), SessionEnding("completed"))
    legacy.write_bytes(b"".join([*lines, encode_footer(footer)]))

    migrated = toolreplay.migrate_trace(legacy, tmp_path / "new.trp").path
    request: dict[str, Any] = {
        key: value for key, value in legacy_call.inputs.items() if value is not None
    }
    sent: list[Any] = []
    with toolreplay.replay(migrated):
        client = instrument(sync_client(refusing(sent)))
        with pytest.raises(openai.RateLimitError) as limited:
            client.responses.create(**request)
        with pytest.raises(openai.APITimeoutError):
            client.responses.create(**request)
    assert sent == []
    assert limited.value.status_code == 429
    assert limited.value.body == error["body"]
    assert limited.value.code == "rate"
    assert limited.value.request_id == "req_429"


def test_the_migrate_command_writes_a_new_trace_and_refuses_to_overwrite(tmp_path: Path) -> None:
    def migrate(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolreplay", "migrate", str(LEGACY), *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )

    output = tmp_path / "refund.trp"
    first = migrate("--output", str(output))
    assert first.returncode == 0, first.stderr
    assert "converted 1 of 3 operations" in first.stdout
    again = migrate("--output", str(output))
    assert again.returncode == 2
    assert "already exists" in again.stderr
    nothing = subprocess.run(
        [sys.executable, "-m", "toolreplay", "migrate", str(output), "-o", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert nothing.returncode == 2
    assert "nothing to migrate" in nothing.stderr
    assert not (tmp_path / "x").exists()


def test_migrating_into_a_missing_folder_is_a_trace_error_naming_it(tmp_path: Path) -> None:
    output = tmp_path / "missing" / "refund.trp"
    with pytest.raises(toolreplay.TraceError, match="cannot write the migrated trace") as raised:
        toolreplay.migrate_trace(LEGACY, output)
    assert raised.value.path == output
    assert not output.parent.exists()


def _with_hex_upload_digest(source: Path, target: Path) -> None:
    """`source` as the adapter wrote it before upload digests were base64: `sha256` in hex."""
    trace = toolreplay.read_trace(source)
    operations = []
    for operation in trace.operations:
        digest = operation.inputs["body_digest"]
        assert isinstance(digest, dict)
        raw = base64.b64decode(str(digest["sha256_base64"]))
        old = {("sha256" if k == "sha256_base64" else k): v for k, v in digest.items()}
        old["sha256"] = raw.hex()
        inputs = {**operation.inputs, "body_digest": old}
        identity = operation.identity._replace(fingerprint=fingerprint(inputs))
        operations.append(replace(operation, identity=identity, inputs=inputs, line=None))
    assert trace.footer is not None
    write_whole_trace(
        target, trace.header, operations, trace.footer.ending, overwrite=False, what="trace"
    )


def test_an_upload_recorded_with_a_hex_digest_is_refused_then_migrated(tmp_path: Path) -> None:
    def upload(client: Any) -> Any:
        try:
            return client.files.create(file=("notes.txt", b"call notes"), purpose="assistants")
        except openai.NotFoundError as error:  # the local API has no /files: a recorded 404
            return error.status_code, error.body

    recorded = tmp_path / "recorded.trp"
    with toolreplay.record(recorded):
        live = upload(instrument(sync_client(LocalOpenAI())))
    old = tmp_path / "hex.trp"
    _with_hex_upload_digest(recorded, old)
    sent: list[Any] = []
    with pytest.raises(toolreplay.LegacyOpenAITraceError) as refused:
        with toolreplay.replay(old):
            upload(instrument(sync_client(refusing(sent))))
    message = str(refused.value)
    assert "body_digest.sha256" in message
    assert "operation 0" in message
    assert "toolreplay migrate" in message
    before = old.read_bytes()
    migrated = toolreplay.migrate_trace(old, tmp_path / "migrated.trp")
    assert (migrated.converted, migrated.operations) == (1, 1)
    assert old.read_bytes() == before
    result = toolreplay.read_trace(migrated.path)
    assert result.header.metadata["migrated"] == "upload digests hex to base64"
    assert result.operations[0].inputs == toolreplay.read_trace(recorded).operations[0].inputs
    with toolreplay.replay(migrated.path):
        assert upload(instrument(sync_client(refusing(sent)))) == live
    assert sent == []
