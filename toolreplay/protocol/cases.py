"""The case commands' documents: what `toolreplay promote` and `toolreplay verify` print
with `--format json` (RFC 0005 §4.1-4.2)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from toolreplay.failures import qualified_name
from toolreplay.protocol.reading import check_version, dumps, load, validated

if TYPE_CHECKING:
    from toolreplay.documents.run import ErrorSummaryModel

__all__ = [
    "PROMOTE_FORMAT_VERSION",
    "VERIFY_FORMAT_VERSION",
    "CaseVerification",
    "ErrorSummary",
    "PromoteDocument",
    "PromoteOutcome",
    "PublishedCase",
    "VerifyDocument",
    "VerifyOutcome",
]

PROMOTE_FORMAT_VERSION = 1
"""The `format_version` of `toolreplay promote --format json`."""
VERIFY_FORMAT_VERSION = 1
"""The `format_version` of `toolreplay verify --format json`."""

PromoteOutcome = Literal["ok", "invalid_arguments", "case_failed"]
VerifyOutcome = Literal["passed", "failed"]


def _summary(model: ErrorSummaryModel | None) -> ErrorSummary | None:
    return None if model is None else ErrorSummary(model.type, model.message)


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
        from toolreplay.documents.run import PromoteDocumentModel  # pydantic: see `validated`

        fields = check_version(data, "format_version", PROMOTE_FORMAT_VERSION, cls.DOCUMENT)
        model = validated(PromoteDocumentModel, fields, cls.DOCUMENT)
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
        return cls.from_dict(load(text, cls.DOCUMENT))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": PROMOTE_FORMAT_VERSION,
            "outcome": self.outcome,
            "case": None if self.case is None else self.case.to_dict(),
            "error": None if self.error is None else self.error.to_dict(),
        }

    def to_json(self) -> str:
        """The document as the command prints it (indented, ASCII)."""
        return dumps(self.to_dict(), ascii_only=True)


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
        from toolreplay.documents.run import VerifyDocumentModel  # pydantic: see `validated`

        fields = check_version(data, "format_version", VERIFY_FORMAT_VERSION, cls.DOCUMENT)
        model = validated(VerifyDocumentModel, fields, cls.DOCUMENT)
        return cls(
            cases=tuple(
                CaseVerification(case.path, case.name, case.outcome, _summary(case.error))
                for case in model.cases
            ),
            error=model.error,
        )

    @classmethod
    def from_json(cls, text: str) -> VerifyDocument:
        return cls.from_dict(load(text, cls.DOCUMENT))

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
        return dumps(self.to_dict(), ascii_only=True)
