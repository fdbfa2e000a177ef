"""Portable JSON: the only values Tool Replay records, fingerprints and replays.

The domain is deliberately small and exact: `None`, `bool`, `int`, finite
`float`, `str`, `list` and `dict` with `str` keys, nested to any depth. Types are
checked exactly (`type(v) is int`), not by `isinstance`: a tuple, an `IntEnum`
or an `OrderedDict` would come back from a trace as a list, an int or a dict,
and a replay that returns a different type than the recording is a silent lie.

The canonical encoding (sorted keys, no insignificant whitespace, UTF-8, the
shortest float repr) is what fingerprints hash, so equal values always hash
equal, whatever their key order.
"""

from __future__ import annotations

import hashlib
import json
import json.encoder
import marshal
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeAlias, cast

from toolreplay.errors import JsonTextError, NonPortableValueError
from toolreplay.jsonpath import format_path

__all__ = [
    "JsonObject",
    "JsonValue",
    "ValueDifference",
    "canonical_json",
    "compact_json_chunks",
    "copy_value",
    "encodable_text",
    "ensure_portable",
    "fingerprint",
    "format_path",
    "json_object",
    "json_objects",
    "load_json_text",
    "loads_checked",
    "parse_json_text",
    "portable_document",
    "preview",
    "safe_text",
    "same_value",
    "value_differences",
]

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
"""A value of the portable JSON domain."""

JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object of the portable domain."""


def json_object(value: JsonValue | None) -> JsonObject | None:
    """`value` when it is a JSON object, else None: how code reading a recorded
    value (an adapter, a summary, the debugger) narrows it."""
    return cast(JsonObject, value) if isinstance(value, dict) else None


def json_objects(value: JsonValue | None) -> list[JsonObject]:
    """The objects of a JSON list (other items skipped); none for anything else."""
    if not isinstance(value, list):
        return []
    return [cast(JsonObject, item) for item in value if isinstance(item, dict)]


# What to do instead, for the non-portable types people reach for most often.
_HINTS: dict[str, str] = {
    "tuple": "use a list",
    "set": "use a sorted list",
    "frozenset": "use a sorted list",
    "bytes": "decode it to str, or base64-encode it",
    "bytearray": "decode it to str, or base64-encode it",
    "datetime": "use an ISO 8601 string (value.isoformat())",
    "date": "use an ISO 8601 string (value.isoformat())",
    "time": "use an ISO 8601 string (value.isoformat())",
    "Decimal": "use a str (exact) or a float",
    "UUID": "use str(value)",
}


_SURROGATES = re.compile("[\ud800-\udfff]")


class _Offence(Exception):
    """Internal: carries the path of a bad value up the recursion, built on unwind."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.segments: list[str | int] = []


def safe_text(value: object, *, use_repr: bool = False) -> str:
    """`str()` (or `repr()`) of anything, even an object whose own method raises."""
    try:
        return repr(value) if use_repr else str(value)
    except Exception:
        return f"<unprintable {type(value).__name__} object>"


def preview(value: JsonValue, limit: int = 120, *, compact: bool = False) -> str:
    """Readable JSON of a portable value, cut to `limit` characters, for messages.

    `compact` drops the spaces after `,` and `:` (for table columns).
    """
    separators = (",", ":") if compact else (", ", ": ")
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=separators)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(value: object) -> str:
    kind = type(value)
    if kind is float:
        return f"float('{value!r}')"
    shown = safe_text(value, use_repr=True)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    if kind.__module__ == "builtins":
        return f"{shown} (type {kind.__qualname__})"
    return f"{shown} (type {kind.__module__}.{kind.__qualname__})"


def _not_portable(value: object) -> _Offence:
    hint = _HINTS.get(type(value).__name__)
    return _Offence(f"{_describe(value)} is not portable JSON" + (f"; {hint}" if hint else ""))


# The JSON encoder refuses to write integers longer than this many digits.
_INT_LIMIT = 10 ** (sys.get_int_max_str_digits() or 4300)


def encodable_text(text: str) -> str:
    """`text` with any lone surrogate escaped (`\\udc80`), so that UTF-8 can hold it.

    For free text Tool Replay records about a failure (an exception's message),
    where refusing the value would lose the failure itself.
    """
    if text.isascii() or not _SURROGATES.search(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _check_text(text: str) -> None:
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise _Offence(
                f"{text[:40]!r} holds {text[error.start : error.end]!r}, a lone surrogate that "
                "UTF-8 cannot encode, so it is not portable JSON; strings must be valid Unicode"
            ) from None


MAX_DEPTH = 200
"""How deeply portable values may nest: far beyond real payloads, well within recursion."""


_LONG_INTEGER = "an integer this long cannot be written as JSON; use a str"


def _check(value: object, depth: int = 0) -> None:
    # Annotated names instead of `typing.cast`: a cast is a Python call (and
    # `dict[object, object]` a new alias) per container, more than checking a small one.
    pairs: Iterable[tuple[object, object]]
    kind = type(value)
    if kind is dict:  # first: most values checked are objects (inputs, outputs)
        mapping: dict[object, object] = value  # pyright: ignore[reportAssignmentType]
        pairs = mapping.items()
    elif kind is list:
        items: list[object] = value  # pyright: ignore[reportAssignmentType]
        pairs = enumerate(items)
    else:
        _check_scalar(value)
        return
    if depth >= MAX_DEPTH:
        raise _Offence(f"nested deeper than {MAX_DEPTH} levels, which is not portable JSON")
    # One body for a dict's members and a list's items; the common scalars are decided
    # here, since a call per item was most of the cost of checking a flat value.
    for segment, item in pairs:
        try:
            if type(segment) is str:
                if not segment.isascii():
                    _check_text(segment)
            elif kind is dict:
                raise _Offence(
                    f"dict key {_describe(segment)} is not portable JSON; keys must be str"
                )
            if type(item) is str:
                if not item.isascii():
                    _check_text(item)
            elif type(item) is int:
                if not -_INT_LIMIT < item < _INT_LIMIT:
                    raise _Offence(_LONG_INTEGER)
            elif item is not None and type(item) is not bool:
                _check(item, depth + 1)
        except _Offence as offence:
            if type(segment) is str or (type(segment) is int and kind is list):
                offence.segments.append(segment)  # not a dict's non-str key: it is refused
            raise


def _check_scalar(value: object) -> None:
    if type(value) is str:
        _check_text(value)
    elif type(value) is int:
        if not -_INT_LIMIT < value < _INT_LIMIT:
            raise _Offence(_LONG_INTEGER)
    elif type(value) is float:
        if not math.isfinite(value):
            raise _Offence(f"{_describe(value)} is not portable JSON; only finite floats are")
    elif type(value) is not bool and value is not None:
        raise _not_portable(value)


def ensure_portable(value: object, *, what: str = "value", max_depth: int = MAX_DEPTH) -> JsonValue:
    """Return `value` unchanged if it is portable JSON, else raise `NonPortableValueError`.

    The error names the JSON path of the first offending value and says what
    to use instead: `inputs of crm.customer.get: $.items[3].price: float('nan')
    is not portable JSON; only finite floats are`.
    """
    try:
        _check(value, MAX_DEPTH - max_depth)
    except _Offence as offence:
        path = format_path(offence.segments[::-1])
        raise NonPortableValueError(f"{what}: {path}: {offence.reason}", path=path) from None
    return value  # pyright: ignore[reportReturnType]  # checked just above


class _NonFiniteLiteral(ValueError):
    pass


def _refuse_non_finite(literal: str) -> float:
    raise _NonFiniteLiteral(literal)


# Built once: json.loads with options builds a new decoder on every call.
_FINITE_DECODER = json.JSONDecoder(parse_constant=_refuse_non_finite)
# The decoder's C scanner (an instance attribute `JSONDecoder.__init__` sets, untyped):
# one JSON value from a position, without `json.loads`'s per-call Python steps, which
# cost as much as parsing a small event's data.
_SCAN_FINITE = cast("Callable[[str, int], tuple[object, int]]", vars(_FINITE_DECODER)["scan_once"])
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB]")


def loads_checked(text: str, *, depth: int = 0) -> tuple[JsonValue, bool]:
    """`json.loads(text)`, and whether the value is portable JSON without walking it.

    For JSON received from elsewhere (an HTTP body) that is recorded as a value:
    walking a large value with `ensure_portable` costs more than parsing it.
    The text alone settles it when it holds no `NaN`/`Infinity` literal, no
    escaped surrogate (a lone one is not portable; a pair is, and is then
    checked) and fewer brackets than `MAX_DEPTH - depth` (so it cannot nest too
    deeply once placed `depth` levels down). An integer too long to convert is
    refused by `json.loads` itself. When the second item is False the value
    must still go through `ensure_portable`. Raises `ValueError` for invalid
    JSON, as `json.loads` does.
    """
    value: object = None
    try:
        value, end = _SCAN_FINITE(text, 0)
    except (StopIteration, ValueError):  # not JSON, or a NaN: the full parser decides
        end = -1
    if end != len(text):  # also surrounding whitespace, which json.loads allows
        try:
            value = _FINITE_DECODER.decode(text)
        except _NonFiniteLiteral:
            return cast(JsonValue, json.loads(text)), False
    shallow = text.count("{") + text.count("[") < MAX_DEPTH - depth
    escaped = "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None
    return cast(JsonValue, value), shallow and not escaped


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _refuse_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)  # built in C; only a shorter dict needs the slow search
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def parse_json_text(text: str | bytes, *, what: str = "the value") -> JsonValue:
    """Read `text` (bytes must be UTF-8) as exactly one portable JSON value.

    The one reader of JSON that people write (patch files, case manifests,
    expected values, the terminal UI's editors). Raises `JsonTextError` for an
    empty text, invalid JSON (with its line and column), a key given twice in
    one object (JSON would silently keep the last), an integer too long to
    convert, nesting too deep to parse, and anything `ensure_portable` refuses
    (`NaN`, `Infinity`; the message gives the JSON path). `what` names the value
    in messages.
    """
    return portable_document(load_json_text(text, what=what), what=what)


def load_json_text(text: str | bytes, *, what: str = "the value") -> object:
    """`parse_json_text` without the final `ensure_portable` walk: JSON syntax, UTF-8,
    one value per key, nesting Python can parse (`JsonTextError` otherwise).

    For a reader that parses many documents and checks each one's values only
    when it uses it (`portable_document`), as the pytest plugin does with the
    manifests it collects.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as error:
            raise JsonTextError(
                f"{what} is not UTF-8 text ({error.reason} at byte {error.start})"
            ) from None
    if not text.strip():
        raise JsonTextError(f"{what} is empty; give one JSON value", line=1, column=1)
    try:
        return json.loads(text, object_pairs_hook=_refuse_duplicate_keys)
    except json.JSONDecodeError as error:
        raise JsonTextError(
            f"not valid JSON: {error.msg}", line=error.lineno, column=error.colno
        ) from None
    except _DuplicateKey as error:
        key = json.dumps(error.key, ensure_ascii=False)
        raise JsonTextError(f"the key {key} is given twice in one object") from None
    except RecursionError:
        raise JsonTextError("nested too deeply to read") from None
    except ValueError as error:  # an integer literal longer than Python converts
        raise JsonTextError(f"not portable JSON: {error}") from None


def portable_document(loaded: object, *, what: str = "the value") -> JsonValue:
    """The second half of `parse_json_text`: `loaded` (from `load_json_text`) unchanged
    if `ensure_portable` accepts it, else `JsonTextError` naming the JSON path."""
    try:
        return ensure_portable(loaded, what=what)
    except NonPortableValueError as error:
        raise JsonTextError(str(error)) from None


def compact_json_chunks(
    *, sort_keys: bool, allow_nan: bool
) -> Callable[[object, int], Sequence[str]]:
    """A function that writes a value as compact JSON text in pieces, joined with
    `"".join(chunks(value, 0))`: no whitespace, no ASCII escaping, keys sorted when
    `sort_keys`, `NaN` and `Infinity` refused unless `allow_nan` (as `json.JSONEncoder`
    takes them).

    `json.JSONEncoder.encode` builds its C encoder anew on every call, which costs more
    than encoding a small value; this one is built once, and called without a Python
    function around it, whose frame was a measurable part of encoding a call's value. It
    keeps no record of the containers it has entered, so the value must be portable (no
    cycles): callers check with `ensure_portable` first, as they must anyway.
    """
    python = json.JSONEncoder(
        sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan
    )
    # The C accelerator's encoder factory (untyped, absent on some interpreters).
    make: Callable[..., Callable[[object, int], Sequence[str]]] | None = getattr(
        json.encoder, "c_make_encoder", None
    )
    if make is None:  # an interpreter without the C accelerator
        return lambda value, _level: (python.encode(value),)
    return make(
        None,
        python.default,
        json.encoder.encode_basestring,
        None,
        ":",
        ",",
        sort_keys,
        False,
        allow_nan,
    )


_canonical_chunks = compact_json_chunks(sort_keys=True, allow_nan=True)
_sha256 = hashlib.sha256


def canonical_json(value: JsonValue) -> bytes:
    """Encode a portable value canonically: sorted keys, no whitespace, UTF-8.

    The caller guarantees `value` is portable (see `ensure_portable`).
    """
    return "".join(_canonical_chunks(value, 0)).encode("utf-8")


def fingerprint(inputs: JsonValue) -> str:
    """SHA-256 (lowercase hex) of the canonical encoding of `inputs`."""
    return _sha256("".join(_canonical_chunks(inputs, 0)).encode("utf-8")).hexdigest()


def copy_value(value: JsonValue) -> JsonValue:
    """A deep copy of a portable value: mutating it never reaches the original.

    A scalar is its own copy, and a small object whose members are all scalars (the
    usual tool result) is copied as a dict. Anything else goes through `marshal`, which
    writes and reads the JSON types in C (several times faster than walking them in
    Python past a few items). Version 2 writes every object in full, so two places that
    shared one list in `value` hold two lists in the copy.

    The small flat object is not only the common case: once a replay blocks the network,
    an audit hook runs on every `marshal` call, which then costs three times the dict
    copy and the look at its members.
    """
    kind = type(value)
    if kind is dict:
        members: dict[str, JsonValue] = value  # pyright: ignore[reportAssignmentType]
        if len(members) <= _FLAT_COPY_LIMIT:
            for member in members.values():
                if type(member) is dict or type(member) is list:
                    break
            else:
                return members.copy()
    elif kind is not list:
        return value
    return marshal.loads(marshal.dumps(value, 2))


# Past this many members, looking at each in Python costs more than marshal's copy.
_FLAT_COPY_LIMIT = 16


@dataclass(frozen=True, slots=True)
class ValueDifference:
    """One place where two portable values differ, with both sides.

    When the path exists on one side only, the absent side's value is None and
    its `*_present` flag is False.
    """

    path: str
    left: JsonValue
    right: JsonValue
    left_present: bool = True
    right_present: bool = True

    def describe(self, left_name: str = "left", right_name: str = "right") -> str:
        def show(present: bool, value: JsonValue) -> str:
            return preview(value, 80) if present else "(absent)"

        return (
            f"{self.path}: {left_name} {show(self.left_present, self.left)}, "
            f"{right_name} {show(self.right_present, self.right)}"
        )


def same_value(left: JsonValue, right: JsonValue) -> bool:
    """Exact equality: 1, 1.0 and True differ, and so do 0.0 and -0.0 (`==` equates them).

    Two values are the same exactly when their canonical encodings are.
    """
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        return left == right and math.copysign(1.0, left) == math.copysign(1.0, cast(float, right))
    if isinstance(left, dict):
        assert isinstance(right, dict)
        return left.keys() == right.keys() and all(
            same_value(item, right[key]) for key, item in left.items()
        )
    if isinstance(left, list):
        assert isinstance(right, list)
        return len(left) == len(right) and all(map(same_value, left, right))
    return left == right


def value_differences(left: JsonValue, right: JsonValue) -> list[ValueDifference]:
    """Every differing leaf between two portable values, as JSON paths, in a stable order.

    Dicts are compared key by key (sorted), lists index by index; anything else,
    or a change of type, is one difference at that path.
    """
    return list(_walk_differences(left, right, []))


def _walk_differences(
    left: JsonValue, right: JsonValue, segments: list[str | int]
) -> Iterator[ValueDifference]:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in sorted(left.keys() | right.keys()):
            segments.append(key)
            if key not in left:
                yield ValueDifference(format_path(segments), None, right[key], left_present=False)
            elif key not in right:
                yield ValueDifference(format_path(segments), left[key], None, right_present=False)
            else:
                yield from _walk_differences(left[key], right[key], segments)
            segments.pop()
        return
    if isinstance(left, list) and isinstance(right, list):
        for index in range(max(len(left), len(right))):
            segments.append(index)
            if index >= len(left):
                yield ValueDifference(format_path(segments), None, right[index], left_present=False)
            elif index >= len(right):
                yield ValueDifference(format_path(segments), left[index], None, right_present=False)
            else:
                yield from _walk_differences(left[index], right[index], segments)
            segments.pop()
        return
    if not same_value(left, right):
        yield ValueDifference(format_path(segments), left, right)
