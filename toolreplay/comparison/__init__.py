"""`diff()`: the first observable difference between two recorded executions."""

from __future__ import annotations

import os

from toolreplay.bulk import collection_paused, draining
from toolreplay.comparison.alignment import (
    AlignedPair,
    align,
    align_operations,
    lane_order_changes,
)
from toolreplay.comparison.report import (
    DIFF_FORMAT_VERSION,
    DIFFERENCE_TYPES,
    AlignmentRow,
    Difference,
    DifferenceType,
    DiffReport,
    FieldDifference,
    attributed_patch,
    compare_pair,
    describe_trace,
    new_alignment_row,
    same_output,
)
from toolreplay.errors import DiffError
from toolreplay.trace.model import Returned, operation_location
from toolreplay.trace.reader import Trace, read_trace

__all__ = [
    "DIFFERENCE_TYPES",
    "DIFF_FORMAT_VERSION",
    "AlignedPair",
    "AlignmentRow",
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


def _refuse_duplicates(trace: Trace, side: str) -> None:
    # Counted with a set dropped at once: `trace.duplicates` would build the trace's
    # index by identity, which the diff never uses (a tenth of a large trace's memory).
    if len({operation.identity for operation in trace.operations}) == len(trace):
        return
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
    _refuse_duplicates(source_trace, "source")
    _refuse_duplicates(target_trace, "target")
    with collection_paused():  # a row per operation, none of them in a cycle
        return _report(source_trace, target_trace, source_label, target_label)


def _report(
    source_trace: Trace, target_trace: Trace, source_label: str, target_label: str
) -> DiffReport:
    source_ops, target_ops = source_trace.operations, target_trace.operations

    forked_from_source = target_trace.header.source_trace_id == source_trace.header.trace_id
    rows: list[AlignmentRow] = []
    differences: list[Difference] = []
    # A branch's supplied and live calls pair structurally like any call: every source
    # operation the branch observed has its exact partner, so what they can pair with is
    # a source call the branch left unobserved, standing in the same place (RFC 0004 §3.3).
    alignment = align(source_ops, target_ops)
    reordered = lane_order_changes(source_ops, target_ops, alignment)
    columns = alignment.sources, alignment.targets, alignment.kinds
    del alignment  # its anchors and moves: the rows drain the columns, and free them
    for index, (i, j, match) in enumerate(draining(*columns)):
        if i is None or j is None:
            left = None if i is None else source_ops[i]
            right = None if j is None else target_ops[j]
            kind: DifferenceType = "operation_added" if left is None else "operation_missing"
            # A supplied call's row shows its patch; the difference (the call itself) is
            # the application's, so it is not credited (RFC 0004 §3.6).
            shown = right.patch_id if right is not None and forked_from_source else None
            rows.append(
                new_alignment_row(
                    index,
                    left,
                    right,
                    "added" if left is None else "missing",
                    None,
                    (kind,),
                    (),
                    shown if right is not None and right.origin == "supplied" else None,
                )
            )
            differences.append(Difference(kind, index, left, right, (), None))
            continue
        left, right = source_ops[i], target_ops[j]
        if match != "structural" and index not in reordered:
            # Most rows: an exact pair (one identity, so the same inputs) whose outputs
            # agree. Anything else goes through compare_pair.
            before, after = left.outcome, right.outcome
            if (
                type(before) is Returned
                and type(after) is Returned
                and same_output(before.value, after.value)
            ):
                patch_id = attributed_patch(left, right) if forked_from_source else None
                rows.append(new_alignment_row(index, left, right, "same", match, (), (), patch_id))
                continue
        found, patch_id = compare_pair(left, right, target_forked_from_source=forked_from_source)
        if index in reordered:
            found.insert(0, ("order_changed", []))
        if not found:
            rows.append(new_alignment_row(index, left, right, "same", match, (), (), patch_id))
            continue
        fields = tuple(field for _, fields in found for field in fields)
        rows.append(
            new_alignment_row(
                index,
                left,
                right,
                "changed",
                match,
                tuple(kind for kind, _ in found),
                fields,
                patch_id,
            )
        )
        for kind, kind_fields in found:
            attributed = patch_id if kind in _OUTCOME_DIFFERENCES else None
            differences.append(Difference(kind, index, left, right, tuple(kind_fields), attributed))
    attempted = target_trace.footer.attempted if target_trace.footer is not None else None
    if attempted is not None:
        # The call the branch stopped at: added, but never recorded (it has no outcome).
        fields = (FieldDifference("$.inputs", None, attempted.inputs, False, True),)
        index = len(rows)
        rows.append(
            new_alignment_row(
                index, None, None, "added", None, ("operation_added",), fields, None, attempted
            )
        )
        differences.append(
            Difference("operation_added", index, None, None, fields, None, attempted)
        )
    return DiffReport(
        source=source_trace,
        target=target_trace,
        source_label=source_label,
        target_label=target_label,
        rows=tuple(rows),
        differences=tuple(differences),
    )
