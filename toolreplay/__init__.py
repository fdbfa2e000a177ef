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
from toolreplay.errors import (
    AmbiguousReplayMatch,
    EffectDefinitionError,
    NonPortableValueError,
    OverlappingEffectsError,
    ReplayContractError,
    ReplayedEffectError,
    ReplayMiss,
    SessionContextError,
    SessionError,
    SessionNestingError,
    ToolReplayError,
    TraceError,
    TraceExistsError,
    TraceFormatError,
    TraceNotFoundError,
    UnconsumedOperationsError,
)
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
    RecordSession,
    ReplaySession,
    current_session,
    effect,
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
    "AmbiguousReplayMatch",
    "EffectDefinitionError",
    "JsonValue",
    "NonPortableValueError",
    "Operation",
    "OperationIdentity",
    "OverlappingEffectsError",
    "Raised",
    "RecordSession",
    "ReplayContractError",
    "ReplayMiss",
    "ReplaySession",
    "ReplayedEffectError",
    "Returned",
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
    "UnconsumedOperationsError",
    "ValueDifference",
    "__version__",
    "canonical_json",
    "current_session",
    "effect",
    "ensure_portable",
    "fingerprint",
    "read_trace",
    "record",
    "replay",
    "value_differences",
]
