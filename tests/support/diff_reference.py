"""`toolreplay.diff()` written plainly, as it was before it was made fast.

The property test in tests/test_diff_reference.py diffs random traces with both
and requires the same alignment, rows, differences, `to_dict()` and text. Nothing
here is tuned: one dictionary lookup and one comparison per operation, rows
walked one at a time, `==` confirmed by `same_value`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, Literal

from toolreplay.comparison import (
    DIFF_FORMAT_VERSION,
    DIFFERENCE_TYPES,
    AlignmentRow,
    Difference,
    DifferenceType,
    FieldDifference,
)
from toolreplay.portable import ValueDifference, same_value, value_differences
from toolreplay.trace import Operation, Raised, Returned, Trace

PairKind = Literal["exact", "moved", "structural"]
Pair = tuple[int | None, int | None, PairKind | None]
Found = list[tuple[DifferenceType, list[FieldDifference]]]


def _longest_increasing(values: list[int]) -> set[int]:
    tails: list[int] = []
    tail_index: list[int] = []
    previous = [-1] * len(values)
    for index, value in enumerate(values):
        slot = bisect_left(tails, value)
        if slot == len(tails):
            tails.append(value)
            tail_index.append(index)
        else:
            tails[slot] = value
            tail_index[slot] = index
        previous[index] = tail_index[slot - 1] if slot > 0 else -1
    chosen: set[int] = set()
    index = tail_index[-1] if tail_index else -1
    while index != -1:
        chosen.add(index)
        index = previous[index]
    return chosen


def _non_crossing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    pairs.sort()
    return [
        (i, j)
        for k, (i, j) in enumerate(pairs)
        if all(other < j for _, other in pairs[:k])
        and all(other > j for _, other in pairs[k + 1 :])
    ]


def align(source: list[Operation], target: list[Operation]) -> list[Pair]:
    """Rows (source position, target position, kind), as `align_operations` gives them."""
    target_position = {op.identity: j for j, op in enumerate(target)}
    exact = [
        (i, target_position[op.identity])
        for i, op in enumerate(source)
        if op.identity in target_position
    ]
    in_order = _longest_increasing([j for _, j in exact])
    anchors = [pair for k, pair in enumerate(exact) if k in in_order]
    moved = [pair for k, pair in enumerate(exact) if k not in in_order]
    paired_source = {i for i, _ in exact}
    paired_target = {j for _, j in exact}
    anchor_sources = [i for i, _ in anchors]
    anchor_targets = [j for _, j in anchors]

    def candidates(
        operations: list[Operation], paired: set[int], anchor_positions: list[int]
    ) -> dict[tuple[int, str, str, int], list[int]]:
        found: dict[tuple[int, str, str, int], list[int]] = {}
        for position, op in enumerate(operations):
            if position not in paired:
                gap = bisect_right(anchor_positions, position)
                identity = op.identity
                key = (gap, identity.namespace, identity.name, identity.occurrence)
                found.setdefault(key, []).append(position)
        return found

    source_candidates = candidates(source, paired_source, anchor_sources)
    target_candidates = candidates(target, paired_target, anchor_targets)
    by_gap: dict[int, list[tuple[int, int]]] = {}
    for key, sources in source_candidates.items():
        targets = target_candidates.get(key, [])
        if len(sources) == 1 and len(targets) == 1:
            by_gap.setdefault(key[0], []).append((sources[0], targets[0]))
    structural = [pair for pairs in by_gap.values() for pair in _non_crossing(pairs)]

    kinds: dict[int, tuple[int, PairKind]] = {i: (j, "exact") for i, j in anchors}
    kinds |= {i: (j, "structural") for i, j in structural}
    moved_at_target = {j: i for i, j in moved}
    paired_targets = {j for j, _ in kinds.values()} | set(moved_at_target)
    rows: list[Pair] = []
    i = j = 0
    while i < len(source) or j < len(target):
        if i < len(source) and i in moved_at_target.values():
            i += 1
        elif i < len(source) and i not in kinds:
            rows.append((i, None, None))
            i += 1
        elif j < len(target) and j in moved_at_target:
            rows.append((moved_at_target[j], j, "moved"))
            j += 1
        elif j < len(target) and j not in paired_targets:
            rows.append((None, j, None))
            j += 1
        else:
            partner, kind = kinds[i]
            assert partner == j
            rows.append((i, j, kind))
            i += 1
            j += 1
    return rows


def order_changes(source: list[Operation], target: list[Operation], rows: list[Pair]) -> set[int]:
    """The moved rows that some pair sharing their lanes is ordered the other way against."""
    pairs = [
        (k, i, j, (source[i].lane, target[j].lane))
        for k, (i, j, kind) in enumerate(rows)
        if kind in ("exact", "moved") and i is not None and j is not None
    ]
    return {
        k
        for k, i, j, lanes in pairs
        if rows[k][2] == "moved"
        and any(
            other_lanes == lanes and (other_i - i) * (other_j - j) < 0
            for _, other_i, other_j, other_lanes in pairs
        )
    }


def _rooted(differences: list[ValueDifference], root: str) -> list[FieldDifference]:
    return [
        FieldDifference(root + d.path[1:], d.left, d.right, d.left_present, d.right_present)
        for d in differences
    ]


def _presence(outcome: Returned | Raised, source_side: bool) -> FieldDifference:
    path, value = (
        ("$.output", outcome.value)
        if isinstance(outcome, Returned)
        else ("$.error", outcome.to_dict())
    )
    if source_side:
        return FieldDifference(path, value, None, True, False)
    return FieldDifference(path, None, value, False, True)


def compare(source: Operation, target: Operation, forked: bool) -> tuple[Found, str | None]:
    found: Found = []
    if source.identity.fingerprint != target.identity.fingerprint:
        fields = _rooted(value_differences(source.inputs, target.inputs), "$.inputs")
        found.append(("input_changed", fields))
    left, right = source.outcome, target.outcome
    if isinstance(left, Returned) and isinstance(right, Returned):
        if not (left.value == right.value and same_value(left.value, right.value)):
            fields = _rooted(value_differences(left.value, right.value), "$.output")
            found.append(("output_changed", fields))
    elif isinstance(left, Raised) and isinstance(right, Raised):
        fields = _rooted(value_differences(left.to_dict(), right.to_dict()), "$.error")
        if fields:
            found.append(("error_changed", fields))
    else:
        status = FieldDifference("$.status", left.status, right.status)
        found.append(("status_changed", [status, _presence(left, True), _presence(right, False)]))
    patched = target.origin == "patched"
    named = patched and target.source_logical_operation_id == source.logical_id
    attributed = forked and (named or target.origin == "supplied")
    return found, target.patch_id if attributed else None


def rows_and_differences(
    source_trace: Trace, target_trace: Trace
) -> tuple[list[AlignmentRow], list[Difference]]:
    """What `DiffReport.rows` and `.differences` should hold for the two traces."""
    source, target = list(source_trace.operations), list(target_trace.operations)
    forked = target_trace.header.source_trace_id == source_trace.header.trace_id
    aligned = align(source, target)
    reordered = order_changes(source, target, aligned)
    rows: list[AlignmentRow] = []
    differences: list[Difference] = []
    for index, (i, j, kind) in enumerate(aligned):
        left = None if i is None else source[i]
        right = None if j is None else target[j]
        if left is None or right is None:
            added: DifferenceType = "operation_added" if left is None else "operation_missing"
            supplied = right is not None and forked and right.origin == "supplied"
            patch_id = right.patch_id if supplied and right is not None else None
            status = "added" if left is None else "missing"
            rows.append(AlignmentRow(index, left, right, status, None, (added,), (), patch_id))
            differences.append(Difference(added, index, left, right, (), None))
            continue
        found, patch_id = compare(left, right, forked)
        if index in reordered:
            found.insert(0, ("order_changed", []))
        rows.append(
            AlignmentRow(
                index,
                left,
                right,
                "changed" if found else "same",
                kind,
                tuple(difference for difference, _ in found),
                tuple(field for _, fields in found for field in fields),
                patch_id,
            )
        )
        for difference, fields in found:
            outcome = difference in ("output_changed", "status_changed", "error_changed")
            attributed = patch_id if outcome else None
            differences.append(
                Difference(difference, index, left, right, tuple(fields), attributed)
            )
    return rows, differences


def _operation_ref(operation: Operation | None) -> dict[str, Any] | None:
    if operation is None:
        return None
    return {
        "logical_id": operation.logical_id,
        "effect": operation.effect,
        "occurrence": operation.identity.occurrence,
        "fingerprint": operation.identity.fingerprint,
        "status": operation.outcome.status,
        "origin": operation.origin,
        "patch_id": operation.patch_id,
        "source_logical_operation_id": operation.source_logical_operation_id,
    }


def _difference_dict(difference: Difference) -> dict[str, Any]:
    operation = difference.target or difference.source
    assert operation is not None
    return {
        "type": difference.type,
        "row": difference.row,
        "effect": operation.effect,
        "occurrence": operation.identity.occurrence,
        "source": _operation_ref(difference.source),
        "target": _operation_ref(difference.target),
        "fields": [
            {
                "path": field.path,
                "source": field.source,
                "target": field.target,
                "source_present": field.source_present,
                "target_present": field.target_present,
            }
            for field in difference.fields
        ],
        "patch_id": difference.patch_id,
        "attempted": False,
    }


def _trace_dict(trace: Trace, label: str) -> dict[str, Any]:
    footer = trace.footer
    ending = None if footer is None else footer.ending
    return {
        "path": label,
        "trace_id": trace.header.trace_id,
        "mode": trace.header.mode,
        "operation_count": len(trace.operations),
        "complete": footer is not None,
        "ending": None
        if ending is None
        else {"status": ending.status, "error_type": ending.error_type},
    }


def report_dict(
    source: Trace, target: Trace, rows: list[AlignmentRow], differences: list[Difference]
) -> dict[str, Any]:
    """`DiffReport.to_dict()` of the report `diff(source, target)` of two loaded traces
    (none stopped at an attempted call) should be, given its rows and differences."""
    counts = dict.fromkeys(DIFFERENCE_TYPES, 0)
    for difference in differences:
        counts[difference.type] += 1
    return {
        "format_version": DIFF_FORMAT_VERSION,
        "source": _trace_dict(source, str(source.path)),
        "target": _trace_dict(target, str(target.path)),
        "identical": not differences,
        "counts": counts,
        "first_divergence": _difference_dict(differences[0]) if differences else None,
        "differences": [_difference_dict(difference) for difference in differences],
        "rows": [
            {
                "row": row.index,
                "status": row.status,
                "match": row.match,
                "source": _operation_ref(row.source),
                "target": _operation_ref(row.target),
                "differences": list(row.differences),
                "patch_id": row.patch_id,
                "attempted": False,
            }
            for row in rows
        ],
    }
