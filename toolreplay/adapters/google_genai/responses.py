"""A Gemini answer as its final response, the stream `reply(...)` serves for a response, and
a recorded stream rewritten to agree with an edit.

`streamGenerateContent?alt=sse` streams unnamed server-sent events, each a whole
`GenerateContentResponse` holding the next piece of the answer: a text cut anywhere, a
function call whole, the finish reason and the full usage on the last chunk. The SDK
hands the chunks on as they are; `final_response` adds them up into the response a
`generateContent` call would have given: per candidate, the parts in order, consecutive
text pieces of the same kind (thought or not) joined into one part (a thought signature
on any piece kept), every other field as the last chunk that states it.

Pure functions over recorded outputs (RFC 0006 §4.1): no SDK, no HTTP library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from toolreplay.adapters.capture.recipes import apply_edits
from toolreplay.adapters.capture.streamed import redistribute, text_pieces
from toolreplay.errors import PatchError
from toolreplay.portable import (
    JsonObject,
    JsonValue,
    copy_value,
    json_object,
    json_objects,
    preview,
)

__all__ = ["edited_output", "final_response", "response_chunks"]

_TEXT_KEYS = frozenset({"text", "thought", "thoughtSignature"})
_WHERE = (
    "Paths run through the final response (for a stream, the chunks added up), like "
    "$.candidates[0].content.parts[0].text, "
    "$.candidates[0].content.parts[1].functionCall.args.order_id, "
    "$.candidates[0].finishReason, $.usageMetadata.candidatesTokenCount"
)
# (chunk, candidate position in that chunk, part position in that candidate)
_Place = tuple[int, int, int]


def _copy(value: JsonObject) -> JsonObject:
    return cast(JsonObject, copy_value(value))


def _is_text(part: Mapping[str, JsonValue]) -> bool:
    return isinstance(part.get("text"), str) and part.keys() <= _TEXT_KEYS


def _kind(part: Mapping[str, JsonValue]) -> str:
    """What a part is: `text`, `thought`, or its first data field (`functionCall`, ...)."""
    if _is_text(part):
        return "thought" if part.get("thought") is True else "text"
    return next((key for key in part if key not in _TEXT_KEYS), "part")


def _is_response(body: Mapping[str, JsonValue]) -> bool:
    return "error" not in body and bool(
        body.keys() & {"candidates", "promptFeedback", "usageMetadata"}
    )


class _Sum:
    """Chunks added up, and where each part of the sum came from."""

    def __init__(self) -> None:
        self.response: JsonObject = {}
        self.candidates: dict[int, JsonObject] = {}
        self.places: dict[int, list[list[_Place]]] = {}

    def add(self, number: int, chunk: JsonObject) -> None:
        for key, value in chunk.items():
            if key != "candidates":
                self.response[key] = copy_value(value)
                continue
            self.response.setdefault("candidates", [])
            for position, candidate in enumerate(json_objects(value)):
                self._candidate(number, position, candidate)

    def _candidate(self, number: int, position: int, candidate: JsonObject) -> None:
        slot = candidate.get("index")
        slot = slot if type(slot) is int else position
        merged = self.candidates.setdefault(slot, {})
        places = self.places.setdefault(slot, [])
        for key, value in candidate.items():
            content = json_object(value) if key == "content" else None
            if content is None:
                merged[key] = copy_value(value)
                continue
            into = json_object(merged.get("content"))
            if into is None:
                into = merged["content"] = {}
            for name, field in content.items():
                if name != "parts":
                    into[name] = copy_value(field)
                    continue
                parts = into.setdefault("parts", [])
                assert isinstance(parts, list)
                for index, part in enumerate(json_objects(field)):
                    previous = json_object(parts[-1]) if parts else None
                    if (
                        previous is not None
                        and _is_text(part)
                        and _is_text(previous)
                        and (previous.get("thought") is True) == (part.get("thought") is True)
                    ):
                        previous["text"] = str(previous["text"]) + str(part["text"])
                        if "thoughtSignature" in part:
                            previous["thoughtSignature"] = copy_value(part["thoughtSignature"])
                        places[-1].append((number, position, index))
                    else:
                        parts.append(_copy(part))
                        places.append([(number, position, index)])

    def final(self) -> JsonObject:
        if "candidates" in self.response:
            self.response["candidates"] = [
                self.candidates[slot] for slot in sorted(self.candidates)
            ]
        return self.response


def _summed(chunks: list[JsonObject]) -> _Sum | None:
    if not chunks or any(not _is_response(chunk) for chunk in chunks):
        return None
    total = _Sum()
    for number, chunk in enumerate(chunks):
        total.add(number, chunk)
    return total


def _chunks(output: Mapping[str, JsonValue]) -> list[JsonObject]:
    return [
        cast(JsonObject, event["data"])
        for event in json_objects(output.get("events"))
        if isinstance(event.get("data"), dict)
    ]


def final_response(output: Mapping[str, JsonValue]) -> JsonObject | None:
    """The response of a recorded Gemini answer: its JSON body, or the response its stream's
    chunks add up to; None for any other output (an error, an empty stream)."""
    body = json_object(output.get("body"))
    if body is not None:
        return body if _is_response(body) else None
    total = _summed(_chunks(output))
    return total.final() if total is not None else None


# --- writing a stream -----------------------------------------------------------------------


def response_chunks(final: JsonObject) -> list[JsonValue]:
    """The chunks the API streams for `final`, as a recorded output's `events`: each text in
    word-sized pieces (a thought signature on its last), each other part whole, the
    candidate's own fields and the usage on the last chunk; `final_response` adds them up
    to `final` again."""
    head = {key: copy_value(value) for key, value in final.items() if key not in _OWN_KEYS}
    candidates = json_objects(final.get("candidates"))
    pieces: list[tuple[int, JsonObject]] = []
    for slot, candidate in enumerate(candidates):
        content = json_object(candidate.get("content")) or {}
        for part in json_objects(content.get("parts")):
            if not _is_text(part):
                pieces.append((slot, _copy(part)))
                continue
            texts = text_pieces(str(part["text"])) or [""]
            for number, text in enumerate(texts):
                piece: JsonObject = {"text": text}
                if part.get("thought") is True:
                    piece["thought"] = True
                if number == len(texts) - 1 and "thoughtSignature" in part:
                    piece["thoughtSignature"] = copy_value(part["thoughtSignature"])
                pieces.append((slot, piece))
    events: list[JsonValue] = []
    last = {slot: number for number, (slot, _) in enumerate(pieces)}
    for number, (slot, piece) in enumerate(pieces):
        candidate = candidates[slot]
        content = json_object(candidate.get("content")) or {}
        streamed: JsonObject = {"content": {**_without(content, "parts"), "parts": [piece]}}
        if last[slot] == number:
            streamed.update(_without(_copy(candidate), "content"))
        elif "index" in candidate:
            streamed["index"] = copy_value(candidate["index"])
        chunk: JsonObject = {"candidates": [streamed], **_copy(head)}
        if number == len(pieces) - 1 and "usageMetadata" in final:
            chunk["usageMetadata"] = copy_value(final["usageMetadata"])
        events.append({"data": chunk})
    if not pieces:  # no part at all (a blocked prompt): the response as one chunk
        events.append({"data": _copy(final)})
    return events


_OWN_KEYS = frozenset({"candidates", "usageMetadata"})


def _without(value: JsonObject, key: str) -> JsonObject:
    return {name: copy_value(field) for name, field in value.items() if name != key}


# --- editing --------------------------------------------------------------------------------


def edited_output(
    output: Mapping[str, JsonValue], edits: Mapping[str, JsonValue]
) -> dict[str, JsonValue]:
    """A recorded Gemini answer with values of its final response set by JSON path.

        edited_output(recorded, {"$.candidates[0].content.parts[0].text": "Held for review."})

    A JSON body is edited as it is. A stream is rewritten so that its chunks add up to
    exactly the edited response: a changed text is cut over the pieces that carried it
    (each as long as its recorded piece, the last taking the rest), a changed function
    call (or other part) replaces its chunk's part, a candidate's changed field is set on
    the last chunk stating it, the usage on the last chunk carrying it, any other changed
    field in every chunk. Adding or removing candidates or parts, or changing a part's
    kind, is a `PatchError`: `reply(...)` writes a new answer. `output` is not changed.
    """
    final = final_response(output)
    if final is None:
        raise PatchError(
            "edit(...) changes a recorded Gemini answer (a GenerateContentResponse); this "
            "output is not one. Give the output value itself instead"
        )
    edited = json_object(apply_edits(final, edits, _WHERE))
    if edited is None:
        raise PatchError("an edit must leave the response a JSON object")
    result = cast(dict[str, JsonValue], copy_value(dict(output)))
    if "body" in result:
        result["body"] = edited
        return result
    chunks = _chunks(result)
    total = _summed(chunks)
    assert total is not None
    _rewrite(chunks, total, final, edited)
    if final_response(result) != edited:
        raise PatchError(
            "this edit cannot be carried by the recorded stream's chunks (a field no chunk "
            "states, or one a chunk states again); use reply(...) to write a new answer"
        )
    return result


def _set_where_stated(
    holders: list[JsonObject], key: str, value: JsonValue | None, *, every: bool
) -> None:
    """Set `key` on the holders that state it (every one, or the last), or on the last
    holder when none does; remove it everywhere when `value` is None (absent)."""
    if value is None:
        for holder in holders:
            holder.pop(key, None)
        return
    stating = [holder for holder in holders if key in holder]
    for holder in (stating if every else stating[-1:]) or holders[-1:]:
        holder[key] = copy_value(value)


def _rewrite(chunks: list[JsonObject], total: _Sum, final: JsonObject, edited: JsonObject) -> None:
    for key in final.keys() | edited.keys():
        if key != "candidates" and final.get(key) != edited.get(key):
            every = key != "usageMetadata"  # the last chunk carries the full usage
            _set_where_stated(chunks, key, edited.get(key), every=every)
    before, after = json_objects(final.get("candidates")), json_objects(edited.get("candidates"))
    if len(before) != len(after) or ("candidates" in final) != ("candidates" in edited):
        raise PatchError(
            "edit at $.candidates: an edit cannot add or remove candidates; use reply(...)"
        )
    for position, (old, new) in enumerate(zip(before, after, strict=True)):
        slot = sorted(total.candidates)[position]
        holders = _holders(chunks, slot)
        for key in old.keys() | new.keys():
            if key != "content" and old.get(key) != new.get(key):
                _set_where_stated(holders, key, new.get(key), every=key == "index")
        _rewrite_content(chunks, total.places[slot], holders, position, old, new)


def _holders(chunks: list[JsonObject], slot: int) -> list[JsonObject]:
    """The candidate objects of `slot` in the chunks, in order."""
    found: list[JsonObject] = []
    for chunk in chunks:
        for position, candidate in enumerate(json_objects(chunk.get("candidates"))):
            index = candidate.get("index")
            if (index if type(index) is int else position) == slot:
                found.append(candidate)
    return found


def _rewrite_content(
    chunks: list[JsonObject],
    places: list[list[_Place]],
    holders: list[JsonObject],
    position: int,
    old: JsonObject,
    new: JsonObject,
) -> None:
    where = f"$.candidates[{position}].content"
    before, after = json_object(old.get("content")) or {}, json_object(new.get("content")) or {}
    contents = [c for c in (json_object(h.get("content")) for h in holders) if c is not None]
    for key in before.keys() | after.keys():
        if key != "parts" and before.get(key) != after.get(key):
            _set_where_stated(contents, key, after.get(key), every=True)
    old_parts, new_parts = json_objects(before.get("parts")), json_objects(after.get("parts"))
    if len(old_parts) != len(new_parts) or not isinstance(after.get("parts", []), list):
        raise PatchError(
            f"edit at {where}.parts: an edit cannot add or remove parts; use reply(...)"
        )
    for index, (was, now) in enumerate(zip(old_parts, new_parts, strict=True)):
        if was == now:
            continue
        if _kind(was) != _kind(now):
            raise PatchError(
                f"edit at {where}.parts[{index}]: a part's kind cannot change "
                f"({preview(_kind(was))} to {preview(_kind(now))}); use reply(...)"
            )
        pieces = [_part_at(chunks, place) for place in places[index]]
        if len(pieces) == 1:
            pieces[0].clear()
            pieces[0].update(_copy(now))
            continue
        texts = redistribute([str(piece["text"]) for piece in pieces], str(now["text"]))
        for piece, text in zip(pieces, texts, strict=True):
            piece["text"] = text
        if was.get("thoughtSignature") != now.get("thoughtSignature"):
            _set_where_stated(pieces, "thoughtSignature", now.get("thoughtSignature"), every=False)


def _part_at(chunks: list[JsonObject], place: _Place) -> JsonObject:
    number, position, index = place
    candidate = json_objects(chunks[number].get("candidates"))[position]
    content = json_object(candidate.get("content")) or {}
    return json_objects(content.get("parts"))[index]
