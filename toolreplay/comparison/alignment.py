"""Aligning the operations of two traces, conservatively.

Phase 1 pairs operations with the same full identity (namespace, name,
fingerprint, occurrence). Exact pairs whose relative order is the same in both
traces (a longest increasing subsequence) become anchors; the others are
`moved`. Phase 2 pairs what is left on (namespace, name, occurrence) only when,
between the same two anchors, exactly one unpaired candidate exists on each
side, and the pair crosses no other such pair. Anything else stays
unpaired: a missing and an added operation are honest, a wrong pairing is not.

Everything here is O(n log n): dictionaries, one bisect-based LIS, no
pairwise comparison of operations.

A `moved` pair is out of file order, which for a concurrent trace may only
mean that calls on different lanes completed in another order. `order_changes`
keeps the moves that changed the order of calls within a lane (RFC 0004).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from toolreplay.trace.model import Operation

__all__ = ["AlignedPair", "align_operations", "order_changes"]

PairKind = Literal["exact", "moved", "structural"]
_GapKey = tuple[int, str, str, int]  # (gap between anchors, namespace, name, occurrence)


@dataclass(frozen=True, slots=True)
class AlignedPair:
    """One row of the alignment: positions in each trace (None when absent)."""

    source: int | None
    target: int | None
    kind: PairKind | None  # None for an unpaired operation


def _longest_increasing(values: Sequence[int]) -> set[int]:
    """Indices (into `values`) of one longest strictly increasing subsequence."""
    tails: list[int] = []  # values[tail_index[k]] is the smallest tail of a run of k+1
    tail_index: list[int] = []
    previous: list[int] = [-1] * len(values)
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
    """The pairs (sorted by source) that cross no other pair in the list."""
    pairs.sort()
    count = len(pairs)
    prefix_max = [-1] * count
    running = -1
    for k, (_, target) in enumerate(pairs):
        prefix_max[k] = running
        running = max(running, target)
    kept: list[tuple[int, int]] = []
    suffix_min = None
    for k in range(count - 1, -1, -1):
        target = pairs[k][1]
        if prefix_max[k] < target and (suffix_min is None or target < suffix_min):
            kept.append(pairs[k])
        suffix_min = target if suffix_min is None else min(suffix_min, target)
    kept.reverse()
    return kept


def align_operations(source: Sequence[Operation], target: Sequence[Operation]) -> list[AlignedPair]:
    """Align two operation sequences (each free of duplicate identities) into rows.

    Rows follow both traces' order: each operation appears in exactly one row,
    source-only rows before target-only rows where both are pending, and a
    `moved` pair at the target's position.
    """
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

    # Candidates are keyed by the gap between anchors they sit in: a pair from
    # different gaps would contradict the order the anchors fix.
    def key(gap: int, op: Operation) -> _GapKey:
        return (gap, op.identity.namespace, op.identity.name, op.identity.occurrence)

    source_candidates: dict[_GapKey, list[int]] = {}
    for i, op in enumerate(source):
        if i not in paired_source:
            gap = bisect_right(anchor_sources, i)
            source_candidates.setdefault(key(gap, op), []).append(i)
    target_candidates: dict[_GapKey, list[int]] = {}
    for j, op in enumerate(target):
        if j not in paired_target:
            gap = bisect_right(anchor_targets, j)
            target_candidates.setdefault(key(gap, op), []).append(j)

    by_gap: dict[int, list[tuple[int, int]]] = {}
    for candidate, sources in source_candidates.items():
        targets = target_candidates.get(candidate)
        if len(sources) != 1 or targets is None or len(targets) != 1:
            continue  # ambiguous or absent: leave unpaired
        by_gap.setdefault(candidate[0], []).append((sources[0], targets[0]))
    structural = [pair for pairs in by_gap.values() for pair in _non_crossing(pairs)]

    kinds: dict[int, tuple[int, PairKind]] = {}
    for i, j in anchors:
        kinds[i] = (j, "exact")
    for i, j in structural:
        kinds[i] = (j, "structural")
    moved_at_target = {j: i for i, j in moved}
    moved_sources = set(moved_at_target.values())
    paired_target_all = {j for j, _ in kinds.values()} | set(moved_at_target)

    rows: list[AlignedPair] = []
    i = j = 0
    while i < len(source) or j < len(target):
        if i < len(source) and i in moved_sources:
            i += 1  # shown where the target has it
        elif i < len(source) and i not in kinds:
            rows.append(AlignedPair(i, None, None))
            i += 1
        elif j < len(target) and j in moved_at_target:
            rows.append(AlignedPair(moved_at_target[j], j, "moved"))
            j += 1
        elif j < len(target) and j not in paired_target_all:
            rows.append(AlignedPair(None, j, None))
            j += 1
        else:
            partner, kind = kinds[i]
            assert partner == j, "in-order pairs must be monotone in both traces"
            rows.append(AlignedPair(i, j, kind))
            i += 1
            j += 1
    return rows


def order_changes(
    source: Sequence[Operation], target: Sequence[Operation], rows: Sequence[AlignedPair]
) -> set[int]:
    """The rows of `moved` pairs whose order changed within a lane.

    A lane (a task or a thread) makes one call at a time, in program order;
    the order of calls on different lanes is the scheduler's. A moved pair is a
    real order change when another identity-matched pair that shares its lane
    in the source and shares its lane in the target is ordered one way in the
    source and the other way in the target. Operations without a lane (format
    3) share one lane, so for sequential traces every move counts.
    """
    if not any(row.kind == "moved" for row in rows):
        return set()
    groups: dict[tuple[str | None, str | None], list[tuple[int, int, int]]] = {}
    for k, row in enumerate(rows):
        if row.kind in ("exact", "moved") and row.source is not None and row.target is not None:
            lanes = (source[row.source].lane, target[row.target].lane)
            groups.setdefault(lanes, []).append((row.source, row.target, k))
    changed: set[int] = set()
    for members in groups.values():
        members.sort()  # by source position
        # An earlier member (in the source) with a later target, or the reverse.
        later_target_before: list[bool] = []
        running_max = -1
        for _, j, _ in members:
            later_target_before.append(running_max > j)
            running_max = max(running_max, j)
        running_min: int | None = None
        for index in range(len(members) - 1, -1, -1):
            _, j, k = members[index]
            inverted = later_target_before[index] or (running_min is not None and running_min < j)
            if inverted and rows[k].kind == "moved":
                changed.add(k)
            running_min = j if running_min is None else min(running_min, j)
    return changed
