"""One HTTP exchange as an effect: the request's inputs, the response's output, and back.

Pure functions over plain values (no SDK, no HTTP library): the transports in
`transport.py` call them with what they read off the wire.

Inputs are what the request means to the API: method, the path relative to the
client's base URL, the query and the body as sent. Headers are never inputs
(they carry the credentials), nor the host or the base URL (which can carry
them too). Output is the status, a few response headers the SDK or the
application act on, and the body as received: JSON as JSON, server-sent events
as the ordered list of events, anything else as text or base64.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Literal, cast

from toolreplay.errors import UnsupportedRequestError, UnsupportedResponseError
from toolreplay.portable import JsonValue, loads_checked

__all__ = [
    "EFFECT_NAMESPACE",
    "PER_RUN_CACHE_KEY",
    "RECORDED_RESPONSE_HEADERS",
    "StreamEnd",
    "effect_name",
    "event_stream_bytes",
    "is_event_stream",
    "is_secret_query_name",
    "recorded_response",
    "replayed_body",
    "request_inputs",
]

EFFECT_NAMESPACE = "openai"

RECORDED_RESPONSE_HEADERS = frozenset(
    {
        "content-type",
        "x-request-id",
        # The SDK's retry decisions read these; without them a replayed error would be
        # retried (or not) differently than it was live.
        "x-should-retry",
        "retry-after",
        "retry-after-ms",
        "openai-processing-ms",
        "openai-version",
    }
)
"""Response headers kept in a recording (lowercase). Everything else is left out."""
_RECORDED_HEADER_PREFIXES = ("x-ratelimit-",)

StreamEnd = Literal["complete", "closed_early"]
"""How a recorded body ended: read to its end, or closed by the application before it."""

# Query parameters whose values are credentials in some deployments (an API gateway's
# `?key=`, a signed URL's `sig=`): their presence is recorded, never their value.
_SECRET_QUERY = re.compile(r"key|token|secret|sig|password|auth|credential", re.IGNORECASE)
REDACTED = "<redacted>"

_WORD = re.compile(r"[a-z]+(?:_[a-z]+)*")
# The Agents SDK sends a fresh random `prompt_cache_key` for every run that has no
# conversation, session or group: it only groups the run's turns for caching, and would
# make every run a different request. It is recorded as this placeholder.
_PER_RUN_CACHE_KEY = re.compile(r"agents-sdk:run:[0-9a-f]{32}")
PER_RUN_CACHE_KEY = "agents-sdk:run:<per-run>"
_JSON_TYPES = ("application/json", "+json")


def is_secret_query_name(name: str) -> bool:
    """Whether a query parameter's value may be a credential (recorded as `<redacted>`)."""
    return _SECRET_QUERY.search(name) is not None


def _relative_path(path: str, base_path: str) -> str:
    if base_path != "/" and path.startswith(base_path):
        return "/" + path[len(base_path) :]
    return path


def effect_name(method: str, path: str) -> str:
    """The effect's name (after `openai.`) for a request: `responses.create`, `models.list`.

    The name is the path's words joined by dots, then a verb: `create` (POST) and
    `list` (GET) on a collection, `retrieve` (GET), `update` (POST) on an item,
    `delete` for DELETE. A segment that is not a lowercase word (`resp_123`,
    `gpt-4o`, `file-abc`) is a path parameter: it stays in the inputs' path and
    is left out of the name. Azure's leading `deployments/<name>` is left out too.
    """
    segments = [segment for segment in path.split("/") if segment]
    if len(segments) >= 2 and segments[0] == "deployments":
        segments = segments[2:]
    words = [segment for segment in segments if _WORD.fullmatch(segment)]
    on_item = bool(segments) and not _WORD.fullmatch(segments[-1])
    verb = method.lower()
    if verb == "post":
        verb = "update" if on_item else "create"
    elif verb == "get":
        verb = "retrieve" if on_item else "list"
    return ".".join([*words, verb]) if words else f"root.{verb}"


def request_inputs(
    method: str,
    path: str,
    base_path: str,
    query: Iterable[tuple[str, str]],
    content_type: str | None,
    content: bytes,
) -> dict[str, JsonValue]:
    """The inputs of one request: method, relative path, query and body.

    A JSON body is recorded as the JSON it is. Any other body (a file upload) is
    recorded as its size and a SHA-256 digest, never its bytes; a multipart
    body's random boundary is replaced first, so the same upload has the same
    digest in every run.
    """
    relative = _relative_path(path, base_path)
    params: dict[str, JsonValue] = {}
    for key, value in query:
        shown = REDACTED if is_secret_query_name(key) else value
        if key in params:
            earlier = params[key]
            params[key] = [*earlier, shown] if isinstance(earlier, list) else [earlier, shown]
        else:
            params[key] = shown
    inputs: dict[str, JsonValue] = {"method": method, "path": relative, "query": params}
    if not content:
        inputs["body"] = None
        return inputs
    if content_type is None or _is_json(content_type):
        try:
            inputs["body"] = _stable(cast(JsonValue, json.loads(content)))
        except ValueError:
            if content_type is not None:
                raise UnsupportedRequestError(
                    f"{method} {relative}: the request says it is JSON but its body does not "
                    "parse as JSON, so it cannot be recorded as an input; send valid JSON"
                ) from None
        else:
            return inputs
    normalized = content
    boundary = _multipart_boundary(content_type)
    if boundary:
        normalized = content.replace(boundary.encode("latin-1"), b"BOUNDARY")
    inputs["body_digest"] = {
        "content_type": _media_type(content_type or "application/octet-stream"),
        # Base64, not hex: a hex digest's runs of decimal digits can read as a card
        # number to the secret scanner (RFC 0007), which would refuse the upload.
        "sha256_base64": base64.b64encode(hashlib.sha256(normalized).digest()).decode(),
        "size": len(content),
        "note": "not JSON: only this digest of the bytes is recorded, never the bytes",
    }
    return inputs


def _stable(body: JsonValue) -> JsonValue:
    """The body with the Agents SDK's per-run cache key replaced (see `PER_RUN_CACHE_KEY`)."""
    if isinstance(body, dict):
        key = body.get("prompt_cache_key")
        if isinstance(key, str) and _PER_RUN_CACHE_KEY.fullmatch(key):
            body["prompt_cache_key"] = PER_RUN_CACHE_KEY
    return body


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _is_json(content_type: str) -> bool:
    media = _media_type(content_type)
    return media == _JSON_TYPES[0] or media.endswith(_JSON_TYPES[1])


def _multipart_boundary(content_type: str | None) -> str | None:
    if content_type is None or not _media_type(content_type).startswith("multipart/"):
        return None
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    return match.group(1) if match else None


def is_event_stream(content_type: str | None) -> bool:
    """Whether a response is server-sent events (a stream the SDK iterates)."""
    return content_type is not None and _media_type(content_type) == "text/event-stream"


def recorded_headers(headers: Iterable[tuple[str, str]]) -> dict[str, JsonValue]:
    """The response headers a recording keeps (names lowercased)."""
    kept: dict[str, JsonValue] = {}
    for name, value in headers:
        lower = name.lower()
        if lower in RECORDED_RESPONSE_HEADERS or lower.startswith(_RECORDED_HEADER_PREFIXES):
            kept[lower] = value
    return kept


def recorded_response(
    status: int,
    headers: Iterable[tuple[str, str]],
    content: bytes,
    end: StreamEnd,
) -> tuple[dict[str, JsonValue], bool]:
    """The output of one exchange: status, kept headers and the body as received.

    Exactly one body key is present: `body` (JSON), `events` (server-sent
    events, with `tail` for bytes after the last complete event), `text` or
    `base64`. `end` says whether the body was read to its end. The second item
    says whether the output is known to be portable JSON (see
    `portable.loads_checked`); if not, it must still be checked.
    """
    kept = recorded_headers(headers)
    output: dict[str, JsonValue] = {"status": status, "headers": kept}
    portable = True  # every string below is decoded UTF-8 or a header value
    content_type = kept.get("content-type")
    content_type = content_type if isinstance(content_type, str) else None
    text: str | None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None:
        output["base64"] = base64.b64encode(content).decode("ascii")
    elif is_event_stream(content_type):
        events, tail, portable = _parse_events(text)
        output["events"] = events
        if tail:
            output["tail"] = tail
    elif content_type is not None and _is_json(content_type) and end == "complete" and text:
        try:
            output["body"], portable = loads_checked(text, depth=_BODY_DEPTH)
        except ValueError:
            output["text"] = text
    else:
        output["text"] = text
    output["end"] = end
    return output, portable


_EVENT_SEPARATOR = re.compile(r"\r\n\r\n|\n\n|\r\r")
_LINE = re.compile(r"\r\n|\n|\r")
_FIELDS = ("event", "data", "id", "retry")
# How deep a JSON body sits in the output: $.body, and $.events[i].data.
_BODY_DEPTH = 1
_EVENT_DATA_DEPTH = 3


def _parse_events(text: str) -> tuple[list[JsonValue], str, bool]:
    """Complete events, the text after the last one (a cut stream's partial event), and
    whether every event is known to be portable JSON (see `recorded_response`)."""
    if "\r" in text:
        blocks = _EVENT_SEPARATOR.split(text)
        split_lines = _LINE.split
    else:  # what servers send: the same split, at the speed of str.split
        blocks = text.split("\n\n")
        split_lines = _split_newlines
    tail = blocks.pop()  # after the last separator: empty unless the stream was cut
    events: list[JsonValue] = []
    portable = True
    for block in blocks:
        if block:
            event, checked = _event(split_lines(block), block)
            events.append(event)
            portable = portable and checked
    return events, tail, portable


def _split_newlines(block: str) -> list[str]:
    return block.split("\n")


def _event(lines: list[str], block: str) -> tuple[JsonValue, bool]:
    if len(lines) == 2:  # what the API sends: `event: <type>` then one `data: <json>`
        first, second = lines
        if first.startswith("event:") and second.startswith("data:"):
            data = second[5:].removeprefix(" ")
            try:
                parsed, portable = loads_checked(data, depth=_EVENT_DATA_DEPTH)
            except ValueError:
                pass  # not JSON: the general reading below keeps it as data_text
            else:
                return {"event": first[6:].removeprefix(" "), "data": parsed}, portable
    fields: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or name not in _FIELDS or (name in fields and name != "data"):
            return {"raw": block}, True  # comments, unknown or repeated fields: kept verbatim
        value = value.removeprefix(" ")
        fields[name] = f"{fields[name]}\n{value}" if name in fields else value
    event: dict[str, JsonValue] = {}
    portable = True
    for name, value in fields.items():
        if name == "data":
            try:
                parsed, portable = loads_checked(value, depth=_EVENT_DATA_DEPTH)
            except ValueError:
                event["data_text"] = value  # e.g. Chat Completions' closing [DONE]
            else:
                # Replay re-encodes it compactly: the SDK decodes the same JSON value.
                event["data"] = parsed
        else:
            event[name] = value
    return event, portable


# Built once: json.dumps with options builds a new encoder on every call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _dump(value: JsonValue) -> str:
    return _COMPACT.encode(value)


def event_stream_bytes(operation: str, events: list[JsonValue], tail: str) -> bytes:
    """The bytes of recorded events, as the SDK's event-stream decoder reads them."""
    parts: list[str] = []
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            raise UnsupportedResponseError(
                f"{operation}: $.output.events[{index}] is not an object; re-record the "
                "call, or restore the event from the original recording"
            )
        raw = event.get("raw")
        if isinstance(raw, str):
            parts.append(f"{raw}\n\n")
            continue
        lines: list[str] = []
        for name, value in event.items():
            if name == "data":
                # Compact JSON holds no line break (JSON escapes them in strings).
                lines.append(f"data: {_dump(value)}")
                continue
            if name == "data_text" and isinstance(value, str):
                text, name = value, "data"
            elif name in _FIELDS and isinstance(value, str):
                text = value
            else:
                raise UnsupportedResponseError(
                    f"{operation}: $.output.events[{index}].{name} is not a server-sent "
                    "event field (event, data, data_text, id, retry, raw) of the right type; "
                    "fix the event or re-record the call"
                )
            lines.extend(f"{name}: {line}" for line in _LINE.split(text))
        parts.append("\n".join(lines) + "\n\n")
    parts.append(tail)
    return "".join(parts).encode("utf-8")


def replayed_body(operation: str, output: Mapping[str, JsonValue]) -> bytes:
    """The body bytes a recorded output describes (its events, JSON, text or base64)."""
    if "events" in output:
        events = output["events"]
        tail = output.get("tail", "")
        if not isinstance(events, list) or not isinstance(tail, str):
            raise UnsupportedResponseError(
                f"{operation}: $.output.events must be a list of events and $.output.tail a "
                "string; re-record the call"
            )
        return event_stream_bytes(operation, events, tail)
    if "body" in output:
        return _dump(output["body"]).encode("utf-8")
    text = output.get("text")
    if isinstance(text, str):
        return text.encode("utf-8")
    encoded = output.get("base64")
    if isinstance(encoded, str):
        try:
            return base64.b64decode(encoded, validate=True)
        except ValueError:
            raise UnsupportedResponseError(
                f"{operation}: $.output.base64 is not valid base64; re-record the call"
            ) from None
    raise UnsupportedResponseError(
        f"{operation}: the recorded output has no body (one of body, events, text, base64); "
        "was it recorded by the Tool Replay OpenAI adapter? Re-record the call"
    )
