"""The one JSON path grammar of Tool Replay: parsed, rendered, applied.

    $                the whole value
    .name  ['name']  ["name"]   an object's member (quoted: any key)
    [N]              a list's item
    [*]  .*          every member or item
    ..name  ..['name']  ..*     recursive descent: at this level and every level below

Redaction rules (RFC 0007 §2.1), `toolreplay find --where` (RFC 0008 §4), the
paths of an `edit(...)` recipe in a patch, and every path a message or the
terminal UI shows are written in it. A plain name is a letter or `_` followed by
letters, digits, `_` or `-`; any other key is quoted. `format_path` writes a
path that `parse_path` reads back to the same segments.

Applying a path never changes the value it is given: `JsonPath.replace` copies
the containers on the way to a replaced value and shares everything else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast

from toolreplay.errors import RedactionRuleError, ToolReplayError

if TYPE_CHECKING:
    from toolreplay.portable import JsonValue

__all__ = ["JsonPath", "Segment", "SegmentKind", "format_path", "parse_path", "read_path"]

SegmentKind = Literal["key", "index", "all", "descend_key", "descend_all"]
Segment = tuple[SegmentKind, str | int]
"""One step of a path: `("key", "email")`, `("index", 3)`, `("all", "*")`,
`("descend_key", "password")`, `("descend_all", "*")`."""

_NAME = re.compile(r"[^\W\d][\w-]*")
_INDEX = re.compile(r"\[(\d+)\]")
_QUOTED = re.compile(r"""\[\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s*\]""")
_SURROGATES = re.compile("[\ud800-\udfff]")
EXAMPLES = "$.email, $.card.number, $.items[*].token, $['a key'] or $..password"


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

    def select(self, value: JsonValue) -> list[JsonValue]:
        """The values the path selects in `value`, in document order (none if it selects
        nothing)."""
        current: list[JsonValue] = [value]
        for kind, argument in self.segments:
            following: list[JsonValue] = []
            for found in current:
                _select(found, kind, argument, following)
            current = following
        return current


def parse_path(
    text: str,
    *,
    what: str = "redaction path",
    error: Callable[[str], ToolReplayError] = RedactionRuleError,
) -> JsonPath:
    """Parse a whole path, or raise `error` (a message naming the character at fault).

    `what` names the path in the message (`redaction path`, `edit path`, ...), and
    `error` makes the exception its user raises (`RedactionRuleError` by default).
    """
    if not isinstance(text, str):  # pyright: ignore[reportUnnecessaryIsInstance]: user input
        raise error(f"a {what} is a str like '$.email', not {text!r}")
    return read_path(text, what=what, error=error, stop_at_space=False)[0]


def read_path(
    text: str,
    *,
    what: str,
    error: Callable[[str], ToolReplayError],
    stop_at_space: bool = True,
) -> tuple[JsonPath, int]:
    """The path at the start of `text`, and where it ends: at the end of the text or, with
    `stop_at_space`, at the first whitespace between two steps (`$.a == 1`)."""
    if not text.startswith("$"):
        raise _bad(text, 0, "a path starts with '$' (the whole value)", what, error)
    segments: list[Segment] = []
    position = 1
    while position < len(text) and not (stop_at_space and text[position].isspace()):
        if text.startswith("..", position):
            position += 2
            if text.startswith("*", position):
                segments.append(("descend_all", "*"))
                position += 1
            elif (name := _NAME.match(text, position)) is not None:
                segments.append(("descend_key", name.group()))
                position = name.end()
            elif (quoted := _QUOTED.match(text, position)) is not None:
                key = _unquote(text, position, quoted.group(1), what, error)
                segments.append(("descend_key", key))
                position = quoted.end()
            else:
                raise _bad(
                    text, position, "'..' must be followed by a name, ['name'] or '*'", what, error
                )
        elif text.startswith(".*", position):
            segments.append(("all", "*"))
            position += 2
        elif text.startswith(".", position):
            name = _NAME.match(text, position + 1)
            if name is None:
                raise _bad(
                    text,
                    position + 1,
                    "expected a name after '.' (write ['...'] for other keys)",
                    what,
                    error,
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
            segments.append(("key", _unquote(text, position, quoted.group(1), what, error)))
            position = quoted.end()
        else:
            raise _bad(
                text, position, "expected .name, ['name'], [N], [*], .* or ..name", what, error
            )
    return JsonPath(text[:position], tuple(segments)), position


def format_path(segments: list[str | int] | tuple[str | int, ...]) -> str:
    """Render keys and indices as a path `parse_path` reads back: `$.items[3].price`,
    `$["a key"]`."""
    parts = ["$"]
    for segment in segments:
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
        elif segment.isidentifier() and _NAME.fullmatch(segment):
            parts.append(f".{segment}")
        else:
            # Escape to ASCII only when needed: a lone surrogate must stay printable.
            readable = segment.isascii() or not _SURROGATES.search(segment)
            parts.append(f"[{json.dumps(segment, ensure_ascii=not readable)}]")
    return "".join(parts)


def _unquote(
    text: str, position: int, quoted: str, what: str, error: Callable[[str], ToolReplayError]
) -> str:
    if quoted.startswith("'"):
        return re.sub(r"\\(.)", r"\1", quoted[1:-1])
    try:
        return cast(str, json.loads(quoted))
    except ValueError:
        raise _bad(
            text, position, "the quoted key is not a valid JSON string", what, error
        ) from None


def _bad(
    text: str, position: int, reason: str, what: str, error: Callable[[str], ToolReplayError]
) -> ToolReplayError:
    return error(
        f"{what} {text!r}, at character {position + 1}: {reason}. Paths look like {EXAMPLES}"
    )


def _select(
    value: JsonValue, kind: SegmentKind, argument: str | int, into: list[JsonValue]
) -> None:
    if kind == "key":
        if type(value) is dict and argument in value:
            into.append(cast("dict[str, JsonValue]", value)[argument])
    elif kind == "index":
        index = cast(int, argument)
        if type(value) is list and index < len(value):
            into.append(cast("list[JsonValue]", value)[index])
    elif kind == "all":
        if type(value) is dict:
            into.extend(cast("dict[str, JsonValue]", value).values())
        elif type(value) is list:
            into.extend(cast("list[JsonValue]", value))
    elif type(value) is dict:
        for key, child in cast("dict[str, JsonValue]", value).items():
            if kind == "descend_all" or key == argument:
                into.append(child)
            _select(child, kind, argument, into)
    elif type(value) is list:
        for child in cast("list[JsonValue]", value):
            if kind == "descend_all":
                into.append(child)
            _select(child, kind, argument, into)


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
            mapping = cast("dict[str, JsonValue]", value)
            return {**mapping, argument: below(mapping[argument])}
        return value
    if kind == "index":
        index = cast(int, argument)
        if type(value) is list and index < len(value):
            items = list(cast("list[JsonValue]", value))
            items[index] = below(items[index])
            return items
        return value
    if kind == "all":
        if type(value) is dict:
            return {key: below(child) for key, child in cast("dict[str, JsonValue]", value).items()}
        if type(value) is list:
            return [below(child) for child in cast("list[JsonValue]", value)]
        return value
    # Recursive descent: the named (or every) member at this level and at every level below.
    if type(value) is dict:
        result: dict[str, JsonValue] = {}
        for key, child in cast("dict[str, JsonValue]", value).items():
            if kind == "descend_all" or key == argument:
                child = below(child)
            # A replaced child is a placeholder string: descending into it finds nothing.
            result[key] = _apply(child, segments, at, replace)
        return result
    if type(value) is list:
        items = cast("list[JsonValue]", value)
        if kind == "descend_all":
            return [_apply(below(child), segments, at, replace) for child in items]
        return [_apply(child, segments, at, replace) for child in items]
    return value
