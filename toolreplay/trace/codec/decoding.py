"""A trace line's JSON object as the operation model: every key present and known, every
value of its type, the format version checked first."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from typing import Any, NoReturn, cast

from toolreplay.portable import JsonValue
from toolreplay.trace.codec.lines import InvalidLine
from toolreplay.trace.model import (
    READABLE_FORMAT_VERSIONS,
    TRACE_FORMAT,
    TRACE_FORMAT_VERSION,
    AttemptedCall,
    Operation,
    OperationIdentity,
    Outcome,
    Raised,
    SessionEnding,
    TraceFooter,
    TraceHeader,
    UnobservedOperation,
    new_identity,
    new_operation,
    new_returned,
)

__all__ = ["decode_footer", "decode_header", "decode_operation"]

_FINGERPRINT = re.compile(r"[0-9a-f]{64}")
_HEX_DIGITS = "0123456789abcdef"
_intern = sys.intern


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
        return new_returned(obj["value"])
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
    # The hot path of loading: one pass of plain checks for a well-formed line; any
    # doubt falls through to the checks that word the error. The key set is checked by
    # its size and by reading every key (a KeyError: one is missing, so another is not
    # known), which costs a fraction of comparing it with a set.
    if version == 3:
        operation = None
        if len(obj) == len(_OPERATION_KEYS_V3):
            with contextlib.suppress(KeyError):
                operation = _decode_fast(obj, line)
        if operation is None:
            _expect_keys(obj, "operation", _OPERATION_KEYS_V3)
            operation = _decode_checked(obj, line, version)
        return operation
    if len(obj) == len(_OPERATION_KEYS):
        try:
            lane, start_ns, end_ns = obj["lane"], obj["start_ns"], obj["end_ns"]
            if (
                type(lane) is str
                and type(start_ns) is int
                and type(end_ns) is int
                and 0 <= start_ns <= end_ns
            ) or (lane is None and start_ns is None and end_ns is None):  # untimed
                operation = _decode_fast(obj, line, lane, start_ns, end_ns)
                if operation is not None:
                    return operation
        except KeyError:
            pass
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
    """The operation if its common fields are well-formed and it returned, else None;
    KeyError when one of them is missing."""
    obj["kind"]  # read only to be present: its value is the caller's to check
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
        and len(outcome) == 2  # pyright: ignore[reportUnknownArgumentType]
        and outcome["status"] == "ok"
        and (origin == "recorded" or origin == "patched")
        and (patch_id is None or type(patch_id) is str)
        and (source_id is None or (type(source_id) is int and source_id >= 0))
        and len(fingerprint) == 64
        and not fingerprint.strip(_HEX_DIGITS)  # _FINGERPRINT's test, at a fifth of its cost
    ):
        # Names repeat on every line of a trace: one string each, not one per line (a
        # fifth of a loaded operation's memory), and the origin is one of two constants.
        namespace, name = _intern(namespace), _intern(name)
        return new_operation(
            logical_id,
            new_identity(OperationIdentity, (namespace, name, fingerprint, occurrence)),
            inputs,  # pyright: ignore[reportUnknownArgumentType]  # a dict from JSON
            new_returned(outcome["value"]),  # pyright: ignore[reportUnknownArgumentType]
            "recorded" if origin == "recorded" else "patched",
            patch_id,
            source_id,
            line,
            _intern(lane) if type(lane) is str else lane,
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
