"""Strict matching of calls against a trace, and the errors that explain a mismatch.

Matching is exact on the full identity `(namespace, name, fingerprint,
occurrence)`: one dictionary lookup. Nothing is ever matched approximately; the
nearest candidates are computed only to explain a miss.
"""

from __future__ import annotations

from toolreplay.errors import AmbiguousReplayMatch, ReplayMiss, UnconsumedOperationsError
from toolreplay.portable import JsonValue, preview, same_value, value_differences
from toolreplay.trace.model import (
    Operation,
    OperationIdentity,
    Outcome,
    Raised,
    Returned,
    operation_location,
)
from toolreplay.trace.reader import Trace

__all__ = [
    "ambiguous_match",
    "concurrent_ambiguities",
    "concurrent_ambiguity",
    "explain_absence",
    "match_operation",
    "replay_miss",
    "unconsumed_operations",
]

_SHOWN_CANDIDATES = 3
_SHOWN_DIFFERENCES = 3
_SCORED_CANDIDATES = 1000  # a miss must stay cheap on a trace with 100k calls of one effect


def match_operation(
    trace: Trace, identity: OperationIdentity, inputs: dict[str, JsonValue]
) -> Operation:
    """The operation recorded with exactly `identity`, or a `ReplayMiss`/`AmbiguousReplayMatch`."""
    operation = trace.get(identity)
    if operation is None:
        raise replay_miss(trace, identity, inputs)
    if identity in trace.duplicates:
        raise ambiguous_match(trace, identity)
    return operation


def explain_absence(
    trace: Trace,
    identity: OperationIdentity,
    inputs: dict[str, JsonValue],
    *,
    asked: str = "called",
) -> tuple[list[str], list[Operation]]:
    """Why `identity` is not in `trace`: explanation lines and the nearest operations.

    `asked` names the side that asked for the identity in the differences shown
    (`called` for a call, `patch` for a patch target).
    """
    effect = identity.effect
    lines: list[str] = []
    recorded = trace.operations_of(identity.namespace, identity.name)
    ranked: list[Operation] = []
    if not recorded:
        effects = sorted({op.effect for op in trace.operations})
        shown = ", ".join(effects[:8]) + (", ..." if len(effects) > 8 else "")
        lines.append(
            f"The trace holds no call of {effect} at all"
            + (f"; it records: {shown}." if effects else "; it records no operations.")
        )
        return lines, ranked
    same_inputs = [op for op in recorded if op.identity.fingerprint == identity.fingerprint]
    if same_inputs:
        lines.append(
            f"The trace holds {len(same_inputs)} call(s) of {effect} with these inputs "
            f"(occurrences 0..{len(same_inputs) - 1}); this call is occurrence "
            f"{identity.occurrence}, more than the recording made."
        )
    scored = [op for op in recorded if op.identity.fingerprint != identity.fingerprint]
    if len(scored) > _SCORED_CANDIDATES:
        scored = [op for op in scored if op.identity.occurrence == identity.occurrence]
        scored = scored[:_SCORED_CANDIDATES]
    differing = sorted(
        ((value_differences(op.inputs, inputs), op) for op in scored),
        key=lambda pair: (
            len(pair[0]),
            abs(pair[1].identity.occurrence - identity.occurrence),
            pair[1].logical_id,
        ),
    )
    ranked = same_inputs[:1] + [op for _, op in differing]
    if differing:
        lines.append(f"Nearest recorded calls of {effect} with other inputs:")
    for differences, op in differing[:_SHOWN_CANDIDATES]:
        lines.append(f"  - {operation_location(op)}, occurrence {op.identity.occurrence}:")
        for difference in differences[:_SHOWN_DIFFERENCES]:
            lines.append(f"      {difference.describe('recorded', asked)}")
        if len(differences) > _SHOWN_DIFFERENCES:
            lines.append(f"      ... and {len(differences) - _SHOWN_DIFFERENCES} more")
    return lines, ranked[:_SHOWN_CANDIDATES]


def replay_miss(
    trace: Trace, identity: OperationIdentity, inputs: dict[str, JsonValue]
) -> ReplayMiss:
    effect = identity.effect
    explanation, candidates = explain_absence(trace, identity, inputs)
    lines = [
        f"{effect} was called, but the trace holds no operation with this identity.",
        f"  call:   {effect} occurrence {identity.occurrence}, fingerprint {identity.fingerprint}",
        f"  inputs: {preview(inputs)}",
        f"  trace:  {trace.path} ({trace.describe_state()})",
        *explanation,
    ]
    if not trace.complete:
        lines.append(
            "The trace is incomplete, so calls after its last operation were never recorded."
        )
    lines.append(
        "What to do: if the application changed on purpose, record a new trace; otherwise "
        "find why this call differs from the recording (see the paths above)."
    )
    return ReplayMiss("\n".join(lines), identity=identity, inputs=inputs, candidates=candidates)


def ambiguous_match(trace: Trace, identity: OperationIdentity) -> AmbiguousReplayMatch:
    operations = trace.duplicates[identity]
    where = ", ".join(operation_location(op) for op in operations)
    return AmbiguousReplayMatch(
        f"{identity.describe()} is recorded {len(operations)} times in {trace.path} "
        f"({where}), so there is no single answer to replay. A recording never writes one "
        "identity twice: the trace was edited or assembled by hand. Remove the extra "
        "operations, or re-record the trace.",
        identity=identity,
        operations=operations,
    )


def _same_outcome(left: Outcome, right: Outcome) -> bool:
    if isinstance(left, Returned):
        return isinstance(right, Returned) and same_value(left.value, right.value)
    return (
        isinstance(right, Raised)
        and (left.error_type, left.message) == (right.error_type, right.message)
        and same_value(left.args, right.args)
    )


def concurrent_ambiguities(trace: Trace) -> dict[OperationIdentity, tuple[Operation, ...]]:
    """The identities whose occurrence a replay cannot assign deterministically.

    Occurrences count calls of one (effect, fingerprint) in the order they
    start. When such calls were in flight at the same time on different lanes,
    which one started first was the scheduler's choice, and a replay may start
    them in the other order. That is harmless when they all had the same
    outcome; when their outcomes differ, every identity of that overlapping
    group maps to the whole group here (RFC 0002, concurrent calls).
    """
    if len(trace.lanes) < 2:
        return {}  # one lane: calls of it never overlap
    by_key: dict[tuple[str, str, str], list[Operation]] = {}
    for operation in trace.operations:
        by_key.setdefault(operation.identity[:3], []).append(operation)
    ambiguous: dict[OperationIdentity, tuple[Operation, ...]] = {}
    for operations in by_key.values():
        if len(operations) < 2:
            continue
        timed = sorted(
            (op for op in operations if op.start_ns is not None and op.end_ns is not None),
            key=lambda op: (op.start_ns, op.logical_id),
        )
        group: list[Operation] = []
        group_end = -1
        for operation in [*timed, None]:
            if (
                operation is not None
                and operation.start_ns is not None
                and (operation.start_ns <= group_end)
            ):
                group.append(operation)
                group_end = max(group_end, operation.end_ns or 0)
                continue
            if len(group) > 1 and any(
                not _same_outcome(group[0].outcome, other.outcome) for other in group[1:]
            ):
                members = tuple(sorted(group, key=lambda op: op.identity.occurrence))
                for member in members:
                    ambiguous[member.identity] = members
            if operation is not None:
                group = [operation]
                group_end = operation.end_ns or 0
    return ambiguous


def _describe_outcome(outcome: Outcome) -> str:
    if isinstance(outcome, Returned):
        return f"returned {preview(outcome.value, 60)}"
    return f"raised {outcome.error_type}: {preview(outcome.message, 60)}"


def concurrent_ambiguity(
    trace: Trace, identity: OperationIdentity, operations: tuple[Operation, ...]
) -> AmbiguousReplayMatch:
    lines = [
        f"{identity.effect} was called with inputs it was called with {len(operations)} times "
        f"at once in the recording {trace.path}, and those calls had different outcomes:",
        *(
            f"  - {operation_location(op)}: occurrence {op.identity.occurrence}, lane "
            f"{op.lane}, from {(op.start_ns or 0) / 1e6:.3f} ms to {(op.end_ns or 0) / 1e6:.3f} "
            f"ms, {_describe_outcome(op.outcome)}"
            for op in operations
        ),
        "Occurrences count such calls in the order they start, and these started "
        "concurrently, so which call received which outcome was the scheduler's choice; "
        "a replay cannot tell which outcome belongs to this call. What to do: make the "
        "concurrent calls distinguishable by their inputs (pass the tool call id or the "
        "item being processed), or make them one after another, then record again.",
    ]
    return AmbiguousReplayMatch("\n".join(lines), identity=identity, operations=operations)


def unconsumed_operations(trace: Trace, operations: list[Operation]) -> UnconsumedOperationsError:
    shown = operations[:10]
    lines = [
        f"The application finished, but {len(operations)} of the {len(trace)} recorded "
        f"operations in {trace.path} were never called:",
        *(
            f"  - {operation_location(op)}: {op.effect} occurrence {op.identity.occurrence}, "
            f"inputs {preview(op.inputs, 80)}"
            for op in shown
        ),
    ]
    if len(operations) > len(shown):
        lines.append(f"  ... and {len(operations) - len(shown)} more")
    lines.append(
        "Strict replay requires every recorded call to happen again. The application now "
        "takes a different path than when it was recorded: find where (the first missing "
        "call above), or record a new trace if the change is intended."
    )
    return UnconsumedOperationsError("\n".join(lines), operations=operations)
