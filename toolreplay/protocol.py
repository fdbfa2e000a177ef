"""The run protocol: the JSON documents `toolreplay` commands print with `--format json`.

    document = RunDocument.from_json(completed.stdout)   # ProtocolError if it is not one
    if document.outcome == "replay_contract_error" and document.error is not None:
        print(document.error.type, [op.logical_id for op in document.error.candidates])

One typed home for what the commands write and what their readers (the terminal
UI, CI scripts) read: `record`, `replay` and `fork` print a `RunDocument`
(RFC 0004 §4.5-4.6), `promote` a `PromoteDocument` and `verify` a `VerifyDocument`
(RFC 0005 §4.1-4.2). Each document has `to_dict` (exactly what the command prints)
and `from_dict`/`from_json`, which check the version first (`ProtocolVersionError`
for one this module does not read) and then every field (`ProtocolError` naming
it). A change of keys or meanings bumps the document's version constant here and
in the RFC.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import traceback
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from types import UnionType
from typing import (
    Any,
    ClassVar,
    Literal,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from toolreplay.errors import (
    AmbiguousReplayMatch,
    ProtocolError,
    ProtocolVersionError,
    ReplayMiss,
    UnappliedPatchError,
    UnconsumedOperationsError,
)
from toolreplay.failures import qualified_name
from toolreplay.portable import JsonValue
from toolreplay.trace.codec import operation_to_dict
from toolreplay.trace.model import Operation, OperationIdentity

__all__ = [
    "PROMOTE_FORMAT_VERSION",
    "RUN_PROTOCOL",
    "RUN_PROTOCOL_VERSION",
    "VERIFY_FORMAT_VERSION",
    "CallIdentity",
    "CaseVerification",
    "ErrorReport",
    "ErrorSummary",
    "PromoteDocument",
    "PromoteOutcome",
    "PublishedCase",
    "ReportedOperation",
    "RunCommand",
    "RunDocument",
    "RunOutcome",
    "VerifyDocument",
    "VerifyOutcome",
]

RUN_PROTOCOL = "toolreplay.run"
"""The `protocol` key of a `RunDocument`."""
RUN_PROTOCOL_VERSION = 2
"""The `protocol_version` this module writes and reads (2: reported operations carry
their recorded outcome, so a reader can offer the nearest call's output)."""
PROMOTE_FORMAT_VERSION = 1
"""The `format_version` of `toolreplay promote --format json`."""
VERIFY_FORMAT_VERSION = 1
"""The `format_version` of `toolreplay verify --format json`."""

RunCommand = Literal["record", "replay", "fork"]
RunOutcome = Literal[
    "ok",
    "application_error",
    "application_exit",
    "replay_contract_error",
    "session_error",
    "storage_error",
    "invalid_arguments",
]
PromoteOutcome = Literal["ok", "invalid_arguments", "case_failed"]
VerifyOutcome = Literal["passed", "failed"]

_T = TypeVar("_T")


def _dumps(data: Mapping[str, Any], *, ascii_only: bool) -> str:
    return json.dumps(data, ensure_ascii=ascii_only, indent=2)


class _Fields:
    """One JSON object of a document, read field by field; a bad field is a `ProtocolError`."""

    def __init__(self, value: object, where: str, document: str) -> None:
        if not isinstance(value, dict):
            raise ProtocolError(
                f"{document} document: {where} is {_kind(value)}, not an object; "
                "read it with the toolreplay version that wrote it"
            )
        self.data = cast(dict[str, Any], value)
        self.where = where
        self.document = document

    def bad(self, key: str, expected: str) -> ProtocolError:
        found = "missing" if key not in self.data else _kind(self.data[key])
        return ProtocolError(
            f"{self.document} document: {self.where}.{key} should be {expected}, found {found}; "
            "read it with the toolreplay version that wrote it"
        )

    def _get(self, key: str, kind: type, expected: str) -> Any:
        value = self.data.get(key)
        if (
            key not in self.data
            or not isinstance(value, kind)
            or (isinstance(value, bool) and kind is not bool)
        ):
            raise self.bad(key, expected)
        return value

    def _absent_or_null(self, key: str, may_be_absent: bool) -> bool:
        if key not in self.data:
            if may_be_absent:
                return True
            raise self.bad(key, "present")
        return self.data[key] is None

    def text(self, key: str) -> str:
        return cast(str, self._get(key, str, "a string"))

    def optional_text(self, key: str, *, may_be_absent: bool = False) -> str | None:
        """A string or null (or, with `may_be_absent`, no key at all)."""
        return None if self._absent_or_null(key, may_be_absent) else self.text(key)

    def integer(self, key: str) -> int:
        return cast(int, self._get(key, int, "an integer"))

    def optional_integer(self, key: str, *, may_be_absent: bool = False) -> int | None:
        """An integer or null (or, with `may_be_absent`, no key at all)."""
        return None if self._absent_or_null(key, may_be_absent) else self.integer(key)

    def flag(self, key: str) -> bool:
        return cast(bool, self._get(key, bool, "true or false"))

    def value(self, key: str) -> JsonValue:
        if key not in self.data:
            raise self.bad(key, "a JSON value")
        return cast(JsonValue, self.data[key])

    def choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self.text(key)
        if value not in choices:
            raise self.bad(key, "one of " + ", ".join(choices))
        return value

    def texts(self, key: str, *, may_be_absent: bool = False) -> tuple[str, ...]:
        """A list of strings (or, with `may_be_absent`, no key at all: empty)."""
        if may_be_absent and key not in self.data:
            return ()
        items = self._get(key, list, "a list of strings")
        if not all(isinstance(item, str) for item in items):
            raise self.bad(key, "a list of strings")
        return tuple(cast(list[str], items))

    def objects(self, key: str, read: Callable[[_Fields], _T]) -> tuple[_T, ...]:
        items = cast(list[object], self._get(key, list, "a list of objects"))
        return tuple(
            read(_Fields(item, f"{self.where}.{key}[{index}]", self.document))
            for index, item in enumerate(items)
        )

    def optional_object(self, key: str, read: Callable[[_Fields], _T]) -> _T | None:
        if key not in self.data:
            raise self.bad(key, "an object or null")
        value = self.data[key]
        return None if value is None else read(_Fields(value, f"{self.where}.{key}", self.document))

    def mapping(self, key: str, kinds: type, expected: str, *, nullable: bool) -> dict[str, Any]:
        items = cast(dict[str, Any], self._get(key, dict, f"an object of {expected}"))
        for item in items.values():
            if (item is None and not nullable) or (
                item is not None and (not isinstance(item, kinds) or isinstance(item, bool))
            ):
                raise self.bad(key, f"an object of {expected}")
        return dict(items)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _shown(value: object) -> str:
    """A value as JSON shows it (`null`, `"x"`, `2`), whatever a caller passed."""
    return json.dumps(value, default=repr)[:80]


def _check_version(fields: _Fields, key: str, supported: int, document: str) -> None:
    version = fields.data.get(key)
    if version == supported and isinstance(version, int) and not isinstance(version, bool):
        return
    raise ProtocolVersionError(
        f"{document} document has {key} {_shown(version)}; this toolreplay reads "
        f"version {supported}: use the toolreplay version that wrote it, or upgrade",
        version=version,
        supported=supported,
    )


def _load(text: str, document: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        shown = text.strip()[:80]
        raise ProtocolError(
            f"{document} document: not JSON ({error}); the text starts {shown!r}"
        ) from None


_MAY_BE_ABSENT: Mapping[str, bool] = {"may_be_absent": True}
"""Field metadata: the document leaves the key out when the value is None."""

_FieldReader = Callable[[_Fields, str], Any]


def _read_object(cls: type[_T], fields: _Fields) -> _T:
    """An object of a document as the dataclass `cls`, each field read by its declared type.

    One reader for every object, so a field is read the moment it is declared and
    the checks (and their messages) are the same wherever a type appears.
    """
    return cls(**{key: read(fields, key) for key, read in _field_readers(cls).items()})


@functools.cache
def _field_readers(cls: type) -> dict[str, _FieldReader]:
    hints = get_type_hints(cls)
    return {
        item.name: _reader_of(
            hints[item.name], may_be_absent=bool(item.metadata.get("may_be_absent"))
        )
        for item in dataclasses.fields(cls)
    }


def _reader_of(hint: Any, *, may_be_absent: bool) -> _FieldReader:
    """How a field of type `hint` is read; a type no document uses is a programming error."""
    origin, args = get_origin(hint), get_args(hint)
    if hint in (str, int, bool):
        return {str: _Fields.text, int: _Fields.integer, bool: _Fields.flag}[hint]
    if origin is Literal:
        return lambda fields, key: fields.choice(key, args)
    if origin is tuple and args[0] is str:
        return lambda fields, key: fields.texts(key, may_be_absent=may_be_absent)
    if origin is tuple:
        item = cast(type[Any], args[0])
        return lambda fields, key: fields.objects(key, functools.partial(_read_object, item))
    if origin is dict:
        values = set(get_args(args[1]) or (args[1],))
        nullable = type(None) in values
        kinds = (values - {type(None)}).pop()
        expected = {str: "strings", int: "integers"}[kinds] + (" or nulls" if nullable else "")
        return lambda fields, key: fields.mapping(key, kinds, expected, nullable=nullable)
    if origin in (Union, UnionType) and set(args) >= {bool, int, float, str, type(None)}:
        return _Fields.value  # JsonValue: any JSON value, null included
    if origin in (Union, UnionType) and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        if inner is str:
            return lambda fields, key: fields.optional_text(key, may_be_absent=may_be_absent)
        if inner is int:
            return lambda fields, key: fields.optional_integer(key, may_be_absent=may_be_absent)
        return lambda fields, key: fields.optional_object(
            key, functools.partial(_read_object, cast(type[Any], inner))
        )
    raise TypeError(f"protocol: no reader for a field of type {hint!r}")


@dataclass(frozen=True, slots=True)
class CallIdentity:
    """The identity of a call (RFC 0002): `identity` of the error object."""

    effect: str
    namespace: str
    name: str
    fingerprint: str
    occurrence: int

    @classmethod
    def from_identity(cls, identity: OperationIdentity) -> CallIdentity:
        return cls(
            identity.effect,
            identity.namespace,
            identity.name,
            identity.fingerprint,
            identity.occurrence,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ReportedOperation:
    """A recorded operation an error names: a miss's candidate, an unconsumed one, a copy.

    `outcome` is the recorded outcome as the trace line holds it:
    `{"status": "ok", "value": ...}` or `{"status": "error", "error": {...}}`.
    """

    logical_id: int
    line: int | None
    effect: str
    namespace: str
    name: str
    fingerprint: str
    occurrence: int
    inputs: JsonValue
    outcome: JsonValue = None

    @classmethod
    def from_operation(cls, operation: Operation) -> ReportedOperation:
        identity = operation.identity
        return cls(
            operation.logical_id,
            operation.line,
            identity.effect,
            identity.namespace,
            identity.name,
            identity.fingerprint,
            identity.occurrence,
            cast(JsonValue, operation.inputs),
            cast(JsonValue, operation_to_dict(operation)["outcome"]),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "logical_id": self.logical_id,
            "line": self.line,
            "effect": self.effect,
            "namespace": self.namespace,
            "name": self.name,
            "fingerprint": self.fingerprint,
            "occurrence": self.occurrence,
            "inputs": self.inputs,
            "outcome": self.outcome,
        }


@dataclass(frozen=True, slots=True)
class ErrorReport:
    """The error object of a `RunDocument` (RFC 0004 §4.6).

    `exit_code` is set for `application_exit`, `traceback` for `application_error`;
    each key is written only when set.
    """

    type: str
    message: str
    notes: tuple[str, ...] = ()
    identity: CallIdentity | None = None
    inputs: JsonValue = None
    candidates: tuple[ReportedOperation, ...] = ()
    operations: tuple[ReportedOperation, ...] = ()
    patch_ids: tuple[str, ...] = ()
    exit_code: int | None = field(default=None, metadata=_MAY_BE_ABSENT)
    traceback: str | None = field(default=None, metadata=_MAY_BE_ABSENT)

    @property
    def short_type(self) -> str:
        """The type's name without its module: `ReplayMiss`."""
        return self.type.rpartition(".")[2]

    @classmethod
    def from_exception(cls, error: BaseException, *, with_traceback: bool = False) -> ErrorReport:
        """What a command reports about `error`; a miss or ambiguity swallowed by the
        application and reported on exit is described from the original (`__cause__`)."""
        contract: BaseException = error
        if not isinstance(error, (ReplayMiss, AmbiguousReplayMatch)) and isinstance(
            error.__cause__, (ReplayMiss, AmbiguousReplayMatch)
        ):
            contract = error.__cause__
        identity: CallIdentity | None = None
        inputs: JsonValue = None
        candidates: tuple[ReportedOperation, ...] = ()
        operations: tuple[ReportedOperation, ...] = ()
        if isinstance(contract, ReplayMiss):
            identity = CallIdentity.from_identity(contract.identity)
            inputs = cast(JsonValue, contract.inputs)
            candidates = tuple(map(ReportedOperation.from_operation, contract.candidates))
        elif isinstance(contract, AmbiguousReplayMatch):
            identity = CallIdentity.from_identity(contract.identity)
            operations = tuple(map(ReportedOperation.from_operation, contract.operations))
        if isinstance(error, UnconsumedOperationsError):
            operations = tuple(map(ReportedOperation.from_operation, error.operations))
        exit_code: int | None = None
        if isinstance(error, SystemExit):
            code = error.code
            exit_code = int(code) if isinstance(code, int) else (0 if code is None else 1)
        return cls(
            type=qualified_name(type(error)),
            message=str(error),
            notes=tuple(str(note) for note in getattr(error, "__notes__", ())),
            identity=identity,
            inputs=inputs,
            candidates=candidates,
            operations=operations,
            patch_ids=tuple(error.patch_ids) if isinstance(error, UnappliedPatchError) else (),
            exit_code=exit_code,
            traceback="".join(traceback.format_exception(error)) if with_traceback else None,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": self.type,
            "message": self.message,
            "notes": list(self.notes),
            "identity": None if self.identity is None else self.identity.to_dict(),
            "inputs": self.inputs,
            "candidates": [operation.to_dict() for operation in self.candidates],
            "operations": [operation.to_dict() for operation in self.operations],
            "patch_ids": list(self.patch_ids),
        }
        if self.exit_code is not None:
            data["exit_code"] = self.exit_code
        if self.traceback is not None:
            data["traceback"] = self.traceback
        return data


@dataclass(slots=True)
class RunDocument:
    """What `toolreplay record | replay | fork --format json` prints (RFC 0004 §4.5).

    Mutable while the command runs (it fills in the outcome, error and counts);
    `to_dict` adds `protocol` and `protocol_version`.
    """

    command: RunCommand
    outcome: RunOutcome = "ok"
    runner: str | None = None
    return_value: JsonValue = None
    return_value_portable: bool = True
    error: ErrorReport | None = None
    paths: dict[str, str | None] = field(default_factory=dict[str, str | None])
    counts: dict[str, int] = field(default_factory=dict[str, int])
    network_refused: tuple[str, ...] = field(default=(), metadata=_MAY_BE_ABSENT)
    """Where the blocked network refused connections (`host:port`, each once; RFC 0001 §10)."""

    DOCUMENT: ClassVar[str] = "toolreplay.run"

    @classmethod
    def from_dict(cls, data: object) -> RunDocument:
        """Read a document; `ProtocolVersionError` for another version, `ProtocolError`
        for anything else that is not this protocol."""
        fields = _Fields(data, "$", cls.DOCUMENT)
        if fields.data.get("protocol") != RUN_PROTOCOL:
            raise ProtocolError(
                f"not a {RUN_PROTOCOL} document: its protocol is "
                f"{_shown(fields.data.get('protocol'))}"
            )
        _check_version(fields, "protocol_version", RUN_PROTOCOL_VERSION, cls.DOCUMENT)
        return _read_object(cls, fields)

    @classmethod
    def from_json(cls, text: str) -> RunDocument:
        return cls.from_dict(_load(text, cls.DOCUMENT))

    def to_dict(self) -> dict[str, Any]:
        return {
            "protocol": RUN_PROTOCOL,
            "protocol_version": RUN_PROTOCOL_VERSION,
            "command": self.command,
            "outcome": self.outcome,
            "runner": self.runner,
            "return_value": self.return_value,
            "return_value_portable": self.return_value_portable,
            "error": None if self.error is None else self.error.to_dict(),
            "paths": dict(self.paths),
            "counts": dict(self.counts),
            "network_refused": list(self.network_refused),
        }

    def to_json(self) -> str:
        """The document as the command prints it (indented, non-ASCII as is)."""
        return _dumps(self.to_dict(), ascii_only=False)


@dataclass(frozen=True, slots=True)
class ErrorSummary:
    """`{type, message}`: the error of a promote or verify document."""

    type: str
    message: str

    @property
    def short_type(self) -> str:
        return self.type.rpartition(".")[2]

    @classmethod
    def from_exception(cls, error: BaseException) -> ErrorSummary:
        return cls(qualified_name(type(error)), str(error))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class PublishedCase:
    """The case folder `toolreplay promote` published (paths as the command saw them)."""

    directory: str
    name: str
    trace_path: str
    trace_sha256: str
    test_path: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class PromoteDocument:
    """What `toolreplay promote --format json` prints (RFC 0005 §4.1)."""

    outcome: PromoteOutcome
    case: PublishedCase | None = None
    error: ErrorSummary | None = None

    DOCUMENT: ClassVar[str] = "toolreplay promote"

    @classmethod
    def from_dict(cls, data: object) -> PromoteDocument:
        fields = _Fields(data, "$", cls.DOCUMENT)
        _check_version(fields, "format_version", PROMOTE_FORMAT_VERSION, cls.DOCUMENT)
        return _read_object(cls, fields)

    @classmethod
    def from_json(cls, text: str) -> PromoteDocument:
        return cls.from_dict(_load(text, cls.DOCUMENT))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": PROMOTE_FORMAT_VERSION,
            "outcome": self.outcome,
            "case": None if self.case is None else self.case.to_dict(),
            "error": None if self.error is None else self.error.to_dict(),
        }

    def to_json(self) -> str:
        """The document as the command prints it (indented, ASCII)."""
        return _dumps(self.to_dict(), ascii_only=True)


@dataclass(frozen=True, slots=True)
class CaseVerification:
    """One case `toolreplay verify` checked: where, its name, and whether it held."""

    path: str
    name: str
    outcome: VerifyOutcome
    error: ErrorSummary | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class VerifyDocument:
    """What `toolreplay verify --format json` prints (RFC 0005 §4.2).

    `error` says why nothing was verified (no case found, a PATH missing); it is
    then the only thing the document reports.
    """

    cases: tuple[CaseVerification, ...] = ()
    error: str | None = None

    DOCUMENT: ClassVar[str] = "toolreplay verify"

    @property
    def passed(self) -> int:
        return sum(1 for case in self.cases if case.outcome == "passed")

    @property
    def failed(self) -> int:
        return len(self.cases) - self.passed

    @classmethod
    def from_dict(cls, data: object) -> VerifyDocument:
        fields = _Fields(data, "$", cls.DOCUMENT)
        _check_version(fields, "format_version", VERIFY_FORMAT_VERSION, cls.DOCUMENT)
        document = _read_object(cls, fields)
        for key, count in (("passed", document.passed), ("failed", document.failed)):
            if fields.integer(key) != count:
                raise fields.bad(key, f"{count}, the number of cases that {key}")
        return document

    @classmethod
    def from_json(cls, text: str) -> VerifyDocument:
        return cls.from_dict(_load(text, cls.DOCUMENT))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": VERIFY_FORMAT_VERSION,
            "passed": self.passed,
            "failed": self.failed,
            "cases": [case.to_dict() for case in self.cases],
            "error": self.error,
        }

    def to_json(self) -> str:
        """The document as the command prints it (indented, ASCII)."""
        return _dumps(self.to_dict(), ascii_only=True)
