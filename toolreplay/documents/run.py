"""The run protocol's documents (RFC 0004 §4.5-4.6, RFC 0005 §4.1-4.2) as pydantic models.

What `record`, `replay`, `fork`, `promote` and `verify` print with `--format json`.
`toolreplay.protocol` writes them from its dataclasses and reads them with these
models, after checking the version (so another version is named as such).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import JsonValue, ValidationInfo, model_validator

from toolreplay.documents import shown
from toolreplay.documents.validation import DocumentModel, DocumentProblem, NotNull, absent

__all__ = [
    "CallIdentityModel",
    "CaseVerificationModel",
    "ErrorReportModel",
    "ErrorSummaryModel",
    "PromoteDocumentModel",
    "PublishedCaseModel",
    "ReportedOperationModel",
    "RunDocumentModel",
    "VerifyDocumentModel",
]


class CallIdentityModel(DocumentModel):
    """The identity of a call (RFC 0002)."""

    effect: str
    namespace: str
    name: str
    fingerprint: str
    occurrence: int


class ReportedOperationModel(DocumentModel):
    """A recorded operation an error names, with its recorded outcome."""

    logical_id: int
    line: int | None
    effect: str
    namespace: str
    name: str
    fingerprint: str
    occurrence: int
    inputs: JsonValue
    outcome: JsonValue
    """`{"status": "ok", "value": ...}` or `{"status": "error", "error": {...}}`."""


class ErrorReportModel(DocumentModel):
    """The error of a run document (RFC 0004 §4.6)."""

    type: str
    """The exception's qualified type name."""
    message: str
    notes: list[str]
    identity: CallIdentityModel | None
    inputs: JsonValue
    candidates: list[ReportedOperationModel]
    operations: list[ReportedOperationModel]
    patch_ids: list[str]
    exit_code: Annotated[int | None, NotNull] = absent()
    """For `application_exit`: the code the application exited with."""
    traceback: Annotated[str | None, NotNull] = absent()
    """For `application_error`: the application's traceback."""


class RunDocumentModel(DocumentModel):
    """What `toolreplay record | replay | fork --format json` prints (protocol version 2)."""

    protocol: Literal["toolreplay.run"]
    protocol_version: Literal[2]
    command: Literal["record", "replay", "fork"]
    outcome: Literal[
        "ok",
        "application_error",
        "application_exit",
        "replay_contract_error",
        "session_error",
        "storage_error",
        "invalid_arguments",
    ]
    runner: str | None
    return_value: JsonValue
    return_value_portable: bool
    error: ErrorReportModel | None
    paths: dict[str, str | None]
    counts: dict[str, int]
    network_refused: Annotated[list[str] | None, NotNull] = absent()
    """Where the blocked network refused connections (`host:port`, each once)."""


class ErrorSummaryModel(DocumentModel):
    """`{type, message}`: the error of a promote or verify document."""

    type: str
    message: str


class PublishedCaseModel(DocumentModel):
    """The case folder `toolreplay promote` published."""

    directory: str
    name: str
    trace_path: str
    trace_sha256: str
    test_path: str


class PromoteDocumentModel(DocumentModel):
    """What `toolreplay promote --format json` prints (format version 1)."""

    format_version: Literal[1]
    outcome: Literal["ok", "invalid_arguments", "case_failed"]
    case: PublishedCaseModel | None
    error: ErrorSummaryModel | None


class CaseVerificationModel(DocumentModel):
    """One case `toolreplay verify` checked."""

    path: str
    name: str
    outcome: Literal["passed", "failed"]
    error: ErrorSummaryModel | None


class VerifyDocumentModel(DocumentModel):
    """What `toolreplay verify --format json` prints (format version 1)."""

    format_version: Literal[1]
    passed: int
    """How many of `cases` passed."""
    failed: int
    """How many of `cases` failed."""
    cases: list[CaseVerificationModel]
    error: str | None
    """Why nothing was verified (no case found, a path missing); else null."""

    @model_validator(mode="after")
    def _counts_agree(self, info: ValidationInfo) -> VerifyDocumentModel:
        for key, outcome in (("passed", "passed"), ("failed", "failed")):
            count = sum(1 for case in self.cases if case.outcome == outcome)
            if getattr(self, key) != count:
                raise DocumentProblem(
                    f"{count}, the number of cases that {outcome}",
                    found=shown(getattr(self, key)),
                    key=key,
                )
        return self
