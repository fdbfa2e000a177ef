"""A recorded Claude call (`anthropic.messages.create`) as a readable transcript.

The Anthropic adapter (RFC 0006 Part IV) records a Messages request as inputs
`{method, path, query, headers, body}` and its answer as `{status, headers, body |
events, ...}`. `claude_transcript_of` reads the request as the conversation it sends
(the system prompt, each message's text, the tool uses and tool results it carries
back, earlier thinking) and the answer as what Claude said: thinking, text, tool uses
with their input, the stop reason when it is not a plain end, and the usage. A JSON
answer's entries carry the JSON path of their value; a streamed answer is read as the
message its events add up to (`final_message`, the adapter's own reading, which needs
no SDK), whose values are spread over several events and so carry no path.

Anything else (another endpoint, a body of another shape) gives None: the caller shows
the raw JSON. Values are untrusted: any shape gives a transcript or None, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from toolreplay.adapters.anthropic_summary import final_message, requested_model
from toolreplay.portable import JsonValue, json_object, json_objects
from toolreplay_tui.model.conversation import (
    EntryKind,
    Side,
    Transcript,
    TranscriptEntry,
    answered,
    entry,
    pretty,
)
from toolreplay_tui.model.jsonpaths import JsonPath

__all__ = ["claude_transcript_of"]

EFFECT = "anthropic.messages.create"
# Blocks for tools the API runs itself, and their results.
_SERVER_TOOLS = ("server_tool_use", "mcp_tool_use")
# Stop reasons that need no note: the turn ended, or it asks for its tools to run.
_PLAIN_STOPS = (None, "end_turn", "tool_use")


def claude_transcript_of(effect: str, inputs: JsonValue, output: JsonValue) -> Transcript | None:
    """The transcript of a recorded Claude Messages call, or None."""
    shaped = json_object(inputs)
    request = json_object(shaped.get("body")) if shaped is not None else None
    if effect != EFFECT or request is None or not isinstance(request.get("messages"), list):
        return None
    answer = json_object(output) or {}
    entries: list[TranscriptEntry] = []
    _request(request, entries)
    events = answer.get("events")
    streamed = isinstance(events, list)
    body = json_object(answer.get("body"))
    if streamed:
        _stream(answer, cast(list[JsonValue], events), entries)
    elif body is not None:
        _answer(body, ("body",), entries)
    elif isinstance(answer.get("text"), str):
        entries.append(entry("response", "note", "body", str(answer["text"])))
    model = requested_model(request, (shaped or {}).get("path"))
    return answered("messages", model, answer, _tool_names(request.get("tools")), entries)


def _tool_names(tools: JsonValue | None) -> tuple[str, ...]:
    return tuple(str(tool.get("name") or tool.get("type")) for tool in json_objects(tools))


def _part_text(part: Mapping[str, JsonValue]) -> str:
    """A content part that is not a tool's: its text, or its kind (`[image]`, `[document]`)."""
    text = part.get("text")
    if isinstance(text, str):
        return text
    kind = part.get("type")
    title = part.get("title")
    return f"[{kind} {title}]" if isinstance(title, str) else f"[{kind or 'part'}]"


def _request(request: Mapping[str, JsonValue], entries: list[TranscriptEntry]) -> None:
    system = request.get("system")
    if isinstance(system, str) and system:
        entries.append(entry("request", "instructions", "system", system))
    elif isinstance(system, list):
        parts = "\n".join(_part_text(part) for part in json_objects(system))
        entries.append(entry("request", "instructions", "system", parts))
    messages = json_objects(request.get("messages"))
    names = {
        str(part.get("id")): str(part.get("name"))
        for message in messages
        for part in json_objects(message.get("content"))
        if part.get("type") == "tool_use"
    }
    for message in messages:
        role = str(message.get("role", "user"))
        content = message.get("content")
        if isinstance(content, str):
            entries.append(entry("request", "message", role, content))
            continue
        text: list[str] = []
        for part in json_objects(content):
            kind = part.get("type")
            if kind == "tool_result":
                _flush(role, text, entries)
                who = names.get(str(part.get("tool_use_id")), str(part.get("tool_use_id")))
                result = _tool_result(part.get("content"))
                if part.get("is_error") is True:
                    result = f"(error) {result}"
                entries.append(entry("request", "tool_output", who, result))
            elif kind in ("tool_use", *_SERVER_TOOLS) or kind in ("thinking", "redacted_thinking"):
                _flush(role, text, entries)
                _block(part, "request", None, entries)
            else:
                text.append(_part_text(part))
        _flush(role, text, entries)


def _flush(role: str, text: list[str], entries: list[TranscriptEntry]) -> None:
    """The text parts gathered so far, as one message (keeping the order of the blocks)."""
    if text:
        entries.append(entry("request", "message", role, "\n".join(text)))
        text.clear()


def _tool_result(content: JsonValue | None) -> str:
    if isinstance(content, list):
        return "\n".join(pretty(_part_text(part)) for part in json_objects(content))
    return pretty(content) if content is not None else ""


def _block(
    block: Mapping[str, JsonValue],
    side: Side,
    path: JsonPath | None,
    entries: list[TranscriptEntry],
) -> None:
    """One content block of a message; `path` is its place in the output (or None)."""

    def at(field: str) -> JsonPath | None:
        return None if path is None else (*path, field)

    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        said: EntryKind = "text" if side == "response" else "message"
        entries.append(entry(side, said, "assistant", str(block["text"]), at("text")))
    elif kind == "thinking":
        thinking = block.get("thinking")
        shown = thinking if isinstance(thinking, str) and thinking else "(no summary)"
        entries.append(entry(side, "reasoning", "thinking", shown, at("thinking")))
    elif kind == "redacted_thinking":
        entries.append(entry(side, "reasoning", "thinking", "(redacted)"))
    elif kind == "tool_use":
        entries.append(
            entry(
                side, "tool_call", str(block.get("name")), pretty(block.get("input")), at("input")
            )
        )
    elif kind in _SERVER_TOOLS:
        name = f"{block.get('name')}"
        entries.append(entry(side, "hosted_tool", name, pretty(block.get("input")), at("input")))
    else:  # a server tool's result, a container upload, a block of a newer API
        entries.append(entry(side, "hosted_tool", str(kind), pretty(cast(JsonValue, block))))


def _answer(
    message: Mapping[str, JsonValue], prefix: JsonPath | None, entries: list[TranscriptEntry]
) -> None:
    """A message (or an error body); `prefix` is its path in the output, None for a stream."""
    if message.get("type") == "error":
        error = json_object(message.get("error")) or {}
        kind = error.get("type")
        entries.append(entry("response", "error", str(kind or "error"), str(error.get("message"))))
        return
    for index, block in enumerate(json_objects(message.get("content"))):
        path = None if prefix is None else (*prefix, "content", index)
        _block(block, "response", path, entries)
    stop = message.get("stop_reason")
    if stop not in _PLAIN_STOPS:
        entries.append(entry("response", "note", "stop", str(stop)))
    usage = json_object(message.get("usage"))
    if usage is not None:
        entries.append(entry("response", "usage", "usage", _usage_text(usage)))


def _stream(
    answer: Mapping[str, JsonValue], events: Sequence[JsonValue], entries: list[TranscriptEntry]
) -> None:
    final = final_message(answer)
    if final is not None:
        _answer(final, None, entries)
        return
    for event in events:  # an error event ends a stream without its message
        data = json_object((json_object(event) or {}).get("data"))
        if data is not None and data.get("type") == "error":
            _answer(data, None, entries)
    entries.append(entry("response", "note", "stream", "ended before message_stop"))


def _usage_text(usage: Mapping[str, JsonValue]) -> str:
    """`31 in (12 cache read, 0 cache write) · 17 out`."""
    given = f"{usage.get('input_tokens')} in"
    read, written = usage.get("cache_read_input_tokens"), usage.get("cache_creation_input_tokens")
    if isinstance(read, int) or isinstance(written, int):
        given += f" ({read or 0} cache read, {written or 0} cache write)"
    return f"{given} · {usage.get('output_tokens')} out"
