"""A Messages API answer as its final message, the stream `reply(...)` serves for a
message, and a recorded stream rewritten to agree with an edit.

A Messages stream is a run of named server-sent events: `message_start` (the message
with no content yet), then per content block `content_block_start`, its deltas
(`text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta`,
`citations_delta`) and `content_block_stop`, then `message_delta` (the stop reason
and the usage) and `message_stop`; `ping` events may come between. The SDK adds the
events up into the message `get_final_message()` returns; `final_message` adds them up
the same way (`toolreplay.adapters.anthropic_summary`, which reads recorded values
without the SDK, holds it for the debugger too).

Pure functions over recorded outputs (RFC 0006 §4.1): no SDK, no HTTP library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import cast

from toolreplay.adapters.anthropic_summary import CLOSING_FIELDS, TOOL_BLOCKS, final_message
from toolreplay.adapters.capture.recipes import apply_edits
from toolreplay.adapters.capture.streamed import text_pieces
from toolreplay.errors import PatchError
from toolreplay.portable import (
    JsonObject,
    JsonValue,
    copy_value,
    json_object,
    json_objects,
    preview,
)

__all__ = ["edited_output", "final_message", "message_events"]

_WHERE = (
    "Paths run through the final message (for a stream, the message the SDK ends up "
    "with), like $.content[0].text, $.content[1].input.order_id, $.stop_reason, "
    "$.usage.output_tokens"
)


def _copy(value: JsonObject) -> JsonObject:
    return cast(JsonObject, copy_value(value))


# --- writing a stream -----------------------------------------------------------------------


def _event(kind: str, **fields: JsonValue) -> JsonObject:
    return {"event": kind, "data": {"type": kind, **fields}}


def block_events(index: int, block: JsonObject) -> list[JsonValue]:
    """The events that stream content block `index`: its start, deltas and stop."""
    kind = block.get("type")
    opening = _copy(block)
    deltas: list[JsonObject] = []
    if kind == "text":
        opening["text"] = ""
        deltas = [{"type": "text_delta", "text": p} for p in text_pieces(str(block["text"]))]
        citations = block.get("citations")
        if isinstance(citations, list) and citations:
            opening["citations"] = None
            deltas += [{"type": "citations_delta", "citation": c} for c in citations]
    elif kind == "thinking":
        opening.update(thinking="", signature="")
        pieces = text_pieces(str(block.get("thinking", "")))
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces]
        if block.get("signature"):
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind in TOOL_BLOCKS:
        opening["input"] = {}
        arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in text_pieces(arguments)]
    events: list[JsonValue] = [_event("content_block_start", index=index, content_block=opening)]
    events += [_event("content_block_delta", index=index, delta=cast(JsonValue, d)) for d in deltas]
    events.append(_event("content_block_stop", index=index))
    return events


def message_events(final: JsonObject) -> list[JsonValue]:
    """The event stream the Messages API sends for `final`, as a recorded output's
    `events`: the SDK adds it up to `final` again."""
    usage = json_object(final.get("usage")) or {}
    started = _copy(final)
    started["content"] = []
    for key in CLOSING_FIELDS:
        if key in started:
            started[key] = None
    started["usage"] = {**_copy(usage), "output_tokens": min(1, _count(usage))}
    events: list[JsonValue] = [_event("message_start", message=started)]
    for index, block in enumerate(json_objects(final.get("content"))):
        events += block_events(index, block)
    delta: JsonObject = {key: copy_value(final.get(key)) for key in CLOSING_FIELDS if key in final}
    events.append(_event("message_delta", delta=delta, usage={"output_tokens": _count(usage)}))
    events.append(_event("message_stop"))
    return events


def _count(usage: JsonObject) -> int:
    tokens = usage.get("output_tokens")
    return tokens if type(tokens) is int else 0


# --- editing --------------------------------------------------------------------------------


def edited_output(
    output: Mapping[str, JsonValue], edits: Mapping[str, JsonValue]
) -> dict[str, JsonValue]:
    """A recorded Messages answer with values of its final message set by JSON path.

        edited_output(recorded, {"$.content[0].text": "Refund held for review."})

    A JSON body is edited as it is. A stream is rewritten so that the SDK adds it up to
    exactly the edited message: each changed content block's events are written anew
    (start, deltas, stop) where the recorded ones stood, the others kept as recorded;
    the message's own fields go into `message_start`, the stop reason and usage into
    `message_delta`. Adding or removing content blocks, or changing a block's type, is
    a `PatchError`: `reply(...)` writes a new answer. `output` is not changed.
    """
    final = final_message(output)
    if final is None:
        raise PatchError(
            "edit(...) changes a recorded Messages answer; this output is not one, or a "
            "stream that ended before message_stop. Give the output value itself instead"
        )
    edited = json_object(apply_edits(final, edits, _WHERE))
    if edited is None:
        raise PatchError("an edit must leave the message a JSON object")
    result = cast(dict[str, JsonValue], copy_value(dict(output)))
    if "body" in result:
        result["body"] = edited
        return result
    result["events"] = _edited_events(json_objects(result.get("events")), final, edited)
    if final_message(result) != edited:
        raise PatchError(
            "this edit cannot be carried by the recorded stream's events (a field the "
            "stream does not state); use reply(...) to write a new answer"
        )
    return result


def _edited_events(
    events: list[JsonObject], final: JsonObject, edited: JsonObject
) -> list[JsonValue]:
    before, after = json_objects(final.get("content")), json_objects(edited.get("content"))
    if len(before) != len(after) or not isinstance(edited.get("content"), list):
        raise PatchError(
            "edit at $.content: an edit cannot add or remove content blocks; use reply(...)"
        )
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        if old.get("type") != new.get("type"):
            raise PatchError(
                f"edit at $.content[{index}].type: a content block's type cannot change "
                f"({preview(old.get('type'))} to {preview(new.get('type'))}); use reply(...)"
            )
    changed = {
        index for index, pair in enumerate(zip(before, after, strict=True)) if pair[0] != pair[1]
    }
    usage = json_object(edited.get("usage")) or {}
    rewritten: list[JsonValue] = []
    for event in events:
        data = json_object(event.get("data"))
        kind = data.get("type") if data is not None else None
        index = data.get("index") if data is not None else None
        if (
            data is not None
            and kind in ("content_block_start", "content_block_delta", "content_block_stop")
            and index in changed
        ):
            if kind == "content_block_start":
                rewritten += block_events(cast(int, index), after[cast(int, index)])
            continue
        if data is not None and kind == "message_start":
            message = _copy(json_object(data.get("message")) or {})
            for key, value in edited.items():
                if key not in ("content", "usage", *CLOSING_FIELDS):
                    message[key] = copy_value(value)
            recorded = json_object(message.get("usage")) or {}
            message["usage"] = {**_copy(usage), "output_tokens": recorded.get("output_tokens", 0)}
            data["message"] = message
        elif data is not None and kind == "message_delta":
            delta = json_object(data.get("delta"))
            if delta is not None:
                for key in CLOSING_FIELDS:
                    if key in delta or key in edited:
                        delta[key] = copy_value(edited.get(key))
                if delta.get("container") is not None:
                    delta["container"] = copy_value(edited.get("container"))
            closing = json_object(data.get("usage"))
            if closing is not None:
                for key in list(closing):
                    closing[key] = copy_value(usage.get(key))
        rewritten.append(event)
    return rewritten
