"""Local stand-ins for Claude on Amazon Bedrock and Google Vertex AI, for real SDK clients
(`AnthropicBedrock`, `AnthropicVertex`): handlers served over loopback by the tests.

They answer as the platforms do, from the local Messages API's answers
(examples/local_anthropic): Bedrock's `invoke` with a message and
`invoke-with-response-stream` with an AWS event stream (binary frames with CRCs, each
chunk's event in base64 beside random-length padding), errors as `{"message"}` with
`x-amzn-errortype`; Vertex's `rawPredict` with a message, `streamRawPredict` with
server-sent events, and token counting. Each checks what a real client must send: a
SigV4 signature made with the given access key (and the session token), or the Google
bearer token.

The frames are written here, not by Tool Replay: this is the service, and the SDK's own
decoder (botocore's) reads both what it sends and what a replay serves.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from typing import Any

import httpx2

from examples.local_anthropic import ERROR_TYPES, message, sse, stream_events

__all__ = [
    "AWS_ACCESS_KEY",
    "AWS_SECRET_KEY",
    "AWS_SESSION_TOKEN",
    "BEDROCK_MODEL",
    "GOOGLE_TOKEN",
    "PROJECT",
    "REGION",
    "VERTEX_MODEL",
    "LocalBedrock",
    "LocalVertex",
    "event_stream",
]

AWS_ACCESS_KEY = "AKIAIOSFODNN7CANARY1"
AWS_SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARYKEY1"
AWS_SESSION_TOKEN = "IQoJb3JpZ2luX2VjECANARY-session-token-9c1d"
BEDROCK_MODEL = "anthropic.claude-sonnet-4-6-v1:0"
GOOGLE_TOKEN = "ya29.CANARY-google-token-4e8a"
VERTEX_MODEL = "claude-sonnet-4-6@20260217"
PROJECT = "refunds-prod-1234"
REGION = "us-east5"


def _frame(headers: dict[str, str], payload: bytes) -> bytes:
    encoded = b"".join(
        bytes([len(name)])
        + name.encode()
        + b"\x07"
        + struct.pack(">H", len(value))
        + value.encode()
        for name, value in headers.items()
    )
    prelude = struct.pack(">II", 16 + len(encoded) + len(payload), len(encoded))
    head = prelude + struct.pack(">I", binascii.crc32(prelude)) + encoded + payload
    return head + struct.pack(">I", binascii.crc32(head))


def event_stream(events: list[dict[str, Any]]) -> bytes:
    """Bedrock's response stream for Messages events: one `chunk` frame each."""
    frames: list[bytes] = []
    for number, event in enumerate(events):
        chunk = base64.b64encode(json.dumps(event).encode()).decode()
        payload = json.dumps({"bytes": chunk, "p": "abcdefghijklmnopqrstuvwxyz"[: 3 + number % 20]})
        headers = {
            ":event-type": "chunk",
            ":content-type": "application/json",
            ":message-type": "event",
        }
        frames.append(_frame(headers, payload.encode()))
    return b"".join(frames)


class LocalBedrock:
    """Claude on Bedrock. `requests` are those received; `fail` statuses answer the next
    invocations with an error; `tool_input` is the tool use's input (see LocalAnthropic)."""

    def __init__(self, *, tool_input: dict[str, Any] | None = None) -> None:
        self.requests: list[Any] = []
        self.fail: list[int] = []
        self.tool_input = tool_input or {"order_id": 8812, "reason": "lost in transit"}

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        signed = request.headers.get("authorization", "")
        assert signed.startswith(f"AWS4-HMAC-SHA256 Credential={AWS_ACCESS_KEY}/"), "SigV4"
        assert re.search(r"SignedHeaders=[^,]*x-amz-date[^,]*, Signature=[0-9a-f]{64}$", signed)
        assert request.headers.get("x-amz-security-token") == AWS_SESSION_TOKEN
        number = len(self.requests)
        headers = {
            "x-amzn-requestid": f"5f2c{number:04d}-aws-request",
            "x-amzn-bedrock-input-token-count": "31",
        }
        found = re.fullmatch(
            r"/model/([^/]+)/(invoke|invoke-with-response-stream)", request.url.path
        )
        if found is None:
            return httpx2.Response(
                404, json={"message": "UnknownOperationException"}, headers=headers
            )
        if self.fail:
            status = self.fail.pop(0)
            kind = "ThrottlingException" if status == 429 else "ValidationException"
            headers["x-amzn-errortype"] = (
                f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"
            )
            return httpx2.Response(
                status, json={"message": ERROR_TYPES.get(status, kind)}, headers=headers
            )
        body = json.loads(request.content)
        assert "model" not in body, "the model is in the path"
        assert body["anthropic_version"], "the API version is in the body"
        final = message(body, number, self.tool_input)
        if found.group(2) == "invoke":
            return httpx2.Response(200, json=final, headers=headers)
        return httpx2.Response(
            200,
            content=event_stream(stream_events(final)),
            headers={**headers, "content-type": "application/vnd.amazon.eventstream"},
        )


class LocalVertex:
    """Claude on Vertex AI (under `/v1`). `requests` are those received."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        assert request.headers.get("authorization") == f"Bearer {GOOGLE_TOKEN}", "the token"
        number = len(self.requests)
        headers = {"request-id": f"req_vrtx_{number:04d}"}
        prefix = f"/v1/projects/{PROJECT}/locations/{REGION}/publishers/anthropic/models/"
        path = request.url.path
        if path == f"{prefix}count-tokens:rawPredict":
            return httpx2.Response(200, json={"input_tokens": 42}, headers=headers)
        if not path.startswith(prefix) or not path.endswith("Predict"):
            return httpx2.Response(404, json={"error": {"message": path}}, headers=headers)
        body = json.loads(request.content)
        assert "model" not in body, "the model is in the path"
        assert body["anthropic_version"], "the API version is in the body"
        final = message(body, number)
        if path.endswith(":streamRawPredict"):
            return httpx2.Response(
                200,
                content=sse(stream_events(final)),
                headers={**headers, "content-type": "text/event-stream; charset=utf-8"},
            )
        return httpx2.Response(200, json=final, headers=headers)
