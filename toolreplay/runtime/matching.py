"""Strict matching of calls against a trace, and the errors that explain a mismatch.

Matching is exact on the full identity `(namespace, name, fingerprint,
occurrence)`: one dictionary lookup. Nothing is ever matched approximately; the
nearest candidates are computed only to explain a miss.
"""

from __future__ import annotations

from toolreplay.errors import AmbiguousReplayMatch, ReplayMiss, UnconsumedOperationsError
from toolreplay.portable import JsonValue, preview, value_differences
from toolreplay.trace.model import Operation, OperationIdentity
from toolreplay.trace.reader import Trace

__all__ = [
    "ambiguous_match",
    "explain_absence",
    "match_operation",
    "operation_location",
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


def operation_location(operation: Operation) -> str:
    line = f", line {operation.line}" if operation.line is not None else ""
    return f"operation {operation.logical_id}{line}"


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
