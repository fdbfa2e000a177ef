"""MCP's JSON-RPC messages as effect calls: names, inputs, outputs, and the SDK's own types.

A request the client sends is one effect call of namespace `mcp`, named after the
server and the request's method (`mcp.weather.tools.call`); its inputs are the
request's params without the per-request bookkeeping the client adds to `_meta`;
its output is the result as received, with the notifications and server requests
that came for it while it was in flight. Nothing here touches a connection.

The SDK's message classes are read and built here only, so the rest of the
adapter handles plain values.
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
from collections.abc import Callable, Mapping
from typing import Any, cast

import mcp.types as sdk_types
from mcp.shared.message import SessionMessage
from mcp_types import methods as _methods
from mcp_types import version as _versions

from toolreplay.errors import UnsupportedRequestError, UnsupportedResponseError
from toolreplay.portable import JsonValue, ensure_portable

__all__ = [
    "EFFECT_NAMESPACE",
    "EXCLUDED_META_KEYS",
    "Incoming",
    "effect_name",
    "error_message",
    "incoming",
    "listed_tools",
    "negotiated_version",
    "notification_message",
    "renumbered",
    "request_inputs",
    "response_message",
    "server_name_problem",
    "server_request_message",
    "tool_result",
    "validate_result",
]

EFFECT_NAMESPACE = "mcp"
"""Every MCP request is an effect of this namespace (`mcp.<server>.<method>`)."""

EXCLUDED_META_KEYS = frozenset({"progressToken", "traceparent", "tracestate", "baggage"})
"""`_meta` keys left out of a request's inputs: the client makes them afresh for each request.

So are the keys of the protocol's own reserved prefix (`io.modelcontextprotocol/`),
which the 2026 protocol stamps on every request (the protocol version, the client's
name, version and capabilities): they say who asks, not what is asked.
"""
_RESERVED_META_PREFIX = "io.modelcontextprotocol/"

_SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")

RESULT_TYPES: Mapping[str, str] = {
    "initialize": "InitializeResult",
    "server/discover": "DiscoverResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "logging/setLevel": "EmptyResult",
}
"""The SDK class each method's result is parsed into (checked before a replay serves it)."""


def server_name_problem(server: object) -> str | None:
    """What is wrong with `server` as the server part of an effect name, or None."""
    if not isinstance(server, str) or not _SEGMENT.fullmatch(server):
        return (
            f"the MCP server name {server!r} is not usable in an effect name: use letters, "
            "digits, '_' and '-', starting with a letter or '_' (server='weather')"
        )
    return None


def effect_name(server: str, method: str) -> str:
    """The effect name (below `mcp.`) of a request: `weather.tools.call` for `tools/call`.

    The method's `/`- and `.`-separated parts become dotted segments; a character an
    effect name cannot hold becomes `_` (vendor methods only; the protocol's own
    methods are words).
    """
    parts = [part for part in re.split(r"[/.]", method) if part]
    segments = [_UNSAFE.sub("_", part) for part in parts] or ["_"]
    segments = [segment if _SEGMENT.fullmatch(segment) else "_" + segment for segment in segments]
    return ".".join([server, *segments])


def request_inputs(method: str, params: object) -> dict[str, JsonValue]:
    """A request's params as inputs: `_meta` without the per-request keys (dropped).

    Dropped, not redacted: a placeholder of a value made afresh for each request
    would differ on every run just the same.
    """
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise UnsupportedRequestError(
            f"the MCP request {method!r} has params that are not an object "
            f"({type(params).__name__}); MCP requests carry an object, so this one cannot be "
            "recorded as an effect's inputs"
        )
    inputs = dict(cast(dict[str, Any], params))
    meta = inputs.get("_meta")
    if isinstance(meta, dict):
        kept = {
            key: value
            for key, value in cast(dict[str, Any], meta).items()
            if key not in EXCLUDED_META_KEYS and not key.startswith(_RESERVED_META_PREFIX)
        }
        if kept:
            inputs["_meta"] = kept
        else:
            del inputs["_meta"]
    return cast(dict[str, JsonValue], ensure_portable(inputs, what=f"params of MCP {method}"))


class Incoming:
    """One JSON-RPC message as plain values: its kind, id, method, params, result or error."""

    __slots__ = ("error", "id", "kind", "method", "params", "result")

    def __init__(
        self,
        kind: str,
        id: object = None,
        method: str | None = None,
        params: dict[str, Any] | None = None,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        self.kind = kind  # "request", "notification", "response", "error"
        self.id = id
        self.method = method
        self.params = params
        self.result = result
        self.error = error


def incoming(item: SessionMessage) -> Incoming:
    """The JSON-RPC message a `SessionMessage` carries."""
    message = item.message
    if isinstance(message, sdk_types.JSONRPCRequest):
        return Incoming("request", message.id, message.method, message.params)
    if isinstance(message, sdk_types.JSONRPCNotification):
        return Incoming("notification", None, message.method, message.params)
    if isinstance(message, sdk_types.JSONRPCResponse):
        return Incoming("response", message.id, result=message.result)
    error = message.error
    data: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        data["data"] = error.data
    return Incoming("error", message.id, error=data)


def _wrap(message: sdk_types.JSONRPCMessage) -> SessionMessage:
    return SessionMessage(message)


def response_message(request_id: Any, result: dict[str, Any]) -> SessionMessage:
    """The response to `request_id` carrying `result`."""
    return _wrap(sdk_types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


def error_message(request_id: Any, code: int, message: str, data: Any = None) -> SessionMessage:
    """The JSON-RPC error response to `request_id`."""
    error = sdk_types.ErrorData(code=code, message=message, data=data)
    return _wrap(sdk_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def notification_message(method: str, params: dict[str, Any] | None) -> SessionMessage:
    """A notification from the server."""
    if params is None:
        return _wrap(sdk_types.JSONRPCNotification(jsonrpc="2.0", method=method))
    return _wrap(sdk_types.JSONRPCNotification(jsonrpc="2.0", method=method, params=params))


def server_request_message(
    request_id: Any, method: str, params: dict[str, Any] | None
) -> SessionMessage:
    """A request from the server to the client (sampling, elicitation, roots, ping)."""
    if params is None:
        return _wrap(sdk_types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method))
    return _wrap(
        sdk_types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params)
    )


def renumbered(item: SessionMessage, request_id: Any) -> SessionMessage:
    """The request `item` carries, under another id, with the same transport metadata."""
    message = item.message.model_copy(update={"id": request_id})
    return SessionMessage(message, metadata=item.metadata)


def negotiated_version(method: str, result: dict[str, Any]) -> str | None:
    """The protocol version a handshake's result settles on (as the SDK's client adopts it)."""
    if method == "initialize":
        version = result.get("protocolVersion")
        return version if isinstance(version, str) else None
    supported = result.get("supportedVersions")
    modern = _versions.MODERN_PROTOCOL_VERSIONS
    mutual = [v for v in modern if isinstance(supported, list) and v in supported]
    return mutual[-1] if mutual else None


def validate_result(operation: str, method: str, result: object, version: str | None) -> None:
    """Check that the installed SDK parses `result` as the answer to `method`.

    A replay serves what was recorded; a trace edited by hand, or recorded by
    an SDK whose result shapes differ, would otherwise fail inside the SDK with
    a validation error that names neither the trace nor the call (and which an
    agent framework may hand the model as a failed tool). `version` is the
    connection's protocol version, whose result shapes the SDK checks (mcp 2);
    without it, the SDK's version-free result class is the check.
    """
    if not isinstance(result, dict):
        raise UnsupportedResponseError(
            f"{operation}: $.output.result must be the JSON-RPC result object, not "
            f"{type(result).__name__}; restore the recorded output, or write a value such as "
            "tool_result('...')"
        )
    name = RESULT_TYPES.get(method)
    check: Callable[[], object] | None = None
    if version is not None:
        check = functools.partial(_methods.validate_server_result, method, version, result)
    else:
        model: Any = getattr(sdk_types, name, None) if name is not None else None
        if model is not None:
            check = functools.partial(model.model_validate, result)
    if check is None:
        return
    try:
        check()
    except (KeyError, ValueError) as error:
        if not hasattr(error, "errors"):
            return  # a method or version this SDK has no table for: it does not check either
        first = str(error).splitlines()
        detail = "; ".join(line.strip() for line in first[:3])
        raise UnsupportedResponseError(
            f"{operation}: mcp {_installed_version()} cannot parse the recorded result as the "
            f"answer to {method}{f' (protocol {version})' if version else ''}: {detail}. The "
            "trace was edited, or recorded by an SDK whose results differ; restore the recorded "
            "result, or re-record the call"
        ) from None


def listed_tools(output: JsonValue) -> list[str]:
    """The tool names a recorded `tools/list` output holds, in order."""
    result = output.get("result") if isinstance(output, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    names: list[str] = []
    for entry in tools if isinstance(tools, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str):
            names.append(name)
    return names


def _installed_version() -> str:
    return importlib.metadata.version("mcp")


def tool_result(
    text: str | None = None,
    *,
    structured: JsonValue = None,
    is_error: bool = False,
    content: list[JsonValue] | None = None,
) -> dict[str, JsonValue]:
    """The output of a `tools/call` effect, for a fork's `replace_output` or `supply_output`.

        toolreplay.supply_output(
            effect="mcp.weather.tools.call",
            inputs={"name": "forecast", "arguments": {"city": "Oslo"}},
            value=tool_result("Snow, -4 C"),
        )

    `text` becomes one text content block (`content` gives the blocks instead);
    `structured` is the `structuredContent`; `is_error=True` is a tool that
    failed, which the model sees (a JSON-RPC error is `replace_error` instead).
    """
    blocks: list[JsonValue] = list(content or [])
    if text is not None:
        blocks.append({"type": "text", "text": text})
    # `resultType` is required by the 2026 protocol and dropped by the SDK on older ones.
    result: dict[str, JsonValue] = {
        "content": blocks,
        "isError": is_error,
        "resultType": "complete",
    }
    if structured is not None:
        result["structuredContent"] = structured
    return cast(dict[str, JsonValue], ensure_portable({"result": result}, what="tool_result"))
