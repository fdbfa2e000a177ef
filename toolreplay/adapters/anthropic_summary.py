"""The Anthropic adapter's recorded values read without the SDK: a Messages call's
summary (the turn it answered and its answer), and an answer's final message.

Registered for the `anthropic` namespace (`toolreplay.summaries`). It reads the values
the adapter records (RFC 0006 Part IV: inputs `{method, path, query, headers, body}`,
the output `{status, headers, body | events, ...}`) and never imports the SDK, which
is why it lives beside the `anthropic` package rather than in it (whose import checks
the SDK). Only `messages.create` calls are summarized; other endpoints give None.

`asked` is the last message: `user: <text>`, `tool <name>: <result>` for a tool result
(the name from the `tool_use` block it answers), `assistant: <name>(<input>)` for a
tool use. `answered` is the text and tool uses of the answer, thinking left out, with
`(cut at the token limit)` when it stopped there. A stream is read as the SDK reads it,
bounded by what a summary shows. `final_message` reads a whole answer (a body, or the
message a stream adds up to), for the adapter's replies and edits and the debugger's
transcript.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import cast

from toolreplay.adapters.model_summaries import (
    JSON_LIMIT,
    TEXT_LIMIT,
    answered,
    call_text,
    content_text,
    cut,
    event_data,
    joined,
    json_text,
)
from toolreplay.portable import JsonValue, copy_value, json_object, json_objects
from toolreplay.summaries import CallSummary
from toolreplay.trace.model import Outcome

__all__ = [
    "CLOSING_FIELDS",
    "TOOL_BLOCKS",
    "final_message",
    "requested_model",
    "streams_by_path",
    "summarize",
]

TOOL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
"""Content blocks whose `input` streams as JSON text (`input_json_delta`)."""
CLOSING_FIELDS = ("stop_reason", "stop_sequence", "stop_details")
"""Message fields the closing `message_delta` states, not `message_start`."""
# Message fields a beta stream's `message_delta` states beside its delta (context
# management's applied edits), which replace `message_start`'s when given.
_STATED_AT_CLOSE = ("context_management", "input_transformations")


def summarize(effect: str, inputs: JsonValue, outcome: Outcome | None) -> CallSummary | None:
    """What a Messages call was asked last, and what it answered."""
    shaped = json_object(inputs)
    if shaped is None or effect != "anthropic.messages.create":
        return None
    request = json_object(shaped.get("body"))
    if request is None or "messages" not in request:
        return None
    return CallSummary(_asked(request), answered(outcome, _answer))


def _asked(request: Mapping[str, JsonValue]) -> str:
    messages = json_objects(request.get("messages"))
    if not messages:
        system = request.get("system")
        return f"system: {content_text(system)}" if system is not None else ""
    last = messages[-1]
    role = str(last.get("role", "user"))
    content = last.get("content")
    if isinstance(content, str):
        return f"{role}: {cut(content)}"
    parts = json_objects(content)
    results = [part for part in parts if part.get("type") == "tool_result"]
    if results:
        return joined(
            f"tool {_tool_name(part.get('tool_use_id'), messages)}: {_result(part.get('content'))}"
            for part in results
        )
    uses = [part for part in parts if part.get("type") == "tool_use"]
    if uses:
        return f"{role}: " + joined(call_text(use.get("name"), use.get("input")) for use in uses)
    return f"{role}: {content_text(content)}"


def _result(content: JsonValue | None) -> str:
    return content_text(content) if isinstance(content, list) else json_text(content)


def _tool_name(use_id: JsonValue | None, messages: Sequence[Mapping[str, JsonValue]]) -> str:
    """The name of the tool use a result answers, found by its id."""
    for message in reversed(messages):
        for part in json_objects(message.get("content")):
            if part.get("type") == "tool_use" and part.get("id") == use_id:
                name = part.get("name")
                return name if isinstance(name, str) else "tool"
    return str(use_id) if isinstance(use_id, str) else "result"


def _blocks(content: Sequence[Mapping[str, JsonValue]]) -> list[str]:
    parts: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(cut(str(block["text"])))
        elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
            parts.append(call_text(block.get("name"), block.get("input")))
        elif kind not in ("thinking", "redacted_thinking") and isinstance(kind, str):
            parts.append(f"[{kind}]")
        if sum(map(len, parts)) > TEXT_LIMIT:
            break
    return parts


def _with_stop(answer: str, stop_reason: JsonValue | None) -> str:
    return answer + (" (cut at the token limit)" if stop_reason == "max_tokens" else "")


def _answer(body: dict[str, JsonValue] | None, events: list[JsonValue] | None) -> str:
    if body is None:
        assert events is not None
        return _stream_answer(events)
    if body.get("type") == "error":
        error = json_object(body.get("error")) or {}
        return f"error: {cut(str(error.get('message', '')))}"
    answer = joined(_blocks(json_objects(body.get("content")))) or "(no content)"
    return _with_stop(answer, body.get("stop_reason"))


def _stream_answer(events: list[JsonValue]) -> str:
    """The blocks the stream's events add up to (text, tool uses), bounded."""
    blocks: dict[int, dict[str, JsonValue]] = {}
    size = 0
    stop: JsonValue | None = None
    finished = False
    for event in events:
        data = event_data(event)
        if data is None:
            continue
        kind, index = data.get("type"), data.get("index")
        if kind == "content_block_start" and isinstance(index, int):
            block = dict(json_object(data.get("content_block")) or {})
            if block.get("type") in ("tool_use", "server_tool_use", "mcp_tool_use"):
                block["input"] = ""  # its JSON text, added up below
            blocks[index] = block
        elif kind == "content_block_delta" and isinstance(index, int) and index in blocks:
            delta = json_object(data.get("delta")) or {}
            block = blocks[index]
            if isinstance(delta.get("text"), str) and size < TEXT_LIMIT:
                block["text"] = str(block.get("text", "")) + str(delta["text"])
                size += len(str(delta["text"]))
            partial = delta.get("partial_json")
            if isinstance(partial, str) and len(str(block.get("input", ""))) <= JSON_LIMIT:
                block["input"] = str(block.get("input", "")) + partial
        elif kind == "message_delta":
            stop = (json_object(data.get("delta")) or {}).get("stop_reason")
        elif kind == "message_stop":
            finished = True
        elif kind == "error":
            error = json_object(data.get("error")) or {}
            return f"error: {cut(str(error.get('message', '')))}"
    content = [cast(Mapping[str, JsonValue], blocks[i]) for i in sorted(blocks)]
    answer = _with_stop(joined(_blocks(content)) or "(no content)", stop)
    return answer if finished else answer + " (stream ended before message_stop)"


# --- the final message ------------------------------------------------------------------


def _copied(value: dict[str, JsonValue]) -> dict[str, JsonValue]:
    return cast(dict[str, JsonValue], copy_value(value))


def final_message(output: Mapping[str, JsonValue]) -> dict[str, JsonValue] | None:
    """The message of a recorded Messages answer: its JSON body, or the message its
    stream adds up to (as the SDK's `get_final_message()`); None for any other output
    or a stream that ended before `message_stop`.

    The one reading of a recorded answer as a whole: `reply`/`edit` build on it
    (`toolreplay.adapters.anthropic`, which re-exports it) and the debugger's transcript
    shows it. The body is returned as recorded, not copied."""
    body = json_object(output.get("body"))
    if body is not None:
        return body if body.get("type") == "message" else None
    return _accumulate(json_objects(output.get("events")))


def _accumulate(events: list[dict[str, JsonValue]]) -> dict[str, JsonValue] | None:
    message: dict[str, JsonValue] | None = None
    content: list[JsonValue] = []
    buffers: dict[int, str] = {}
    for event in events:
        data = json_object(event.get("data"))
        kind = data.get("type") if data is not None else None
        if data is None or (message is None and kind != "message_start"):
            continue
        if kind == "message_start":
            started = json_object(data.get("message"))
            if started is None:
                return None
            message = _copied(started)
            content = [copy_value(block) for block in json_objects(message.get("content"))]
            message["content"] = content
            continue
        assert message is not None
        index = data.get("index")
        block = (
            json_object(content[index])
            if type(index) is int and 0 <= index < len(content)
            else None
        )
        if kind == "content_block_start":
            started_block = json_object(data.get("content_block"))
            content.append(_copied(started_block) if started_block is not None else {})
        elif kind == "content_block_delta" and block is not None:
            _add_delta(block, json_object(data.get("delta")) or {}, buffers, cast(int, index))
        elif kind == "content_block_stop" and block is not None and index in buffers:
            text = buffers.pop(cast(int, index))
            try:
                block["input"] = json.loads(text) if text.strip() else {}
            except ValueError:
                return None  # the SDK refuses such a stream too
        elif kind == "message_delta":
            delta = json_object(data.get("delta")) or {}
            for key in CLOSING_FIELDS:
                message[key] = copy_value(delta.get(key))
            if delta.get("container") is not None:
                message["container"] = copy_value(delta["container"])
            for key in _STATED_AT_CLOSE:
                if data.get(key) is not None:
                    message[key] = copy_value(data[key])
            usage = json_object(message.get("usage"))
            if usage is None:
                usage = message["usage"] = {}
            for key, value in (json_object(data.get("usage")) or {}).items():
                # Cumulative counts: they replace; absent ones keep message_start's.
                if key == "output_tokens" or value is not None:
                    usage[key] = copy_value(value)
        elif kind == "message_stop":
            return message
    return None


def _add_delta(
    block: dict[str, JsonValue], delta: dict[str, JsonValue], buffers: dict[int, str], index: int
) -> None:
    kind = delta.get("type")
    if kind == "text_delta" and block.get("type") == "text":
        block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
    elif kind == "input_json_delta" and block.get("type") in TOOL_BLOCKS:
        buffers[index] = buffers.get(index, "") + str(delta.get("partial_json", ""))
    elif kind == "thinking_delta" and block.get("type") == "thinking":
        block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
    elif kind == "signature_delta" and block.get("type") == "thinking":
        block["signature"] = copy_value(delta.get("signature"))
    elif kind == "compaction_delta" and block.get("type") == "compaction":
        # Each delta states the whole compacted context, not a piece of it.
        block["content"] = copy_value(delta.get("content"))
        block["encrypted_content"] = copy_value(delta.get("encrypted_content"))
    elif kind == "citations_delta" and block.get("type") == "text":
        cited = block.get("citations")
        block["citations"] = [*(cited if isinstance(cited, list) else []), delta.get("citation")]


# --- the cloud platforms' requests -------------------------------------------------------


def requested_model(request: Mapping[str, JsonValue], path: JsonValue) -> str | None:
    """The model a Messages request asks for: its body's `model`, else the one a cloud
    endpoint's path names (Bedrock and Vertex take the model out of the body)."""
    model = request.get("model")
    if isinstance(model, str):
        return model
    if not isinstance(path, str):
        return None
    segments = path.split("/")
    for position, segment in enumerate(segments[:-1]):
        model = segments[position + 1]
        if segment == "model":  # Bedrock's ids hold colons: `anthropic.claude-...-v1:0`
            return model or None
        if segment == "models":  # Vertex's ends in its method: `<model>:rawPredict`
            return model.rpartition(":")[0] or model or None
    return None


def streams_by_path(path: JsonValue) -> bool:
    """Whether a cloud endpoint's path says the answer streams (Bedrock takes `stream`
    out of the body and calls `invoke-with-response-stream`)."""
    return isinstance(path, str) and path.endswith("/invoke-with-response-stream")
