"""What an MCP call was, in a line: the server, the tool and its arguments, and the answer.

`weather · forecast(city="Oslo") → Snow, -4 C`. It reads only the values the MCP
adapter records (RFC 0009: the effect name `mcp.<server>.<method>`, the request's
params as inputs, `{"result": ...}` as output, a JSON-RPC error as a failure) and
never imports the `mcp` SDK: the command line and the debugger read traces where
it is not installed. That is why it lives beside the `mcp` package rather than in
it, whose import checks the SDK.

Traces are untrusted: any portable value gives a line or None, never an error,
and the line is bounded and holds no control character, whatever the trace holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import cast

from toolreplay.portable import JsonValue
from toolreplay.trace.model import Outcome, Raised, Returned

__all__ = ["SUMMARY_LIMIT", "summarize_operation"]

SUMMARY_LIMIT = 100
"""Characters a summary line holds at most, unless the caller asks for another limit."""

_NAMESPACE = "mcp"
_VALUE = 30  # characters of one argument's value
_ANSWER = 60  # characters of the answer's text or structured content
_ERROR_TYPES = {
    "mcp.JSONRPCError": "JSON-RPC error",
    "mcp.ConnectionClosed": "connection closed",
    "mcp.Unanswered": "unanswered",
}


def summarize_operation(
    effect: str, inputs: JsonValue, outcome: Outcome | None, *, limit: int = SUMMARY_LIMIT
) -> str | None:
    """`weather · forecast(city="Oslo") → Snow, -4 C`, or None when `effect` is not MCP's.

    `outcome` is the call's recorded outcome (None for a call with none yet): the
    first text block or the structured content of a tool's result, `tool error: ...`
    for a result with `isError`, the JSON-RPC error's code and message for a failure.
    """
    namespace, _, rest = effect.partition(".")
    server, _, dotted = rest.partition(".")
    if namespace != _NAMESPACE or not server or not dotted:
        return None
    method = dotted.replace(".", "/")
    params = _object(inputs) or {}
    asked = f"{server} · {_asked(method, params)}"
    answered = _answered(method, outcome)
    return _bounded(asked if answered is None else f"{asked} → {answered}", limit)


def _asked(method: str, params: Mapping[str, JsonValue]) -> str:
    if method == "tools/call":
        arguments = _object(params.get("arguments")) or {}
        shown = ", ".join(f"{key}={_json(value, _VALUE)}" for key, value in arguments.items())
        return f"{_text(params.get('name'))}({shown})"
    if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        return f"{method} {_text(params.get('uri'))}"
    if method == "prompts/get":
        return f"prompt {_text(params.get('name'))}"
    return method


def _answered(method: str, outcome: Outcome | None) -> str | None:
    if isinstance(outcome, Raised):
        return _failure(outcome)
    if not isinstance(outcome, Returned):
        return None
    output = _object(outcome.value) or {}
    result = _object(output.get("result"))
    if result is None:
        return None
    if method == "tools/call":
        summary = _content_summary(result.get("content"))
        if result.get("isError") is True:
            return f"tool error: {summary or '(no text)'}"
        if summary:
            return summary
        structured = result.get("structuredContent")
        return _json(structured, _ANSWER) if structured is not None else "(empty)"
    if method == "tools/list":
        names = [_text(tool.get("name")) for tool in _objects(result.get("tools"))]
        return f"{len(names)} tools: " + ", ".join(names[:6])
    if method == "resources/read":
        return _content_summary(result.get("contents"))
    if method == "prompts/get":
        return f"{len(_objects(result.get('messages')))} messages"
    if method == "initialize":
        info = _object(result.get("serverInfo")) or {}
        return f"server {_text(info.get('name'))} (protocol {_text(result.get('protocolVersion'))})"
    return None


def _failure(raised: Raised) -> str:
    kind = _ERROR_TYPES.get(raised.error_type, raised.error_type)
    envelope = _object(raised.args[0]) if raised.args else None
    if envelope is not None and raised.error_type == "mcp.JSONRPCError":
        return f"{kind} {_text(envelope.get('code'))}: {_text(envelope.get('message'))}"
    if raised.error_type in _ERROR_TYPES and raised.error_type != "mcp.JSONRPCError":
        return kind
    return f"{kind}: {raised.message}"


def _content_summary(blocks: JsonValue) -> str:
    """Content blocks in a few words: the first text, and how many blocks of each other kind."""
    texts: list[str] = []
    others: dict[str, int] = {}
    for block in _objects(blocks):
        text = block.get("text")
        if isinstance(text, str):
            texts.append(text)
        else:
            kind = _text(block.get("type") or "block")
            others[kind] = others.get(kind, 0) + 1
    parts = [_bounded(texts[0], _ANSWER)] if texts else []
    if len(texts) > 1:
        parts.append(f"+{len(texts) - 1} text")
    parts.extend(f"{count} {kind}" for kind, count in sorted(others.items()))
    return ", ".join(parts)


# --- values, as untrusted as the trace -------------------------------------------------


def _object(value: JsonValue | None) -> dict[str, JsonValue] | None:
    return cast(dict[str, JsonValue], value) if isinstance(value, dict) else None


def _objects(value: JsonValue | None) -> list[dict[str, JsonValue]]:
    if not isinstance(value, list):
        return []
    return [cast(dict[str, JsonValue], item) for item in value if isinstance(item, dict)]


def _text(value: JsonValue | None) -> str:
    """A name, a URI, a code: as it is when a string, else as JSON; cut short."""
    return _bounded(value, _VALUE * 2) if isinstance(value, str) else _json(value, _VALUE * 2)


def _json(value: JsonValue | None, limit: int) -> str:
    if isinstance(value, str) and len(value) > limit * 4:
        value = value[: limit * 4]  # never encode more than the line can show
    return _bounded(json.dumps(value, ensure_ascii=False, separators=(",", ":")), limit)


def _bounded(text: str, limit: int) -> str:
    """One line of at most `limit` characters: whitespace runs are one space, and a
    control or format character (which could move a terminal's cursor) is escaped."""
    head = text[: limit * 4]
    line = " ".join(head.split())
    if not line.isprintable():
        line = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in line)
    if len(line) > limit or len(head) < len(text):
        return line[: max(limit - 1, 0)].rstrip() + "…"
    return line
