"""AWS event streams as the capture core keeps them (capture/aws_event_stream.py): chunks
as the events they carry, exception frames, frames of another kind kept whole, a cut
stream's tail, and bodies that are not such a stream; every encoding read back by
botocore's own decoder, and a secret in a chunk found by the secret scan.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from anthropic.lib.bedrock import AnthropicBedrock
from botocore.eventstream import EventStreamBuffer

import toolreplay
from examples.local_anthropic import message, stream_events
from examples.local_anthropic.cloud import (
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    AWS_SESSION_TOKEN,
    BEDROCK_MODEL,
    event_stream,
)
from toolreplay.adapters.anthropic import instrument
from toolreplay.adapters.capture.aws_event_stream import BEDROCK_CHUNKS, frame
from toolreplay.errors import UnsupportedResponseError
from toolreplay.portable import JsonValue

ASK: Any = [{"role": "user", "content": "Refund order 8812."}]
EVENTS = stream_events(message({"messages": ASK}, 1))


def decoded(content: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """What botocore reads in `content`: each frame's headers and payload."""
    buffer = EventStreamBuffer()
    buffer.add_data(content)
    return [(dict(item.headers), item.payload) for item in buffer]


def test_chunks_are_kept_as_their_events_and_written_back_as_botocore_reads_them() -> None:
    content = event_stream(EVENTS)
    events, tail, portable = BEDROCK_CHUNKS.parse(content)
    assert events == [{"event": event["type"], "data": event} for event in EVENTS]
    assert (tail, portable) == ("", True)
    written = decoded(BEDROCK_CHUNKS.encode("op", events, tail))
    assert len(written) == len(EVENTS)
    for (headers, payload), event in zip(written, EVENTS, strict=True):
        assert headers[":event-type"] == "chunk"
        assert json.loads(base64.b64decode(json.loads(payload)["bytes"])) == event


def test_exceptions_other_frames_and_a_cut_stream() -> None:
    exception = frame(
        {":exception-type": "throttlingException", ":content-type": "application/json",
         ":message-type": "exception"},
        b'{"message":"Too many requests"}',
    )  # fmt: skip
    other = frame({":message-type": "event", ":event-type": "metadata"}, b"\x00\x01")
    content = event_stream(EVENTS[:2]) + exception + other + event_stream(EVENTS[2:3])[:20]
    events, tail, _ = BEDROCK_CHUNKS.parse(content)
    assert events[2] == {
        "exception": "throttlingException",
        "data": {"message": "Too many requests"},
    }
    assert events[3] == {"raw": base64.b64encode(other).decode()}
    assert base64.b64decode(tail) == event_stream(EVENTS[2:3])[:20]
    # Written back: chunks anew (without their padding), other frames and the cut as
    # they came; read again, the same.
    written = BEDROCK_CHUNKS.encode("op", events, tail)
    assert exception + other in written
    assert written.endswith(event_stream(EVENTS[2:3])[:20])
    assert BEDROCK_CHUNKS.parse(written) == (events, tail, True)
    assert len(decoded(written)) == 4


def test_a_body_that_is_not_an_event_stream_and_a_bad_recording() -> None:
    broken = bytearray(event_stream(EVENTS[:1]))
    broken[-1] ^= 0xFF  # the frame's checksum no longer holds
    with pytest.raises(ValueError, match="checksum"):
        BEDROCK_CHUNKS.parse(bytes(broken))
    with pytest.raises(UnsupportedResponseError, match=r"events\[0\] is not an event"):
        BEDROCK_CHUNKS.encode("anthropic.messages.create", [{"event": "x"}], "")
    bad: list[JsonValue] = []
    with pytest.raises(UnsupportedResponseError, match="tail is not base64"):
        BEDROCK_CHUNKS.encode("anthropic.messages.create", bad, "%%")


def test_a_secret_in_a_bedrock_chunk_is_refused_before_it_is_written(tmp_path: Path) -> None:
    key = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    final = message({"messages": ASK}, 1)
    final["content"] = [{"type": "text", "text": f"the key is {key}"}]

    def answer(request: Any) -> Any:
        headers = {"content-type": "application/vnd.amazon.eventstream"}
        return httpx2.Response(200, content=event_stream(stream_events(final)), headers=headers)

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    client = instrument(
        AnthropicBedrock(
            aws_access_key=AWS_ACCESS_KEY,
            aws_secret_key=AWS_SECRET_KEY,
            aws_session_token=AWS_SESSION_TOKEN,
            aws_region="us-east-1",
            http_client=http,
        )
    )
    trace = tmp_path / "bedrock.trp"
    with pytest.raises(toolreplay.SecretInTraceError) as raised:
        with toolreplay.record(trace):
            with client.messages.stream(model=BEDROCK_MODEL, max_tokens=64, messages=ASK) as s:
                s.until_done()
    assert [f.path for f in raised.value.findings] == ["$.events[*].data.delta.text"]
    assert b"K1l2M3n" not in trace.read_bytes()
