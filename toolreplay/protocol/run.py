"""The run document: what `toolreplay record | replay | fork --format json` prints
(RFC 0004 §4.5-4.6), with the error it reports and the calls that error names."""

from __future__ import annotations

import traceback
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from toolreplay.documents import problem, shown
from toolreplay.errors import (
    AmbiguousReplayMatch,
    OperationIdentityLike,
    OperationLike,
    ProtocolError,
    ReplayMiss,
    UnappliedPatchError,
    UnconsumedOperationsError,
)
from toolreplay.failures import qualified_name
from toolreplay.portable import JsonValue
from toolreplay.protocol.reading import check_version, dumps, load, validated
from toolreplay.trace.codec import operation_to_dict
from toolreplay.trace.model import Operation

if TYPE_CHECKING:
    from toolreplay.documents.run import (
        CallIdentityModel,
        ErrorReportModel,
        ReportedOperationModel,
    )

__all__ = [
    "RUN_PROTOCOL",
    "RUN_PROTOCOL_VERSION",
    "CallIdentity",
    "ErrorReport",
    "ReportedOperation",
    "RunCommand",
    "RunDocument",
    "RunOutcome",
]

RUN_PROTOCOL = "toolreplay.run"
"""The `protocol` key of a `RunDocument`."""
RUN_PROTOCOL_VERSION = 2
"""The `protocol_version` this module writes and reads (2: reported operations carry
their recorded outcome, so a reader can offer the nearest call's output)."""

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


@dataclass(frozen=True, slots=True)
class CallIdentity:
    """The identity of a call (RFC 0002): `identity` of the error object."""

    effect: str
    namespace: str
    name: str
    fingerprint: str
    occurrence: int

    @classmethod
    def from_identity(cls, identity: OperationIdentityLike) -> CallIdentity:
        return cls(
            identity.effect,
            identity.namespace,
            identity.name,
            identity.fingerprint,
            identity.occurrence,
        )

    @classmethod
    def from_model(cls, model: CallIdentityModel) -> CallIdentity:
        """The identity a document read with `CallIdentityModel` holds (the same fields)."""
        return cls(**dict(model))

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
    def from_operation(cls, operation: OperationLike) -> ReportedOperation:
        """A recorded operation, as an error carries it: a `toolreplay.Operation`, which
        `toolreplay.errors` (a leaf) can only name by the protocol it satisfies."""
        recorded = cast(Operation, operation)
        identity = recorded.identity
        return cls(
            recorded.logical_id,
            recorded.line,
            identity.effect,
            identity.namespace,
            identity.name,
            identity.fingerprint,
            identity.occurrence,
            cast(JsonValue, recorded.inputs),
            cast(JsonValue, operation_to_dict(recorded)["outcome"]),
        )

    @classmethod
    def from_model(cls, model: ReportedOperationModel) -> ReportedOperation:
        """The operation a document read with `ReportedOperationModel` names (the same
        fields)."""
        return cls(**dict(model))

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
        from toolreplay.documents.run import RunDocumentModel  # pydantic: see `validated`

        found = cast(dict[str, Any], data).get("protocol") if isinstance(data, dict) else None
        if isinstance(data, dict) and found != RUN_PROTOCOL:
            raise ProtocolError(
                problem(f"{cls.DOCUMENT} document", "$.protocol", f'"{RUN_PROTOCOL}"', shown(found))
                + f" (not a {RUN_PROTOCOL} document)"
            )
        fields = check_version(
            cast(object, data), "protocol_version", RUN_PROTOCOL_VERSION, cls.DOCUMENT
        )
        model = validated(RunDocumentModel, fields, cls.DOCUMENT)
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
        return cls.from_dict(load(text, cls.DOCUMENT))

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
        return dumps(self.to_dict(), ascii_only=False)
