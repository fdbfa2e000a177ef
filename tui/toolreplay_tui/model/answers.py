"""A model call's recorded answer as a pending patch changes it, and edits that stay consistent.

A streamed answer is recorded as the events the SDK read: text and function-call
arguments arrive as deltas, are repeated by `*.done` events and by the final
response (Responses), or exist only as the sum of chunks (Chat Completions). An
edit of one event's value would leave the others saying something else, and the
SDK would accumulate neither. So an edit of a value in a streamed answer is
mapped (`stream_edit`) to the value of the answer's final object it is part of:
the final response's own value; a `*.done` event's text, arguments or item; or,
for a delta, the whole text it is a piece of, with that piece changed. The
pending patch is then `edit({path: value})` of the recorded answer, paths
merged (`edit_patch`), which the fork applies with `edited_output`: deltas,
`*.done` events and the final response agree again.

`patched_output` is what the detail pane shows for a patched call: the patch's
value, or a recipe resolved against the recorded call as the fork will resolve
it (through the adapter's public resolver, `toolreplay.runtime.recipes`).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import cast

from toolreplay import (
    ErrorPatch,
    JsonValue,
    Operation,
    OutputPatch,
    OutputRecipe,
    Patch,
    PatchError,
    Returned,
    replace_output,
)
from toolreplay.portable import JsonObject, format_path, json_object
from toolreplay.redaction import check_redacted_edit
from toolreplay.runtime.recipes import (
    RecipeCall,
    RecipeResolver,
    RecipeSource,
    recipe_resolver,
)
from toolreplay_tui.model.jsonpaths import JsonPath, PathError

__all__ = [
    "STREAMED_NAMESPACES",
    "StreamEdit",
    "check_recipe",
    "edit_patch",
    "patched_output",
    "stream_edit",
]


_TERMINAL = ("response.completed", "response.incomplete", "response.failed")
# Responses `*.done` events: the field holding the whole value, and where it sits in
# the final response (from the event's output_index, content_index, summary_index).
_DONE = {
    "response.output_text.done": "text",
    "response.refusal.done": "refusal",
    "response.function_call_arguments.done": "arguments",
    "response.reasoning_summary_text.done": "text",
}
_DELTAS = {
    "response.output_text.delta": "response.output_text.done",
    "response.refusal.delta": "response.refusal.done",
    "response.function_call_arguments.delta": "response.function_call_arguments.done",
    "response.reasoning_summary_text.delta": "response.reasoning_summary_text.done",
}
_CHUNK_FIELDS = ("id", "model", "created", "system_fingerprint", "service_tier")
_ADAPTERS = {"openai": "toolreplay.adapters.openai"}
STREAMED_NAMESPACES = tuple(_ADAPTERS)
"""The namespaces whose recorded answers may be streams edited through `stream_edit`."""
"""The adapters that resolve recipes, by namespace (imported when a recipe is shown)."""


@dataclass(frozen=True, slots=True)
class StreamEdit:
    """An edit of a streamed answer as an edit of its final object: a JSON path
    (`$.output[0].content[0].text`) and the value there."""

    path: str
    value: JsonValue


def _events(output: JsonValue) -> list[JsonObject] | None:
    found = json_object(output)
    events = found.get("events") if found is not None else None
    if not isinstance(events, list):
        return None
    return [json_object(event) or {} for event in events]


def _data(event: JsonObject) -> JsonObject:
    return json_object(event.get("data")) or {}


def stream_edit(output: JsonValue, path: JsonPath, value: JsonValue) -> StreamEdit | None:
    """The edit of the final object that setting `path` of a streamed `output` to
    `value` stands for, or None when `output` is not a stream (edit it as it is).

    Raises `PathError` for a value no final value holds (an event's bookkeeping, an
    opening event's snapshot), saying what to edit instead.
    """
    events = _events(output)
    if events is None:
        return None
    if len(path) < 3 or path[0] != "events" or not isinstance(path[1], int) or path[2] != "data":
        raise PathError(
            f"{format_path(path)} is not a value of one of the stream's events; a streamed "
            "answer is edited through its events' values (the final response's, a *.done "
            "event's, or a delta's)"
        )
    number, rest = path[1], path[3:]
    if not 0 <= number < len(events):
        raise PathError(f"the stream has no event {number}")
    data = _data(events[number])
    if data.get("object") == "chat.completion.chunk":
        return _chat_edit(events, number, rest, value)
    return _responses_edit(events, number, data, rest, value)


def _refused(path: tuple[str | int, ...], why: str) -> PathError:
    return PathError(
        f"{format_path(path)}: {why}. Edit the answer's text, arguments or fields where the "
        "final response holds them (the last event), or a *.done event's value, or a delta"
    )


def _responses_edit(
    events: list[JsonObject],
    number: int,
    data: JsonObject,
    rest: tuple[str | int, ...],
    value: JsonValue,
) -> StreamEdit:
    kind = data.get("type")
    where = ("events", number, "data", *rest)
    if kind in _TERMINAL and rest[:1] == ("response",):
        return StreamEdit(format_path(rest[1:]), value)
    output_index = data.get("output_index")
    if not isinstance(output_index, int):
        raise _refused(where, f"a {kind} event states no part of the final answer")
    if kind == "response.output_item.done" and rest[:1] == ("item",):
        return StreamEdit(format_path(("output", output_index, *rest[1:])), value)
    if kind == "response.content_part.done" and rest[:1] == ("part",):
        content = data.get("content_index")
        if isinstance(content, int):
            return StreamEdit(
                format_path(("output", output_index, "content", content, *rest[1:])), value
            )
    if isinstance(kind, str) and kind in _DONE and rest == (_DONE[kind],):
        return StreamEdit(_final_path(kind, data), value)
    if isinstance(kind, str) and kind in _DELTAS and rest == ("delta",):
        if not isinstance(value, str):
            raise _refused(where, "a delta is a piece of text: give a string")
        pieces = [
            (index, _data(event).get("delta"))
            for index, event in enumerate(events)
            if _data(event).get("type") == kind and _same_place(_data(event), data)
        ]
        whole = "".join(
            value if index == number else piece for index, piece in pieces if isinstance(piece, str)
        )
        return StreamEdit(_final_path(_DELTAS[kind], data), whole)
    raise _refused(where, f"a {kind} event's {format_path(rest)} is no part of the final answer")


def _same_place(data: JsonObject, other: JsonObject) -> bool:
    keys = ("output_index", "content_index", "summary_index")
    return all(data.get(key) == other.get(key) for key in keys)


def _final_path(done: str, data: JsonObject) -> str:
    """Where a `*.done` event's value sits in the final response."""
    item = data.get("output_index")
    if done == "response.function_call_arguments.done":
        return format_path(("output", cast(int, item), "arguments"))
    if done == "response.reasoning_summary_text.done":
        return format_path(
            ("output", cast(int, item), "summary", _index(data, "summary_index"), "text")
        )
    field = "refusal" if done == "response.refusal.done" else "text"
    return format_path(("output", cast(int, item), "content", _index(data, "content_index"), field))


def _index(data: JsonObject, key: str) -> int:
    found = data.get(key)
    return found if isinstance(found, int) else 0


def _chat_edit(
    events: list[JsonObject], number: int, rest: tuple[str | int, ...], value: JsonValue
) -> StreamEdit:
    where = ("events", number, "data", *rest)
    if len(rest) >= 1 and rest[0] in _CHUNK_FIELDS and len(rest) == 1:
        return StreamEdit(format_path(rest), value)
    if rest[:1] == ("usage",):
        return StreamEdit(format_path(rest), value)
    if len(rest) < 3 or rest[0] != "choices" or not isinstance(rest[1], int):
        raise _refused(where, "a chunk's bookkeeping is no part of the final answer")
    chunk = _data(events[number])
    choices = chunk.get("choices")
    choice = (
        json_object(choices[rest[1]])
        if isinstance(choices, list) and rest[1] < len(choices)
        else None
    )
    if choice is None:
        raise PathError(f"{format_path(where)} is not in the stream")
    choice_number = choice.get("index", rest[1])
    tail = rest[2:]
    if tail == ("finish_reason",):
        return StreamEdit(
            format_path(("choices", _position(choice_number), "finish_reason")), value
        )
    if tail in (("delta", "content"), ("delta", "refusal")):
        field = str(tail[1])
        whole = _joined(events, number, value, lambda c: _piece(c, choice_number, (field,)))
        return StreamEdit(
            format_path(("choices", _position(choice_number), "message", field)), whole
        )
    if (
        len(tail) == 5
        and tail[:2] == ("delta", "tool_calls")
        and isinstance(tail[2], int)
        and tail[3] == "function"
        and tail[4] in ("arguments", "name")
    ):
        calls = json_object(choice.get("delta")) or {}
        listed = calls.get("tool_calls")
        call = (
            json_object(listed[tail[2]])
            if isinstance(listed, list) and tail[2] < len(listed)
            else None
        )
        call_number = (call or {}).get("index", tail[2])
        field = str(tail[4])
        whole = _joined(
            events, number, value, lambda c: _call_piece(c, choice_number, call_number, field)
        )
        path = ("choices", _position(choice_number), "message", "tool_calls")
        return StreamEdit(format_path((*path, _position(call_number), "function", field)), whole)
    raise _refused(where, "this value of a chunk is no part of the final answer")


def _position(number: JsonValue) -> int:
    return number if isinstance(number, int) else 0


def _choice_delta(chunk: JsonObject, choice_number: JsonValue) -> JsonObject | None:
    choices = chunk.get("choices")
    for position, choice in enumerate(choices if isinstance(choices, list) else []):
        found = json_object(choice)
        if found is not None and found.get("index", position) == choice_number:
            return json_object(found.get("delta"))
    return None


def _piece(chunk: JsonObject, choice_number: JsonValue, field: tuple[str]) -> JsonValue:
    delta = _choice_delta(chunk, choice_number)
    return None if delta is None else delta.get(field[0])


def _call_piece(
    chunk: JsonObject, choice_number: JsonValue, call_number: JsonValue, field: str
) -> JsonValue:
    delta = _choice_delta(chunk, choice_number) or {}
    calls = delta.get("tool_calls")
    for position, call in enumerate(calls if isinstance(calls, list) else []):
        found = json_object(call)
        if found is not None and found.get("index", position) == call_number:
            function = json_object(found.get("function")) or {}
            return function.get(field)
    return None


def _joined(
    events: list[JsonObject],
    number: int,
    value: JsonValue,
    piece_of: Callable[[JsonObject], JsonValue],
) -> str:
    """The whole text the pieces of every chunk make, chunk `number`'s piece being `value`."""
    if not isinstance(value, str):
        raise PathError("a chunk's text is a piece of the answer's text: give a string")
    pieces: list[str] = []
    for index, event in enumerate(events):
        piece = value if index == number else piece_of(_data(event))
        if isinstance(piece, str):
            pieces.append(piece)
    return "".join(pieces)


# --- the patch ---------------------------------------------------------------------------


def edit_patch(
    operation: Operation, pending: Patch | None, shown: JsonValue, change: StreamEdit
) -> OutputPatch:
    """The pending patch of a recorded model call after `change` to its streamed answer
    (`shown`: the answer as the pending patch leaves it).

    With no pending patch, or an `edit(...)` pending, it is `edit(...)` of the recorded
    answer with this path added to the paths edited already. With a whole output
    pending (written in the editor, or a reply), it is that output edited
    consistently (`edited_output`). Raises `PatchError` for an edit the stream cannot
    carry (adding items, changing an id), `RedactedValueEditError` for a value put
    where the recording holds a redaction placeholder (RFC 0007 §8).
    """
    from toolreplay.adapters.openai import edit, edited_output  # the SDK, on first use

    identity = operation.identity
    recorded = operation.outcome
    if isinstance(pending, OutputPatch) and pending.recipe != "edit":
        value: object = edited_output(_whole(shown), {change.path: change.value})
        result = cast(JsonValue, value)
    else:
        spec: dict[str, JsonValue] = {}
        if isinstance(pending, OutputPatch):
            spec.update(cast(JsonObject, pending.value))
        spec[change.path] = change.value
        value = edit(spec)
        if not isinstance(recorded, Returned):
            raise PatchError(
                "this call's recording is a failure, not an answer: e gives it a whole output"
            )
        result = cast(JsonValue, edited_output(_whole(recorded.value), spec))  # refused now
    if isinstance(recorded, Returned):
        check_redacted_edit(recorded.value, result)
    return replace_output(
        effect=identity.effect, inputs=operation.inputs, occurrence=identity.occurrence, value=value
    )


def _whole(value: JsonValue) -> Mapping[str, JsonValue]:
    found = json_object(value)
    if found is None:
        raise PatchError("this output is not a recorded answer (an object); edit it as a whole")
    return found


def patched_output(operation: Operation, patch: Patch | None, source: RecipeSource) -> JsonValue:
    """What the call gives once `patch` applies: its value, its error as an object, a
    recipe resolved against the recorded call (as the fork resolves a `replace_output`
    recipe: the operation's own number as its position), or the recording's outcome.

    Raises `PatchError` when a recipe cannot be resolved here (its adapter cannot be
    imported, or it does not fit the recorded answer)."""
    if isinstance(patch, ErrorPatch):
        return {"type": patch.error_type, "message": patch.message, "args": patch.args}
    if patch is not None and patch.recipe is None:
        return patch.value
    if patch is not None and patch.recipe is not None:
        namespace = operation.identity.namespace
        resolver = _resolver(namespace)
        if resolver is None:
            raise PatchError(
                f"the {patch.recipe} recipe of {operation.effect} is built by its adapter, "
                "which the debugger could not import"
            )
        recipe = OutputRecipe(patch.recipe, namespace, patch.value)
        resolver.check(recipe, operation.effect)
        call = RecipeCall(
            recipe,
            patch.patch_id,
            operation.identity,
            operation.inputs,
            operation.outcome,
            source,
            operation.logical_id,
        )
        return resolver.resolve(call)
    outcome = operation.outcome
    if isinstance(outcome, Returned):
        return outcome.value
    return {"type": outcome.error_type, "message": outcome.message, "args": outcome.args}


def _resolver(namespace: str) -> RecipeResolver | None:
    """The recipe resolver of `namespace`, importing its adapter if needed (None when
    it cannot be imported)."""
    if recipe_resolver(namespace) is None and namespace in _ADAPTERS:
        with contextlib.suppress(ImportError):
            importlib.import_module(_ADAPTERS[namespace])
    return recipe_resolver(namespace)


def check_recipe(patch: Patch) -> None:
    """Have the adapter check a recipe patch (a malformed reply or edit), when the
    patch names its effect and the adapter imports here; the fork checks it again."""
    if not isinstance(patch, OutputPatch) or patch.recipe is None or not patch.effect:
        return
    resolver = _resolver(patch.namespace)
    if resolver is not None:
        resolver.check(OutputRecipe(patch.recipe, patch.namespace, patch.value), patch.effect)
