"""Secrets in what an adapter would record are found however the body writes them (RFC 0007 §4).

For each provider (OpenAI, Anthropic): a JSON body, the same with the key written in
`\\u` escapes or with an escape elsewhere, a stream (Claude's sends the text a few
characters an event, so the key is in no single event), a plain text body, and a
response header the adapter keeps."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import anthropic
import httpx2
import pytest

import toolreplay
from examples.local_anthropic import API_KEY, MODEL, message, stream_events
from examples.local_openai import HTTP, event_stream, refusing, response_body, response_events
from tests.adapters.support import sync_client
from toolreplay.adapters.anthropic import instrument as instrument_claude
from toolreplay.adapters.openai import instrument
from toolreplay.redaction import luhn_valid
from toolreplay.redaction.scanner import DEFAULT_SCANNER

SECRET = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
MARK = "SECRET-GOES-HERE"


def escaped(text: str) -> str:
    """`text` as JSON may write it: every character a \\u escape."""
    return "".join(f"\\u{ord(character):04x}" for character in text)


def answering(library: ModuleType, content: bytes, content_type: str, request_id: Any) -> Any:
    def handle(request: Any) -> Any:
        headers = {"content-type": content_type, **request_id}
        return library.Response(200, content=content, headers=headers)

    return handle


# --- OpenAI: a Responses body, and a stream whose closing events repeat the whole text ---


def openai_body(escape: bool) -> bytes:
    written_as = escaped(SECRET) if escape else SECRET
    return json.dumps(response_body(text=f"the key is {MARK}")).replace(MARK, written_as).encode()


def openai_stream(escape: bool) -> bytes:
    written_as = escaped(SECRET) if escape else SECRET
    events = response_events(f"the key is {MARK}", deltas=3)
    return event_stream(list(events)).replace(MARK.encode(), written_as.encode())


def openai_ask(client: Any, kind: str) -> None:
    if kind == "stream":
        list(client.responses.create(model="gpt-5-mini", input="key?", stream=True))
    elif kind == "text":
        client.with_options().get("/plain", cast_to=str)
    else:
        client.responses.create(model="gpt-5-mini", input="key?")


# --- Anthropic: a message, and a stream that sends the text a few characters an event ---

ASKED: Any = [{"role": "user", "content": "key?"}]


def claude_message() -> dict[str, Any]:
    final = message({"messages": ASKED}, 1)
    final["content"] = [{"type": "text", "text": f"the key is {SECRET}"}]
    return final


def claude_body(escape: bool) -> bytes:
    text = json.dumps(claude_message())
    return text.replace(SECRET, escaped(SECRET)).encode() if escape else text.encode()


def claude_stream(escape: bool) -> bytes:
    """No event holds the whole key, and none repeats the text at the end."""
    blocks: list[str] = []
    for event in stream_events(claude_message()):
        data = json.dumps(event)
        piece = event.get("delta", {}).get("text")
        assert piece is None or SECRET not in piece
        if escape and piece:
            data = data.replace(json.dumps(piece), f'"{escaped(piece)}"')
        blocks.append(f"event: {event['type']}\ndata: {data}\n\n")
    return "".join(blocks).encode()


def claude_ask(client: Any, kind: str) -> None:
    if kind == "stream":
        with client.messages.stream(model=MODEL, max_tokens=64, messages=ASKED) as stream:
            stream.until_done()
    elif kind == "text":
        client.get("/plain", cast_to=str)
    else:
        client.messages.create(model=MODEL, max_tokens=64, messages=ASKED)


@dataclass(frozen=True)
class Provider:
    """One adapter's API and client: its HTTP library, an instrumented client over a
    handler, the bodies holding the key, where a scan finds it, how the client asks."""

    library: ModuleType
    client: Callable[[Any], Any]
    body: Callable[[bool], bytes]
    stream: Callable[[bool], bytes]
    body_path: str
    stream_path: str
    request_id: str
    ask: Callable[[Any, str], None]


def claude_client(handler: Any) -> Any:
    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    return instrument_claude(anthropic.Anthropic(api_key=API_KEY, http_client=http, max_retries=0))


PROVIDERS = {
    "openai": Provider(
        HTTP,
        lambda handler: instrument(sync_client(handler)),
        openai_body,
        openai_stream,
        "$.body.output[",
        "$.events[",
        "x-request-id",
        openai_ask,
    ),
    "anthropic": Provider(
        httpx2,
        claude_client,
        claude_body,
        claude_stream,
        "$.body.content[0].text",
        "$.events[*].data.delta.text",  # the pieces put back together
        "request-id",
        claude_ask,
    ),
}
CASES = {
    # case: (body kind, \\u escaped, where the key is, how the client asks)
    "json body": ("body", False, "body", "json"),
    "json body, \\u escaped": ("body", True, "body", "json"),
    "json body, escape elsewhere": ("body, escape elsewhere", False, "body", "json"),
    "stream": ("stream", False, "stream", "stream"),
    "stream, \\u escaped": ("stream", True, "stream", "stream"),
    "plain text": ("text", False, "$.text", "text"),
    "request id header": ("request id", False, "header", "json"),
}


def _answer(provider: Provider, case: str) -> tuple[bytes, str, dict[str, str]]:
    """The response body, its content type and request id header for a case."""
    kind, escape, _where, _ask = CASES[case]
    request_id = {provider.request_id: "req_1"}
    if kind == "stream":
        return provider.stream(escape), "text/event-stream", request_id
    if kind == "text":
        return f"oops {SECRET}".encode(), "text/plain", request_id
    if kind == "request id":
        clean = provider.body(False).replace(SECRET.encode(), b"nothing")
        return clean, "application/json", {provider.request_id: f"req {SECRET}"}
    body = provider.body(escape)
    if kind == "body, escape elsewhere":
        body = body.replace(b"the key", b"th\\u00e9 key")
    return body, "application/json", request_id


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", list(PROVIDERS))
def test_a_secret_in_the_response_is_refused_before_it_is_written(
    name: str, case: str, tmp_path: Path
) -> None:
    provider = PROVIDERS[name]
    content, content_type, request_id = _answer(provider, case)
    client = provider.client(answering(provider.library, content, content_type, request_id))
    trace = tmp_path / f"{name}.trp"
    with pytest.raises(toolreplay.SecretInTraceError) as raised:
        with toolreplay.record(trace):
            provider.ask(client, CASES[case][3])
    findings = raised.value.findings
    assert findings
    assert all(finding.part == "output" for finding in findings)
    where = CASES[case][2]
    path = {
        "body": provider.body_path,
        "stream": provider.stream_path,
        "header": f'$.headers["{provider.request_id}"]',
    }.get(where, where)
    assert any(finding.path.startswith(path) for finding in findings), findings
    written = trace.read_bytes()
    assert SECRET.encode() not in written
    assert escaped(SECRET).encode() not in written
    assert b"K1l2M3n" not in written  # not even the pieces of a stream


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
