"""What every model provider's call summaries share (`openai_summary`, `anthropic_summary`).

Pieces of a summary line read from recorded values, each bounded before it is
cleaned and cut by `toolreplay.summaries` (`SUMMARY_LIMIT`): a text, a tool call
`name(arguments)`, JSON on one line, a message's parts, parts joined by commas, and an
outcome's answer (a failure, an HTTP error, or what a provider's reader makes of the
recorded body or stream). No SDK is imported: traces are read where none is installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import cast

from toolreplay.portable import JsonValue, json_object, json_objects
from toolreplay.summaries import SUMMARY_LIMIT
from toolreplay.trace.model import Outcome, Raised, Returned

__all__ = [
    "JSON_LIMIT",
    "TEXT_LIMIT",
    "AnswerReader",
    "answered",
    "call_text",
    "content_text",
    "cut",
    "event_data",
    "joined",
    "json_text",
]

TEXT_LIMIT = SUMMARY_LIMIT * 2
"""Characters of a text taken before it is cleaned and cut."""
JSON_LIMIT = 4_000
"""A longer JSON string is shown as text, not parsed."""

AnswerReader = Callable[[dict[str, JsonValue] | None, list[JsonValue] | None], str]
"""Reads an answer from a JSON body, or else from a stream's events."""


def event_data(event: JsonValue) -> dict[str, JsonValue] | None:
    """A recorded event's JSON data when it is an object, else None."""
    return json_object((json_object(event) or {}).get("data"))


def cut(text: str) -> str:
    """The start of `text` a summary can show."""
    return text[:TEXT_LIMIT]


def json_text(value: JsonValue | None) -> str:
    """Arguments or a tool's output: JSON (from a string holding it, too) on one line."""
    if isinstance(value, str):
        if len(value) > JSON_LIMIT:
            return cut(value)
        try:
            value = cast(JsonValue, json.loads(value))
        except (ValueError, RecursionError):
            return cut(value)
        if isinstance(value, str):
            return cut(value)
    try:
        return cut(json.dumps(value, ensure_ascii=False, sort_keys=False))
    except (ValueError, RecursionError):  # nested past what json can write
        return "[…]"


def content_text(content: JsonValue | None) -> str:
    """A message's text: a string, or its parts' text (other parts by their kind)."""
    if isinstance(content, str):
        return cut(content)
    pieces: list[str] = []
    for part in json_objects(content):
        text = part.get("text", part.get("refusal"))
        if isinstance(text, str):
            pieces.append(cut(text))
        else:
            pieces.append(f"[{part.get('type', 'part')}]")
        if sum(map(len, pieces)) > TEXT_LIMIT:
            break
    return " ".join(pieces)


def call_text(name: JsonValue | None, arguments: JsonValue | None) -> str:
    """A tool call as `name(arguments)`."""
    return f"{name if isinstance(name, str) else 'tool'}({json_text(arguments)})"


def joined(parts: Iterable[str]) -> str:
    """Parts joined by commas, as many as a summary can show."""
    kept: list[str] = []
    for part in parts:
        kept.append(part)
        if sum(map(len, kept)) > TEXT_LIMIT:
            break
    return ", ".join(kept)


def answered(outcome: Outcome | None, answer: AnswerReader) -> str:
    """The answer of an outcome: a failure's type and message, an HTTP error (with the
    body's `error.message`), or what `answer` reads from the recorded output."""
    if outcome is None:
        return ""
    if isinstance(outcome, Raised):
        return f"{outcome.error_type.rpartition('.')[2]}: {cut(outcome.message)}"
    assert isinstance(outcome, Returned)
    output = json_object(outcome.value)
    if output is None:
        return ""
    status = output.get("status")
    body = json_object(output.get("body"))
    if isinstance(status, int) and status >= 400:
        error = json_object((body or {}).get("error")) or {}
        message = error.get("message")
        return f"HTTP {status}" + (f": {cut(message)}" if isinstance(message, str) else "")
    if body is not None:
        return answer(body, None)
    events = output.get("events")
    if isinstance(events, list):
        text = answer(None, cast(list[JsonValue], events))
        return text + (" (stream closed early)" if output.get("end") == "closed_early" else "")
    text = output.get("text")
    return cut(text) if isinstance(text, str) else ""
