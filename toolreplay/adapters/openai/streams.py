"""A recorded model answer as its final object, and edits of it that keep a stream
consistent.

Pure functions over recorded outputs (`{status, headers, body | events, end}`,
RFC 0006 §4.1), like `exchange.py`: no SDK, no HTTP library. What is particular to
each API's stream lives beside this module: `responses_stream.py` (Responses API
events) and `chat_stream.py` (Chat Completions chunks), each generating the stream
`reply(...)` serves and rewriting a stream to agree with an edit.

- `final_response(output)`: what the SDK ends up with for a Responses or Chat
  Completions answer: the JSON body, or for a stream the response its last
  lifecycle event carries (Responses) or the completion its chunks add up to
  (Chat Completions).
- `edited_output(output, edits)`: the output with values of that final object
  set by JSON path; a stream's deltas, `*.done` events and final response are
  rewritten to agree, so the SDK accumulates exactly the edited object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, cast

from toolreplay.adapters.capture.recipes import apply_edits as core_apply_edits
from toolreplay.adapters.openai.chat_stream import CHUNK_OBJECT, accumulate_chat, edit_chat_stream
from toolreplay.adapters.openai.events import event_data
from toolreplay.adapters.openai.responses_stream import edit_responses_stream, terminal_index
from toolreplay.errors import PatchError
from toolreplay.portable import (
    JsonObject,
    JsonValue,
    copy_value,
    json_object,
    json_objects,
    preview,
)

__all__ = [
    "ResponseKind",
    "apply_edits",
    "edited_output",
    "final_response",
    "response_kind",
    "text_paths",
]

ResponseKind = Literal["responses", "chat"]
"""Which API an answer comes from: the Responses API or Chat Completions."""

_PATHS = (
    "Paths run through the final response (for a stream, the response the SDK ends up "
    "with), like $.output[1].content[0].text, $.output[0].arguments, "
    "$.choices[0].message.content"
)


def response_kind(output: Mapping[str, JsonValue]) -> ResponseKind | None:
    """Whether a recorded output is a Responses or a Chat Completions answer (or neither)."""
    body = json_object(output.get("body", None))
    if body is not None:
        kind = body.get("object")
        return "responses" if kind == "response" else "chat" if kind == "chat.completion" else None
    for event in json_objects(output.get("events")):
        data = json_object(event.get("data"))
        if data is None:
            continue
        if isinstance(data.get("type"), str) and str(data["type"]).startswith("response."):
            return "responses"
        if data.get("object") == CHUNK_OBJECT:
            return "chat"
    return None


def final_response(output: Mapping[str, JsonValue]) -> JsonObject | None:
    """The final object of a Responses or Chat Completions answer, or None.

    A JSON body is itself; a Responses stream gives the response of its last
    `response.completed` (or `.incomplete`, `.failed`) event; a Chat Completions
    stream the `chat.completion` its chunks add up to, as the SDK accumulates
    them. None when the output is neither, or a stream ended before its final
    response.
    """
    kind = response_kind(output)
    if kind is None:
        return None
    body = json_object(output.get("body"))
    if body is not None:
        return body
    events = json_objects(output.get("events"))
    if kind == "responses":
        terminal = terminal_index(events)
        if terminal is None:
            return None
        data = event_data(events[terminal])
        return json_object(data.get("response")) if data is not None else None
    return accumulate_chat(events)[0]


# --- edits ------------------------------------------------------------------------------


def apply_edits(value: JsonValue, edits: Mapping[str, JsonValue]) -> JsonValue:
    """`value` with each path of `edits` set to its value (a new value; `value` is kept);
    the capture core's `apply_edits`, whose message names this API's paths."""
    return core_apply_edits(value, edits, _PATHS)


def text_paths(final: Mapping[str, JsonValue]) -> list[str]:
    """The JSON paths of the texts and function-call arguments in a final response (what a
    user most often edits), in order: `$.output[1].content[0].text`, `$.choices[0].message
    .content`, ..."""
    paths: list[str] = []
    for index, item in enumerate(json_objects(final.get("output"))):
        kind = item.get("type")
        if kind == "message":
            for number, part in enumerate(json_objects(item.get("content"))):
                field = "refusal" if part.get("type") == "refusal" else "text"
                paths.append(f"$.output[{index}].content[{number}].{field}")
        elif kind == "function_call":
            paths.append(f"$.output[{index}].arguments")
        elif kind == "reasoning":
            paths.extend(
                f"$.output[{index}].summary[{number}].text"
                for number in range(len(json_objects(item.get("summary"))))
            )
    for position, choice in enumerate(json_objects(final.get("choices"))):
        message = json_object(choice.get("message")) or {}
        for field in ("content", "refusal"):
            if isinstance(message.get(field), str):
                paths.append(f"$.choices[{position}].message.{field}")
        paths.extend(
            f"$.choices[{position}].message.tool_calls[{number}].function.arguments"
            for number in range(len(json_objects(message.get("tool_calls"))))
        )
    return paths


def edited_output(
    output: Mapping[str, JsonValue], edits: Mapping[str, JsonValue]
) -> dict[str, JsonValue]:
    """A recorded output with values of its final object set by JSON path, consistently.

        edited_output(recorded, {"$.output[1].content[0].text": "Refund held for review."})

    The paths run through `final_response(output)`. A JSON body is edited as it
    is. A stream's events are rewritten so that the SDK accumulates exactly the
    edited object: the deltas of an edited text, refusal, function-call arguments
    or reasoning summary carry the new text (pieces as long as the recorded ones,
    the last taking the rest, so an unchanged start keeps its deltas), and its
    `*.done` events, the item's `output_item.done` and the final response hold it;
    a changed top-level field (model, usage, ...) is set wherever the stream
    states it. An edit the events cannot carry (adding or removing output items,
    changing an item's id, type or status, annotations, logprobs) is a
    `PatchError` saying what can be edited; use `reply(...)` to write a new
    answer. `output` is not changed.
    """
    final = final_response(output)
    if final is None:
        raise PatchError(
            "edit(...) changes a recorded Responses or Chat Completions answer; this output "
            "is neither, or a stream that ended before its final response. Give the output "
            "value itself instead"
        )
    try:
        edited = apply_edits(final, edits)
    except PatchError as error:
        paths = text_paths(final)
        if not paths:
            raise
        raise PatchError(f"{error}. This answer's texts are at {', '.join(paths)}") from None
    edited_object = json_object(edited)
    if edited_object is None:
        raise PatchError(f"an edit must leave the final response an object, got {preview(edited)}")
    result = cast(dict[str, JsonValue], copy_value(dict(output)))
    if "body" in result:
        result["body"] = edited_object
        return result
    recorded = result.get("events")
    if not isinstance(recorded, list) or len(json_objects(recorded)) != len(recorded):
        raise PatchError("the recorded stream's events are not all objects; re-record the call")
    events = cast(list[JsonObject], recorded)  # edited in place: events may be inserted
    if response_kind(output) == "responses":
        edit_responses_stream(events, final, edited_object)
    else:
        edit_chat_stream(events, final, edited_object)
    return result
