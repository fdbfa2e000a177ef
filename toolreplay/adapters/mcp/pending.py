"""The requests in flight on an instrumented MCP connection, and the values they collect.

A request being recorded (`Recording`) completes its pending effect call when its
answer comes; one a fork sent live, or the live handshake (`Awaited`), hands its
answer to the task that wrote it. Either collects the notifications and server
requests that came for it first (matched by progress token or request id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import anyio

from toolreplay.adapters.mcp.failures import RecordedFailure
from toolreplay.errors import ToolReplayError
from toolreplay.portable import JsonValue, ensure_portable
from toolreplay.runtime.session import PendingCall, RecordSession

__all__ = [
    "Awaited",
    "Recording",
    "Waiting",
    "message_value",
    "messages_of",
    "portable_or_none",
    "progress_token",
]


@dataclass(slots=True, eq=False)
class Recording:
    """A request in flight that is being recorded: its answer completes `call`."""

    progress_token: object
    call: PendingCall
    session: RecordSession
    messages: list[JsonValue] = field(default_factory=list[JsonValue])


@dataclass(slots=True, eq=False)
class Awaited:
    """A request a fork sent live (or the live handshake): its answer goes to the writer."""

    progress_token: object
    messages: list[JsonValue] = field(default_factory=list[JsonValue])
    answered: anyio.Event = field(default_factory=anyio.Event)
    result: dict[str, Any] | None = None
    failure: RecordedFailure | None = None

    async def outcome(self) -> dict[str, Any]:
        """The result once the answer came; its failure is raised."""
        await self.answered.wait()
        if self.failure is not None:
            raise self.failure
        assert self.result is not None
        return self.result


Waiting = Recording | Awaited


def message_value(kind: str, method: str, params: dict[str, Any] | None) -> JsonValue:
    """A notification or server request as a request's output keeps it:
    `{kind: method, "params": ...}`."""
    value: dict[str, JsonValue] = {kind: method}
    if params is not None:
        value["params"] = cast(JsonValue, params)
    return value


def progress_token(params: object) -> object:
    """The progress token a request's `_meta` names, or None."""
    if isinstance(params, dict):
        meta = cast(dict[str, Any], params).get("_meta")
        if isinstance(meta, dict):
            return cast(dict[str, Any], meta).get("progressToken")
    return None


def messages_of(waiting: Waiting) -> dict[str, JsonValue]:
    """The `messages` key of an output: the messages collected, or nothing when none came."""
    return {"messages": list(waiting.messages)} if waiting.messages else {}


def portable_or_none(value: object) -> JsonValue:
    """`value` as portable JSON, or None when it is not (a JSON-RPC error's odd `data`)."""
    try:
        return ensure_portable(value)
    except ToolReplayError:
        return None
