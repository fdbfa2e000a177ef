"""A recorded model answer as its final object, and streams that stay consistent when edited.

Pure functions over recorded outputs (`{status, headers, body | events, end}`,
RFC 0006 §4.1), like `exchange.py`: no SDK, no HTTP library.

- `final_response(output)`: what the SDK ends up with for a Responses or Chat
  Completions answer: the JSON body, or for a stream the response its last
  lifecycle event carries (Responses) or the completion its chunks add up to
  (Chat Completions).
- `edited_output(output, edits)`: the output with values of that final object
  set by JSON path; a stream's deltas, `*.done` events and final response are
  rewritten to agree, so the SDK accumulates exactly the edited object.
- `responses_events(final)` and `chat_chunks(final, include_usage=...)`: the event
  sequence the API would stream for a final object (what `reply(...)` serves to
  a streaming request).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Literal, cast

from toolreplay.adapters.capture.recipes import apply_edits as core_apply_edits
from toolreplay.errors import PatchError
from toolreplay.portable import JsonValue, copy_value, preview

__all__ = [
    "ResponseKind",
    "apply_edits",
    "chat_chunks",
    "edited_output",
    "final_response",
    "response_kind",
    "responses_events",
    "text_paths",
]

ResponseKind = Literal["responses", "chat"]
"""Which API an answer comes from: the Responses API or Chat Completions."""

JsonObject = dict[str, JsonValue]

_TERMINAL = ("response.completed", "response.incomplete", "response.failed")
# Fields of the final response that the opening lifecycle events state for themselves.
_LIFECYCLE = frozenset({"status", "usage", "completed_at", "error", "incomplete_details", "output"})
_CHUNK = "chat.completion.chunk"
_PATHS = (
    "Paths run through the final response (for a stream, the response the SDK ends up "
    "with), like $.output[1].content[0].text, $.output[0].arguments, "
    "$.choices[0].message.content"
)


def _object(value: JsonValue) -> JsonObject | None:
    return cast(JsonObject, value) if isinstance(value, dict) else None


def _objects(value: JsonValue) -> list[JsonObject]:
    if not isinstance(value, list):
        return []
    return [cast(JsonObject, item) for item in value if isinstance(item, dict)]


def _copy(value: JsonObject) -> JsonObject:
    return cast(JsonObject, copy_value(value))


def _data(event: JsonValue) -> JsonObject | None:
    found = _object(event)
    return _object(found.get("data")) if found is not None else None


def response_kind(output: Mapping[str, JsonValue]) -> ResponseKind | None:
    """Whether a recorded output is a Responses or a Chat Completions answer (or neither)."""
    body = _object(output.get("body", None))
    if body is not None:
        kind = body.get("object")
        return "responses" if kind == "response" else "chat" if kind == "chat.completion" else None
    for event in _objects(output.get("events")):
        data = _object(event.get("data"))
        if data is None:
            continue
        if isinstance(data.get("type"), str) and str(data["type"]).startswith("response."):
            return "responses"
        if data.get("object") == _CHUNK:
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
    body = _object(output.get("body"))
    if body is not None:
        return body
    events = _objects(output.get("events"))
    if kind == "responses":
        terminal = _terminal_index(events)
        if terminal is None:
            return None
        data = _data(events[terminal])
        return _object(data.get("response")) if data is not None else None
    return _accumulate_chat(events)[0]


def _terminal_index(events: list[JsonObject]) -> int | None:
    for index in range(len(events) - 1, -1, -1):
        data = _data(events[index])
        if data is not None and data.get("type") in _TERMINAL and _object(data.get("response")):
            return index
    return None


# --- Chat Completions chunks --------------------------------------------------------


def _merge(into: JsonObject, delta: JsonObject) -> None:
    """Add a chunk's delta to the message so far: strings are appended, lists of
    objects with an `index` merged by that index, other values replaced."""
    for key, value in delta.items():
        current = into.get(key)
        if isinstance(value, list) and all(isinstance(v, dict) and "index" in v for v in value):
            merged = cast(list[JsonValue], current) if isinstance(current, list) else []
            for entry in _objects(value):
                position = entry["index"]
                found = next(
                    (e for e in _objects(merged) if e.get("index") == position),
                    None,
                )
                if found is None:
                    found = cast(JsonObject, {})
                    merged.append(found)
                _merge(found, entry)
            into[key] = merged
        elif isinstance(value, str) and isinstance(current, str) and key not in ("type", "index"):
            into[key] = current + value
        elif isinstance(value, dict) and isinstance(current, dict):
            _merge(cast(JsonObject, current), cast(JsonObject, value))
        elif current is None or key not in into or not isinstance(value, dict | list):
            into[key] = copy_value(value)


def _accumulate_chat(events: list[JsonObject]) -> tuple[JsonObject | None, dict[int, list[int]]]:
    """The completion a chunk stream adds up to, and per choice index the positions
    (in the stream) of its tool calls' `index` values, in list order."""
    final: JsonObject | None = None
    choices: dict[int, JsonObject] = {}
    for event in events:
        data = _object(event.get("data"))
        if data is None or data.get("object") != _CHUNK:
            continue
        if final is None:
            final = {
                key: copy_value(value)
                for key, value in data.items()
                if key not in ("choices", "usage", "obfuscation")
            }
            final["object"] = "chat.completion"
        for choice in _objects(data.get("choices")):
            number = choice.get("index")
            if type(number) is not int:
                continue
            entry = choices.setdefault(
                number,
                {"index": number, "message": {}, "logprobs": None, "finish_reason": None},
            )
            delta = _object(choice.get("delta"))
            if delta is not None:
                _merge(cast(JsonObject, entry["message"]), delta)
            if choice.get("finish_reason") is not None:
                entry["finish_reason"] = choice["finish_reason"]
        if data.get("usage") is not None:
            final["usage"] = copy_value(data["usage"])
    if final is None:
        return None, {}
    tool_indexes: dict[int, list[int]] = {}
    for number, entry in choices.items():
        message = cast(JsonObject, entry["message"])
        calls = _objects(message.get("tool_calls"))
        calls.sort(key=lambda call: cast(int, call.get("index", 0)))
        tool_indexes[number] = [cast(int, call.get("index", 0)) for call in calls]
        if "tool_calls" in message:
            message["tool_calls"] = [
                {key: value for key, value in call.items() if key != "index"} for call in calls
            ]
    final["choices"] = [choices[number] for number in sorted(choices)]
    final.setdefault("usage", None)
    return final, tool_indexes


# --- generating streams (reply) -------------------------------------------------------

_PIECE = re.compile(r"\s*\S+\s*|\s+")


def _pieces(text: str, size: int = 24) -> list[str]:
    """`text` in the small pieces a model streams: words with their spacing."""
    pieces: list[str] = []
    for match in _PIECE.finditer(text):
        word = match.group()
        pieces.extend(word[start : start + size] for start in range(0, len(word), size))
    return pieces


def responses_events(final: JsonObject) -> list[JsonValue]:
    """The Responses API's event stream for `final`, as a recorded output's `events`."""
    started: JsonObject = {**final, "status": "in_progress", "output": [], "usage": None}
    if "completed_at" in final:
        started["completed_at"] = None
    events: list[tuple[str, JsonObject]] = [
        ("response.created", {"response": started}),
        ("response.in_progress", {"response": copy_value(started)}),
    ]
    for index, item in enumerate(_objects(final.get("output"))):
        events.extend(_item_events(index, item))
    events.append(("response.completed", {"response": final}))
    return [
        {"event": kind, "data": {"type": kind, "sequence_number": number, **data}}
        for number, (kind, data) in enumerate(events)
    ]


def _item_events(index: int, item: JsonObject) -> list[tuple[str, JsonObject]]:
    kind = item.get("type")
    item_id = item.get("id")
    at: JsonObject = {"item_id": item_id, "output_index": index}
    events: list[tuple[str, JsonObject]] = []
    if kind == "message":
        opening = {**item, "status": "in_progress", "content": []}
        events.append(("response.output_item.added", {"output_index": index, "item": opening}))
        for number, part in enumerate(_objects(item.get("content"))):
            where: JsonObject = {**at, "content_index": number}
            if part.get("type") == "refusal":
                refusal = str(part.get("refusal", ""))
                empty: JsonObject = {**part, "refusal": ""}
                events.append(("response.content_part.added", {**where, "part": empty}))
                events.extend(
                    ("response.refusal.delta", {**where, "delta": piece})
                    for piece in _pieces(refusal)
                )
                events.append(("response.refusal.done", {**where, "refusal": refusal}))
            else:
                text = str(part.get("text", ""))
                empty = {**part, "text": ""}
                events.append(("response.content_part.added", {**where, "part": empty}))
                events.extend(
                    ("response.output_text.delta", {**where, "delta": piece, "logprobs": []})
                    for piece in _pieces(text)
                )
                events.append(
                    ("response.output_text.done", {**where, "text": text, "logprobs": []})
                )
            events.append(("response.content_part.done", {**where, "part": part}))
    elif kind == "function_call":
        arguments = str(item.get("arguments", ""))
        opening = {**item, "arguments": "", "status": "in_progress"}
        events.append(("response.output_item.added", {"output_index": index, "item": opening}))
        events.extend(
            ("response.function_call_arguments.delta", {**at, "delta": piece})
            for piece in _pieces(arguments)
        )
        events.append(("response.function_call_arguments.done", {**at, "arguments": arguments}))
    elif kind == "reasoning":
        opening = {**item, "summary": []}
        if "status" in item:
            opening["status"] = "in_progress"
        events.append(("response.output_item.added", {"output_index": index, "item": opening}))
        for number, part in enumerate(_objects(item.get("summary"))):
            where = {**at, "summary_index": number}
            text = str(part.get("text", ""))
            empty = {**part, "text": ""}
            events.append(("response.reasoning_summary_part.added", {**where, "part": empty}))
            events.extend(
                ("response.reasoning_summary_text.delta", {**where, "delta": piece})
                for piece in _pieces(text)
            )
            events.append(("response.reasoning_summary_text.done", {**where, "text": text}))
            events.append(("response.reasoning_summary_part.done", {**where, "part": part}))
    else:
        events.append(("response.output_item.added", {"output_index": index, "item": item}))
    events.append(("response.output_item.done", {"output_index": index, "item": item}))
    return events


def chat_chunks(final: JsonObject, *, include_usage: bool) -> list[JsonValue]:
    """The Chat Completions chunk stream for `final` (a `chat.completion`), ending with
    `[DONE]`, as a recorded output's `events`; with `include_usage` every chunk has
    `usage: null` and a last chunk carries the usage, as `stream_options` asks."""
    head: JsonObject = {
        key: value for key, value in final.items() if key not in ("choices", "usage", "object")
    }
    head = {"id": head.pop("id", None), "object": _CHUNK, **head}

    def chunk(choices: list[JsonValue]) -> JsonValue:
        data: JsonObject = {**_copy(head), "choices": choices}
        if include_usage:
            data["usage"] = None
        return {"data": data}

    def entry(number: JsonValue, delta: JsonObject, finish: JsonValue = None) -> list[JsonValue]:
        return [{"index": number, "delta": delta, "logprobs": None, "finish_reason": finish}]

    events: list[JsonValue] = []
    for choice in _objects(final.get("choices")):
        number = choice.get("index", 0)
        message = _object(choice.get("message")) or {}
        content = message.get("content")
        opening: JsonObject = {
            "role": message.get("role", "assistant"),
            "content": "" if isinstance(content, str) else None,
            "refusal": None,
        }
        events.append(chunk(entry(number, opening)))
        if isinstance(content, str):
            events.extend(chunk(entry(number, {"content": p})) for p in _pieces(content))
        refusal = message.get("refusal")
        if isinstance(refusal, str):
            events.extend(chunk(entry(number, {"refusal": p})) for p in _pieces(refusal))
        for position, call in enumerate(_objects(message.get("tool_calls"))):
            function = _object(call.get("function")) or {}
            arguments = str(function.get("arguments", ""))
            named: JsonObject = {
                "index": position,
                "id": call.get("id"),
                "type": call.get("type", "function"),
                "function": {"name": function.get("name"), "arguments": ""},
            }
            events.append(chunk(entry(number, {"tool_calls": [named]})))
            events.extend(
                chunk(
                    entry(
                        number,
                        {"tool_calls": [{"index": position, "function": {"arguments": p}}]},
                    )
                )
                for p in _pieces(arguments)
            )
        events.append(chunk(entry(number, {}, choice.get("finish_reason", "stop"))))
    if include_usage:
        events.append({"data": {**_copy(head), "choices": [], "usage": final.get("usage")}})
    events.append({"data_text": "[DONE]"})
    return events


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
    for index, item in enumerate(_objects(final.get("output"))):
        kind = item.get("type")
        if kind == "message":
            for number, part in enumerate(_objects(item.get("content"))):
                field = "refusal" if part.get("type") == "refusal" else "text"
                paths.append(f"$.output[{index}].content[{number}].{field}")
        elif kind == "function_call":
            paths.append(f"$.output[{index}].arguments")
        elif kind == "reasoning":
            paths.extend(
                f"$.output[{index}].summary[{number}].text"
                for number in range(len(_objects(item.get("summary"))))
            )
    for position, choice in enumerate(_objects(final.get("choices"))):
        message = _object(choice.get("message")) or {}
        for field in ("content", "refusal"):
            if isinstance(message.get(field), str):
                paths.append(f"$.choices[{position}].message.{field}")
        paths.extend(
            f"$.choices[{position}].message.tool_calls[{number}].function.arguments"
            for number in range(len(_objects(message.get("tool_calls"))))
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
    edited_object = _object(edited)
    if edited_object is None:
        raise PatchError(f"an edit must leave the final response an object, got {preview(edited)}")
    result = cast(dict[str, JsonValue], copy_value(dict(output)))
    if "body" in result:
        result["body"] = edited_object
        return result
    recorded = result.get("events")
    if not isinstance(recorded, list) or len(_objects(recorded)) != len(recorded):
        raise PatchError("the recorded stream's events are not all objects; re-record the call")
    events = cast(list[JsonObject], recorded)  # edited in place: events may be inserted
    if response_kind(output) == "responses":
        _edit_responses_stream(events, final, edited_object)
    else:
        _edit_chat_stream(events, final, edited_object)
    return result


def _refuse(path: str, why: str) -> PatchError:
    return PatchError(
        f"edit at {path}: {why}. A streamed answer can be edited in its texts (output text, "
        "refusals, reasoning summaries), function-call arguments, names and call ids, and "
        "its top-level fields; to write another answer, use reply(...)"
    )


def _redistribute(old: list[str], new: str) -> list[str]:
    """`new` cut into as many pieces as `old`, each as long as its old piece, the last
    taking the rest: an unchanged beginning keeps its pieces."""
    pieces: list[str] = []
    rest = new
    for piece in old[:-1]:
        pieces.append(rest[: len(piece)])
        rest = rest[len(piece) :]
    pieces.append(rest)
    return pieces


def _set_text(
    events: list[JsonObject],
    delta_type: str,
    where: JsonObject,
    new: str,
    *,
    before: str,
    template: JsonObject,
) -> None:
    """Carry `new` in the deltas of one streamed text (`delta_type` events at `where`).

    With no recorded delta, one is inserted before the first `before` event at
    `where` (built from `template`), so that the SDK still receives the text.
    """

    def at(data: JsonObject) -> bool:
        return all(data.get(key) == value for key, value in where.items())

    deltas = [
        data
        for data in (_data(event) for event in events)
        if data is not None and data.get("type") == delta_type and at(data)
    ]
    if deltas:
        old = [str(data.get("delta", "")) for data in deltas]
        for data, piece, was in zip(deltas, _redistribute(old, new), old, strict=True):
            data["delta"] = piece
            if piece != was and "logprobs" in data:
                data["logprobs"] = []  # they described the recorded tokens
        return
    if not new:
        return
    closing = [_data(event) for event in events]
    position = next(
        (
            number
            for number, found in enumerate(closing)
            if found is not None and found.get("type") == before and at(found)
        ),
        len(events),
    )
    data: JsonObject = {"type": delta_type, "sequence_number": 0, **template, "delta": new}
    events.insert(position, {"event": delta_type, "data": data})


def _set_on(
    events: list[JsonObject], kind: str, where: JsonObject, change: Callable[[JsonObject], None]
) -> None:
    for event in events:
        data = _data(event)
        if (
            data is not None
            and data.get("type") == kind
            and all(data.get(key) == value for key, value in where.items())
        ):
            change(data)


def _renumber(events: list[JsonObject]) -> None:
    """Sequence numbers in stream order again (after an inserted delta)."""
    numbered = [
        data for data in map(_data, events) if data is not None and "sequence_number" in data
    ]
    if not numbered:
        return
    start = numbered[0]["sequence_number"]
    first = start if type(start) is int else 0
    for offset, data in enumerate(numbered):
        data["sequence_number"] = first + offset


def _edit_responses_stream(events: list[JsonObject], final: JsonObject, edited: JsonObject) -> None:
    before, after = _objects(final.get("output")), _objects(edited.get("output"))
    if not isinstance(edited.get("output"), list) or len(before) != len(after):
        raise _refuse("$.output", "an edit cannot add or remove output items")
    inserted = False
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        if old == new:
            continue
        inserted |= _edit_item(events, index, old, new)
        _set_on(
            events,
            "response.output_item.done",
            {"output_index": index},
            lambda data, new=new: data.__setitem__("item", copy_value(new)),
        )
    for key in sorted((final.keys() | edited.keys()) - {"output"}):
        if final.get(key) == edited.get(key) and (key in final) == (key in edited):
            continue
        if key == "id":
            raise _refuse("$.id", "the response id ties its events together")
        if key in _LIFECYCLE:
            continue  # stated by the final response only
        for event in events:
            data = _data(event)
            response = _object(data.get("response")) if data is not None else None
            if response is not None and data is not None and data.get("type") not in _TERMINAL:
                if key in edited:
                    response[key] = copy_value(edited[key])
                else:
                    response.pop(key, None)
    terminal = _terminal_index(events)
    assert terminal is not None
    terminal_data = _data(events[terminal])
    assert terminal_data is not None
    terminal_data["response"] = copy_value(edited)
    if inserted:
        _renumber(events)


def _edit_item(events: list[JsonObject], index: int, old: JsonObject, new: JsonObject) -> bool:
    """Rewrite the events of output item `index`; True if a delta event was inserted."""
    path = f"$.output[{index}]"
    kind = old.get("type")
    for key in ("type", "id", "status"):
        if old.get(key) != new.get(key):
            raise _refuse(f"{path}.{key}", f"an output item's {key} cannot change")
    item_id = old.get("id")
    at: JsonObject = {"output_index": index}
    inserted = False
    for key in sorted(old.keys() | new.keys()):
        if old.get(key) == new.get(key) and (key in old) == (key in new):
            continue
        if kind == "function_call" and key == "arguments":
            arguments = new.get("arguments")
            if not isinstance(arguments, str):
                raise _refuse(f"{path}.arguments", "function-call arguments are a JSON string")
            inserted |= _text_stream(
                events, "response.function_call_arguments", "arguments", at, item_id,
                str(old.get("arguments", "")), arguments,
            )  # fmt: skip
        elif kind == "function_call" and key in ("name", "call_id"):
            _set_on(
                events,
                "response.output_item.added",
                at,
                lambda data, key=key: _set_in_item(data, key, new.get(key)),
            )
        elif kind == "message" and key == "content":
            inserted |= _edit_parts(events, path, at, item_id, old, new, "content")
        elif kind == "reasoning" and key == "summary":
            inserted |= _edit_parts(events, path, at, item_id, old, new, "summary")
        else:
            raise _refuse(f"{path}.{key}", f"the {key} of a {kind} item is not streamed text")
    return inserted


def _set_in_item(data: JsonObject, key: str, value: JsonValue) -> None:
    item = _object(data.get("item"))
    if item is not None:
        item[key] = copy_value(value)


def _edit_parts(
    events: list[JsonObject],
    path: str,
    at: JsonObject,
    item_id: JsonValue,
    old: JsonObject,
    new: JsonObject,
    key: Literal["content", "summary"],
) -> bool:
    before, after = _objects(old.get(key)), _objects(new.get(key))
    if len(before) != len(after) or not isinstance(new.get(key), list):
        raise _refuse(f"{path}.{key}", f"an edit cannot add or remove {key} parts")
    inserted = False
    index_key = "content_index" if key == "content" else "summary_index"
    for number, (was, part) in enumerate(zip(before, after, strict=True)):
        if was == part:
            continue
        where = {**at, index_key: number}
        part_path = f"{path}.{key}[{number}]"
        kind = was.get("type")
        field = "refusal" if kind == "refusal" else "text"
        changed = {k for k in was.keys() | part.keys() if was.get(k) != part.get(k)}
        if changed - {field} or kind != part.get("type"):
            name = sorted(changed - {field} or {"type"})[0]
            raise _refuse(f"{part_path}.{name}", f"only the {field} of this part is streamed")
        text = part.get(field)
        if not isinstance(text, str):
            raise _refuse(f"{part_path}.{field}", "the text must be a string")
        stream = (
            "response.refusal"
            if kind == "refusal"
            else "response.reasoning_summary_text"
            if key == "summary"
            else "response.output_text"
        )
        inserted |= _text_stream(
            events, stream, field, where, item_id, str(was.get(field, "")), text
        )
        done_part = (
            "response.reasoning_summary_part.done"
            if key == "summary"
            else "response.content_part.done"
        )
        _set_on(
            events,
            done_part,
            where,
            lambda data, part=part: data.__setitem__("part", copy_value(part)),
        )
    return inserted


def _text_stream(
    events: list[JsonObject],
    stream: str,
    field: str,
    where: JsonObject,
    item_id: JsonValue,
    old: str,
    new: str,
) -> bool:
    """Deltas and done event of one streamed text; True if a delta was inserted."""
    count = len(events)
    template: JsonObject = {"item_id": item_id, **where}
    if stream == "response.output_text":
        template["logprobs"] = []
    _set_text(events, f"{stream}.delta", where, new, before=f"{stream}.done", template=template)

    def done(data: JsonObject) -> None:
        data[field] = new
        if old != new and "logprobs" in data:
            data["logprobs"] = []

    _set_on(events, f"{stream}.done", where, done)
    return len(events) != count


def _edit_chat_stream(events: list[JsonObject], final: JsonObject, edited: JsonObject) -> None:
    _, tool_indexes = _accumulate_chat(events)
    chunks = [
        data for data in map(_data, events) if data is not None and data.get("object") == _CHUNK
    ]
    for key in sorted((final.keys() | edited.keys()) - {"choices", "object"}):
        if final.get(key) == edited.get(key):
            continue
        value = edited.get(key)
        if key == "usage":
            carriers = [data for data in chunks if data.get("usage") is not None]
            if not carriers:
                raise _refuse(
                    "$.usage",
                    "this stream carried no usage (the request did not ask for "
                    "stream_options.include_usage)",
                )
            for data in carriers:
                data["usage"] = copy_value(value)
            continue
        for data in chunks:
            data[key] = copy_value(value)
    before, after = _objects(final.get("choices")), _objects(edited.get("choices"))
    if len(before) != len(after) or not isinstance(edited.get("choices"), list):
        raise _refuse("$.choices", "an edit cannot add or remove choices")
    for position, (old, new) in enumerate(zip(before, after, strict=True)):
        if old == new:
            continue
        path = f"$.choices[{position}]"
        number = old.get("index")
        if new.get("index") != number:
            raise _refuse(f"{path}.index", "a choice's index cannot change")
        for key in sorted(old.keys() | new.keys()):
            if old.get(key) == new.get(key):
                continue
            if key == "finish_reason":
                reason = new.get(key)
                _set_choice(chunks, number, lambda c, reason=reason: _finish(c, reason))
            elif key == "message":
                _edit_message(
                    events,
                    chunks,
                    path,
                    number,
                    _object(old.get("message")) or {},
                    _object(new.get("message")) or {},
                    tool_indexes.get(cast(int, number), []),
                )
            else:
                raise _refuse(f"{path}.{key}", f"the {key} of a choice is not streamed text")


def _finish(choice: JsonObject, value: JsonValue) -> None:
    if choice.get("finish_reason") is not None:
        choice["finish_reason"] = copy_value(value)


def _set_choice(
    chunks: list[JsonObject], number: JsonValue, change: Callable[[JsonObject], None]
) -> None:
    for data in chunks:
        for choice in _objects(data.get("choices")):
            if choice.get("index") == number:
                change(choice)


def _deltas_of(chunks: list[JsonObject], number: JsonValue) -> list[JsonObject]:
    found: list[JsonObject] = []
    for data in chunks:
        for choice in _objects(data.get("choices")):
            delta = _object(choice.get("delta"))
            if choice.get("index") == number and delta is not None:
                found.append(delta)
    return found


def _edit_message(
    events: list[JsonObject],
    chunks: list[JsonObject],
    path: str,
    number: JsonValue,
    old: JsonObject,
    new: JsonObject,
    tool_indexes: list[int],
) -> None:
    for key in sorted(old.keys() | new.keys()):
        if old.get(key) == new.get(key):
            continue
        where = f"{path}.message.{key}"
        value = new.get(key)
        if key in ("content", "refusal"):
            if not isinstance(value, str):
                raise _refuse(
                    where, f"the {key} can be edited to another text, not to {preview(value)}"
                )
            deltas = [d for d in _deltas_of(chunks, number) if isinstance(d.get(key), str)]
            if deltas:
                old_pieces = [str(d[key]) for d in deltas]
                for delta, piece in zip(deltas, _redistribute(old_pieces, value), strict=True):
                    delta[key] = piece
            elif value:
                _insert_chunk(events, chunks, number, {key: value})
        elif key == "tool_calls":
            _edit_tool_calls(chunks, where, number, old, new, tool_indexes)
        else:
            raise _refuse(where, f"the {key} of a message is not streamed text")


def _insert_chunk(
    events: list[JsonObject], chunks: list[JsonObject], number: JsonValue, delta: JsonObject
) -> None:
    """A chunk carrying `delta` for choice `number`, before that choice's finishing chunk."""
    finishing = next(
        (
            data
            for data in chunks
            if any(
                c.get("index") == number and c.get("finish_reason") is not None
                for c in _objects(data.get("choices"))
            )
        ),
        chunks[-1],
    )
    data: JsonObject = {
        key: copy_value(value)
        for key, value in finishing.items()
        if key not in ("choices", "usage")
    }
    data["choices"] = [{"index": number, "delta": delta, "logprobs": None, "finish_reason": None}]
    if "usage" in finishing:
        data["usage"] = None
    position = next((n for n, event in enumerate(events) if _data(event) is finishing), len(events))
    events.insert(position, {"data": data})


def _edit_tool_calls(
    chunks: list[JsonObject],
    where: str,
    number: JsonValue,
    old: JsonObject,
    new: JsonObject,
    tool_indexes: list[int],
) -> None:
    before, after = _objects(old.get("tool_calls")), _objects(new.get("tool_calls"))
    if len(before) != len(after) or not isinstance(new.get("tool_calls"), list):
        raise _refuse(where, "an edit cannot add or remove tool calls")
    for position, (was, call) in enumerate(zip(before, after, strict=True)):
        if was == call:
            continue
        stream_index = tool_indexes[position]
        entries = [
            entry
            for delta in _deltas_of(chunks, number)
            for entry in _objects(delta.get("tool_calls"))
            if entry.get("index") == stream_index
        ]
        call_path = f"{where}[{position}]"
        for key in sorted(was.keys() | call.keys()):
            if was.get(key) == call.get(key):
                continue
            if key == "id":
                for entry in entries:
                    if "id" in entry:
                        entry["id"] = copy_value(call.get("id"))
                continue
            if key != "function":
                raise _refuse(f"{call_path}.{key}", f"a tool call's {key} cannot change")
            before_function = _object(was.get("function")) or {}
            function = _object(call.get("function")) or {}
            for name in sorted(before_function.keys() | function.keys()):
                value = function.get(name)
                if before_function.get(name) == value:
                    continue
                if name not in ("name", "arguments") or not isinstance(value, str):
                    raise _refuse(
                        f"{call_path}.function.{name}",
                        "a function call's name and arguments are strings; nothing else streams",
                    )
                pieces = [
                    f
                    for f in (_object(entry.get("function")) for entry in entries)
                    if f is not None and isinstance(f.get(name), str)
                ]
                if not pieces:
                    raise _refuse(f"{call_path}.function.{name}", "the stream never sent it")
                old_pieces = [str(f[name]) for f in pieces]
                for f, piece in zip(pieces, _redistribute(old_pieces, value), strict=True):
                    f[name] = piece
