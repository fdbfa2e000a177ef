"""AWS event streams (`application/vnd.amazon.eventstream`) as ordered JSON events, and back.

Amazon Bedrock streams a model's answer (`InvokeModelWithResponseStream`) as binary
frames, not server-sent events: each frame is its total and header lengths, a CRC32 of
those, typed headers (`:message-type`, `:event-type`, `:content-type`, ...), a payload
and a CRC32 of the whole frame. A `chunk` event's payload is JSON whose `bytes` member
holds, in base64, the JSON event the provider streams (for Claude on Bedrock, the same
events as the Messages API: `message_start`, `content_block_delta`, ...).

A recording keeps each chunk as the event it carries, `{"event": <its type>, "data":
<JSON>}`, exactly as the SSE format keeps a Messages stream, so a Bedrock stream reads,
summarizes, edits and is answered by `reply(...)` as the first-party API's does. An
exception frame is `{"exception": <its type>, "data": <JSON payload>}`; any other frame
is kept whole, `{"raw": <base64>}`; bytes after the last complete frame (a cut stream)
are `tail`, in base64. Replay writes the frames again, with their CRCs, so the SDK's
decoder (botocore's) reads the same events. A chunk's `p` member (padding of random
length the service adds to hide the size of each event) is not kept.

`BEDROCK_CHUNKS` is the `StreamFormat` (see `profile.py`).
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
from typing import cast

from toolreplay.adapters.capture.sse import compact_json
from toolreplay.errors import UnsupportedResponseError
from toolreplay.portable import JsonValue, loads_checked

__all__ = ["BEDROCK_CHUNKS", "AwsEventStreamFormat", "frame"]

_PRELUDE = struct.Struct(">II")
_CRC = struct.Struct(">I")
_STRING = 7  # the header value type of a string: a 2-byte length, then UTF-8
# How deep a chunk's JSON sits in an output: $.events[i].data.
_EVENT_DATA_DEPTH = 3


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream frame with string `headers` and `payload`, its CRCs computed."""
    encoded = b""
    for name, value in headers.items():
        encoded += bytes([len(name)]) + name.encode() + bytes([_STRING])
        encoded += struct.pack(">H", len(value.encode())) + value.encode()
    total = _PRELUDE.size + _CRC.size + len(encoded) + len(payload) + _CRC.size
    prelude = _PRELUDE.pack(total, len(encoded))
    head = prelude + _CRC.pack(binascii.crc32(prelude)) + encoded + payload
    return head + _CRC.pack(binascii.crc32(head))


def _headers(data: bytes) -> dict[str, str] | None:
    """A frame's headers when all are strings (as Bedrock sends them), else None."""
    headers: dict[str, str] = {}
    position = 0
    while position < len(data):
        size = data[position]
        name = data[position + 1 : position + 1 + size]
        position += 1 + size
        if position + 3 > len(data) or data[position] != _STRING:
            return None
        (length,) = struct.unpack_from(">H", data, position + 1)
        value = data[position + 3 : position + 3 + length]
        position += 3 + length
        try:
            headers[name.decode()] = value.decode()
        except UnicodeDecodeError:
            return None
    return headers


def _event(raw: bytes, headers: dict[str, str] | None, payload: bytes) -> tuple[JsonValue, bool]:
    """What a recording keeps of one complete frame, and whether it is known portable."""
    whole: JsonValue = {"raw": base64.b64encode(raw).decode("ascii")}
    if headers is None:
        return whole, True
    kind = headers.get(":message-type")
    try:
        body, portable = loads_checked(payload.decode(), depth=_EVENT_DATA_DEPTH)
    except ValueError:
        return whole, True
    if kind == "exception" and ":exception-type" in headers:
        return {"exception": headers[":exception-type"], "data": body}, portable
    if kind != "event" or headers.get(":event-type") != "chunk" or not isinstance(body, dict):
        return whole, True
    inner = body.get("bytes")
    if not isinstance(inner, str) or body.keys() - {"bytes", "p"}:
        return whole, True
    try:
        data, portable = loads_checked(
            base64.b64decode(inner, validate=True).decode(), depth=_EVENT_DATA_DEPTH
        )
    except ValueError:
        return whole, True
    kind = data.get("type") if isinstance(data, dict) else None
    if not isinstance(kind, str):
        return whole, True
    return {"event": kind, "data": data}, portable


class AwsEventStreamFormat:
    """`application/vnd.amazon.eventstream` with Bedrock's chunks, as `StreamFormat`."""

    name = "aws-event-stream"
    binary = True

    def matches(self, media_type: str) -> bool:
        """Whether a response of this media type (lowercase, no parameters) is a stream."""
        return media_type == "application/vnd.amazon.eventstream"

    def parse(self, content: bytes) -> tuple[list[JsonValue], str, bool]:
        """Complete frames as events, the bytes after the last one (in base64), and
        whether every event is known to be portable JSON. A frame whose CRCs do not
        hold is a ValueError: the body is then kept as bytes."""
        events: list[JsonValue] = []
        portable = True
        position = 0
        while len(content) - position >= _PRELUDE.size + _CRC.size:
            total, header_size = _PRELUDE.unpack_from(content, position)
            if len(content) - position < total:
                break  # cut midway: the rest is the tail
            raw = content[position : position + total]
            (prelude_crc,) = _CRC.unpack_from(raw, _PRELUDE.size)
            (crc,) = _CRC.unpack_from(raw, total - _CRC.size)
            if (
                total < 16 + header_size
                or binascii.crc32(raw[: _PRELUDE.size]) != prelude_crc
                or binascii.crc32(raw[: total - _CRC.size]) != crc
            ):
                raise ValueError("not an AWS event stream: a frame's checksum does not hold")
            start = _PRELUDE.size + _CRC.size
            headers = _headers(raw[start : start + header_size])
            event, checked = _event(raw, headers, raw[start + header_size : total - _CRC.size])
            events.append(event)
            portable = portable and checked
            position += total
        tail = base64.b64encode(content[position:]).decode("ascii")
        return events, tail, portable

    def encode(self, operation: str, events: list[JsonValue], tail: str) -> bytes:
        """The frames of recorded events, as the SDK's event-stream decoder reads them."""
        parts: list[bytes] = []
        for index, event in enumerate(events):
            parts.append(_encoded(operation, index, event))
        try:
            parts.append(base64.b64decode(tail, validate=True))
        except ValueError:
            raise UnsupportedResponseError(
                f"{operation}: $.output.tail is not base64 (the bytes after the last frame "
                "of an AWS event stream); re-record the call"
            ) from None
        return b"".join(parts)


def _encoded(operation: str, index: int, event: JsonValue) -> bytes:
    problem = (
        f"{operation}: $.output.events[{index}] is not an event of an AWS event stream "
        "(event and data, exception and data, or raw); fix the event or re-record the call"
    )
    if not isinstance(event, dict):
        raise UnsupportedResponseError(problem)
    shape = cast(dict[str, JsonValue], event)
    if shape.keys() == {"raw"} and isinstance(shape["raw"], str):
        try:
            return base64.b64decode(shape["raw"], validate=True)
        except ValueError:
            raise UnsupportedResponseError(problem) from None
    if shape.keys() == {"event", "data"} and isinstance(shape["event"], str):
        chunk = base64.b64encode(compact_json(shape["data"]).encode()).decode("ascii")
        headers = {
            ":event-type": "chunk",
            ":content-type": "application/json",
            ":message-type": "event",
        }
        return frame(headers, json.dumps({"bytes": chunk}).encode())
    if shape.keys() == {"exception", "data"} and isinstance(shape["exception"], str):
        headers = {
            ":exception-type": shape["exception"],
            ":content-type": "application/json",
            ":message-type": "exception",
        }
        return frame(headers, compact_json(shape["data"]).encode())
    raise UnsupportedResponseError(problem)


BEDROCK_CHUNKS = AwsEventStreamFormat()
"""Amazon Bedrock's response streams (`application/vnd.amazon.eventstream`)."""
