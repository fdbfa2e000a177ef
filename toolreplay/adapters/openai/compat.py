"""Compatibility shims specific to openai==2.20.0, kept apart so they can be removed.

`Response.prompt_cache_retention` is typed `Literal["in-memory", "24h"]` in SDK
2.20.0, while the API sends `"in_memory"`; the SDK's own (non-validating)
parsing lets that through, but validating the body against the SDK's model, as
replay does, rejects it. Replay therefore maps the API's spelling to the SDK's
before validating. The envelope keeps what the API sent.
"""

from __future__ import annotations

from toolreplay.portable import JsonValue

__all__ = ["sdk_response_body"]

_PROMPT_CACHE_RETENTION = {"in_memory": "in-memory"}


def sdk_response_body(body: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """The body as SDK 2.20.0's `Response` model accepts it (a shallow copy if changed)."""
    retention = body.get("prompt_cache_retention")
    if isinstance(retention, str) and retention in _PROMPT_CACHE_RETENTION:
        return {**body, "prompt_cache_retention": _PROMPT_CACHE_RETENTION[retention]}
    return body
