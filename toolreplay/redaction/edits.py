"""Edits of redacted values: a placeholder may be kept or dropped, never typed over (RFC 0007 §8).

The original of a placeholder is not in the trace. A person editing an output
who replaces a placeholder with text may be typing the original back in, which
would then travel in a patch file and a branch; so such an edit is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from toolreplay.errors import RedactedValueEditError
from toolreplay.portable import JsonValue, format_path
from toolreplay.redaction.keys import PLACEHOLDER_PATTERN

__all__ = ["check_redacted_edit", "redacted_paths"]

Segments = tuple[str | int, ...]


def redacted_paths(value: JsonValue) -> Iterator[tuple[Segments, tuple[str, ...]]]:
    """Every string holding placeholders: its path and the placeholders in it."""
    yield from _walk(value, ())


def _walk(value: JsonValue, path: Segments) -> Iterator[tuple[Segments, tuple[str, ...]]]:
    kind = type(value)
    if kind is str:
        text = cast(str, value)
        if "<redacted:" in text:
            found = tuple(PLACEHOLDER_PATTERN.findall(text))
            if found:
                yield path, found
    elif kind is list:
        for index, item in enumerate(cast(list[JsonValue], value)):
            yield from _walk(item, (*path, index))
    elif kind is dict:
        for key, item in cast(dict[str, JsonValue], value).items():
            yield from _walk(item, (*path, key))


_MISSING = object()


def _at(value: JsonValue, path: Segments) -> object:
    current: object = value
    for segment in path:
        if isinstance(segment, str) and type(current) is dict:
            mapping = cast(dict[str, JsonValue], current)
            if segment not in mapping:
                return _MISSING
            current = mapping[segment]
        elif isinstance(segment, int) and type(current) is list:
            items = cast(list[JsonValue], current)
            if segment >= len(items):
                return _MISSING
            current = items[segment]
        else:
            return _MISSING
    return current


def check_redacted_edit(recorded: JsonValue, edited: JsonValue) -> None:
    """Raise `RedactedValueEditError` if `edited` types over a placeholder of `recorded`.

    At every path where `recorded` holds a placeholder, `edited` must hold none
    (the field was removed) or a string that still contains that placeholder
    (a whole placeholder may also become another placeholder).
    """
    for path, placeholders in redacted_paths(recorded):
        now = _at(edited, path)
        if now is _MISSING:
            continue
        whole = len(placeholders) == 1 and _at(recorded, path) == placeholders[0]
        if type(now) is str:
            text = now
            if whole and PLACEHOLDER_PATTERN.fullmatch(text):
                continue
            if all(placeholder in text for placeholder in placeholders):
                continue
        where = format_path(path)
        raise RedactedValueEditError(
            f"{where} is redacted: the trace holds only a placeholder, not the original, and "
            "a value typed in its place could be the original, which would then be written "
            "to a patch file and a branch. Keep the placeholder, or remove the field.",
            path=where,
        )
