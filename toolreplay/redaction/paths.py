"""The JSON path subset redaction rules are written in (RFC 0007 §2.1).

`$`, `.name`, `['name']`, `[N]`, `[*]`, `.*`, and the recursive `..name`,
`..['name']`, `..*`. Applying a path never changes the value it is given: the
containers on the way to a replaced value are copied, everything else is shared.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast

from toolreplay.errors import RedactionRuleError
from toolreplay.portable import JsonValue

__all__ = ["JsonPath", "parse_path"]

SegmentKind = Literal["key", "index", "all", "descend_key", "descend_all"]
Segment = tuple[SegmentKind, str | int]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_INDEX = re.compile(r"\[(\d+)\]")
_QUOTED = re.compile(r"""\[\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s*\]""")


@dataclass(frozen=True, slots=True)
class JsonPath:
    """A parsed path: `text` as written, `segments` as applied."""

    text: str
    segments: tuple[Segment, ...]

    def replace(self, value: JsonValue, replace: Callable[[JsonValue], JsonValue]) -> JsonValue:
        """`value` with every selected value `v` replaced by `replace(v)` (a new value)."""
        if not self.segments:
            return replace(value)
        return _apply(value, self.segments, 0, replace)


def parse_path(text: str, *, what: str = "redaction path") -> JsonPath:
    """Parse a path, or raise `RedactionRuleError` naming the position.

    `what` names the path in the message (other users of the grammar, such as an
    edit of a recorded answer, say what their paths are for).
    """
    if not isinstance(text, str):  # pyright: ignore[reportUnnecessaryIsInstance]: user input
        raise RedactionRuleError(f"a {what} is a str like '$.email', not {text!r}")
    if not text.startswith("$"):
        raise _bad(text, 0, "a path starts with '$' (the inputs object or the output value)", what)
    segments: list[Segment] = []
    position = 1
    while position < len(text):
        descend = text.startswith("..", position)
        if descend:
            position += 2
            rest = text[position:]
            if rest.startswith("*"):
                segments.append(("descend_all", "*"))
                position += 1
                continue
            name = _NAME.match(text, position)
            if name is not None:
                segments.append(("descend_key", name.group()))
                position = name.end()
                continue
            quoted = _QUOTED.match(text, position)
            if quoted is not None:
                segments.append(("descend_key", _unquote(text, position, quoted.group(1), what)))
                position = quoted.end()
                continue
            raise _bad(text, position, "'..' must be followed by a name, ['name'] or '*'", what)
        if text.startswith(".*", position):
            segments.append(("all", "*"))
            position += 2
        elif text.startswith(".", position):
            name = _NAME.match(text, position + 1)
            if name is None:
                raise _bad(
                    text,
                    position + 1,
                    "expected a name after '.' (use ['...'] for other keys)",
                    what,
                )
            segments.append(("key", name.group()))
            position = name.end()
        elif text.startswith("[*]", position):
            segments.append(("all", "*"))
            position += 3
        elif (index := _INDEX.match(text, position)) is not None:
            segments.append(("index", int(index.group(1))))
            position = index.end()
        elif (quoted := _QUOTED.match(text, position)) is not None:
            segments.append(("key", _unquote(text, position, quoted.group(1), what)))
            position = quoted.end()
        else:
            raise _bad(text, position, "expected .name, ['name'], [N], [*], .* or ..name", what)
    return JsonPath(text, tuple(segments))


def _unquote(text: str, position: int, quoted: str, what: str) -> str:
    if quoted.startswith("'"):
        return re.sub(r"\\(.)", r"\1", quoted[1:-1])
    try:
        return cast(str, json.loads(quoted))
    except ValueError:
        raise _bad(text, position, "the quoted key is not a valid JSON string", what) from None


def _bad(text: str, position: int, reason: str, what: str = "redaction path") -> RedactionRuleError:
    return RedactionRuleError(
        f"{what} {text!r}, at character {position + 1}: {reason}. "
        "Paths look like $.email, $.card.number, $.items[*].token or $..password"
    )


def _apply(
    value: JsonValue,
    segments: tuple[Segment, ...],
    at: int,
    replace: Callable[[JsonValue], JsonValue],
) -> JsonValue:
    kind, argument = segments[at]
    last = at + 1 == len(segments)

    def below(child: JsonValue) -> JsonValue:
        return replace(child) if last else _apply(child, segments, at + 1, replace)

    if kind == "key":
        if type(value) is dict and argument in value:
            mapping = cast(dict[str, JsonValue], value)
            return {**mapping, argument: below(mapping[argument])}
        return value
    if kind == "index":
        index = cast(int, argument)
        if type(value) is list and index < len(value):
            items = list(cast(list[JsonValue], value))
            items[index] = below(items[index])
            return items
        return value
    if kind == "all":
        if type(value) is dict:
            return {key: below(child) for key, child in cast(dict[str, JsonValue], value).items()}
        if type(value) is list:
            return [below(child) for child in cast(list[JsonValue], value)]
        return value
    # Recursive descent: the named (or every) member at this level and at every level below.
    if type(value) is dict:
        result: dict[str, JsonValue] = {}
        for key, child in cast(dict[str, JsonValue], value).items():
            if kind == "descend_all" or key == argument:
                child = below(child)
            # A replaced child is a placeholder string: descending into it finds nothing.
            result[key] = _apply(child, segments, at, replace)
        return result
    if type(value) is list:
        items = cast(list[JsonValue], value)
        if kind == "descend_all":
            return [_apply(below(child), segments, at, replace) for child in items]
        return [_apply(child, segments, at, replace) for child in items]
    return value
