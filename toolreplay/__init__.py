"""Tool Replay: record what an AI application's effects did, replay it offline, strictly.

    import toolreplay

    @toolreplay.effect("crm.customer.get")
    def get_customer(customer_id: int) -> dict[str, object]: ...

    with toolreplay.record("incident.trp"):
        handle_refund(42)          # bodies run; every call is written to the trace

    with toolreplay.replay("incident.trp"):
        handle_refund(42)          # no body runs; recorded outcomes are returned

Importing this package imports neither typer, textual nor openai.
"""

from typing import TYPE_CHECKING

from toolreplay._version import __version__
from toolreplay.capturing import Capture, CapturedRequest, Retention, capture
from toolreplay.cases import (
    CASE_NAME_PATTERN,
    CaseManifest,
    CaseResult,
    PromotedCase,
    VerifiedCase,
    find_cases,
    promote,
    promote_async,
    read_case_manifest,
    verify_case,
    verify_case_async,
    verify_cases,
)
from toolreplay.diff import (
    DIFFERENCE_TYPES,
    AlignmentRow,
    Difference,
    DifferenceType,
    DiffReport,
    FieldDifference,
    describe_trace,
    diff,
)
from toolreplay.errors import (
    AdapterError,
    AmbiguousReplayMatch,
    ApplicationExecutionError,
    BehavioralRegressionError,
    CaptureConfigError,
    CaseError,
    CaseIntegrityError,
    CaseSearchError,
    DiffError,
    EffectDefinitionError,
    JsonTextError,
    LegacyOpenAITraceError,
    NestedEffectError,
    NonPortableValueError,
    OpenAIAdapterDependencyError,
    OverlappingEffectsError,
    PatchError,
    PatchFileError,
    PatchTargetError,
    PromotionError,
    ProtocolError,
    ProtocolVersionError,
    ReplayContractError,
    ReplayedEffectError,
    ReplayMiss,
    RunnerError,
    SessionContextError,
    SessionError,
    SessionNestingError,
    StreamReplayError,
    ToolReplayError,
    TraceError,
    TraceExistsError,
    TraceFormatError,
    TraceNotFoundError,
    TraceSearchError,
    TraceWriteError,
    UnappliedPatchError,
    UnconsumedOperationsError,
    UnsupportedRequestError,
    UnsupportedResponseError,
)
from toolreplay.migrate import MigratedTrace, migrate_trace
from toolreplay.patches import (
    PATCH_FILE_FORMAT_VERSION,
    OutputPatch,
    read_patches,
    replace_output,
    write_patches,
)
from toolreplay.portable import (
    JsonValue,
    ValueDifference,
    canonical_json,
    copy_value,
    ensure_portable,
    fingerprint,
    format_path,
    parse_json_text,
    preview,
    value_differences,
)
from toolreplay.runners import RUNNER_PATTERN
from toolreplay.runtime import (
    REBUILT_EXCEPTIONS,
    ForkSession,
    RecordSession,
    ReplaySession,
    Session,
    current_session,
    effect,
    fork,
    propagate,
    record,
    replay,
)
from toolreplay.search import FoundTrace, TraceSearch, find_traces
from toolreplay.trace import (
    TRACE_FORMAT_VERSION,
    Operation,
    OperationIdentity,
    Outcome,
    Raised,
    Returned,
    SessionEnding,
    Trace,
    TraceFooter,
    TraceHeader,
    read_trace,
)

__all__ = [
    "CASE_NAME_PATTERN",
    "DIFFERENCE_TYPES",
    "PATCH_FILE_FORMAT_VERSION",
    "REBUILT_EXCEPTIONS",
    "RUNNER_PATTERN",
    "TRACE_FORMAT_VERSION",
    "AdapterError",
    "AlignmentRow",
    "AmbiguousReplayMatch",
    "ApplicationExecutionError",
    "BehavioralRegressionError",
    "Capture",
    "CaptureConfigError",
    "CapturedRequest",
    "CaseError",
    "CaseIntegrityError",
    "CaseManifest",
    "CaseResult",
    "CaseSearchError",
    "DiffError",
    "DiffReport",
    "Difference",
    "DifferenceType",
    "EffectDefinitionError",
    "FieldDifference",
    "ForkSession",
    "FoundTrace",
    "JsonTextError",
    "JsonValue",
    "LegacyOpenAITraceError",
    "MigratedTrace",
    "NestedEffectError",
    "NonPortableValueError",
    "OpenAIAdapterDependencyError",
    "Operation",
    "OperationIdentity",
    "Outcome",
    "OutputPatch",
    "OverlappingEffectsError",
    "PatchError",
    "PatchFileError",
    "PatchTargetError",
    "PromotedCase",
    "PromotionError",
    "ProtocolError",
    "ProtocolVersionError",
    "Raised",
    "RecordSession",
    "ReplayContractError",
    "ReplayMiss",
    "ReplaySession",
    "ReplayedEffectError",
    "Retention",
    "Returned",
    "RunnerError",
    "Session",
    "SessionContextError",
    "SessionEnding",
    "SessionError",
    "SessionExecutor",
    "SessionNestingError",
    "StreamReplayError",
    "ToolReplayError",
    "Trace",
    "TraceError",
    "TraceExistsError",
    "TraceFooter",
    "TraceFormatError",
    "TraceHeader",
    "TraceNotFoundError",
    "TraceSearch",
    "TraceSearchError",
    "TraceWriteError",
    "UnappliedPatchError",
    "UnconsumedOperationsError",
    "UnsupportedRequestError",
    "UnsupportedResponseError",
    "ValueDifference",
    "VerifiedCase",
    "__version__",
    "canonical_json",
    "capture",
    "copy_value",
    "current_session",
    "describe_trace",
    "diff",
    "effect",
    "ensure_portable",
    "find_cases",
    "find_traces",
    "fingerprint",
    "fork",
    "format_path",
    "migrate_trace",
    "parse_json_text",
    "preview",
    "promote",
    "promote_async",
    "propagate",
    "read_case_manifest",
    "read_patches",
    "read_trace",
    "record",
    "replace_output",
    "replay",
    "value_differences",
    "verify_case",
    "verify_case_async",
    "verify_cases",
    "write_patches",
]

if TYPE_CHECKING:
    from toolreplay.runtime.executor import SessionExecutor


def __getattr__(name: str) -> object:
    # SessionExecutor imports concurrent.futures: only when it is asked for.
    if name == "SessionExecutor":
        from toolreplay.runtime.executor import SessionExecutor

        return SessionExecutor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
