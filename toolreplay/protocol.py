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

import importlib
import json
import traceback
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar, cast

from toolreplay.documents import problem, shown
from toolreplay.errors import (
    AmbiguousReplayMatch,
    ProtocolError,
    ProtocolVersionError,
    ReplayMiss,
    UnappliedPatchError,
    UnconsumedOperationsError,
)
from toolreplay.portable import JsonValue
from toolreplay.runtime.failures import qualified_name
from toolreplay.trace.codec import operation_to_dict
from toolreplay.trace.model import Operation, OperationIdentity

if TYPE_CHECKING:
    from pydantic import BaseModel

    from toolreplay.documents.run import (
        CallIdentityModel,
        ErrorReportModel,
        ErrorSummaryModel,
        ReportedOperationModel,
    )

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
    "prepare_reading",
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


def _dumps(data: Mapping[str, Any], *, ascii_only: bool) -> str:
    return json.dumps(data, ensure_ascii=ascii_only, indent=2)


def prepare_reading() -> None:
    """Import what reading a document needs (pydantic and `toolreplay.documents.run`),
    now: a reader that must not pause on its first document (the terminal UI, as a run
    ends) calls it beforehand, in a background thread."""
    importlib.import_module("toolreplay.documents.run")


def _refusal(message: str) -> ProtocolError:
    return ProtocolError(f"{message}; read it with the toolreplay version that wrote it")


def _check_version(data: object, key: str, supported: int, document: str) -> dict[str, Any]:
    """`data` as an object whose `key` is `supported`; else `ProtocolError` (not an
    object) or `ProtocolVersionError` (another version)."""
    if not isinstance(data, dict):
        raise _refusal(problem(f"{document} document", "$", "an object", shown(data)))
    fields = cast(dict[str, Any], data)
    version = fields.get(key)
    if version == supported and isinstance(version, int) and not isinstance(version, bool):
        return fields
    raise ProtocolVersionError(
        f"{document} document has {key} {shown(version)}; this toolreplay reads "
        f"version {supported}: use the toolreplay version that wrote it, or upgrade",
        version=version,
        supported=supported,
    )


def _load(text: str, document: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        shown_text = text.strip()[:80]
        raise ProtocolError(
            f"{document} document: not JSON ({error}); the text starts {shown_text!r}"
        ) from None


_Model = TypeVar("_Model", bound="BaseModel")


def _validated(model: type[_Model], data: dict[str, Any], document: str) -> _Model:
    # Imported here: pydantic is loaded when a document is read, not when a command that
    # writes one starts.
    from toolreplay.documents.validation import validate_document

    return validate_document(model, data, where=f"{document} document", error=_refusal)


def _summary(model: ErrorSummaryModel | None) -> ErrorSummary | None:
    return None if model is None else ErrorSummary(model.type, model.message)


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

    @classmethod
    def from_model(cls, model: CallIdentityModel) -> CallIdentity:
        """The identity a document read with `CallIdentityModel` holds."""
        return cls(model.effect, model.namespace, model.name, model.fingerprint, model.occurrence)

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

    @classmethod
    def from_model(cls, model: ReportedOperationModel) -> ReportedOperation:
        """The operation a document read with `ReportedOperationModel` names."""
        return cls(
            model.logical_id,
            model.line,
            model.effect,
            model.namespace,
            model.name,
            model.fingerprint,
            model.occurrence,
            cast(JsonValue, model.inputs),
            cast(JsonValue, model.outcome),
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
    exit_code: int | None = None
    traceback: str | None = None

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

    @classmethod
    def from_model(cls, model: ErrorReportModel) -> ErrorReport:
        """The error object a document read with `ErrorReportModel` holds."""
        return cls(
            type=model.type,
            message=model.message,
            notes=tuple(model.notes),
            identity=None if model.identity is None else CallIdentity.from_model(model.identity),
            inputs=cast(JsonValue, model.inputs),
            candidates=tuple(map(ReportedOperation.from_model, model.candidates)),
            operations=tuple(map(ReportedOperation.from_model, model.operations)),
            patch_ids=tuple(model.patch_ids),
            exit_code=model.exit_code,
            traceback=model.traceback,
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
    network_refused: tuple[str, ...] = ()
    """Where the blocked network refused connections (`host:port`, each once; RFC 0001 §10)."""

    DOCUMENT: ClassVar[str] = "toolreplay.run"

    @classmethod
    def from_dict(cls, data: object) -> RunDocument:
        """Read a document; `ProtocolVersionError` for another version, `ProtocolError`
        for anything else that is not this protocol."""
        from toolreplay.documents.run import RunDocumentModel

        found = cast(dict[str, Any], data).get("protocol") if isinstance(data, dict) else None
        if isinstance(data, dict) and found != RUN_PROTOCOL:
            raise ProtocolError(
                problem(f"{cls.DOCUMENT} document", "$.protocol", f'"{RUN_PROTOCOL}"', shown(found))
                + f" (not a {RUN_PROTOCOL} document)"
            )
        fields = _check_version(
            cast(object, data), "protocol_version", RUN_PROTOCOL_VERSION, cls.DOCUMENT
        )
        model = _validated(RunDocumentModel, fields, cls.DOCUMENT)
        return cls(
            command=model.command,
            outcome=model.outcome,
            runner=model.runner,
            return_value=cast(JsonValue, model.return_value),
            return_value_portable=model.return_value_portable,
            error=None if model.error is None else ErrorReport.from_model(model.error),
            paths=dict(model.paths),
            counts=dict(model.counts),
            network_refused=tuple(model.network_refused or ()),
        )

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
        from toolreplay.documents.run import PromoteDocumentModel

        fields = _check_version(data, "format_version", PROMOTE_FORMAT_VERSION, cls.DOCUMENT)
        model = _validated(PromoteDocumentModel, fields, cls.DOCUMENT)
        case = model.case
        return cls(
            outcome=model.outcome,
            case=None
            if case is None
            else PublishedCase(
                case.directory, case.name, case.trace_path, case.trace_sha256, case.test_path
            ),
            error=_summary(model.error),
        )

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
        from toolreplay.documents.run import VerifyDocumentModel

        fields = _check_version(data, "format_version", VERIFY_FORMAT_VERSION, cls.DOCUMENT)
        model = _validated(VerifyDocumentModel, fields, cls.DOCUMENT)
        return cls(
            cases=tuple(
                CaseVerification(case.path, case.name, case.outcome, _summary(case.error))
                for case in model.cases
            ),
            error=model.error,
        )

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
