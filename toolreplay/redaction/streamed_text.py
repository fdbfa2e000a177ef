"""The texts a recorded stream adds up to, for the secret scan (RFC 0007 §4).

A streamed answer sends its text in pieces: each event of a Claude stream carries a few
characters (`$.events[7].data.delta.text`), as do Chat Completions chunks, and only some
APIs repeat the whole text in a closing event. A secret cut across pieces is in no
single string of the recording, yet anyone reading the trace can put it back together.
So the scan also searches, for each list of events (a member named `events` whose items
are objects), the strings found at the same place in successive events joined in order:
`$.events[*].data.delta.text` is the text of every text delta, whatever block or choice
it belongs to (a false match where two blocks meet is possible, and harmless: the call
is refused, never written wrongly).

Pure functions over portable values; what counts as a place is the path below the event.
"""

from __future__ import annotations

from typing import cast

from toolreplay.portable import JsonValue, format_path

__all__ = ["joined_stream_texts"]

# How deep below the scanned value an `events` list may sit: an output holds it at once,
# an operation line of a trace file at `$.outcome.value.events`.
_DEPTH = 4


def joined_stream_texts(value: JsonValue) -> list[tuple[str, str]]:
    """(path, text) for each place that holds a string in two or more events of a list of
    events within `value`: the strings joined in event order. The path has `[*]` for the
    event (`$.events[*].data.delta.text`)."""
    found: list[tuple[str, str]] = []
    _find(value, [], _DEPTH, found)
    return found


def _find(
    value: JsonValue, segments: list[str | int], depth: int, found: list[tuple[str, str]]
) -> None:
    if depth == 0 or type(value) is not dict:
        return
    # Annotated, not `cast`: this runs for every value a recording scans, and a cast of a
    # generic alias costs more than looking through a small object.
    members: dict[str, JsonValue] = value
    for key, item in members.items():
        if key == "events" and type(item) is list:
            _join(cast(list[JsonValue], item), format_path([*segments, key]), found)
        elif type(item) is dict:  # only an object holds a member
            _find(item, [*segments, key], depth - 1, found)


def _join(events: list[JsonValue], where: str, found: list[tuple[str, str]]) -> None:
    pieces: dict[tuple[str | int, ...], list[str]] = {}
    for event in events:
        # Only the data: an event's name and id repeat or count, and joined they would
        # make runs of digits the card rule could take for a number.
        data = cast(dict[str, JsonValue], event).get("data") if type(event) is dict else None
        if data is not None:
            _strings(data, ("data",), pieces)
    for place, texts in pieces.items():
        if len(texts) > 1 and len(set(texts)) > 1:  # the same id in every event says nothing
            found.append((where + "[*]" + format_path(place)[1:], "".join(texts)))


def _strings(
    value: JsonValue, place: tuple[str | int, ...], pieces: dict[tuple[str | int, ...], list[str]]
) -> None:
    kind = type(value)
    if kind is str:
        pieces.setdefault(place, []).append(cast(str, value))
    elif kind is dict:
        for key, item in cast(dict[str, JsonValue], value).items():
            _strings(item, (*place, key), pieces)
    elif kind is list:
        for index, item in enumerate(cast(list[JsonValue], value)):
            _strings(item, (*place, index), pieces)
