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

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import cast

from toolreplay.portable import JsonValue
from toolreplay.summaries import SUMMARY_LIMIT, CallSummary
from toolreplay.trace.model import Outcome, Raised, Returned

__all__ = ["summarize"]

_TEXT = SUMMARY_LIMIT * 2  # characters of a text taken before it is cleaned and cut
_JSON = 4_000  # a longer JSON string is shown as text, not parsed
_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")

_AnswerReader = Callable[[dict[str, JsonValue] | None, list[JsonValue] | None], str]
"""Reads an answer from a JSON body, or else from a stream's events."""


def summarize(effect: str, inputs: JsonValue, outcome: Outcome | None) -> CallSummary | None:
    """What a Responses or Chat Completions call was asked last, and what it answered."""
    shaped = _object(inputs)
    if shaped is None:
        return None
    recorded_http = "method" in shaped and "path" in shaped
    request = _object(shaped.get("body")) if recorded_http else shaped
    path = shaped.get("path") if recorded_http else None
    path = path if isinstance(path, str) else ""
    if request is None:
        return None
    if effect == "openai.chat.completions.create" or path.endswith("/chat/completions"):
        if "messages" not in request:
            return None
        return CallSummary(_chat_asked(request), _answered(outcome, _chat_answer))
    if effect == "openai.responses.create" or path.endswith("/responses"):
        return CallSummary(_responses_asked(request), _answered(outcome, _responses_answer))
    return None


# --- values ------------------------------------------------------------------------------


def _object(value: JsonValue | None) -> dict[str, JsonValue] | None:
    return cast(dict[str, JsonValue], value) if isinstance(value, dict) else None


def _objects(value: JsonValue | None) -> list[dict[str, JsonValue]]:
    if not isinstance(value, list):
        return []
    return [cast(dict[str, JsonValue], item) for item in value if isinstance(item, dict)]


def _cut(text: str) -> str:
    return text[:_TEXT]


def _json_text(value: JsonValue | None) -> str:
    """Arguments or a tool's output: JSON (from a string holding it, too) on one line."""
    if isinstance(value, str):
        if len(value) > _JSON:
            return _cut(value)
        try:
            value = cast(JsonValue, json.loads(value))
        except (ValueError, RecursionError):
            return _cut(value)
        if isinstance(value, str):
            return _cut(value)
    try:
        return _cut(json.dumps(value, ensure_ascii=False, sort_keys=False))
    except (ValueError, RecursionError):  # nested past what json can write
        return "[…]"


def _content_text(content: JsonValue | None) -> str:
    """A message's text: a string, or its parts' text (other parts by their kind)."""
    if isinstance(content, str):
        return _cut(content)
    pieces: list[str] = []
    for part in _objects(content):
        text = part.get("text", part.get("refusal"))
        if isinstance(text, str):
            pieces.append(_cut(text))
        else:
            pieces.append(f"[{part.get('type', 'part')}]")
        if sum(map(len, pieces)) > _TEXT:
            break
    return " ".join(pieces)


def _call(name: JsonValue | None, arguments: JsonValue | None) -> str:
    return f"{name if isinstance(name, str) else 'tool'}({_json_text(arguments)})"


def _joined(parts: Iterable[str]) -> str:
    kept: list[str] = []
    for part in parts:
        kept.append(part)
        if sum(map(len, kept)) > _TEXT:
            break
    return ", ".join(kept)


def _answered(outcome: Outcome | None, answer: _AnswerReader) -> str:
    """The answer of an outcome: a failure's type and message, an HTTP error, or what
    `answer` reads from the recorded output."""
    if outcome is None:
        return ""
    if isinstance(outcome, Raised):
        return f"{outcome.error_type.rpartition('.')[2]}: {_cut(outcome.message)}"
    assert isinstance(outcome, Returned)
    output = _object(outcome.value)
    if output is None:
        return ""
    status = output.get("status")
    body = _object(output.get("body"))
    if isinstance(status, int) and status >= 400:
        error = _object((body or {}).get("error")) or {}
        message = error.get("message")
        return f"HTTP {status}" + (f": {_cut(message)}" if isinstance(message, str) else "")
    if body is not None:
        return answer(body, None)
    events = output.get("events")
    if isinstance(events, list):
        text = answer(None, cast(list[JsonValue], events))
        return text + (" (stream closed early)" if output.get("end") == "closed_early" else "")
    text = output.get("text")
    return _cut(text) if isinstance(text, str) else ""


def _event_data(event: JsonValue) -> dict[str, JsonValue] | None:
    return _object((_object(event) or {}).get("data"))


# --- Responses ---------------------------------------------------------------------------


def _responses_asked(request: Mapping[str, JsonValue]) -> str:
    given = request.get("input")
    if isinstance(given, str):
        return f"user: {_cut(given)}"
    items = _objects(given)
    if items:
        return _responses_input_item(items[-1], items)
    previous = request.get("previous_response_id")
    if isinstance(previous, str):
        return f"continues {previous}"
    prompt = _object(request.get("prompt"))
    if prompt is not None:
        return f"stored prompt {prompt.get('id')}"
    instructions = request.get("instructions")
    return f"instructions: {_cut(instructions)}" if isinstance(instructions, str) else ""


def _responses_input_item(item: Mapping[str, JsonValue], items: Sequence[JsonValue]) -> str:
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        return f"{item.get('role', 'user')}: {_content_text(item.get('content'))}"
    if kind in ("function_call_output", "custom_tool_call_output"):
        name = _tool_name(item.get("call_id"), items)
        output = item.get("output")
        shown = _content_text(output) if isinstance(output, list) else _json_text(output)
        return f"tool {name}: {shown}"
    if kind in ("function_call", "custom_tool_call"):
        field = "arguments" if kind == "function_call" else "input"
        return f"assistant: {_call(item.get('name'), item.get(field))}"
    return f"[{kind}]" if isinstance(kind, str) else "[item]"


def _tool_name(call_id: JsonValue | None, items: Sequence[JsonValue]) -> str:
    """The name of the function call a tool output answers, found by its call id."""
    for item in reversed(items):
        shaped = _object(item)
        if shaped is not None and shaped.get("call_id") == call_id and "name" in shaped:
            return str(shaped["name"])
    return str(call_id) if isinstance(call_id, str) else "output"


def _responses_answer(body: dict[str, JsonValue] | None, events: list[JsonValue] | None) -> str:
    if body is None:
        assert events is not None
        return _responses_stream_answer(events)
    error = _object(body.get("error"))
    if error is not None:
        return f"error: {_cut(str(error.get('message', '')))}"
    answer = _responses_output(_objects(body.get("output")))
    incomplete = _object(body.get("incomplete_details"))
    if incomplete is not None:
        answer += f" (incomplete: {incomplete.get('reason')})"
    return answer


def _responses_output(items: Sequence[Mapping[str, JsonValue]]) -> str:
    parts: list[str] = []
    for item in items:
        kind = item.get("type")
        if kind == "message":
            for part in _objects(item.get("content")):
                if isinstance(part.get("text"), str):
                    parts.append(_cut(str(part["text"])))
                elif isinstance(part.get("refusal"), str):
                    parts.append(f"refused: {_cut(str(part['refusal']))}")
        elif kind in ("function_call", "custom_tool_call"):
            field = "arguments" if kind == "function_call" else "input"
            parts.append(_call(item.get("name"), item.get(field)))
        elif kind != "reasoning" and isinstance(kind, str):
            parts.append(f"[{kind}]")
        if sum(map(len, parts)) > _TEXT:
            break
    return _joined(parts) or "(no output)"


def _responses_stream_answer(events: list[JsonValue]) -> str:
    """From the final response event, read from the end; else the items that completed."""
    for event in reversed(events):
        data = _event_data(event)
        if data is None:
            continue
        kind = data.get("type")
        response = _object(data.get("response"))
        if kind in _FINAL_EVENTS and response is not None:
            return _responses_answer(response, None)
        if kind == "error":
            return f"error: {_cut(str(data.get('message')))}"
    done = [
        cast(dict[str, JsonValue], data["item"])
        for data in map(_event_data, events)
        if data is not None
        and data.get("type") == "response.output_item.done"
        and _object(data.get("item")) is not None
    ]
    return _responses_output(done) + " (stream ended before the response completed)"


# --- Chat Completions --------------------------------------------------------------------


def _chat_asked(request: Mapping[str, JsonValue]) -> str:
    messages = _objects(request.get("messages"))
    if not messages:
        return ""
    last = messages[-1]
    role = str(last.get("role", "user"))
    if role == "tool":
        name = _chat_tool_name(last.get("tool_call_id"), messages)
        return f"tool {name}: {_json_text(last.get('content'))}"
    calls = _objects(last.get("tool_calls"))
    if calls:
        return f"{role}: " + _joined(
            _call(function.get("name"), function.get("arguments"))
            for function in (_object(call.get("function")) or {} for call in calls)
        )
    return f"{role}: {_content_text(last.get('content'))}"


def _chat_tool_name(call_id: JsonValue | None, messages: Sequence[Mapping[str, JsonValue]]) -> str:
    for message in reversed(messages):
        for call in _objects(message.get("tool_calls")):
            function = _object(call.get("function")) or {}
            if call.get("id") == call_id and isinstance(function.get("name"), str):
                return str(function["name"])
    return str(call_id) if isinstance(call_id, str) else "output"


def _chat_answer(body: dict[str, JsonValue] | None, events: list[JsonValue] | None) -> str:
    if body is None:
        assert events is not None
        return _chat_stream_answer(events)
    error = _object(body.get("error"))
    if error is not None:
        return f"error: {_cut(str(error.get('message', '')))}"
    choices = _objects(body.get("choices"))
    if not choices:
        return "(no choices)"
    message = _object(choices[0].get("message")) or {}
    parts: list[str] = []
    if isinstance(message.get("content"), str) and message["content"]:
        parts.append(_cut(str(message["content"])))
    if isinstance(message.get("refusal"), str):
        parts.append(f"refused: {_cut(str(message['refusal']))}")
    for call in _objects(message.get("tool_calls")):
        function = _object(call.get("function")) or {}
        parts.append(_call(function.get("name"), function.get("arguments")))
    answer = _joined(parts) or "(no content)"
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
        data = _event_data(event)
        if data is None:
            continue
        choices = _objects(data.get("choices"))
        delta = _object(choices[0].get("delta")) if choices else None
        if delta is None:
            continue
        content = delta.get("content")
        if isinstance(content, str) and size < _TEXT:
            text.append(content)
            size += len(content)
        if isinstance(delta.get("refusal"), str):
            refusal.append(str(delta["refusal"]))
        for call in _objects(delta.get("tool_calls")):
            index = call.get("index")
            slot = calls.setdefault(index if isinstance(index, int) else len(calls), ["", ""])
            function = _object(call.get("function")) or {}
            if isinstance(function.get("name"), str):
                slot[0] += str(function["name"])
            arguments = function.get("arguments")
            if isinstance(arguments, str) and len(slot[1]) <= _JSON:
                slot[1] += arguments
    parts: list[str] = []
    if text:
        parts.append(_cut("".join(text)))
    if refusal:
        parts.append(f"refused: {_cut(''.join(refusal))}")
    parts += [
        _call(name or None, arguments) for name, arguments in (calls[i] for i in sorted(calls))
    ]
    return _joined(parts) or "(no content)"
