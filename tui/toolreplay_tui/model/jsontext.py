"""Text typed by the user, read as portable JSON, with a position for every problem.

The editor and the in-place value edit both go through `parse_portable`: it
never raises, and a problem says what is wrong and, when the JSON parser knows,
the line and column (1-based) to move the cursor to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from toolreplay import JsonTextError, JsonValue, parse_json_text

__all__ = ["JsonProblem", "ParsedJson", "format_json", "parse_portable"]


@dataclass(frozen=True, slots=True)
class JsonProblem:
    """Why a text is not portable JSON; `line`/`column` are 1-based, None when unknown."""

    message: str
    line: int | None = None
    column: int | None = None

    def describe(self) -> str:
        if self.line is None:
            return self.message
        return f"line {self.line}, column {self.column}: {self.message}"


@dataclass(frozen=True, slots=True)
class ParsedJson:
    """The outcome of `parse_portable`: a value, or the problem (exactly one is set)."""

    value: JsonValue = None
    problem: JsonProblem | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def parse_portable(text: str, *, what: str = "the value") -> ParsedJson:
    """Read `text` as one portable JSON value (never raises).

    The rules are `toolreplay.parse_json_text`'s: refused are invalid JSON (with
    its position), an empty text, a key given twice in one object, `NaN`/
    `Infinity` and anything else `toolreplay.ensure_portable` refuses (with its
    JSON path).
    """
    try:
        return ParsedJson(value=parse_json_text(text, what=what))
    except JsonTextError as error:
        return ParsedJson(problem=JsonProblem(error.reason, error.line, error.column))


def format_json(value: JsonValue, *, indent: int | None = 2) -> str:
    """The text the editors start from: indented (or compact) JSON, non-ASCII kept."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, indent=indent)
