"""What an MCP request that got no result is, recorded and replayed (`RecordedFailure`
and its failure codec), and a replay miss of a tool call explained.

The codec records a `RecordedFailure`, or the SDK's own `MCPError` given to a
`replace_error` patch, as an `mcp.failure` envelope under one of three error types
(a JSON-RPC error, a connection that closed, a request left unanswered), and
rebuilds a `RecordedFailure` from one on replay (RFC 0009).
"""

from __future__ import annotations

from typing import Any, cast

from toolreplay.adapters.mcp.messages import EFFECT_NAMESPACE, effect_name, listed_tools
from toolreplay.errors import ReplayMiss, UnsupportedResponseError
from toolreplay.portable import JsonValue, ensure_portable, preview
from toolreplay.runtime.failures import register_failure_codec
from toolreplay.runtime.session import ReplaySession
from toolreplay.trace.model import Returned

__all__ = ["RecordedFailure", "explain_tool_miss"]

_ERROR = "mcp.JSONRPCError"
_CLOSED = "mcp.ConnectionClosed"
_UNANSWERED = "mcp.Unanswered"
_ENVELOPE = "mcp.failure"
_VERSION = 1


class RecordedFailure(Exception):
    """A request that got no result: a JSON-RPC error, a connection that closed, or none.

    `kind` is `error` (the server answered with a JSON-RPC error: `code`,
    `message`, `data`), `closed` (the connection closed while it was in flight)
    or `unanswered` (the client gave up on it: a timeout, a cancellation).
    `messages` are the notifications and server requests that came for it first.
    Replay turns it back into what the client saw on the wire; applications
    see the SDK's own exception (`MCPError`), never this one.
    """

    def __init__(
        self,
        kind: str,
        *,
        code: int = 0,
        message: str = "",
        data: JsonValue = None,
        messages: list[JsonValue] | None = None,
    ) -> None:
        shown = {
            "error": f"JSON-RPC error {code}: {message}",
            "closed": "the connection closed while the request was in flight",
            "unanswered": "the client stopped waiting for an answer",
        }.get(kind, kind)
        super().__init__(shown)
        self.kind = kind
        self.code = code
        self.message = message
        self.data = data
        self.messages: list[JsonValue] = messages or []


class _FailureCodec:
    """Records `RecordedFailure` and the SDK's own `MCPError` (a `replace_error` patch)."""

    def error_type(self, error: Exception) -> str | None:
        if isinstance(error, RecordedFailure):
            return {"error": _ERROR, "closed": _CLOSED}.get(error.kind, _UNANSWERED)
        if _is_sdk_error(error):
            return _ERROR
        return None

    def capture(self, error: Exception) -> JsonValue:
        if isinstance(error, RecordedFailure):
            envelope: dict[str, JsonValue] = {"envelope": _ENVELOPE, "version": _VERSION}
            if error.kind == "error":
                envelope.update({"code": error.code, "message": error.message, "data": error.data})
            envelope["messages"] = error.messages
            return envelope
        sdk_error: Any = error
        data = ensure_portable(sdk_error.error.data, what="the MCPError's data")
        return {
            "envelope": _ENVELOPE,
            "version": _VERSION,
            "code": sdk_error.error.code,
            "message": sdk_error.error.message,
            "data": data,
            "messages": [],
        }

    def rebuild(self, error_type: str, envelope: JsonValue) -> Exception:
        if (
            not isinstance(envelope, dict)
            or envelope.get("envelope") != _ENVELOPE
            or envelope.get("version") != _VERSION
            or not isinstance(envelope.get("messages", []), list)
        ):
            raise UnsupportedResponseError(
                f"{error_type}: the recorded failure is not an {_ENVELOPE} envelope of version "
                f"{_VERSION}; restore it, or re-record the call"
            )
        messages = cast(list[JsonValue], envelope.get("messages", []))
        if error_type == _ERROR:
            code, message = envelope.get("code"), envelope.get("message")
            if type(code) is not int or not isinstance(message, str):
                raise UnsupportedResponseError(
                    f"{error_type}: the recorded JSON-RPC error needs an int code and a string "
                    f"message, not {preview(envelope, 80)}; restore it, or re-record the call"
                )
            return RecordedFailure(
                "error", code=code, message=message, data=envelope.get("data"), messages=messages
            )
        return RecordedFailure(
            "closed" if error_type == _CLOSED else "unanswered", messages=messages
        )


def _is_sdk_error(error: Exception) -> bool:
    from mcp.shared import exceptions

    sdk_class = getattr(exceptions, "MCPError", None) or getattr(exceptions, "McpError", None)
    return sdk_class is not None and isinstance(error, sdk_class)


register_failure_codec(_FailureCodec(), (_ERROR, _CLOSED, _UNANSWERED))


def explain_tool_miss(
    session: ReplaySession,
    miss: ReplayMiss,
    server: str,
    method: str,
    inputs: dict[str, JsonValue],
) -> None:
    """Say which tool a missed `tools/call` asked for, and which tools the recording lists."""
    if method != "tools/call":
        return
    tool = inputs.get("name")
    listed: list[str] = []
    for operation in session.trace.operations_of(
        EFFECT_NAMESPACE, effect_name(server, "tools/list")
    ):
        if isinstance(operation.outcome, Returned):
            for name in listed_tools(operation.outcome.value):
                if name not in listed:
                    listed.append(name)
    recorded = ", ".join(listed) if listed else "none (no tools/list was recorded)"
    known = tool in listed
    miss.add_note(
        f"MCP server {server!r}: the application called the tool {preview(tool)}"
        + (
            ", which the recorded tool list has, with other arguments"
            if known
            else ", which is not in the tool list recorded from the server"
        )
        + f". Recorded tools: {recorded}. If the server's tools changed since the recording, "
        "record again; a fork can answer the call with supply_output(..., "
        "value=tool_result(...)) or send it live with live=['mcp.*']."
    )
