"""Chat Completions streams: the completion a chunk stream adds up to (as the SDK
accumulates it), the chunk stream `reply(...)` serves for a completion, and a chunk stream
rewritten to agree with an edit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from toolreplay.adapters.capture.streamed import redistribute, text_pieces
from toolreplay.adapters.openai.events import copied, event_data, refuse_edit
from toolreplay.portable import (
    JsonObject,
    JsonValue,
    copy_value,
    json_object,
    json_objects,
    preview,
)

__all__ = ["CHUNK_OBJECT", "accumulate_chat", "chat_chunks", "edit_chat_stream"]

CHUNK_OBJECT = "chat.completion.chunk"
"""The `object` of every chunk of a Chat Completions stream."""


def _merge(into: JsonObject, delta: JsonObject) -> None:
    """Add a chunk's delta to the message so far: strings are appended, lists of
    objects with an `index` merged by that index, other values replaced."""
    for key, value in delta.items():
        current = into.get(key)
        if isinstance(value, list) and all(isinstance(v, dict) and "index" in v for v in value):
            merged = cast(list[JsonValue], current) if isinstance(current, list) else []
            for entry in json_objects(value):
                position = entry["index"]
                found = next(
                    (e for e in json_objects(merged) if e.get("index") == position),
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


def accumulate_chat(events: list[JsonObject]) -> tuple[JsonObject | None, dict[int, list[int]]]:
    """The completion a chunk stream adds up to, and per choice index the positions
    (in the stream) of its tool calls' `index` values, in list order."""
    final: JsonObject | None = None
    choices: dict[int, JsonObject] = {}
    for event in events:
        data = json_object(event.get("data"))
        if data is None or data.get("object") != CHUNK_OBJECT:
            continue
        if final is None:
            final = {
                key: copy_value(value)
                for key, value in data.items()
                if key not in ("choices", "usage", "obfuscation")
            }
            final["object"] = "chat.completion"
        for choice in json_objects(data.get("choices")):
            number = choice.get("index")
            if type(number) is not int:
                continue
            entry = choices.setdefault(
                number,
                {"index": number, "message": {}, "logprobs": None, "finish_reason": None},
            )
            delta = json_object(choice.get("delta"))
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
        calls = json_objects(message.get("tool_calls"))
        calls.sort(key=lambda call: cast(int, call.get("index", 0)))
        tool_indexes[number] = [cast(int, call.get("index", 0)) for call in calls]
        if "tool_calls" in message:
            message["tool_calls"] = [
                {key: value for key, value in call.items() if key != "index"} for call in calls
            ]
    final["choices"] = [choices[number] for number in sorted(choices)]
    final.setdefault("usage", None)
    return final, tool_indexes


# --- generating a stream (reply) --------------------------------------------------------


def chat_chunks(final: JsonObject, *, include_usage: bool) -> list[JsonValue]:
    """The Chat Completions chunk stream for `final` (a `chat.completion`), ending with
    `[DONE]`, as a recorded output's `events`; with `include_usage` every chunk has
    `usage: null` and a last chunk carries the usage, as `stream_options` asks."""
    head: JsonObject = {
        key: value for key, value in final.items() if key not in ("choices", "usage", "object")
    }
    head = {"id": head.pop("id", None), "object": CHUNK_OBJECT, **head}

    def chunk(choices: list[JsonValue]) -> JsonValue:
        data: JsonObject = {**copied(head), "choices": choices}
        if include_usage:
            data["usage"] = None
        return {"data": data}

    def entry(number: JsonValue, delta: JsonObject, finish: JsonValue = None) -> list[JsonValue]:
        return [{"index": number, "delta": delta, "logprobs": None, "finish_reason": finish}]

    events: list[JsonValue] = []
    for choice in json_objects(final.get("choices")):
        number = choice.get("index", 0)
        message = json_object(choice.get("message")) or {}
        content = message.get("content")
        opening: JsonObject = {
            "role": message.get("role", "assistant"),
            "content": "" if isinstance(content, str) else None,
            "refusal": None,
        }
        events.append(chunk(entry(number, opening)))
        if isinstance(content, str):
            events.extend(chunk(entry(number, {"content": p})) for p in text_pieces(content))
        refusal = message.get("refusal")
        if isinstance(refusal, str):
            events.extend(chunk(entry(number, {"refusal": p})) for p in text_pieces(refusal))
        for position, call in enumerate(json_objects(message.get("tool_calls"))):
            function = json_object(call.get("function")) or {}
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
                for p in text_pieces(arguments)
            )
        events.append(chunk(entry(number, {}, choice.get("finish_reason", "stop"))))
    if include_usage:
        events.append({"data": {**copied(head), "choices": [], "usage": final.get("usage")}})
    events.append({"data_text": "[DONE]"})
    return events


# --- editing a stream ----------------------------------------------------------------------


def edit_chat_stream(events: list[JsonObject], final: JsonObject, edited: JsonObject) -> None:
    """Rewrite `events` (in place) so that the chunks whose completion is `final` add up
    to `edited`; `PatchError` for an edit the chunks cannot carry."""
    _, tool_indexes = accumulate_chat(events)
    chunks = [
        data
        for data in map(event_data, events)
        if data is not None and data.get("object") == CHUNK_OBJECT
    ]
    for key in sorted((final.keys() | edited.keys()) - {"choices", "object"}):
        if final.get(key) == edited.get(key):
            continue
        value = edited.get(key)
        if key == "usage":
            carriers = [data for data in chunks if data.get("usage") is not None]
            if not carriers:
                raise refuse_edit(
                    "$.usage",
                    "this stream carried no usage (the request did not ask for "
                    "stream_options.include_usage)",
                )
            for data in carriers:
                data["usage"] = copy_value(value)
            continue
        for data in chunks:
            data[key] = copy_value(value)
    before, after = json_objects(final.get("choices")), json_objects(edited.get("choices"))
    if len(before) != len(after) or not isinstance(edited.get("choices"), list):
        raise refuse_edit("$.choices", "an edit cannot add or remove choices")
    for position, (old, new) in enumerate(zip(before, after, strict=True)):
        if old == new:
            continue
        path = f"$.choices[{position}]"
        number = old.get("index")
        if new.get("index") != number:
            raise refuse_edit(f"{path}.index", "a choice's index cannot change")
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
                    json_object(old.get("message")) or {},
                    json_object(new.get("message")) or {},
                    tool_indexes.get(cast(int, number), []),
                )
            else:
                raise refuse_edit(f"{path}.{key}", f"the {key} of a choice is not streamed text")


def _finish(choice: JsonObject, value: JsonValue) -> None:
    if choice.get("finish_reason") is not None:
        choice["finish_reason"] = copy_value(value)


def _set_choice(
    chunks: list[JsonObject], number: JsonValue, change: Callable[[JsonObject], None]
) -> None:
    for data in chunks:
        for choice in json_objects(data.get("choices")):
            if choice.get("index") == number:
                change(choice)


def _deltas_of(chunks: list[JsonObject], number: JsonValue) -> list[JsonObject]:
    found: list[JsonObject] = []
    for data in chunks:
        for choice in json_objects(data.get("choices")):
            delta = json_object(choice.get("delta"))
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
                raise refuse_edit(
                    where, f"the {key} can be edited to another text, not to {preview(value)}"
                )
            deltas = [d for d in _deltas_of(chunks, number) if isinstance(d.get(key), str)]
            if deltas:
                old_pieces = [str(d[key]) for d in deltas]
                for delta, piece in zip(deltas, redistribute(old_pieces, value), strict=True):
                    delta[key] = piece
            elif value:
                _insert_chunk(events, chunks, number, {key: value})
        elif key == "tool_calls":
            _edit_tool_calls(chunks, where, number, old, new, tool_indexes)
        else:
            raise refuse_edit(where, f"the {key} of a message is not streamed text")


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
                for c in json_objects(data.get("choices"))
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
    position = next(
        (n for n, event in enumerate(events) if event_data(event) is finishing), len(events)
    )
    events.insert(position, {"data": data})


def _edit_tool_calls(
    chunks: list[JsonObject],
    where: str,
    number: JsonValue,
    old: JsonObject,
    new: JsonObject,
    tool_indexes: list[int],
) -> None:
    before, after = json_objects(old.get("tool_calls")), json_objects(new.get("tool_calls"))
    if len(before) != len(after) or not isinstance(new.get("tool_calls"), list):
        raise refuse_edit(where, "an edit cannot add or remove tool calls")
    for position, (was, call) in enumerate(zip(before, after, strict=True)):
        if was == call:
            continue
        stream_index = tool_indexes[position]
        entries = [
            entry
            for delta in _deltas_of(chunks, number)
            for entry in json_objects(delta.get("tool_calls"))
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
                raise refuse_edit(f"{call_path}.{key}", f"a tool call's {key} cannot change")
            before_function = json_object(was.get("function")) or {}
            function = json_object(call.get("function")) or {}
            for name in sorted(before_function.keys() | function.keys()):
                value = function.get(name)
                if before_function.get(name) == value:
                    continue
                if name not in ("name", "arguments") or not isinstance(value, str):
                    raise refuse_edit(
                        f"{call_path}.function.{name}",
                        "a function call's name and arguments are strings; nothing else streams",
                    )
                pieces = [
                    f
                    for f in (json_object(entry.get("function")) for entry in entries)
                    if f is not None and isinstance(f.get(name), str)
                ]
                if not pieces:
                    raise refuse_edit(f"{call_path}.function.{name}", "the stream never sent it")
                old_pieces = [str(f[name]) for f in pieces]
                for f, piece in zip(pieces, redistribute(old_pieces, value), strict=True):
                    f[name] = piece
