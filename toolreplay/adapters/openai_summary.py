"""The OpenAI adapter's call summaries: a model turn as the message it answered and its answer.

Registered for the `openai` namespace (`toolreplay.summaries`). It reads the
values the adapter records (RFC 0006: inputs `{method, path, query, body}`, the
output `{status, headers, body | events, ...}`; the first adapter's inputs were the
request fields themselves) and never imports the SDK: `toolreplay show` and the
debugger read traces where openai is not installed. That is why it lives beside the
`openai` package rather than in it, whose import checks the SDK.

Responses (`/responses`) and Chat Completions (`/chat/completions`) calls, streamed
or not, are summarized; other endpoints give None. The work per call is bounded by
what a summary shows, not by the size of the conversation: only the last input item
is read (and, for a tool output, the call that asked for it), a stream is read from
its end back to its final event, and text is cut before it is cleaned.
"""

from __future__ import annotations

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
from toolreplay.portable import JsonValue, json_object, json_objects
from toolreplay.summaries import CallSummary
from toolreplay.trace.model import Outcome

__all__ = ["summarize"]

_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


def summarize(effect: str, inputs: JsonValue, outcome: Outcome | None) -> CallSummary | None:
    """What a Responses or Chat Completions call was asked last, and what it answered."""
    shaped = json_object(inputs)
    if shaped is None:
        return None
    recorded_http = "method" in shaped and "path" in shaped
    request = json_object(shaped.get("body")) if recorded_http else shaped
    path = shaped.get("path") if recorded_http else None
    path = path if isinstance(path, str) else ""
    if request is None:
        return None
    if effect == "openai.chat.completions.create" or path.endswith("/chat/completions"):
        if "messages" not in request:
            return None
        return CallSummary(_chat_asked(request), answered(outcome, _chat_answer))
    if effect == "openai.responses.create" or path.endswith("/responses"):
        return CallSummary(_responses_asked(request), answered(outcome, _responses_answer))
    return None


# --- Responses ---------------------------------------------------------------------------


def _responses_asked(request: Mapping[str, JsonValue]) -> str:
    given = request.get("input")
    if isinstance(given, str):
        return f"user: {cut(given)}"
    items = json_objects(given)
    if items:
        return _responses_input_item(items[-1], items)
    previous = request.get("previous_response_id")
    if isinstance(previous, str):
        return f"continues {previous}"
    prompt = json_object(request.get("prompt"))
    if prompt is not None:
        return f"stored prompt {prompt.get('id')}"
    instructions = request.get("instructions")
    return f"instructions: {cut(instructions)}" if isinstance(instructions, str) else ""


def _responses_input_item(item: Mapping[str, JsonValue], items: Sequence[JsonValue]) -> str:
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        return f"{item.get('role', 'user')}: {content_text(item.get('content'))}"
    if kind in ("function_call_output", "custom_tool_call_output"):
        name = _tool_name(item.get("call_id"), items)
        output = item.get("output")
        shown = content_text(output) if isinstance(output, list) else json_text(output)
        return f"tool {name}: {shown}"
    if kind in ("function_call", "custom_tool_call"):
        field = "arguments" if kind == "function_call" else "input"
        return f"assistant: {call_text(item.get('name'), item.get(field))}"
    return f"[{kind}]" if isinstance(kind, str) else "[item]"


def _tool_name(call_id: JsonValue | None, items: Sequence[JsonValue]) -> str:
    """The name of the function call a tool output answers, found by its call id."""
    for item in reversed(items):
        shaped = json_object(item)
        if shaped is not None and shaped.get("call_id") == call_id and "name" in shaped:
            return str(shaped["name"])
    return str(call_id) if isinstance(call_id, str) else "output"


def _responses_answer(body: dict[str, JsonValue] | None, events: list[JsonValue] | None) -> str:
    if body is None:
        assert events is not None
        return _responses_stream_answer(events)
    error = json_object(body.get("error"))
    if error is not None:
        return f"error: {cut(str(error.get('message', '')))}"
    answer = _responses_output(json_objects(body.get("output")))
    incomplete = json_object(body.get("incomplete_details"))
    if incomplete is not None:
        answer += f" (incomplete: {incomplete.get('reason')})"
    return answer


def _responses_output(items: Sequence[Mapping[str, JsonValue]]) -> str:
    parts: list[str] = []
    for item in items:
        kind = item.get("type")
        if kind == "message":
            for part in json_objects(item.get("content")):
                if isinstance(part.get("text"), str):
                    parts.append(cut(str(part["text"])))
                elif isinstance(part.get("refusal"), str):
                    parts.append(f"refused: {cut(str(part['refusal']))}")
        elif kind in ("function_call", "custom_tool_call"):
            field = "arguments" if kind == "function_call" else "input"
            parts.append(call_text(item.get("name"), item.get(field)))
        elif kind != "reasoning" and isinstance(kind, str):
            parts.append(f"[{kind}]")
        if sum(map(len, parts)) > TEXT_LIMIT:
            break
    return joined(parts) or "(no output)"


def _responses_stream_answer(events: list[JsonValue]) -> str:
    """From the final response event, read from the end; else the items that completed."""
    for event in reversed(events):
        data = event_data(event)
        if data is None:
            continue
        kind = data.get("type")
        response = json_object(data.get("response"))
        if kind in _FINAL_EVENTS and response is not None:
            return _responses_answer(response, None)
        if kind == "error":
            return f"error: {cut(str(data.get('message')))}"
    done = [
        cast(dict[str, JsonValue], data["item"])
        for data in map(event_data, events)
        if data is not None
        and data.get("type") == "response.output_item.done"
        and json_object(data.get("item")) is not None
    ]
    return _responses_output(done) + " (stream ended before the response completed)"


# --- Chat Completions --------------------------------------------------------------------


def _chat_asked(request: Mapping[str, JsonValue]) -> str:
    messages = json_objects(request.get("messages"))
    if not messages:
        return ""
    last = messages[-1]
    role = str(last.get("role", "user"))
    if role == "tool":
        name = _chat_tool_name(last.get("tool_call_id"), messages)
        return f"tool {name}: {json_text(last.get('content'))}"
    calls = json_objects(last.get("tool_calls"))
    if calls:
        return f"{role}: " + joined(
            call_text(function.get("name"), function.get("arguments"))
            for function in (json_object(call.get("function")) or {} for call in calls)
        )
    return f"{role}: {content_text(last.get('content'))}"


def _chat_tool_name(call_id: JsonValue | None, messages: Sequence[Mapping[str, JsonValue]]) -> str:
    for message in reversed(messages):
        for call in json_objects(message.get("tool_calls")):
            function = json_object(call.get("function")) or {}
            if call.get("id") == call_id and isinstance(function.get("name"), str):
                return str(function["name"])
    return str(call_id) if isinstance(call_id, str) else "output"


def _chat_answer(body: dict[str, JsonValue] | None, events: list[JsonValue] | None) -> str:
    if body is None:
        assert events is not None
        return _chat_stream_answer(events)
    error = json_object(body.get("error"))
    if error is not None:
        return f"error: {cut(str(error.get('message', '')))}"
    choices = json_objects(body.get("choices"))
    if not choices:
        return "(no choices)"
    message = json_object(choices[0].get("message")) or {}
    parts: list[str] = []
    if isinstance(message.get("content"), str) and message["content"]:
        parts.append(cut(str(message["content"])))
    if isinstance(message.get("refusal"), str):
        parts.append(f"refused: {cut(str(message['refusal']))}")
    for call in json_objects(message.get("tool_calls")):
        function = json_object(call.get("function")) or {}
        parts.append(call_text(function.get("name"), function.get("arguments")))
    answer = joined(parts) or "(no content)"
    reason = choices[0].get("finish_reason")
    if reason == "length":
        answer += " (cut at the token limit)"
    return answer


def _chat_stream_answer(events: list[JsonValue]) -> str:
    """The first choice's deltas put back together: text, then the tool calls."""
    text: list[str] = []
    size = 0
    calls: dict[int, list[str]] = {}  # index -> [name, arguments]
    refusal: list[str] = []
    for event in events:
        data = event_data(event)
        if data is None:
            continue
        choices = json_objects(data.get("choices"))
        delta = json_object(choices[0].get("delta")) if choices else None
        if delta is None:
            continue
        content = delta.get("content")
        if isinstance(content, str) and size < TEXT_LIMIT:
            text.append(content)
            size += len(content)
        if isinstance(delta.get("refusal"), str):
            refusal.append(str(delta["refusal"]))
        for call in json_objects(delta.get("tool_calls")):
            index = call.get("index")
            slot = calls.setdefault(index if isinstance(index, int) else len(calls), ["", ""])
            function = json_object(call.get("function")) or {}
            if isinstance(function.get("name"), str):
                slot[0] += str(function["name"])
            arguments = function.get("arguments")
            if isinstance(arguments, str) and len(slot[1]) <= JSON_LIMIT:
                slot[1] += arguments
    parts: list[str] = []
    if text:
        parts.append(cut("".join(text)))
    if refusal:
        parts.append(f"refused: {cut(''.join(refusal))}")
    parts += [
        call_text(name or None, arguments) for name, arguments in (calls[i] for i in sorted(calls))
    ]
    return joined(parts) or "(no content)"
