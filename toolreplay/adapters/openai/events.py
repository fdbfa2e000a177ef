"""What the OpenAI stream modules share: recorded events read as JSON objects, a text cut
into the pieces a model streams, and the refusal of an edit a stream cannot carry.

Pure functions over recorded outputs (RFC 0006 §4.1), as `streams.py`,
`responses_stream.py` and `chat_stream.py` are: no SDK, no HTTP library.
"""

from __future__ import annotations

import re
from typing import cast

from toolreplay.errors import PatchError
from toolreplay.portable import JsonValue, copy_value

__all__ = [
    "JsonObject",
    "as_object",
    "copied",
    "event_data",
    "objects",
    "redistribute",
    "refuse_edit",
    "text_pieces",
]

JsonObject = dict[str, JsonValue]


def as_object(value: JsonValue) -> JsonObject | None:
    """`value` when it is a JSON object, else None."""
    return cast(JsonObject, value) if isinstance(value, dict) else None


def objects(value: JsonValue) -> list[JsonObject]:
    """The objects of a JSON list (other items skipped); none for anything else."""
    if not isinstance(value, list):
        return []
    return [cast(JsonObject, item) for item in value if isinstance(item, dict)]


def copied(value: JsonObject) -> JsonObject:
    """A deep copy of a JSON object."""
    return cast(JsonObject, copy_value(value))


def event_data(event: JsonValue) -> JsonObject | None:
    """A recorded event's JSON data when it is an object, else None."""
    found = as_object(event)
    return as_object(found.get("data")) if found is not None else None


_PIECE = re.compile(r"\s*\S+\s*|\s+")


def text_pieces(text: str, size: int = 24) -> list[str]:
    """`text` in the small pieces a model streams: words with their spacing."""
    pieces: list[str] = []
    for match in _PIECE.finditer(text):
        word = match.group()
        pieces.extend(word[start : start + size] for start in range(0, len(word), size))
    return pieces


def refuse_edit(path: str, why: str) -> PatchError:
    """Why an edit at `path` cannot be carried by a recorded stream, and what to do."""
    return PatchError(
        f"edit at {path}: {why}. A streamed answer can be edited in its texts (output text, "
        "refusals, reasoning summaries), function-call arguments, names and call ids, and "
        "its top-level fields; to write another answer, use reply(...)"
    )


def redistribute(old: list[str], new: str) -> list[str]:
    """`new` cut into as many pieces as `old`, each as long as its old piece, the last
    taking the rest: an unchanged beginning keeps its pieces."""
    pieces: list[str] = []
    rest = new
    for piece in old[:-1]:
        pieces.append(rest[: len(piece)])
        rest = rest[len(piece) :]
    pieces.append(rest)
    return pieces
