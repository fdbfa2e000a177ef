"""A recorded MCP request read as what it is: the server, the tool, its arguments, the answer.

The MCP adapter (RFC 0009) records each request a client sent as the effect
`mcp.<server>.<method>`, with the request's params as inputs and
`{"result": ..., "messages": [...]}` as output; a JSON-RPC error, a connection
that closed and an unanswered request are failures whose one argument is the
`mcp.failure` envelope (`code`, `message`, `data`, `messages`). `mcp_call_of`
reads one back: for `tools/call` the tool's name and each argument, then each
content block of its result (text; images and audio by digest and size, never
their bytes; embedded resources; resource links), its structured content, whether
the tool failed, and the notifications that came for it. Other requests show their
params and result by key. Every received value carries its JSON path in the output
shown, so a view can point at what an edit would patch.

Only values are read (the `mcp` SDK is not needed), and any value gives a call or
None, never an error: traces are untrusted input.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

from toolreplay.portable import JsonValue, json_object
from toolreplay_tui.model.conversation import Conversation, ConversationEntry
from toolreplay_tui.model.jsonpaths import JsonPath

__all__ = ["McpCall", "McpEntry", "McpEntryKind", "mcp_call_of"]

NAMESPACE = "mcp"

McpEntryKind = Literal[
    "tool",
    "argument",
    "param",
    "text",
    "media",
    "resource",
    "structured",
    "tool_error",
    "error",
    "notification",
    "value",
    "note",
]


_FAILURES = {
    "mcp.JSONRPCError": "JSON-RPC error",
    "mcp.ConnectionClosed": "the connection closed while the request was in flight",
    "mcp.Unanswered": "unanswered: the client stopped waiting",
}
_SPACES = re.compile(r"[ \t\n]+")
_TEXT_LIMIT = 4_000  # characters of one text shown; the raw output below has all of it


class McpEntry(ConversationEntry[McpEntryKind]):
    """One line of an MCP call: `who` names it (an argument, `text`, `image`)."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class McpCall(Conversation[McpEntry]):
    """An MCP request and its answer, read from a trace."""

    server: str
    method: str
    tool: str | None
    answer: str
    entries: tuple[McpEntry, ...]


def mcp_call_of(
    effect: str, inputs: JsonValue, shown: JsonValue, *, failed: bool = False
) -> McpCall | None:
    """The MCP call of `effect`, or None for an effect of another namespace.

    `shown` is the output the detail pane shows (a pending patch's value, or the
    recorded one); with `failed`, it is the failure `{"type", "message", "args"}`.
    """
    namespace, _, rest = effect.partition(".")
    server, _, dotted = rest.partition(".")
    if namespace != NAMESPACE or not server or not dotted:
        return None
    method = dotted.replace(".", "/")
    params = json_object(inputs) or {}
    entries: list[McpEntry] = []
    tool = _request(method, params, entries)
    if failed:
        answer = _failure(json_object(shown) or {}, entries)
    else:
        answer = _response(method, json_object(shown) or {}, entries)
    return McpCall(server, method, tool, answer, tuple(entries))


# --- the request -------------------------------------------------------------------------


def _request(method: str, params: Mapping[str, JsonValue], entries: list[McpEntry]) -> str | None:
    """The request's entries; the tool's name for `tools/call`."""
    tool: str | None = None
    for key, value in params.items():
        if method == "tools/call" and key == "name":
            tool = value if isinstance(value, str) else _json(value)
            entries.append(McpEntry("request", "tool", "tool", tool))
        elif method == "tools/call" and key == "arguments" and isinstance(value, dict):
            arguments = cast(dict[str, JsonValue], value)
            if not arguments:
                entries.append(McpEntry("request", "note", "arguments", "(none)"))
            for name, argument in arguments.items():
                entries.append(McpEntry("request", "argument", name, _pretty(argument)))
        else:
            entries.append(McpEntry("request", "param", key, _pretty(value)))
    if not params:
        entries.append(McpEntry("request", "note", "params", "(none)"))
    return tool


# --- the answer --------------------------------------------------------------------------


def _response(method: str, output: Mapping[str, JsonValue], entries: list[McpEntry]) -> str:
    """The answer's entries; a word on the answer for the heading."""
    result = json_object(output.get("result"))
    answer = "result"
    if result is None:
        entries.append(McpEntry("response", "note", "result", "(no result recorded)"))
        answer = "no result"
    elif method == "tools/call":
        answer = _tool_result(result, entries)
    elif method == "resources/read":
        for index, item in _objects(result.get("contents")):
            _resource(item, ("result", "contents", index), entries)
    elif method == "prompts/get":
        _prompt(result, entries)
    elif method == "tools/list":
        for index, tool in _objects(result.get("tools")):
            text = _line(tool.get("description"))
            path = _at(tool, ("result", "tools", index), "description")
            entries.append(McpEntry("response", "value", _line(tool.get("name")), text, path))
    else:
        for key, value in result.items():
            entries.append(McpEntry("response", "value", key, _pretty(value), ("result", key)))
    _messages(output.get("messages"), ("messages",), entries)
    return answer


def _tool_result(result: Mapping[str, JsonValue], entries: list[McpEntry]) -> str:
    failed = result.get("isError") is True
    if failed:
        path = ("result", "isError")
        entries.append(McpEntry("response", "tool_error", "isError", "the tool failed", path))
    blocks = _objects(result.get("content"))
    for index, block in blocks:
        _block(block, ("result", "content", index), entries)
    structured = result.get("structuredContent")
    if structured is not None:
        path = ("result", "structuredContent")
        entries.append(McpEntry("response", "structured", "structured", _pretty(structured), path))
    if not blocks and structured is None:
        path = _at(result, ("result",), "content")
        entries.append(McpEntry("response", "note", "content", "(empty)", path))
    return "tool error" if failed else "result"


def _block(block: Mapping[str, JsonValue], path: JsonPath, entries: list[McpEntry]) -> None:
    """One content block of a tool result or a prompt message."""
    kind = block.get("type")
    if kind == "text":
        text = _long(block.get("text"))
        entries.append(McpEntry("response", "text", "text", text, _at(block, path, "text")))
    elif kind in ("image", "audio"):
        media = _media(block, "data")
        entries.append(McpEntry("response", "media", str(kind), media, _at(block, path, "data")))
    elif kind == "resource":
        resource = json_object(block.get("resource"))
        if resource is not None:
            _resource(resource, (*path, "resource"), entries)
        else:
            entries.append(McpEntry("response", "note", "resource", "(no resource)", path))
    elif kind == "resource_link":
        text = _line(block.get("uri"))
        name = block.get("name")
        if isinstance(name, str) and name:
            text += f"  ({_line(name)})"
        entries.append(McpEntry("response", "resource", "link", text, _at(block, path, "uri")))
    else:
        shown = _line(kind) if kind is not None else "block"
        entries.append(McpEntry("response", "value", shown, _pretty(dict(block)), path))


def _resource(resource: Mapping[str, JsonValue], path: JsonPath, entries: list[McpEntry]) -> None:
    """An embedded or read resource: its URI and type, then its text or its blob by digest."""
    heading = _line(resource.get("uri"))
    mime = resource.get("mimeType")
    if isinstance(mime, str):
        heading += f"  {_line(mime)}"
    uri = _at(resource, path, "uri")
    entries.append(McpEntry("response", "resource", "resource", heading, uri))
    if isinstance(resource.get("text"), str):
        text = _long(resource.get("text"))
        entries.append(McpEntry("response", "text", "text", text, (*path, "text")))
    elif "blob" in resource:
        blob = _media(resource, "blob")
        entries.append(McpEntry("response", "media", "blob", blob, (*path, "blob")))


def _prompt(result: Mapping[str, JsonValue], entries: list[McpEntry]) -> None:
    description = result.get("description")
    if isinstance(description, str):
        path: JsonPath = ("result", "description")
        entries.append(McpEntry("response", "value", "description", _long(description), path))
    for index, message in _objects(result.get("messages")):
        role = _line(message.get("role") or "message")
        content = json_object(message.get("content"))
        if content is None:
            continue
        before = len(entries)
        _block(content, ("result", "messages", index, "content"), entries)
        for position in range(before, len(entries)):
            entry = entries[position]
            entries[position] = McpEntry(entry.side, entry.kind, role, entry.text, entry.path)


def _messages(messages: JsonValue | None, path: JsonPath, entries: list[McpEntry]) -> None:
    """The notifications and server requests that came for the call, in order."""
    for index, message in _objects(messages):
        method = message.get("notification") or message.get("request")
        params = json_object(message.get("params")) or {}
        if method == "notifications/progress":
            done, total = params.get("progress"), params.get("total")
            text = f"{_json(done)}" + (f"/{_json(total)}" if total is not None else "")
            if isinstance(params.get("message"), str):
                text += f"  {_line(params['message'])}"
        elif method == "notifications/message":
            text = f"{_line(params.get('level'))}: {_line(_json(params.get('data')))}"
        else:
            text = _line(_json(dict(params))) if params else ""
        who = _line(method) if method is not None else "message"
        entries.append(McpEntry("response", "notification", who, text, (*path, index)))


def _failure(failure: Mapping[str, JsonValue], entries: list[McpEntry]) -> str:
    """A request that got no result: the JSON-RPC error, or how it ended."""
    error_type = _line(failure.get("type"))
    arguments = failure.get("args")
    envelope = (
        json_object(arguments[0]) if isinstance(arguments, list) and len(arguments) == 1 else None
    ) or {}
    described = _FAILURES.get(error_type)
    if error_type == "mcp.JSONRPCError":
        code = _json(envelope.get("code"))
        message = _long(envelope.get("message"))
        path = _at(envelope, ("args", 0), "message")
        entries.append(McpEntry("response", "error", f"error {code}", message, path))
        if envelope.get("data") is not None:
            data = _pretty(envelope.get("data"))
            entries.append(McpEntry("response", "error", "data", data, ("args", 0, "data")))
        answer = f"JSON-RPC error {code}"
    elif described is not None:
        path = _at(failure, (), "type")
        entries.append(McpEntry("response", "error", "failure", described, path))
        answer = "no answer"
    else:
        message = f"{error_type}: {_long(failure.get('message'))}"
        path = _at(failure, (), "message")
        entries.append(McpEntry("response", "error", "raised", message, path))
        answer = "raised"
    _messages(envelope.get("messages"), ("args", 0, "messages"), entries)
    return answer


# --- values, as untrusted as the trace ----------------------------------------------------


def _objects(value: JsonValue | None) -> list[tuple[int, dict[str, JsonValue]]]:
    """The objects of a list, each with its index in it (for its path)."""
    if not isinstance(value, list):
        return []
    return [
        (index, cast(dict[str, JsonValue], item))
        for index, item in enumerate(value)
        if isinstance(item, dict)
    ]


def _at(container: Mapping[str, JsonValue], path: JsonPath, key: str) -> JsonPath | None:
    """The path of `container[key]`, or None when there is no such value to point at."""
    return (*path, key) if key in container else None


def _json(value: JsonValue | None) -> str:
    return json.dumps(value, ensure_ascii=False)


def _pretty(value: JsonValue | None) -> str:
    """A string as it is; anything else as indented JSON."""
    if isinstance(value, str):
        return _long(value)
    return _long(json.dumps(value, indent=2, ensure_ascii=False))


def _long(value: JsonValue | None) -> str:
    text = value if isinstance(value, str) else _json(value)
    if len(text) > _TEXT_LIMIT:
        return text[:_TEXT_LIMIT] + f"… ({len(text):,} characters; all of it below)"
    return text


def _line(value: JsonValue | None) -> str:
    """A name, a URI, a message: one line (a string as it is, anything else as JSON).

    Only spaces, tabs and newlines are folded: any other character stays, for the view
    to escape where a terminal would act on it."""
    return _SPACES.sub(" ", _long(value)).strip(" ")


def _media(block: Mapping[str, JsonValue], key: str) -> str:
    """`image/png · 1,234 bytes · sha256 9f86d081884c…`: what the bytes are, never them."""
    mime = block.get("mimeType")
    kind = _line(mime) if isinstance(mime, str) else "no mimeType"
    data = block.get(key)
    if not isinstance(data, str):
        return f"{kind} · no {key}"
    try:
        content = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return f"{kind} · {len(data):,} characters that are not base64"
    digest = hashlib.sha256(content).hexdigest()
    return f"{kind} · {len(content):,} bytes · sha256 {digest[:16]}…"
