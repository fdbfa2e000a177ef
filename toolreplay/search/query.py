"""The query language of `toolreplay find` (RFC 0008 §4): `PATH OP VALUE` conditions,
the bytes a matching trace line must hold, and `--since` / `--until` times.

A condition is checked exactly on a decoded operation, header metadata or footer
ending (`Condition.holds`); its `needles` are a cheap necessary test on the raw
line, which the scanner runs first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypeVar, cast

from toolreplay.durations import AGE_EXAMPLES, parse_age
from toolreplay.errors import TraceSearchError
from toolreplay.jsonpath import JsonPath, Segment, read_path
from toolreplay.portable import JsonValue, canonical_json

__all__ = [
    "OPERATORS",
    "Condition",
    "Operator",
    "encoded",
    "parse_condition",
    "parse_time",
]

Operator = Literal["==", "!=", "<", "<=", ">", ">=", "contains", "matches", "exists"]
OPERATORS: tuple[Operator, ...] = (
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "contains",
    "matches",
    "exists",
)
"""What `--where PATH OP VALUE` can test (`exists` takes no VALUE)."""

_Ordered = TypeVar("_Ordered", float, str)


def encoded(value: JsonValue) -> bytes:
    """`value` as the trace writer encodes it (RFC 0003 §1.2), so its bytes can be found."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@dataclass(frozen=True, slots=True)
class Condition:
    """`PATH OP VALUE`: on an operation, or on the header (`$.metadata...`) or footer
    (`$.ending...`)."""

    text: str
    target: Literal["operation", "metadata", "ending"]
    path: JsonPath
    """The path into the operation, metadata or ending (`$.inputs.x`, `$.request_id`)."""
    operator: Operator
    value: JsonValue
    needles: tuple[bytes, ...]
    """Byte strings every operation line satisfying the condition holds."""
    pattern: re.Pattern[str] | None = None

    def holds(self, document: JsonValue) -> bool:
        """Whether the condition holds for `document` (an operation, metadata or ending)."""
        values = self.path.select(document)
        if self.operator == "exists":
            return bool(values)
        if self.operator == "!=":
            return bool(values) and not any(_equal(found, self.value) for found in values)
        return any(self._holds_for(found) for found in values)

    def _holds_for(self, found: JsonValue) -> bool:
        wanted = self.value
        match self.operator:
            case "==":
                return _equal(found, wanted)
            case "contains":
                if isinstance(found, str):
                    return isinstance(wanted, str) and wanted in found
                if isinstance(found, list):
                    return any(_equal(item, wanted) for item in found)
                if isinstance(found, dict):
                    return isinstance(wanted, str) and wanted in found
                return False
            case "matches":
                assert self.pattern is not None
                return isinstance(found, str) and self.pattern.search(found) is not None
            case _:
                return _ordered(found, wanted, self.operator)


def _is_number(value: JsonValue) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _equal(found: JsonValue, wanted: JsonValue) -> bool:
    if _is_number(found) and _is_number(wanted):
        return found == wanted
    return type(found) is type(wanted) and canonical_json(found) == canonical_json(wanted)


def _ordered(found: JsonValue, wanted: JsonValue, operator: str) -> bool:
    if _is_number(found) and _is_number(wanted):
        return _compare(cast(float, found), cast(float, wanted), operator)
    if isinstance(found, str) and isinstance(wanted, str):
        return _compare(found, wanted, operator)
    return False


def _compare(left: _Ordered, right: _Ordered, operator: str) -> bool:
    if operator == "<":
        return left < right
    if operator == "<=":
        return left <= right
    if operator == ">":
        return left > right
    return left >= right


def _value(text: str) -> JsonValue:
    """VALUE as JSON if it reads as JSON (42, true, null, "x"), else as the text itself."""
    try:
        return cast(JsonValue, json.loads(text))
    except ValueError:
        return text


def parse_condition(text: str) -> Condition:
    """`"$.inputs.customer_id == 42"` (PATH OP VALUE; `exists` has no VALUE) as a `Condition`.

    Paths address an operation as its trace line does (`$.namespace`, `$.name`,
    `$.inputs...`, `$.outcome.status`, `$.outcome.value...`,
    `$.outcome.error.type`, `$.lane`), or the header's metadata (`$.metadata...`),
    or the footer's ending (`$.ending.status`, `$.ending.error_type`). Raises
    `TraceSearchError` naming the part that does not read.
    """
    where = f"--where {text!r}"
    if not text.strip().startswith("$"):
        raise TraceSearchError(
            f"{where}: a condition starts with a JSON path such as $.inputs.customer_id, "
            "$.outcome.status or $.metadata.request_id"
        )
    path, end = read_path(text.strip(), what="--where path", error=TraceSearchError)
    rest = text.strip()[end:].strip()
    operator_text, _, value_text = rest.partition(" ")
    if operator_text not in OPERATORS:
        raise TraceSearchError(
            f"{where}: after the path comes an operator, one of {', '.join(OPERATORS)}; "
            f"got {operator_text or 'nothing'!r}"
        )
    operator: Operator = operator_text
    value_text = value_text.strip()
    if operator == "exists":
        if value_text:
            raise TraceSearchError(f"{where}: exists takes no value; got {value_text!r}")
    elif not value_text:
        raise TraceSearchError(f"{where}: {operator} needs a value after it")
    value = None if operator == "exists" else _value(value_text)
    pattern: re.Pattern[str] | None = None
    if operator == "matches":
        try:
            pattern = re.compile(value_text)
        except re.error as error:
            raise TraceSearchError(f"{where}: not a regular expression: {error}") from None
        value = value_text
    target: Literal["operation", "metadata", "ending"] = "operation"
    if path.segments[:1] in ((("key", "metadata"),), (("key", "ending"),)):
        target = cast(Literal["metadata", "ending"], path.segments[0][1])
        path = JsonPath(path.text, path.segments[1:])
    needles = _needles(path.segments, operator, value) if target == "operation" else ()
    return Condition(text.strip(), target, path, operator, value, needles, pattern)


def _needles(
    segments: Sequence[Segment], operator: Operator, value: JsonValue
) -> tuple[bytes, ...]:
    """Bytes a line must hold to satisfy the condition (a necessary test, never sufficient)."""
    # A member's key, at one level or found by descent, is written `"key":` in the line.
    keys = [name for kind, name in segments if kind in ("key", "descend_key")]
    needles = [encoded(key) + b":" for key in keys]
    last_kind, last_name = segments[-1] if segments else ("all", "*")
    last = last_name if last_kind in ("key", "descend_key") else None
    # A float, 0 (which -0.0 equals) or a huge int may be spelled otherwise in the file.
    exact = not isinstance(value, dict | list | float) and not (
        isinstance(value, int) and not isinstance(value, bool) and not 0 < abs(value) < 10**15
    )
    if operator == "==" and isinstance(last, str) and exact:
        # The encoder writes `"key":value` with nothing between: the most selective test.
        needles.insert(0, encoded(last) + b":" + encoded(value))
    if operator == "==" and isinstance(value, str):
        needles.append(encoded(value))
    elif operator == "contains" and isinstance(value, str) and value:
        needles.append(
            encoded(value)[1:-1]
        )  # escaping is per character: same inside a longer string
    elif operator == "==" and (value is None or isinstance(value, bool)):
        needles.append(encoded(value))
    elif operator == "==" and isinstance(value, int) and 0 < abs(value) < 10**15:
        needles.append(str(value).encode())  # a float spelling of it (42.0) holds these digits too
    return tuple(dict.fromkeys(needles))


def parse_time(text: str, *, now: datetime | None = None) -> datetime:
    """An ISO 8601 date or time (UTC unless it says otherwise), or an age ago (`30m`, `2h`,
    `7d`: `toolreplay.durations.parse_age`)."""
    now = now or datetime.now(UTC)
    age = parse_age(text)
    if age is not None:
        return now - age
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise TraceSearchError(
            f"{text!r} is neither a date or time (2026-12-01, 2026-12-01T08:30, "
            f"2026-12-01T08:30:00+02:00) nor an age ago ({AGE_EXAMPLES})"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
