"""Server-sent events as ordered JSON events, and back to the bytes a client decodes.

A recorded `text/event-stream` body is its list of events, each
`{"event": ..., "data": <JSON>}` (`data_text` for data that is not JSON, `id` and
`retry` when sent, `{"raw": ...}` verbatim for a block with comments, unknown or
repeated fields), plus the text after the last complete event (a cut stream's
partial event). Replay writes them back as `event:`/`data:` lines with compact JSON,
which every SSE decoder reads as the same events.

`SSE` is the `StreamFormat` (see `profile.py`) of every profile but Bedrock's.
"""

from __future__ import annotations

import json
import re

from toolreplay.errors import UnsupportedResponseError
from toolreplay.portable import JsonValue, loads_checked

__all__ = ["SSE", "EventStreamFormat", "compact_json"]

_EVENT_SEPARATOR = re.compile(r"\r\n\r\n|\n\n|\r\r")
_LINE = re.compile(r"\r\n|\n|\r")
_FIELDS = ("event", "data", "id", "retry")
# How deep an event's JSON data sits in an output: $.events[i].data.
_EVENT_DATA_DEPTH = 3

# Built once: json.dumps with options builds a new encoder on every call.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def compact_json(value: JsonValue) -> str:
    """`value` as compact JSON text (no line break: JSON escapes them in strings)."""
    return _COMPACT.encode(value)


class EventStreamFormat:
    """`text/event-stream`, as `StreamFormat`."""

    name = "sse"
    binary = False

    def matches(self, media_type: str) -> bool:
        """Whether a response of this media type (lowercase, no parameters) is a stream."""
        return media_type == "text/event-stream"

    def parse(self, content: bytes) -> tuple[list[JsonValue], str, bool]:
        """Complete events, the text after the last one (a cut stream's partial event),
        and whether every event is known to be portable JSON (`portable.loads_checked`).
        A body that is not UTF-8 is a ValueError (`UnicodeDecodeError`)."""
        text = content.decode("utf-8")
        if "\r" in text:
            blocks = _EVENT_SEPARATOR.split(text)
            split_lines = _LINE.split
        else:  # what servers send: the same split, at the speed of str.split
            blocks = text.split("\n\n")
            split_lines = _split_newlines
        tail = blocks.pop()  # after the last separator: empty unless the stream was cut
        events: list[JsonValue] = []
        portable = True
        for block in blocks:
            if block:
                event, checked = _event(split_lines(block), block)
                events.append(event)
                portable = portable and checked
        return events, tail, portable

    def encode(self, operation: str, events: list[JsonValue], tail: str) -> bytes:
        """The bytes of recorded events, as an event-stream decoder reads them."""
        parts: list[str] = []
        for index, event in enumerate(events):
            if not isinstance(event, dict):
                raise UnsupportedResponseError(
                    f"{operation}: $.output.events[{index}] is not an object; re-record the "
                    "call, or restore the event from the original recording"
                )
            raw = event.get("raw")
            if isinstance(raw, str):
                parts.append(f"{raw}\n\n")
                continue
            lines: list[str] = []
            for name, value in event.items():
                if name == "data":
                    lines.append(f"data: {_COMPACT.encode(value)}")
                    continue
                if name == "data_text" and isinstance(value, str):
                    text, name = value, "data"
                elif name in _FIELDS and isinstance(value, str):
                    text = value
                else:
                    raise UnsupportedResponseError(
                        f"{operation}: $.output.events[{index}].{name} is not a server-sent "
                        "event field (event, data, data_text, id, retry, raw) of the right "
                        "type; fix the event or re-record the call"
                    )
                lines.extend(f"{name}: {line}" for line in _LINE.split(text))
            parts.append("\n".join(lines) + "\n\n")
        parts.append(tail)
        return "".join(parts).encode("utf-8")


SSE = EventStreamFormat()
"""Server-sent events (`text/event-stream`)."""


def _split_newlines(block: str) -> list[str]:
    return block.split("\n")


def _event(lines: list[str], block: str) -> tuple[JsonValue, bool]:
    if len(lines) == 2:  # what most APIs send: `event: <type>` then one `data: <json>`
        first, second = lines
        if first.startswith("event:") and second.startswith("data:"):
            data = second[5:].removeprefix(" ")
            try:
                parsed, portable = loads_checked(data, depth=_EVENT_DATA_DEPTH)
            except ValueError:
                pass  # not JSON: the general reading below keeps it as data_text
            else:
                return {"event": first[6:].removeprefix(" "), "data": parsed}, portable
    fields: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or name not in _FIELDS or (name in fields and name != "data"):
            return {"raw": block}, True  # comments, unknown or repeated fields: kept verbatim
        value = value.removeprefix(" ")
        fields[name] = f"{fields[name]}\n{value}" if name in fields else value
    event: dict[str, JsonValue] = {}
    portable = True
    for name, value in fields.items():
        if name == "data":
            try:
                parsed, portable = loads_checked(value, depth=_EVENT_DATA_DEPTH)
            except ValueError:
                event["data_text"] = value  # e.g. Chat Completions' closing [DONE]
            else:
                # Replay re-encodes it compactly: a client decodes the same JSON value.
                event["data"] = parsed
        else:
            event[name] = value
    return event, portable
