"""A trace line's bytes as a JSON object: UTF-8, finite numbers only, nested no deeper
than portable values may be; anything else is an `InvalidLine`."""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, cast

from toolreplay.errors import NonPortableValueError
from toolreplay.portable import MAX_DEPTH, ensure_portable

__all__ = ["InvalidLine", "parse_line", "parse_lines", "reads_strictly"]


class InvalidLine(ValueError):
    """A line that is not what its format version allows; the reader adds file and line."""


def _reject_constant(name: str) -> NoReturn:
    raise InvalidLine(f"{name} is not portable JSON; only finite numbers are allowed")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise InvalidLine(f"the number {text} overflows a float; it is not portable JSON")
    return number


_LINE_NESTING = 4
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _may_nest_too_deeply(text: str) -> bool:
    """Whether the line has enough brackets outside strings to nest past the limit."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False  # the common case, decided by two C-level counts
    bare = _STRING.sub("", text)
    return bare.count("[") + bare.count("{") > MAX_DEPTH


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
# The decoder's C scanner (an instance attribute `JSONDecoder.__init__` sets, untyped):
# one JSON value from a position; StopIteration when none starts there.
_SCAN = cast("Callable[[str, int], tuple[object, int]]", vars(_DECODER)["scan_once"])


def parse_line(line: bytes) -> dict[str, Any]:
    """Parse one line as a JSON object, refusing NaN, Infinity and overflowing floats."""
    try:
        # Decode explicitly: json.loads(bytes) would guess UTF-16 or UTF-32 from the bytes.
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidLine(f"not UTF-8 (byte {error.start}): {error.reason}") from None
    try:
        # The decoder's scanner itself: `decode` adds two whitespace regex passes per line,
        # and `raw_decode` a Python frame that costs a tenth of parsing a short line.
        try:
            obj, end = _SCAN(text, 0)
        except StopIteration as stop:
            raise json.JSONDecodeError("Expecting value", text, stop.value) from None
        if end != len(text) and text[end:].strip():
            raise json.JSONDecodeError("Extra data", text, end)
    except json.JSONDecodeError as error:
        raise InvalidLine(f"not valid JSON: {error.msg} at column {error.colno}") from None
    except RecursionError:
        raise InvalidLine("nested too deeply to read") from None
    except InvalidLine:
        raise  # NaN, Infinity or an overflowing float, already explained
    except ValueError as error:  # e.g. an integer longer than Python will parse
        raise InvalidLine(f"not portable JSON: {error}") from None
    if type(obj) is not dict:
        raise InvalidLine(f"expected a JSON object, found {type(obj).__name__}")
    obj = cast(dict[str, Any], obj)
    if ("\\u" in text and _SURROGATE_ESCAPE.search(text)) or _may_nest_too_deeply(text):
        # Only an escape can smuggle in a lone surrogate, and only this many brackets
        # can nest deeper than portable values may: check those lines fully.
        try:
            # Values sit up to four levels inside a line (outcome.error.args[0]).
            ensure_portable(obj, what="the line", max_depth=MAX_DEPTH + _LINE_NESTING)
        except NonPortableValueError as error:
            raise InvalidLine(str(error)) from None
    return obj


_SHALLOW_BYTES = 2 * MAX_DEPTH
"""A line this short cannot nest deeper than `MAX_DEPTH` (each level takes two brackets)."""
_FIRST_BYTE = operator.itemgetter(0)


def parse_lines(lines: Sequence[bytes]) -> list[dict[str, Any]] | None:
    """The objects of `lines` (each without its newline) as `parse_line` returns them,
    parsed in one pass of the decoder; or None when a line needs `parse_line` itself: one
    it refuses, or one it examines further (an escaped surrogate, many brackets). Read
    those lines one by one, for the first one's own message.

    One pass saves the Python steps `parse_line` takes per line, a sixth of loading a
    trace of small operations. The lines become one JSON array, which would also take
    what no line may hold on its own: whitespace before a line's object (so every line
    must start with `{`), two values on one line (so there must be one per line).
    """
    if not lines:
        return []
    try:
        if bytes(map(_FIRST_BYTE, lines)) != b"{" * len(lines):
            return None
    except IndexError:  # an empty line
        return None
    if max(map(len, lines)) > _SHALLOW_BYTES and any(
        line.count(b"[") + line.count(b"{") > MAX_DEPTH for line in lines
    ):
        return None
    try:
        text = b",".join(lines).decode("utf-8")
        if "\\u" in text and _SURROGATE_ESCAPE.search(text):
            return None
        values, end = _SCAN(f"[{text}]", 0)
    except (StopIteration, ValueError, RecursionError):  # InvalidLine is a ValueError too
        return None
    if end != len(text) + 2 or type(values) is not list:
        return None
    objects = cast(list[object], values)
    if len(objects) != len(lines) or any(type(obj) is not dict for obj in objects):
        return None  # two values on one line, or a value that is no object
    return cast(list[dict[str, Any]], objects)


class _Nested:
    """What an object becomes while `reads_strictly` decodes a value: how deeply it nests."""

    __slots__ = ("depth",)

    def __init__(self, depth: int) -> None:
        self.depth = depth


def _depth(value: object) -> int:
    """The levels of arrays and objects in a value decoded by `reads_strictly`."""
    if isinstance(value, _Nested):
        return value.depth
    if type(value) is list:
        return 1 + max(map(_depth, cast(list[object], value)), default=0)
    return 0


def _nested(pairs: list[tuple[str, object]]) -> _Nested:
    return _Nested(1 + max((_depth(value) for _, value in pairs), default=0))


_SHAPE_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, object_pairs_hook=_nested
)


def reads_strictly(text: str, *, max_depth: int) -> bool:
    """Whether `text`, one JSON value, is certainly read by `parse_line`'s rules when it
    stands in a line: finite numbers, no `\\u` escape of a surrogate, at most `max_depth`
    levels of nesting. Each object is dropped as soon as it is decoded, so a value of
    many objects is checked in little more memory than its text.

    False when it is not, or may not be (a surrogate escape): decode the line with
    `parse_line` then, for the reader's own message.
    """
    if _SURROGATE_ESCAPE.search(text):
        return False
    try:
        value, end = _SHAPE_DECODER.raw_decode(text)
        if end != len(text) and text[end:].strip():
            return False
        return _depth(value) <= max_depth
    except (ValueError, RecursionError):
        return False
