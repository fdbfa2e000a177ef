"""Secrets in what the adapter would record are found however the body writes them (RFC 0007 §4)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from examples.local_openai import HTTP, event_stream, refusing, response_body, response_events
from tests.adapters.support import sync_client
from toolreplay.adapters.openai import instrument
from toolreplay.redaction import luhn_valid
from toolreplay.redaction.scanner import DEFAULT_SCANNER

SECRET = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
MARK = "SECRET-GOES-HERE"


def answering(content: bytes, content_type: str, request_id: str = "req_1") -> Any:
    def handle(request: Any) -> Any:
        headers = {"content-type": content_type, "x-request-id": request_id}
        return HTTP.Response(200, content=content, headers=headers)

    return handle


def json_body(written_as: str) -> bytes:
    return json.dumps(response_body(text=f"the key is {MARK}")).replace(MARK, written_as).encode()


def stream_body(written_as: str) -> bytes:
    events = response_events(f"the key is {MARK}", deltas=3)
    return event_stream(list(events)).replace(MARK.encode(), written_as.encode())


def escaped(text: str) -> str:
    """`text` as JSON may write it: every character a \\u escape."""
    return "".join(f"\\u{ord(character):04x}" for character in text)


CASES = {
    "json body": (json_body(SECRET), "application/json", "req_1", "$.body.output["),
    "json body, \\u escaped": (
        json_body(escaped(SECRET)),
        "application/json",
        "req_1",
        "$.body.output[",
    ),
    "json body, escape elsewhere": (
        json_body(SECRET).replace(b"the key", b"th\\u00e9 key"),
        "application/json",
        "req_1",
        "$.body.output[",
    ),
    "stream": (stream_body(SECRET), "text/event-stream", "req_1", "$.events["),
    "stream, \\u escaped": (
        stream_body(escaped(SECRET)),
        "text/event-stream",
        "req_1",
        "$.events[",
    ),
    "plain text": (f"oops {SECRET}".encode(), "text/plain", "req_1", "$.text"),
    "request id header": (
        json_body("nothing"),
        "application/json",
        f"req {SECRET}",
        '$.headers["x-request-id"]',
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_secret_in_the_response_is_refused_before_it_is_written(
    case: str, tmp_path: Path
) -> None:
    content, content_type, request_id, path = CASES[case]
    client = instrument(sync_client(answering(content, content_type, request_id)))
    trace = tmp_path / "openai.trp"
    with pytest.raises(toolreplay.SecretInTraceError) as raised:
        with toolreplay.record(trace):
            if content_type == "text/event-stream":
                list(client.responses.create(model="gpt-5-mini", input="key?", stream=True))
            elif content_type == "text/plain":
                client.with_options().get("/plain", cast_to=str)
            else:
                client.responses.create(model="gpt-5-mini", input="key?")
    findings = raised.value.findings
    assert findings
    assert all(finding.part == "output" for finding in findings)
    assert any(finding.path.startswith(path) for finding in findings), findings
    written = trace.read_bytes()
    assert SECRET.encode() not in written
    assert escaped(SECRET).encode() not in written


UPLOADED = {
    "id": "file-1",
    "object": "file",
    "bytes": 9,
    "created_at": 1700000000,
    "filename": "data.txt",
    "purpose": "assistants",
    "status": "processed",
}


def test_an_upload_whose_hex_digest_reads_as_a_card_number_records_and_replays(
    tmp_path: Path,
) -> None:
    """Found by the real-traffic corpus: the hex SHA-256 of an upload can hold a run of
    decimal digits that passes for a card number (issuer prefix, Luhn), and the secret
    scan then refused to record the upload. The digest is recorded in base64, and the
    card rule no longer takes digits inside a word for a card."""
    sent: list[Any] = []

    def accept(request: Any) -> Any:
        sent.append(request)
        return HTTP.Response(200, json=UPLOADED)

    plain = sync_client(accept)
    # Search with the plain SDK for an upload whose digest in hex has such a run: about
    # one in 2,000 does.
    for number in range(50_000):
        content = b"upload %d" % number
        plain.files.create(file=("data.txt", content), purpose="assistants")
        boundary = sent[-1].headers["content-type"].split("boundary=")[1]
        normalized = sent[-1].content.replace(boundary.encode(), b"BOUNDARY")
        digest = hashlib.sha256(normalized)
        runs = re.findall(r"[0-9]{13,19}", digest.hexdigest())
        if any(run[0] in "3456" and luhn_valid(run) for run in runs):
            break
    else:
        pytest.fail("no upload among 50,000 has a card-number-like hex digest")
    assert DEFAULT_SCANNER.scan_text(digest.hexdigest()) == []
    trace = tmp_path / "upload.trp"
    with toolreplay.record(trace):
        recorded = instrument(sync_client(accept)).files.create(
            file=("data.txt", content), purpose="assistants"
        )
    (operation,) = toolreplay.read_trace(trace).operations
    recorded_digest = operation.inputs["body_digest"]
    assert isinstance(recorded_digest, dict)
    assert recorded_digest["sha256_base64"] == base64.b64encode(digest.digest()).decode()
    refused: list[Any] = []
    with toolreplay.replay(trace):
        replayed = instrument(sync_client(refusing(refused))).files.create(
            file=("data.txt", content), purpose="assistants"
        )
    assert replayed == recorded
    assert refused == []
