"""The Google Gen AI adapter's call summaries: a Gemini call as the turn it answered and
its answer.

Registered for the `google_genai` namespace (`toolreplay.summaries`). It reads the values
the adapter records (RFC 0006 Part V: inputs `{method, path, query, headers, body}`, the
output `{status, headers, body | events, ...}`) and never imports the SDK, which is why
it lives beside the `google_genai` package rather than in it (whose import checks the
SDK). Only `models.generate_content` and `models.stream_generate_content` calls are
summarized; other endpoints give None.

`asked` is the last content of the request: `user: <text>`, `function <name>: <response>`
for a function response, `model: <name>(<args>)` for a function call. `answered` is the
text and function calls of the answer, thought summaries left out, with `(cut at the
token limit)` when it stopped there. A stream is read chunk by chunk, bounded by what a
summary shows.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolreplay.adapters.model_summaries import (
    TEXT_LIMIT,
    answered,
    call_text,
    cut,
    event_data,
    joined,
    json_text,
)
from toolreplay.portable import JsonValue, json_object, json_objects
from toolreplay.summaries import CallSummary
from toolreplay.trace.model import Outcome

__all__ = ["summarize"]

_EFFECTS = ("google_genai.models.generate_content", "google_genai.models.stream_generate_content")


def summarize(effect: str, inputs: JsonValue, outcome: Outcome | None) -> CallSummary | None:
    """What a Gemini call was asked last, and what it answered."""
    shaped = json_object(inputs)
    if shaped is None or effect not in _EFFECTS:
        return None
    request = json_object(shaped.get("body"))
    if request is None or "contents" not in request:
        return None
    return CallSummary(_asked(request), answered(outcome, _answer))


def _part_text(part: Mapping[str, JsonValue]) -> str:
    text = part.get("text")
    if isinstance(text, str):
        return cut(text)
    call = json_object(part.get("functionCall"))
    if call is not None:
        return call_text(call.get("name"), call.get("args"))
    kind = next((key for key in part if key not in ("thought", "thoughtSignature")), "part")
    return f"[{kind}]"


def _asked(request: Mapping[str, JsonValue]) -> str:
    contents = request.get("contents")
    if isinstance(contents, str):  # the API takes a bare string too
        return f"user: {cut(contents)}"
    last = (json_objects(contents) or [{}])[-1]
    parts = json_objects(last.get("parts"))
    if not parts:
        system = json_object(request.get("systemInstruction")) or {}
        texts = [_part_text(part) for part in json_objects(system.get("parts"))]
        return f"system: {joined(texts)}" if texts else ""
    responses = [json_object(part.get("functionResponse")) for part in parts]
    answered_calls = [response for response in responses if response is not None]
    if answered_calls:
        return joined(
            f"function {response.get('name', 'function')}: {json_text(response.get('response'))}"
            for response in answered_calls
        )
    role = str(last.get("role", "user"))
    shown = [_part_text(part) for part in parts if part.get("thought") is not True]
    return f"{role}: " + joined(shown)


def _parts(parts: list[dict[str, JsonValue]]) -> list[str]:
    """The answer's parts as shown, thoughts left out; a text streamed in pieces is one."""
    shown: list[str] = []
    in_text = False
    for part in parts:
        if part.get("thought") is True:
            continue
        text = part.get("text")
        if isinstance(text, str):
            if in_text:
                shown[-1] = cut(shown[-1] + text)
            elif text:
                shown.append(cut(text))
                in_text = True
        else:
            shown.append(_part_text(part))
            in_text = False
        if sum(map(len, shown)) > TEXT_LIMIT:
            break
    return shown


def _with_finish(answer: str, reason: JsonValue | None) -> str:
    return answer + (" (cut at the token limit)" if reason == "MAX_TOKENS" else "")


def _candidate(response: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    return (json_objects(response.get("candidates")) or [{}])[0]


def _answer(body: dict[str, JsonValue] | None, events: list[JsonValue] | None) -> str:
    if body is None:
        assert events is not None
        return _stream_answer(events)
    blocked = json_object(body.get("promptFeedback")) or {}
    if "candidates" not in body and isinstance(blocked.get("blockReason"), str):
        return f"blocked: {blocked['blockReason']}"
    candidate = _candidate(body)
    content = json_object(candidate.get("content")) or {}
    answer = joined(_parts(json_objects(content.get("parts")))) or "(no content)"
    return _with_finish(answer, candidate.get("finishReason"))


def _stream_answer(events: list[JsonValue]) -> str:
    """The parts the stream's chunks add up to (text, function calls), bounded."""
    parts: list[dict[str, JsonValue]] = []
    size = 0
    reason: JsonValue | None = None
    for event in events:
        data = event_data(event)
        if data is None:
            continue
        error = json_object(data.get("error"))
        if error is not None:
            return f"error: {cut(str(error.get('message', '')))}"
        candidate = _candidate(data)
        reason = candidate.get("finishReason", reason)
        if size < TEXT_LIMIT:
            content = json_object(candidate.get("content")) or {}
            for part in json_objects(content.get("parts")):
                parts.append(part)
                size += len(str(part.get("text", ""))) or 16
    answer = _with_finish(joined(_parts(parts)) or "(no content)", reason)
    return answer if reason is not None else answer + " (stream ended before its finish reason)"
