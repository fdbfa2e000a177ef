"""Portable JSON values by JSON path: read a path, set a path in a copy.

A path is a tuple of segments (`str` for an object key, `int` for a list index),
rendered with `toolreplay.portable.format_path` (`$.output[0].text`). The pretty
lines of `json_lines` are what the detail pane shows: one line per leaf and per
opening or closing bracket, each knowing the path it stands for, so the cursor
can move through a large value and the selected value can be edited in place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal, cast

from toolreplay.portable import JsonValue, copy_value, format_path

__all__ = [
    "JsonLine",
    "JsonPath",
    "PathError",
    "find_line",
    "get_at",
    "json_lines",
    "path_text",
    "set_at",
]

JsonPath = tuple[str | int, ...]
"""Segments from the root: keys of objects and indices of lists."""


class PathError(LookupError):
    """A path that does not exist in a value."""


def path_text(path: JsonPath) -> str:
    """`$`, `$.decision`, `$.output[0]["a key"]`."""
    return format_path(path)


def _step(container: JsonValue, segment: str | int, path: JsonPath, upto: int) -> JsonValue:
    where = path_text(path[:upto])
    if isinstance(container, dict):
        if not isinstance(segment, str) or segment not in container:
            raise PathError(f"{path_text(path)}: {where} has no key {json.dumps(segment)}")
        return container[segment]
    if isinstance(container, list):
        if isinstance(segment, bool) or not isinstance(segment, int):
            raise PathError(f"{path_text(path)}: {where} is a list, not an object")
        if not 0 <= segment < len(container):
            raise PathError(
                f"{path_text(path)}: {where} has {len(container)} items, no index {segment}"
            )
        return container[segment]
    raise PathError(f"{path_text(path)}: {where} is not an object or a list")


def get_at(value: JsonValue, path: JsonPath) -> JsonValue:
    """The value at `path` (not a copy). Raises `PathError` when it does not exist."""
    current = value
    for upto, segment in enumerate(path):
        current = _step(current, segment, path, upto)
    return current


def set_at(value: JsonValue, path: JsonPath, new: JsonValue) -> JsonValue:
    """A deep copy of `value` with the value at `path` replaced by (a copy of) `new`.

    `value` itself is never changed. The path must exist (`PathError`): this
    edits a value in place, it does not add keys.
    """
    get_at(value, path)  # check first: nothing is copied for a bad path
    if not path:
        return copy_value(new)
    result = copy_value(value)
    parent = get_at(result, path[:-1])
    last = path[-1]
    if isinstance(parent, dict):
        parent[cast(str, last)] = copy_value(new)
    else:
        cast(list[JsonValue], parent)[cast(int, last)] = copy_value(new)
    return result


LineKind = Literal["open", "close", "leaf"]


@dataclass(frozen=True, slots=True)
class JsonLine:
    """One line of the pretty form of a value.

    `key` is the object key or list index that labels the line (None at the
    root and on closing lines); `text` is the JSON after the label (`"approve",`,
    `{`, `],`); `path` is the value the line stands for (a closing line stands
    for its container).
    """

    path: JsonPath
    depth: int
    kind: LineKind
    key: str | int | None
    text: str

    @property
    def text_path(self) -> str:
        return path_text(self.path)

    def render(self, indent: int = 2) -> str:
        """The line as plain text, indented."""
        label = (
            ""
            if self.key is None or isinstance(self.key, int)
            else json.dumps(self.key, ensure_ascii=False) + ": "
        )
        return " " * (indent * self.depth) + label + self.text


def _scalar(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False)


def json_lines(value: JsonValue) -> list[JsonLine]:
    """The pretty lines of `value`, as `json.dumps(value, indent=2)` would lay it out."""
    lines: list[JsonLine] = []
    _lines(value, (), 0, None, "", lines)
    return lines


def _lines(
    value: JsonValue,
    path: JsonPath,
    depth: int,
    key: str | int | None,
    comma: str,
    out: list[JsonLine],
) -> None:
    # An explicit stack would avoid recursion, but values are bounded by MAX_DEPTH (200).
    if isinstance(value, dict) and value:
        out.append(JsonLine(path, depth, "open", key, "{"))
        items = list(value.items())
        for position, (name, member) in enumerate(items):
            tail = "," if position < len(items) - 1 else ""
            _lines(member, (*path, name), depth + 1, name, tail, out)
        out.append(JsonLine(path, depth, "close", None, "}" + comma))
    elif isinstance(value, list) and value:
        out.append(JsonLine(path, depth, "open", key, "["))
        for index, member in enumerate(value):
            tail = "," if index < len(value) - 1 else ""
            _lines(member, (*path, index), depth + 1, index, tail, out)
        out.append(JsonLine(path, depth, "close", None, "]" + comma))
    else:
        out.append(JsonLine(path, depth, "leaf", key, _scalar(value) + comma))


def find_line(lines: list[JsonLine], query: str, start: int, *, forward: bool = True) -> int | None:
    """The next (previous) line after `start` whose text or path holds `query`, wrapping.

    Case-insensitive; None when no line matches or the query is empty.
    """
    wanted = query.strip().lower()
    if not wanted or not lines:
        return None
    step = 1 if forward else -1
    for offset in range(1, len(lines) + 1):
        position = (start + step * offset) % len(lines)
        line = lines[position]
        if wanted in line.render(0).lower() or wanted in line.text_path.lower():
            return position
    return None
