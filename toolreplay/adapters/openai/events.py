"""What the OpenAI stream modules share beyond the capture core's `streamed` helpers: a
recorded event's data, copies of JSON objects, and the refusal of an edit a stream cannot
carry.

Pure functions over recorded outputs (RFC 0006 §4.1), as `streams.py`,
`responses_stream.py` and `chat_stream.py` are: no SDK, no HTTP library.
"""

from __future__ import annotations

from typing import cast

from toolreplay.errors import PatchError
from toolreplay.portable import JsonObject, JsonValue, copy_value, json_object

__all__ = ["copied", "event_data", "refuse_edit"]


def copied(value: JsonObject) -> JsonObject:
    """A deep copy of a JSON object."""
    return cast(JsonObject, copy_value(value))


def event_data(event: JsonValue) -> JsonObject | None:
    """A recorded event's JSON data when it is an object, else None."""
    found = json_object(event)
    return json_object(found.get("data")) if found is not None else None


def refuse_edit(path: str, why: str) -> PatchError:
    """Why an edit at `path` cannot be carried by a recorded stream, and what to do."""
    return PatchError(
        f"edit at {path}: {why}. A streamed answer can be edited in its texts (output text, "
        "refusals, reasoning summaries), function-call arguments, names and call ids, and "
        "its top-level fields; to write another answer, use reply(...)"
    )
