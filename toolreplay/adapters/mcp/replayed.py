"""What a replayed request gives the client beyond its answer: the notifications and
server requests recorded with it, rebuilt for this run, and, when the request was
not recorded, a note on what the recording knew."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from mcp.shared.message import SessionMessage

from toolreplay.adapters.mcp.messages import (
    EFFECT_NAMESPACE,
    effect_name,
    listed_tools,
    notification_message,
    server_request_message,
)
from toolreplay.errors import ReplayMiss, UnsupportedResponseError
from toolreplay.portable import JsonValue, preview
from toolreplay.runtime.replaying import ReplaySession
from toolreplay.trace.model import Returned

__all__ = ["explain_miss", "replayed_messages"]


def replayed_messages(
    operation: str, messages: JsonValue, token: object, server_request_ids: Iterator[int]
) -> Iterator[tuple[SessionMessage, str | None]]:
    """The recorded `messages` of an answer, one at a time, as this run's: a progress
    notification carries this run's `token` (not the recorded one), and a server request
    a fresh id from `server_request_ids`, given beside it (the client's reply to it was
    recorded already). Each entry is checked as it comes."""
    if messages is None:
        return
    if not isinstance(messages, list):
        raise UnsupportedResponseError(
            f"{operation}: $.output.messages must be a list of notifications; restore it"
        )
    for index, entry in enumerate(messages):
        if not isinstance(entry, dict) or not (
            isinstance(entry.get("notification"), str) or isinstance(entry.get("request"), str)
        ):
            raise UnsupportedResponseError(
                f"{operation}: $.output.messages[{index}] is not a recorded notification "
                f"or server request ({preview(entry, 80)}); restore it"
            )
        raw_params = entry.get("params")
        sent = dict(cast(dict[str, Any], raw_params)) if isinstance(raw_params, dict) else None
        notification = entry.get("notification")
        if isinstance(notification, str):
            if notification == "notifications/progress" and sent is not None and token is not None:
                sent["progressToken"] = token
            yield notification_message(notification, sent), None
        else:
            server_request_id = f"toolreplay-{next(server_request_ids)}"
            request = server_request_message(server_request_id, cast(str, entry["request"]), sent)
            yield request, server_request_id


def explain_miss(
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
