"""What the Google Gen AI profile adds to the capture core: effect names and kept headers.

- an effect is named after the API method its path names (`effect_name`):
  `models.generate_content`, `models.stream_generate_content`, `models.count_tokens`,
  `cached_contents.create`, `files.upload`;
- the response headers kept are those the SDK or the application act on
  (`RECORDED_RESPONSE_HEADERS`: the content type, a retry delay, the resumable-upload
  protocol's `x-goog-upload-*`);
- the request headers of the resumable-upload protocol are inputs (`REQUEST_HEADERS`:
  which step of an upload a request is), and an upload's bytes are recorded by digest
  though the SDK labels them JSON (`body_type`); `x-goog-api-key`, `Authorization` and a `key=`
  query parameter never are, nor recorded anywhere (the core's credential rules);
- a function call id the client made up (the Gemini API gives none) is recorded by
  its order in the request (`stable_body`), so a run replays though ids differ per run;
- the ephemeral token `auth_tokens.create` answers is recorded as `<redacted>`
  (`CREDENTIAL_OUTPUTS`).

Pure functions over plain values (no SDK, no HTTP library).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from toolreplay.portable import JsonValue

__all__ = [
    "CREDENTIAL_OUTPUTS",
    "EFFECT_NAMESPACE",
    "RECORDED_RESPONSE_HEADERS",
    "REQUEST_HEADERS",
    "TRANSPORT_ERROR_ENVELOPE",
    "body_type",
    "effect_name",
    "keeps_response_header",
    "stable_body",
]

EFFECT_NAMESPACE = "google_genai"

RECORDED_RESPONSE_HEADERS = frozenset({"content-type", "retry-after"})
"""Response headers kept in a recording (lowercase), with `x-goog-upload-*` (the SDK reads
the upload URL and status from them). No other: `x-goog-*` headers can name the project,
and the rest are the server's bookkeeping."""
_RECORDED_HEADER_PREFIXES = ("x-goog-upload-",)

REQUEST_HEADERS = frozenset(
    {
        "x-goog-upload-protocol",
        "x-goog-upload-command",
        "x-goog-upload-offset",
        "x-goog-upload-header-content-length",
        "x-goog-upload-header-content-type",
    }
)
"""Request headers recorded as the `headers` input: the step of a resumable upload (start,
upload, finalize, at which offset) a request is, which its body alone does not say."""

CREDENTIAL_OUTPUTS = {"auth_tokens.create": ("$.name",)}
"""Where a response holds a credential the API issues, recorded as `<redacted>`: an
ephemeral token's name (`auth_tokens/...`) is the token a Live API client connects with."""

TRANSPORT_ERROR_ENVELOPE = "google_genai.transport_error"
"""The envelope of a recorded transport failure (`httpx.<Class>`) of this adapter."""

_VERSION = re.compile(r"v\d+(?:(?:alpha|beta)\d*)?")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")  # `auth_tokens` is a collection too
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _snake(word: str) -> str:
    return _CAMEL.sub("_", word).lower()


def effect_name(method: str, path: str) -> str:
    """The effect's name (after `google_genai.`) for a request: `models.generate_content`.

    Google's paths are resource names (AIP-122): collections and ids alternate
    (`models/gemini-2.5-flash`, `tunedModels/t1/operations/o1`), and a custom method
    follows a colon (`models/gemini-2.5-flash:generateContent`). The name is the
    collections in snake case joined by dots, then the custom method in snake case, or
    else a standard method: `get` or `list` (GET on an item or a collection), `create`
    (POST), `update` (PATCH, or POST on an item), `delete`. Left out of the name, and
    kept in the inputs' path: the API version (`v1beta`), the ids, Vertex AI's
    `projects/{p}/locations/{l}/` and `publishers/google/`. A path under `upload/` (a
    resumable upload's steps) is named `<collection>.upload`.
    """
    segments = [segment for segment in path.split("/") if segment]
    upload = bool(segments) and segments[0] == "upload"
    if upload:
        segments = segments[1:]
    if segments and _VERSION.fullmatch(segments[0]):
        segments = segments[1:]
    if len(segments) >= 4 and segments[0] == "projects" and segments[2] == "locations":
        segments = segments[4:]  # Vertex AI: the project's resources in a location
    if len(segments) >= 2 and segments[0] == "publishers":
        segments = segments[2:]  # Vertex AI: Google's own models
    action = ""
    if segments and ":" in segments[-1]:
        last, _, action = segments[-1].partition(":")
        segments[-1] = last
        if not last:
            segments.pop()
    words = [_snake(word) for word in segments[0::2] if _WORD.fullmatch(word)]
    on_item = len(segments) % 2 == 0 and bool(segments)
    if action and _WORD.fullmatch(action):
        verb = _snake(action)
    elif upload:
        verb = "upload"
    else:
        verb = {
            "GET": "get" if on_item else "list",
            "POST": "update" if on_item else "create",
            "PATCH": "update",
            "PUT": "update",
            "DELETE": "delete",
        }.get(method.upper(), method.lower())
        if not _WORD.fullmatch(verb):
            verb = "request"
    return ".".join([*words, verb]) if words else f"root.{verb}"


def keeps_response_header(name: str) -> bool:
    """Whether a response header (lowercase name) is kept in the output."""
    return name in RECORDED_RESPONSE_HEADERS or name.startswith(_RECORDED_HEADER_PREFIXES)


def body_type(content_type: str | None, headers: Mapping[str, str]) -> str | None:
    """The content type a request body is recorded by: a resumable upload's bytes are
    bytes (recorded by digest), though the SDK sends them with its JSON content type."""
    if "upload" in headers.get("x-goog-upload-command", ""):
        return "application/octet-stream"
    return content_type


# pydantic-ai gives a function call the API sent without an id one of its own,
# `pyd_ai_<uuid4 hex>`, and sends it back on the call and its response: fresh every run.
_MADE_UP_CALL_ID = re.compile(r"pyd_ai_[0-9a-f]{32}")
_CALL_PARTS = ("functionCall", "functionResponse")


def stable_body(body: JsonValue) -> JsonValue:
    """The body with each made-up function call id (see `_MADE_UP_CALL_ID`) replaced by
    `<call-N>`, N its order of first appearance in the request: which response answers
    which call is kept, the per-run randomness is not."""
    if not isinstance(body, dict):
        return body
    contents = body.get("contents")
    numbers: dict[str, str] = {}
    for content in contents if isinstance(contents, list) else []:
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            for key in _CALL_PARTS:
                call = part.get(key) if isinstance(part, dict) else None
                given = call.get("id") if isinstance(call, dict) else None
                if (
                    isinstance(call, dict)
                    and isinstance(given, str)
                    and _MADE_UP_CALL_ID.fullmatch(given)
                ):
                    call["id"] = numbers.setdefault(given, f"<call-{len(numbers) + 1}>")
    return body
