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

from toolreplay._version import __version__
from toolreplay.diff import (
    AlignmentRow,
    Difference,
    DifferenceType,
    DiffReport,
    FieldDifference,
    diff,
)
from toolreplay.errors import (
    AmbiguousReplayMatch,
    DiffError,
    EffectDefinitionError,
    NonPortableValueError,
    OverlappingEffectsError,
    PatchError,
    PatchFileError,
    PatchTargetError,
    ReplayContractError,
    ReplayedEffectError,
    ReplayMiss,
    RunnerError,
    SessionContextError,
    SessionError,
    SessionNestingError,
    ToolReplayError,
    TraceError,
    TraceExistsError,
    TraceFormatError,
    TraceNotFoundError,
    UnappliedPatchError,
    UnconsumedOperationsError,
)
from toolreplay.patches import OutputPatch, read_patches, replace_output, write_patches
from toolreplay.portable import (
    JsonValue,
    ValueDifference,
    canonical_json,
    ensure_portable,
    fingerprint,
    value_differences,
)
from toolreplay.runtime import (
    REBUILT_EXCEPTIONS,
    ForkSession,
    RecordSession,
    ReplaySession,
    current_session,
    effect,
    fork,
    record,
    replay,
)
from toolreplay.trace import (
    TRACE_FORMAT_VERSION,
    Operation,
    OperationIdentity,
    Raised,
    Returned,
    SessionEnding,
    Trace,
    TraceFooter,
    TraceHeader,
    read_trace,
)

__all__ = [
    "REBUILT_EXCEPTIONS",
    "TRACE_FORMAT_VERSION",
    "AlignmentRow",
    "AmbiguousReplayMatch",
    "DiffError",
    "DiffReport",
    "Difference",
    "DifferenceType",
    "EffectDefinitionError",
    "FieldDifference",
    "ForkSession",
    "JsonValue",
    "NonPortableValueError",
    "Operation",
    "OperationIdentity",
    "OutputPatch",
    "OverlappingEffectsError",
    "PatchError",
    "PatchFileError",
    "PatchTargetError",
    "Raised",
    "RecordSession",
    "ReplayContractError",
    "ReplayMiss",
    "ReplaySession",
    "ReplayedEffectError",
    "Returned",
    "RunnerError",
    "SessionContextError",
    "SessionEnding",
    "SessionError",
    "SessionNestingError",
    "ToolReplayError",
    "Trace",
    "TraceError",
    "TraceExistsError",
    "TraceFooter",
    "TraceFormatError",
    "TraceHeader",
    "TraceNotFoundError",
    "UnappliedPatchError",
    "UnconsumedOperationsError",
    "ValueDifference",
    "__version__",
    "canonical_json",
    "current_session",
    "diff",
    "effect",
    "ensure_portable",
    "fingerprint",
    "fork",
    "read_patches",
    "read_trace",
    "record",
    "replace_output",
    "replay",
    "value_differences",
    "write_patches",
]
