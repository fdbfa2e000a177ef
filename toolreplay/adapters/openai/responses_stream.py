"""The Responses API's event streams: the final response a stream ends with, the stream
`reply(...)` serves for a final response, and a stream rewritten to agree with an edit.

A stream is `response.created`, `response.in_progress`, then per output item its
`output_item.added`, the deltas and `*.done` events of its texts, arguments and
reasoning summaries, `output_item.done`, and a terminal `response.completed` (or
`.incomplete`, `.failed`) event carrying the final response.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from toolreplay.adapters.capture.streamed import redistribute, text_pieces
from toolreplay.adapters.openai.events import event_data, refuse_edit
from toolreplay.portable import JsonObject, JsonValue, copy_value, json_object, json_objects

__all__ = ["TERMINAL_EVENTS", "edit_responses_stream", "responses_events", "terminal_index"]

TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")
"""The events that end a Responses stream and carry its final response."""
# Fields of the final response that the opening lifecycle events state for themselves.
_LIFECYCLE = frozenset({"status", "usage", "completed_at", "error", "incomplete_details", "output"})


def terminal_index(events: list[JsonObject]) -> int | None:
    """The position of the last terminal event carrying a response, or None."""
    for index in range(len(events) - 1, -1, -1):
        data = event_data(events[index])
        if (
            data is not None
            and data.get("type") in TERMINAL_EVENTS
            and json_object(data.get("response"))
        ):
            return index
    return None


# --- generating a stream (reply) --------------------------------------------------------


def responses_events(final: JsonObject) -> list[JsonValue]:
    """The Responses API's event stream for `final`, as a recorded output's `events`."""
    started: JsonObject = {**final, "status": "in_progress", "output": [], "usage": None}
    if "completed_at" in final:
        started["completed_at"] = None
    events: list[tuple[str, JsonObject]] = [
        ("response.created", {"response": started}),
        ("response.in_progress", {"response": copy_value(started)}),
    ]
    for index, item in enumerate(json_objects(final.get("output"))):
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
        for number, part in enumerate(json_objects(item.get("content"))):
            where: JsonObject = {**at, "content_index": number}
            if part.get("type") == "refusal":
                refusal = str(part.get("refusal", ""))
                empty: JsonObject = {**part, "refusal": ""}
                events.append(("response.content_part.added", {**where, "part": empty}))
                events.extend(
                    ("response.refusal.delta", {**where, "delta": piece})
                    for piece in text_pieces(refusal)
                )
                events.append(("response.refusal.done", {**where, "refusal": refusal}))
            else:
                text = str(part.get("text", ""))
                empty = {**part, "text": ""}
                events.append(("response.content_part.added", {**where, "part": empty}))
                events.extend(
                    ("response.output_text.delta", {**where, "delta": piece, "logprobs": []})
                    for piece in text_pieces(text)
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
            for piece in text_pieces(arguments)
        )
        events.append(("response.function_call_arguments.done", {**at, "arguments": arguments}))
    elif kind == "reasoning":
        opening = {**item, "summary": []}
        if "status" in item:
            opening["status"] = "in_progress"
        events.append(("response.output_item.added", {"output_index": index, "item": opening}))
        for number, part in enumerate(json_objects(item.get("summary"))):
            where = {**at, "summary_index": number}
            text = str(part.get("text", ""))
            empty = {**part, "text": ""}
            events.append(("response.reasoning_summary_part.added", {**where, "part": empty}))
            events.extend(
                ("response.reasoning_summary_text.delta", {**where, "delta": piece})
                for piece in text_pieces(text)
            )
            events.append(("response.reasoning_summary_text.done", {**where, "text": text}))
            events.append(("response.reasoning_summary_part.done", {**where, "part": part}))
    else:
        events.append(("response.output_item.added", {"output_index": index, "item": item}))
    events.append(("response.output_item.done", {"output_index": index, "item": item}))
    return events


# --- editing a stream ----------------------------------------------------------------------


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
        for data in (event_data(event) for event in events)
        if data is not None and data.get("type") == delta_type and at(data)
    ]
    if deltas:
        old = [str(data.get("delta", "")) for data in deltas]
        for data, piece, was in zip(deltas, redistribute(old, new), old, strict=True):
            data["delta"] = piece
            if piece != was and "logprobs" in data:
                data["logprobs"] = []  # they described the recorded tokens
        return
    if not new:
        return
    closing = [event_data(event) for event in events]
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
        data = event_data(event)
        if (
            data is not None
            and data.get("type") == kind
            and all(data.get(key) == value for key, value in where.items())
        ):
            change(data)


def _renumber(events: list[JsonObject]) -> None:
    """Sequence numbers in stream order again (after an inserted delta)."""
    numbered = [
        data for data in map(event_data, events) if data is not None and "sequence_number" in data
    ]
    if not numbered:
        return
    start = numbered[0]["sequence_number"]
    first = start if type(start) is int else 0
    for offset, data in enumerate(numbered):
        data["sequence_number"] = first + offset


def edit_responses_stream(events: list[JsonObject], final: JsonObject, edited: JsonObject) -> None:
    """Rewrite `events` (in place) so that the stream whose final response is `final`
    ends with `edited`: deltas, `*.done` events, `output_item.done` and the terminal
    response agree; `PatchError` for an edit the events cannot carry."""
    before, after = json_objects(final.get("output")), json_objects(edited.get("output"))
    if not isinstance(edited.get("output"), list) or len(before) != len(after):
        raise refuse_edit("$.output", "an edit cannot add or remove output items")
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
            raise refuse_edit("$.id", "the response id ties its events together")
        if key in _LIFECYCLE:
            continue  # stated by the final response only
        for event in events:
            data = event_data(event)
            response = json_object(data.get("response")) if data is not None else None
            if (
                response is not None
                and data is not None
                and data.get("type") not in TERMINAL_EVENTS
            ):
                if key in edited:
                    response[key] = copy_value(edited[key])
                else:
                    response.pop(key, None)
    terminal = terminal_index(events)
    assert terminal is not None
    terminal_data = event_data(events[terminal])
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
            raise refuse_edit(f"{path}.{key}", f"an output item's {key} cannot change")
    item_id = old.get("id")
    at: JsonObject = {"output_index": index}
    inserted = False
    for key in sorted(old.keys() | new.keys()):
        if old.get(key) == new.get(key) and (key in old) == (key in new):
            continue
        if kind == "function_call" and key == "arguments":
            arguments = new.get("arguments")
            if not isinstance(arguments, str):
                raise refuse_edit(f"{path}.arguments", "function-call arguments are a JSON string")
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
            raise refuse_edit(f"{path}.{key}", f"the {key} of a {kind} item is not streamed text")
    return inserted


def _set_in_item(data: JsonObject, key: str, value: JsonValue) -> None:
    item = json_object(data.get("item"))
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
    before, after = json_objects(old.get(key)), json_objects(new.get(key))
    if len(before) != len(after) or not isinstance(new.get(key), list):
        raise refuse_edit(f"{path}.{key}", f"an edit cannot add or remove {key} parts")
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
            raise refuse_edit(f"{part_path}.{name}", f"only the {field} of this part is streamed")
        text = part.get(field)
        if not isinstance(text, str):
            raise refuse_edit(f"{part_path}.{field}", "the text must be a string")
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
