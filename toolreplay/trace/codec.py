"""The one codec between trace lines and the operation model (format v5; v3 and v4 are read
too).

Every line is one JSON object with a `kind` first: `header`, `operation` or
`footer`. Decoding is strict: unknown keys, wrong types and non-portable
numbers (`NaN`, `Infinity`, `1e400`) are errors, because a trace that is
trusted as a test fixture must mean exactly one thing.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NoReturn, cast

from toolreplay.errors import NonPortableValueError
from toolreplay.portable import MAX_DEPTH, JsonValue, ensure_portable
from toolreplay.trace.model import (
    READABLE_FORMAT_VERSIONS,
    TRACE_FORMAT,
    TRACE_FORMAT_VERSION,
    AttemptedCall,
    Operation,
    OperationIdentity,
    Outcome,
    Raised,
    Returned,
    SessionEnding,
    TraceFooter,
    TraceHeader,
    UnobservedOperation,
)

__all__ = [
    "InvalidLine",
    "decode_footer",
    "decode_header",
    "decode_operation",
    "encode_footer",
    "encode_header",
    "encode_operation",
    "operation_to_dict",
    "parse_line",
    "reads_strictly",
]

_FINGERPRINT = re.compile(r"[0-9a-f]{64}")


class InvalidLine(ValueError):
    """A line that is not what its format version allows; the reader adds file and line."""


# --- encoding -------------------------------------------------------------------------


# Built once: json.dumps/json.loads with options build a new encoder/decoder per call.
# Not canonical (key order is the schema's, for readability), but deterministic.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _dump(obj: dict[str, Any]) -> bytes:
    return (_ENCODER.encode(obj) + "\n").encode("utf-8")


def encode_header(header: TraceHeader) -> bytes:
    return _dump(
        {
            "kind": "header",
            "format": TRACE_FORMAT,
            "format_version": TRACE_FORMAT_VERSION,
            "trace_id": header.trace_id,
            "mode": header.mode,
            "library_version": header.library_version,
            "source_trace_id": header.source_trace_id,
            "metadata": header.metadata,
        }
    )


def _encode_outcome(outcome: Outcome) -> dict[str, Any]:
    if isinstance(outcome, Returned):
        return {"status": "ok", "value": outcome.value}
    return {"status": "error", "error": outcome.to_dict()}


def encode_operation(operation: Operation) -> bytes:
    return _dump(operation_to_dict(operation))


def operation_to_dict(operation: Operation) -> dict[str, Any]:
    """The JSON object of an operation, exactly as its trace line holds it."""
    identity = operation.identity
    return {
        "kind": "operation",
        "logical_id": operation.logical_id,
        "namespace": identity.namespace,
        "name": identity.name,
        "fingerprint": identity.fingerprint,
        "occurrence": identity.occurrence,
        "inputs": operation.inputs,
        "outcome": _encode_outcome(operation.outcome),
        "origin": operation.origin,
        "patch_id": operation.patch_id,
        "source_logical_operation_id": operation.source_logical_operation_id,
        "lane": operation.lane,
        "start_ns": operation.start_ns,
        "end_ns": operation.end_ns,
    }


def _identity_fields(identity: OperationIdentity) -> dict[str, Any]:
    return {
        "namespace": identity.namespace,
        "name": identity.name,
        "fingerprint": identity.fingerprint,
        "occurrence": identity.occurrence,
    }


def encode_footer(footer: TraceFooter) -> bytes:
    ending = footer.ending
    attempted = footer.attempted
    return _dump(
        {
            "kind": "footer",
            "operation_count": footer.operation_count,
            "digest": footer.digest,
            "ending": {
                "status": ending.status,
                "error_type": ending.error_type,
                "message": ending.message,
            },
            "unobserved": [
                {
                    "source_logical_operation_id": item.source_logical_operation_id,
                    **_identity_fields(item.identity),
                }
                for item in footer.unobserved
            ],
            "attempted": None
            if attempted is None
            else {**_identity_fields(attempted.identity), "inputs": attempted.inputs},
        }
    )


# --- decoding -------------------------------------------------------------------------


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


def parse_line(line: bytes) -> dict[str, Any]:
    """Parse one line as a JSON object, refusing NaN, Infinity and overflowing floats."""
    try:
        # Decode explicitly: json.loads(bytes) would guess UTF-16 or UTF-32 from the bytes.
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidLine(f"not UTF-8 (byte {error.start}): {error.reason}") from None
    try:
        # raw_decode: JSONDecoder.decode adds two whitespace regex passes per line.
        obj, end = _DECODER.raw_decode(text)
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
    if _SURROGATE_ESCAPE.search(text) or _may_nest_too_deeply(text):
        # Only an escape can smuggle in a lone surrogate, and only this many brackets
        # can nest deeper than portable values may: check those lines fully.
        try:
            # Values sit up to four levels inside a line (outcome.error.args[0]).
            ensure_portable(obj, what="the line", max_depth=MAX_DEPTH + _LINE_NESTING)
        except NonPortableValueError as error:
            raise InvalidLine(str(error)) from None
    return obj


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


def _expect_keys(obj: dict[str, Any], what: str, keys: frozenset[str]) -> None:
    if obj.keys() != keys:
        missing = sorted(keys - obj.keys())
        unknown = sorted(obj.keys() - keys)
        problems: list[str] = []
        if missing:
            problems.append(f"missing {', '.join(missing)}")
        if unknown:
            problems.append(f"unknown {', '.join(unknown)}")
        raise InvalidLine(f"{what}: {'; '.join(problems)}")


def _wrong(what: str, key: str, expected: str, value: object) -> NoReturn:
    shown = (
        json.dumps(value, ensure_ascii=False)
        if value is None
        or type(value)
        in (
            bool,
            int,
            float,
            str,
        )
        else type(value).__name__
    )
    raise InvalidLine(f"{what}: {key} must be {expected}, found {shown}")


def _str(obj: dict[str, Any], key: str, what: str) -> str:
    value = obj[key]
    if type(value) is not str:
        _wrong(what, key, "a string", value)
    return value


def _optional_str(obj: dict[str, Any], key: str, what: str) -> str | None:
    return None if obj[key] is None else _str(obj, key, what)


def _count(obj: dict[str, Any], key: str, what: str) -> int:
    value = obj[key]
    if type(value) is not int or value < 0:
        _wrong(what, key, "a non-negative integer", value)
    return value


def _object(obj: dict[str, Any], key: str, what: str) -> dict[str, Any]:
    value = obj[key]
    if type(value) is not dict:
        _wrong(what, key, "an object", value)
    return cast(dict[str, Any], value)


_HEADER_KEYS = frozenset(
    {
        "kind",
        "format",
        "format_version",
        "trace_id",
        "mode",
        "library_version",
        "source_trace_id",
        "metadata",
    }
)


def decode_header(obj: dict[str, Any]) -> TraceHeader:
    """Decode a header line, checking format name and version before anything else."""
    if obj.get("kind") != "header" or obj.get("format") != TRACE_FORMAT:
        raise InvalidLine(
            f'not a Tool Replay trace: the first line must be a header with "format": '
            f'"{TRACE_FORMAT}"'
        )
    version = obj.get("format_version")
    if type(version) is not int or version not in READABLE_FORMAT_VERSIONS:
        readable = ", ".join(str(v) for v in READABLE_FORMAT_VERSIONS[:-1])
        readable += f" and {READABLE_FORMAT_VERSIONS[-1]}"
        raise InvalidLine(
            f"trace format version {json.dumps(version)} is not supported; this toolreplay "
            f"reads versions {readable}. Use the toolreplay release that wrote it "
            f"(library_version {json.dumps(obj.get('library_version'))}), or re-record it"
        )
    what = "header"
    _expect_keys(obj, what, _HEADER_KEYS)
    mode = obj["mode"]
    if mode not in ("record", "fork"):
        _wrong(what, "mode", '"record" or "fork"', mode)
    return TraceHeader(
        trace_id=_str(obj, "trace_id", what),
        mode=mode,
        library_version=_str(obj, "library_version", what),
        metadata=_object(obj, "metadata", what),
        source_trace_id=_optional_str(obj, "source_trace_id", what),
        format_version=version,
    )


_OPERATION_KEYS_V3 = frozenset(
    {
        "kind",
        "logical_id",
        "namespace",
        "name",
        "fingerprint",
        "occurrence",
        "inputs",
        "outcome",
        "origin",
        "patch_id",
        "source_logical_operation_id",
    }
)
_OPERATION_KEYS = _OPERATION_KEYS_V3 | {"lane", "start_ns", "end_ns"}
_OK_KEYS = frozenset({"status", "value"})
_ERROR_KEYS = frozenset({"status", "error"})
_ERROR_DETAIL_KEYS = frozenset({"type", "message", "args"})


def _decode_outcome(obj: dict[str, Any]) -> Outcome:
    what = "operation outcome"
    status = obj.get("status")
    if status == "ok":
        _expect_keys(obj, what, _OK_KEYS)
        return Returned(obj["value"])
    if status == "error":
        _expect_keys(obj, what, _ERROR_KEYS)
        error = _object(obj, "error", what)
        what = "operation outcome error"
        _expect_keys(error, what, _ERROR_DETAIL_KEYS)
        args = error["args"]
        if args is not None and type(args) is not list:
            _wrong(what, "args", "a list or null", args)
        return Raised(
            error_type=_str(error, "type", what),
            message=_str(error, "message", what),
            args=cast(list[JsonValue] | None, args),
        )
    _wrong(what, "status", '"ok" or "error"', status)


# Origins each format version allows: supplied and live calls came with format 5.
_ORIGINS = {
    3: ("recorded", "patched"),
    4: ("recorded", "patched"),
    5: ("recorded", "patched", "supplied", "live"),
}


def decode_operation(
    obj: dict[str, Any], line: int, version: int = TRACE_FORMAT_VERSION
) -> Operation:
    """Decode an operation line of a trace of format `version`.

    Every wrong field is an `InvalidLine` naming it.
    """
    if version == 3:
        operation = _decode_fast(obj, line) if obj.keys() == _OPERATION_KEYS_V3 else None
        if operation is None:
            _expect_keys(obj, "operation", _OPERATION_KEYS_V3)
            operation = _decode_checked(obj, line, version)
        return operation
    # The hot path of loading: one pass of plain checks for a well-formed line; any
    # doubt falls through to the checks below, which word the error.
    if obj.keys() == _OPERATION_KEYS:
        lane, start_ns, end_ns = obj["lane"], obj["start_ns"], obj["end_ns"]
        if (
            type(lane) is str
            and type(start_ns) is int
            and type(end_ns) is int
            and 0 <= start_ns <= end_ns
        ):
            operation = _decode_fast(obj, line, lane, start_ns, end_ns)
            if operation is not None:
                return operation
    what = "operation"
    _expect_keys(obj, what, _OPERATION_KEYS)
    if obj["lane"] is None and obj["start_ns"] is None and obj["end_ns"] is None:
        return _decode_checked(obj, line, version)
    lane = _str(obj, "lane", what)
    start_ns, end_ns = _count(obj, "start_ns", what), _count(obj, "end_ns", what)
    if end_ns < start_ns:
        _wrong(what, "end_ns", f"at least start_ns ({start_ns})", end_ns)
    return _decode_checked(obj, line, version, lane, start_ns, end_ns)


def _decode_fast(
    obj: dict[str, Any],
    line: int,
    lane: str | None = None,
    start_ns: int | None = None,
    end_ns: int | None = None,
) -> Operation | None:
    """The operation if its common fields are well-formed and it returned, else None."""
    namespace, name = obj["namespace"], obj["name"]
    fingerprint, occurrence = obj["fingerprint"], obj["occurrence"]
    logical_id, inputs, outcome = obj["logical_id"], obj["inputs"], obj["outcome"]
    origin, patch_id = obj["origin"], obj["patch_id"]
    source_id = obj["source_logical_operation_id"]
    if (
        type(namespace) is str
        and type(name) is str
        and type(fingerprint) is str
        and type(occurrence) is int
        and occurrence >= 0
        and type(logical_id) is int
        and logical_id >= 0
        and type(inputs) is dict
        and type(outcome) is dict
        and outcome.keys() == _OK_KEYS
        and outcome["status"] == "ok"
        and (origin == "recorded" or origin == "patched")
        and (patch_id is None or type(patch_id) is str)
        and (source_id is None or (type(source_id) is int and source_id >= 0))
        and _FINGERPRINT.fullmatch(fingerprint)
    ):
        return Operation(
            logical_id,
            OperationIdentity(namespace, name, fingerprint, occurrence),
            cast(dict[str, JsonValue], inputs),
            Returned(cast(JsonValue, outcome["value"])),
            origin,
            patch_id,
            source_id,
            line,
            lane,
            start_ns,
            end_ns,
        )
    return None


def _decode_checked(
    obj: dict[str, Any],
    line: int,
    version: int,
    lane: str | None = None,
    start_ns: int | None = None,
    end_ns: int | None = None,
) -> Operation:
    """The operation's common fields, every check worded (the key set is already checked)."""
    what = "operation"
    fingerprint = _str(obj, "fingerprint", what)
    if not _FINGERPRINT.fullmatch(fingerprint):
        _wrong(what, "fingerprint", "64 lowercase hex digits (SHA-256)", fingerprint)
    origin = obj["origin"]
    origins = _ORIGINS[version]
    if origin not in origins:
        _wrong(what, "origin", " or ".join(f'"{o}"' for o in origins), origin)
    source_id = obj["source_logical_operation_id"]
    if source_id is not None:
        source_id = _count(obj, "source_logical_operation_id", what)
    return Operation(
        logical_id=_count(obj, "logical_id", what),
        identity=OperationIdentity(
            _str(obj, "namespace", what),
            _str(obj, "name", what),
            fingerprint,
            _count(obj, "occurrence", what),
        ),
        inputs=_object(obj, "inputs", what),
        outcome=_decode_outcome(_object(obj, "outcome", what)),
        origin=origin,
        patch_id=_optional_str(obj, "patch_id", what),
        source_logical_operation_id=source_id,
        line=line,
        lane=lane,
        start_ns=start_ns,
        end_ns=end_ns,
    )


_FOOTER_KEYS_V4 = frozenset({"kind", "operation_count", "digest", "ending"})
_FOOTER_KEYS = {
    3: _FOOTER_KEYS_V4,
    4: _FOOTER_KEYS_V4,
    5: _FOOTER_KEYS_V4 | {"unobserved", "attempted"},
}
_ENDING_KEYS = frozenset({"status", "error_type", "message"})
_UNOBSERVED_KEYS = frozenset(
    {"source_logical_operation_id", "namespace", "name", "fingerprint", "occurrence"}
)
_ATTEMPTED_KEYS = frozenset({"namespace", "name", "fingerprint", "occurrence", "inputs"})


def _decode_identity(obj: dict[str, Any], what: str) -> OperationIdentity:
    fingerprint = _str(obj, "fingerprint", what)
    if not _FINGERPRINT.fullmatch(fingerprint):
        _wrong(what, "fingerprint", "64 lowercase hex digits (SHA-256)", fingerprint)
    return OperationIdentity(
        _str(obj, "namespace", what),
        _str(obj, "name", what),
        fingerprint,
        _count(obj, "occurrence", what),
    )


def _decode_unobserved(obj: dict[str, Any]) -> tuple[UnobservedOperation, ...]:
    items = obj["unobserved"]
    if type(items) is not list:
        _wrong("footer", "unobserved", "a list", items)
    decoded: list[UnobservedOperation] = []
    for index, item in enumerate(cast(list[Any], items)):
        what = f"footer unobserved[{index}]"
        if type(item) is not dict:
            raise InvalidLine(f"{what} must be an object")
        item = cast(dict[str, Any], item)
        _expect_keys(item, what, _UNOBSERVED_KEYS)
        decoded.append(
            UnobservedOperation(
                _count(item, "source_logical_operation_id", what), _decode_identity(item, what)
            )
        )
    return tuple(decoded)


def _decode_attempted(obj: dict[str, Any]) -> AttemptedCall | None:
    if obj["attempted"] is None:
        return None
    what = "footer attempted"
    attempted = _object(obj, "attempted", "footer")
    _expect_keys(attempted, what, _ATTEMPTED_KEYS)
    return AttemptedCall(_decode_identity(attempted, what), _object(attempted, "inputs", what))


def decode_footer(obj: dict[str, Any], version: int = TRACE_FORMAT_VERSION) -> TraceFooter:
    what = "footer"
    _expect_keys(obj, what, _FOOTER_KEYS[version])
    ending = _object(obj, "ending", what)
    _expect_keys(ending, "footer ending", _ENDING_KEYS)
    status = ending["status"]
    if status not in ("completed", "raised"):
        _wrong("footer ending", "status", '"completed" or "raised"', status)
    return TraceFooter(
        operation_count=_count(obj, "operation_count", what),
        digest=_str(obj, "digest", what),
        ending=SessionEnding(
            status=status,
            error_type=_optional_str(ending, "error_type", "footer ending"),
            message=_optional_str(ending, "message", "footer ending"),
        ),
        unobserved=() if version < 5 else _decode_unobserved(obj),
        attempted=None if version < 5 else _decode_attempted(obj),
    )
