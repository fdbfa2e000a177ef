"""Text typed by the user, read as portable JSON, with a position for every problem.

The editor and the in-place value edit both go through `parse_portable`: it
never raises, and a problem says what is wrong and, when the JSON parser knows,
the line and column (1-based) to move the cursor to.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from toolreplay.errors import NonPortableValueError
from toolreplay.portable import JsonValue, ensure_portable

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


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    result: dict[str, JsonValue] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def parse_portable(text: str, *, what: str = "the value") -> ParsedJson:
    """Read `text` as one portable JSON value (never raises).

    Refused: invalid JSON (with its position), an empty text, a key given twice
    in one object (JSON would silently keep the last), `NaN`/`Infinity` and
    anything else `toolreplay.ensure_portable` refuses (with its JSON path).
    """
    if not text.strip():
        return ParsedJson(problem=JsonProblem(f"{what} is empty: type a JSON value", 1, 1))
    try:
        loaded = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as error:
        return ParsedJson(
            problem=JsonProblem(f"not valid JSON: {error.msg}", error.lineno, error.colno)
        )
    except _DuplicateKey as error:
        key = json.dumps(error.key, ensure_ascii=False)
        return ParsedJson(problem=JsonProblem(f"the key {key} is given twice in one object"))
    except RecursionError:
        return ParsedJson(problem=JsonProblem("nested too deeply to read"))
    except ValueError as error:  # an integer literal longer than Python converts
        return ParsedJson(problem=JsonProblem(f"not portable JSON: {error}"))
    try:
        value = ensure_portable(loaded, what=what)
    except NonPortableValueError as error:
        return ParsedJson(problem=JsonProblem(str(error)))
    return ParsedJson(value=value)


def format_json(value: JsonValue, *, indent: int | None = 2) -> str:
    """The text the editors start from: indented (or compact) JSON, non-ASCII kept."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, indent=indent)
