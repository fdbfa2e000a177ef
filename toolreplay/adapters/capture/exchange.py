"""One HTTP exchange as an effect: the request's inputs, the response's output, and back.

Pure functions over plain values (no SDK, no HTTP library): the capturing
transports call them with what they read off the wire, and a `ProviderProfile`
says what differs between providers.

Inputs are what the request means to the API: method, the path relative to the
client's base URL, the query and the body as sent (and the request headers a
profile names, never a credential). Credential headers are never inputs, nor the
base URL (which can carry them too). The output is the status, the response
headers the profile keeps, and the body as received: JSON as JSON, a stream as
its ordered events, anything else as text or base64.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, cast

from toolreplay.adapters.capture.profile import ProviderProfile, StreamFormat, is_credential_header
from toolreplay.adapters.capture.sse import compact_json
from toolreplay.errors import AdapterOptionError, UnsupportedRequestError, UnsupportedResponseError
from toolreplay.jsonpath import parse_path
from toolreplay.portable import JsonValue, loads_checked

__all__ = [
    "REDACTED",
    "StreamEnd",
    "is_json",
    "is_secret_query_name",
    "kept_request_headers",
    "media_type",
    "recorded_headers",
    "recorded_response",
    "relative_path",
    "replayed_body",
    "request_inputs",
    "resource_effect_name",
]

StreamEnd = Literal["complete", "closed_early"]
"""How a recorded body ended: read to its end, or closed by the application before it."""

# Query parameters whose values are credentials in some deployments (an API gateway's
# `?key=`, a signed URL's `sig=`): their presence is recorded, never their value.
_SECRET_QUERY = re.compile(r"key|token|secret|sig|password|auth|credential", re.IGNORECASE)
REDACTED = "<redacted>"
"""What a credential-like query parameter's value is recorded as."""

_JSON_TYPES = ("application/json", "+json")
# How deep a JSON body sits in the output: $.body.
_BODY_DEPTH = 1


def is_secret_query_name(name: str) -> bool:
    """Whether a query parameter's value may be a credential (recorded as `<redacted>`)."""
    return _SECRET_QUERY.search(name) is not None


_WORD = re.compile(r"[a-z]+(?:_[a-z]+)*")


def resource_effect_name(
    method: str, segments: list[str], actions: frozenset[str] = frozenset()
) -> str:
    """The effect name of a request to a resource-shaped API, from its path's segments:
    `responses.create`, `models.list`, `messages.batches.cancel`.

    The path's words joined by dots, then a verb: `create` (POST) and `list` (GET) on a
    collection, `retrieve` (GET) and `update` (POST) on an item, `delete` for DELETE; a
    path ending in one of `actions` is named by it instead. A segment that is not a
    lowercase word (`v1`, `resp_123`, `gpt-4o`) is a version or a path parameter: it
    stays in the inputs' path and is left out of the name.
    """
    words = [segment for segment in segments if _WORD.fullmatch(segment)]
    if segments and segments[-1] in actions:
        return ".".join(words)
    on_item = bool(segments) and not _WORD.fullmatch(segments[-1])
    verb = method.lower()
    if verb == "post":
        verb = "update" if on_item else "create"
    elif verb == "get":
        verb = "retrieve" if on_item else "list"
    return ".".join([*words, verb]) if words else f"root.{verb}"


def relative_path(path: str, base_path: str) -> str:
    """`path` relative to the client's base URL path (`/v1/` + `responses` -> `/responses`)."""
    if base_path != "/" and path.startswith(base_path):
        return "/" + path[len(base_path) :]
    return path


def request_inputs(
    method: str,
    path: str,
    base_path: str,
    query: Iterable[tuple[str, str]],
    content_type: str | None,
    content: bytes,
    *,
    stable: Callable[[JsonValue], JsonValue] | None = None,
    headers: dict[str, JsonValue] | None = None,
) -> dict[str, JsonValue]:
    """The inputs of one request: method, relative path, query, headers and body.

    A JSON body is recorded as the JSON it is (after `stable`, a profile's
    `stable_body`). Any other body (a file upload) is recorded as its size and a
    SHA-256 digest, never its bytes; a multipart body's random boundary is replaced
    first, so the same upload has the same digest in every run. `headers` (the
    request headers a profile keeps, `kept_request_headers`) are the `headers`
    input when given.
    """
    relative = relative_path(path, base_path)
    params: dict[str, JsonValue] = {}
    for key, value in query:
        shown = REDACTED if is_secret_query_name(key) else value
        if key in params:
            earlier = params[key]
            params[key] = [*earlier, shown] if isinstance(earlier, list) else [earlier, shown]
        else:
            params[key] = shown
    inputs: dict[str, JsonValue] = {"method": method, "path": relative, "query": params}
    if headers is not None:
        inputs["headers"] = headers
    if not content:
        inputs["body"] = None
        return inputs
    if content_type is None or is_json(content_type):
        try:
            body = cast(JsonValue, json.loads(content))
        except ValueError:
            if content_type is not None:
                raise UnsupportedRequestError(
                    f"{method} {relative}: the request says it is JSON but its body does not "
                    "parse as JSON, so it cannot be recorded as an input; send valid JSON"
                ) from None
        else:
            inputs["body"] = body if stable is None else stable(body)
            return inputs
    normalized = content
    boundary = _multipart_boundary(content_type)
    if boundary:
        normalized = content.replace(boundary.encode("latin-1"), b"BOUNDARY")
    inputs["body_digest"] = {
        "content_type": media_type(content_type or "application/octet-stream"),
        # Base64, not hex: a hex digest's runs of decimal digits can read as a card
        # number to the secret scanner (RFC 0007), which would refuse the upload.
        "sha256_base64": base64.b64encode(hashlib.sha256(normalized).digest()).decode(),
        "size": len(content),
        "note": "not JSON: only this digest of the bytes is recorded, never the bytes",
    }
    return inputs


def kept_request_headers(
    profile: ProviderProfile, headers: Iterable[tuple[str, str]]
) -> dict[str, JsonValue]:
    """The request headers a profile records as inputs (names lowercased)."""
    wanted = profile.request_headers
    return {name.lower(): value for name, value in headers if name.lower() in wanted}


def media_type(content_type: str) -> str:
    """The media type of a content type header, lowercase, without its parameters."""
    return content_type.split(";", 1)[0].strip().lower()


def is_json(content_type: str) -> bool:
    """Whether a content type says JSON (`application/json`, `application/problem+json`)."""
    media = media_type(content_type)
    return media == _JSON_TYPES[0] or media.endswith(_JSON_TYPES[1])


def _multipart_boundary(content_type: str | None) -> str | None:
    if content_type is None or not media_type(content_type).startswith("multipart/"):
        return None
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    return match.group(1) if match else None


def recorded_headers(
    profile: ProviderProfile, headers: Iterable[tuple[str, str]]
) -> dict[str, JsonValue]:
    """The response headers a recording keeps (names lowercased): those the profile
    keeps, never a credential header."""
    kept: dict[str, JsonValue] = {}
    keeps = profile.keeps_response_header
    for name, value in headers:
        lower = name.lower()
        if keeps(lower) and not is_credential_header(lower):
            kept[lower] = value
    return kept


def recorded_response(
    profile: ProviderProfile,
    status: int,
    headers: Iterable[tuple[str, str]],
    content: bytes,
    end: StreamEnd,
    *,
    effect: str | None = None,
) -> tuple[dict[str, JsonValue], bool]:
    """The output of one exchange: status, kept headers and the body as received.

    Exactly one body key is present: `body` (JSON), `events` (a stream in the
    profile's format, with `tail` for bytes after the last complete event), `text`
    or `base64`. `end` says whether the body was read to its end. The second item
    says whether the output is known to be portable JSON (see
    `portable.loads_checked`); if not, it must still be checked. A JSON body of
    `effect` (the name after the namespace) has the credentials the profile names for it
    (`credential_outputs`) replaced by `<redacted>`.
    """
    kept = recorded_headers(profile, headers)
    output: dict[str, JsonValue] = {"status": status, "headers": kept}
    portable = True  # every string below is decoded UTF-8 or a header value
    content_type = kept.get("content-type")
    content_type = content_type if isinstance(content_type, str) else None
    stream = profile.stream_format
    if content_type is not None and stream.matches(media_type(content_type)):
        try:
            events, tail, portable = stream.parse(content)
        except ValueError:  # not such a stream after all: its bytes, as they came
            output["base64"] = base64.b64encode(content).decode("ascii")
        else:
            output["events"] = events
            if tail:
                output["tail"] = tail
        output["end"] = end
        return output, portable
    text: str | None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None:
        output["base64"] = base64.b64encode(content).decode("ascii")
    elif content_type is not None and is_json(content_type) and end == "complete" and text:
        try:
            output["body"], portable = loads_checked(text, depth=_BODY_DEPTH)
        except ValueError:
            output["text"] = text
    else:
        output["text"] = text
    if "body" in output and effect is not None:
        output["body"] = _without_credentials(profile, effect, output["body"])
    output["end"] = end
    return output, portable


def _without_credentials(profile: ProviderProfile, effect: str, body: JsonValue) -> JsonValue:
    """`body` with the values at the profile's credential paths for `effect` redacted."""
    for text in profile.credential_outputs.get(effect, ()):
        path = parse_path(text, what="credential path", error=AdapterOptionError)
        body = path.replace(body, lambda _value: REDACTED)
    return body


def replayed_body(operation: str, output: Mapping[str, JsonValue], stream: StreamFormat) -> bytes:
    """The body bytes a recorded output describes (its events, JSON, text or base64)."""
    if "events" in output:
        events = output["events"]
        tail = output.get("tail", "")
        if not isinstance(events, list) or not isinstance(tail, str):
            raise UnsupportedResponseError(
                f"{operation}: $.output.events must be a list of events and $.output.tail a "
                "string; re-record the call"
            )
        return stream.encode(operation, events, tail)
    if "body" in output:
        return compact_json(output["body"]).encode("utf-8")
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
        "was it recorded by a Tool Replay adapter? Re-record the call"
    )
