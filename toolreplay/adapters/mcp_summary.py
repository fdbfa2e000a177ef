"""The MCP adapter's call summaries: the server, the tool and its arguments, and the answer.

Registered for the `mcp` namespace (`toolreplay.summaries`): a tool call reads as
`weather · forecast(city="Oslo")` → `Snow, -4 C`. It reads only the values the MCP
adapter records (RFC 0009: the effect name `mcp.<server>.<method>`, the request's
params as inputs, `{"result": ...}` as output, a JSON-RPC error as a failure) and
never imports the `mcp` SDK: `toolreplay show` and the debugger read traces where it
is not installed. That is why it lives beside the `mcp` package rather than in it,
whose import checks the SDK.

The answer of a tool call is its first text block (and how many blocks of each other
kind followed), else its structured content; `tool error: ...` for a result with
`isError`; the JSON-RPC error's code and message, or how the request ended, for a
failure. Other requests say what they asked (`resources/read weather://stations`)
and what came back (`3 tools: forecast, outage, slow`). Each value is cut before it
is cleaned, so the work is bounded by what a summary shows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import cast

from toolreplay.portable import JsonValue, json_object
from toolreplay.summaries import SUMMARY_LIMIT, CallSummary, summary_text
from toolreplay.trace.model import Outcome, Raised, Returned

__all__ = ["summarize"]

_NAMESPACE = "mcp"
_VALUE = 30  # characters of one argument's value, so one long value hides no other
_NAME = 60  # characters of a name, a URI, a code
_TEXT = SUMMARY_LIMIT * 2  # characters of a text taken before it is cleaned and cut
_ENDINGS = {
    "mcp.ConnectionClosed": "connection closed",
    "mcp.Unanswered": "unanswered",
}


def summarize(effect: str, inputs: JsonValue, outcome: Outcome | None) -> CallSummary | None:
    """What an MCP request asked and what it answered, or None for another namespace."""
    namespace, _, rest = effect.partition(".")
    server, _, dotted = rest.partition(".")
    if namespace != _NAMESPACE or not server or not dotted:
        return None
    method = dotted.replace(".", "/")
    params = json_object(inputs) or {}
    return CallSummary(f"{server} · {_asked(method, params)}", _answered(method, outcome))


def _asked(method: str, params: Mapping[str, JsonValue]) -> str:
    if method == "tools/call":
        arguments = json_object(params.get("arguments")) or {}
        shown: list[str] = []
        for key, value in arguments.items():
            shown.append(f"{summary_text(key, _NAME)}={_json(value, _VALUE)}")
            if sum(map(len, shown)) > _TEXT:
                break
        return f"{_text(params.get('name'))}({', '.join(shown)})"
    if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        return f"{method} {_text(params.get('uri'))}"
    if method == "prompts/get":
        return f"prompt {_text(params.get('name'))}"
    return method


def _answered(method: str, outcome: Outcome | None) -> str:
    if isinstance(outcome, Raised):
        return _failure(outcome)
    if not isinstance(outcome, Returned):
        return ""
    result = json_object((json_object(outcome.value) or {}).get("result"))
    if result is None:
        return ""
    if method == "tools/call":
        blocks = _content(result.get("content"))
        if result.get("isError") is True:
            return f"tool error: {blocks or '(no text)'}"
        if blocks:
            return blocks
        structured = result.get("structuredContent")
        return _json(structured, _TEXT) if structured is not None else "(empty)"
    if method == "tools/list":
        names = [_text(tool.get("name")) for tool in _objects(result.get("tools"))]
        return f"{len(names)} tools: " + ", ".join(names[:6])
    if method == "resources/read":
        return _content(result.get("contents"))
    if method == "prompts/get":
        return f"{len(_objects(result.get('messages')))} messages"
    if method == "initialize":
        info = json_object(result.get("serverInfo")) or {}
        version = _text(result.get("protocolVersion"))
        return f"server {_text(info.get('name'))} (protocol {version})"
    return ""


def _failure(raised: Raised) -> str:
    envelope = json_object(raised.args[0]) if raised.args and len(raised.args) == 1 else None
    if raised.error_type == "mcp.JSONRPCError" and envelope is not None:
        code, message = envelope.get("code"), envelope.get("message")
        return f"JSON-RPC error {_text(code)}: {_text(message)[:_TEXT]}"
    ending = _ENDINGS.get(raised.error_type)
    if ending is not None:
        return ending
    return f"{raised.error_type.rpartition('.')[2]}: {raised.message[:_TEXT]}"


def _content(blocks: JsonValue | None) -> str:
    """Content blocks in a few words: the first text, and how many blocks of each other kind."""
    first: str | None = None
    texts = 0
    others: dict[str, int] = {}
    for block in _objects(blocks):
        text = block.get("text")
        if isinstance(text, str):
            texts += 1
            first = text[:_TEXT] if first is None else first
        else:
            kind = _text(block.get("type") or "block")
            others[kind] = others.get(kind, 0) + 1
    parts = [first] if first is not None else []
    if texts > 1:
        parts.append(f"+{texts - 1} text")
    parts.extend(f"{count} {kind}" for kind, count in sorted(others.items())[:6])
    return ", ".join(parts)


# --- values, as untrusted as the trace -------------------------------------------------


def _objects(value: JsonValue | None) -> list[dict[str, JsonValue]]:
    if not isinstance(value, list):
        return []
    return [cast(dict[str, JsonValue], item) for item in value[:1000] if isinstance(item, dict)]


def _text(value: JsonValue | None) -> str:
    """A name, a URI, a code: a string as it is, anything else as JSON; cut short."""
    return summary_text(value, _NAME) if isinstance(value, str) else _json(value, _NAME)


def _json(value: JsonValue | None, limit: int) -> str:
    if isinstance(value, str):
        value = value[: limit * 4]  # never encode more than the line can show
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, RecursionError):  # nested past what json can write
        text = "[…]"
    return summary_text(text, limit)
