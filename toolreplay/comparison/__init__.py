"""`diff()`: the first observable difference between two recorded executions."""

from __future__ import annotations

import os

from toolreplay.bulk import collection_paused
from toolreplay.comparison.alignment import (
    AlignedPair,
    align,
    align_operations,
    identities,
    lane_order_changes,
)
from toolreplay.comparison.report import (
    DIFF_FORMAT_VERSION,
    DIFFERENCE_TYPES,
    AlignmentRow,
    AlignmentRows,
    Difference,
    DifferenceType,
    DiffReport,
    FieldDifference,
    compare_pair,
    describe_trace,
    new_alignment_row,
    same_output,
)
from toolreplay.errors import DiffError
from toolreplay.trace.model import OperationIdentity, Returned, operation_location
from toolreplay.trace.reader import Trace, read_trace

__all__ = [
    "DIFFERENCE_TYPES",
    "DIFF_FORMAT_VERSION",
    "AlignedPair",
    "AlignmentRow",
    "AlignmentRows",
    "DiffReport",
    "Difference",
    "DifferenceType",
    "FieldDifference",
    "align_operations",
    "describe_trace",
    "diff",
]


def _load(trace: str | os.PathLike[str] | Trace) -> tuple[Trace, str]:
    if isinstance(trace, Trace):
        return trace, str(trace.path)
    return read_trace(trace), os.fspath(trace)


def _unique_identities(trace: Trace, side: str) -> list[OperationIdentity]:
    """`identities()` of the trace's operations, which the alignment reuses, refusing a
    trace that holds one twice."""
    # Counted with a set dropped at once: `trace.duplicates` would build the trace's
    # index by identity, which the diff never uses (a tenth of a large trace's memory).
    found = identities(trace.operations)
    if len(set(found)) == len(found):
        return found
    identity, operations = next(iter(trace.duplicates.items()))
    where = ", ".join(operation_location(op) for op in operations)
    raise DiffError(
        f"the {side} trace {trace.path} holds {identity.describe()} {len(operations)} times "
        f"({where}); with duplicate identities any alignment would be a guess. Remove the "
        "extra operations (a recording never writes them), or re-record the trace."
    )


_OUTCOME_DIFFERENCES = ("output_changed", "status_changed", "error_changed")


def diff(
    source: str | os.PathLike[str] | Trace, target: str | os.PathLike[str] | Trace
) -> DiffReport:
    """Compare two traces and report where they first differ, observably.

        report = toolreplay.diff("incident.trp", "branch.trp")
        if report.first_divergence is not None:
            print(report.first_divergence.describe())
        print(report.to_dict())

    Read-only. Operations are aligned exactly on identity first, then
    structurally (same effect and occurrence) only where that is unambiguous;
    see `align_operations`. Raises `DiffError` when either trace holds an
    identity twice, and the trace errors of `read_trace`.
    """
    source_trace, source_label = _load(source)
    target_trace, target_label = _load(target)
    known = (
        _unique_identities(source_trace, "source"),
        _unique_identities(target_trace, "target"),
    )
    with collection_paused():  # a row per operation, none of them in a cycle
        return _report(source_trace, target_trace, source_label, target_label, known)


def _report(
    source_trace: Trace,
    target_trace: Trace,
    source_label: str,
    target_label: str,
    known: tuple[list[OperationIdentity], list[OperationIdentity]],
) -> DiffReport:
    source_ops, target_ops = source_trace.operations, target_trace.operations

    forked_from_source = target_trace.header.source_trace_id == source_trace.header.trace_id
    # The rows that say more than that two operations agree; the agreeing ones (nearly
    # all, as a rule) are read from the columns when asked for (`AlignmentRows`).
    kept: dict[int, AlignmentRow] = {}
    differences: list[Difference] = []
    # A branch's supplied and live calls pair structurally like any call: every source
    # operation the branch observed has its exact partner, so what they can pair with is
    # a source call the branch left unobserved, standing in the same place (RFC 0004 §3.3).
    alignment = align(source_ops, target_ops, known)
    reordered = lane_order_changes(source_ops, target_ops, alignment)
    lefts = [None if i is None else source_ops[i] for i in alignment.sources]
    rights = [None if j is None else target_ops[j] for j in alignment.targets]
    kinds = alignment.kinds
    del alignment  # its positions, anchors and moves
    for index, (left, right, match) in enumerate(zip(lefts, rights, kinds, strict=True)):
        if left is None or right is None:
            kind: DifferenceType = "operation_added" if left is None else "operation_missing"
            # A supplied call's row shows its patch; the difference (the call itself) is
            # the application's, so it is not credited (RFC 0004 §3.6).
            shown = right.patch_id if right is not None and forked_from_source else None
            kept[index] = new_alignment_row(
                index,
                left,
                right,
                "added" if left is None else "missing",
                None,
                (kind,),
                (),
                shown if right is not None and right.origin == "supplied" else None,
            )
            differences.append(Difference(kind, index, left, right, (), None))
            continue
        if match != "structural" and index not in reordered:
            # Most rows: an exact pair (one identity, so the same inputs) whose outputs
            # agree, a row the columns hold. Anything else goes through compare_pair.
            before, after = left.outcome, right.outcome
            if (
                type(before) is Returned
                and type(after) is Returned
                and same_output(before.value, after.value)
            ):
                continue
        found, patch_id = compare_pair(left, right, target_forked_from_source=forked_from_source)
        if index in reordered:
            found.insert(0, ("order_changed", []))
        if not found:
            continue
        fields = tuple(field for _, fields in found for field in fields)
        kept[index] = new_alignment_row(
            index,
            left,
            right,
            "changed",
            match,
            tuple(kind for kind, _ in found),
            fields,
            patch_id,
        )
        for kind, kind_fields in found:
            attributed = patch_id if kind in _OUTCOME_DIFFERENCES else None
            differences.append(Difference(kind, index, left, right, tuple(kind_fields), attributed))
    attempted = target_trace.footer.attempted if target_trace.footer is not None else None
    if attempted is not None:
        # The call the branch stopped at: added, but never recorded (it has no outcome).
        fields = (FieldDifference("$.inputs", None, attempted.inputs, False, True),)
        index = len(kinds)
        kept[index] = new_alignment_row(
            index, None, None, "added", None, ("operation_added",), fields, None, attempted
        )
        lefts.append(None)
        rights.append(None)
        kinds.append(None)
        differences.append(
            Difference("operation_added", index, None, None, fields, None, attempted)
        )
    return DiffReport(
        source=source_trace,
        target=target_trace,
        source_label=source_label,
        target_label=target_label,
        rows=AlignmentRows(
            (lefts, rights, kinds),
            kept,
            forked_from_source=forked_from_source,
        ),
        differences=tuple(differences),
    )
