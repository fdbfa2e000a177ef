"""Aligning the operations of two traces, conservatively.

Phase 1 pairs operations with the same full identity (namespace, name,
fingerprint, occurrence). Exact pairs whose relative order is the same in both
traces (a longest increasing subsequence) become anchors; the others are
`moved`. Phase 2 pairs what is left on (namespace, name, occurrence) only when,
between the same two anchors, exactly one unpaired candidate exists on each
side, and the pair crosses no other such pair. Anything else stays
unpaired: a missing and an added operation are honest, a wrong pairing is not.

Everything here is O(n log n): dictionaries, one bisect-based LIS, no
comparison of every operation with every other. Two traces of one application
mostly hold the same calls in the same order, so the work is arranged for that
case: identities are compared side by side before any is hashed, runs of
in-order pairs cost a slice each, and only the few operations left over are
looked at one by one.

A `moved` pair is out of file order, which for a concurrent trace may only
mean that calls on different lanes completed in another order. `lane_order_changes`
keeps the moves that changed the order of calls within a lane (RFC 0004).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, compress, islice, pairwise, repeat
from operator import eq, ge, is_not, ne, sub
from typing import Literal, NamedTuple

from toolreplay.trace.model import Operation, OperationIdentity

__all__ = [
    "AlignedPair",
    "Alignment",
    "align",
    "align_operations",
    "identities",
    "lane_order_changes",
]

PairKind = Literal["exact", "moved", "structural"]
_GapKey = tuple[int, str, str, int]  # (gap between anchors, namespace, name, occurrence)
_Lanes = tuple[str | None, str | None]  # (source lane, target lane)
_LOOKAHEAD = 16
"""How far `_exact_partners` looks ahead on each side after a mismatch."""


@dataclass(frozen=True, slots=True)
class AlignedPair:
    """One row of the alignment: positions in each trace (None when absent)."""

    source: int | None
    target: int | None
    kind: PairKind | None  # None for an unpaired operation


class Alignment(NamedTuple):
    """What `align` finds: the rows as columns, and what `lane_order_changes` needs."""

    sources: list[int | None]
    """Per row, the source position (None for an operation the target added)."""
    targets: list[int | None]
    """Per row, the target position (None for an operation the source lost)."""
    kinds: list[PairKind | None]
    """Per row, how the pair was made (None for an unpaired operation)."""
    anchor_sources: list[int]
    """Source positions of the anchors (the in-order exact pairs), ascending."""
    anchor_targets: list[int]
    """Their partners' target positions, ascending too."""
    moved: list[tuple[int, int, int]]
    """(source position, target position, row) of every `moved` pair, in row order."""


def _longest_increasing(values: Sequence[int]) -> list[range]:
    """Indices (into `values`) of one longest strictly increasing subsequence, as ascending
    runs of consecutive indices.

    Patience sorting with bisect. Where a value tops every tail, the rest of its
    increasing run tops them too and is appended as one slice: the same choice
    the one-by-one loop makes, at the cost of a slice per run.
    """
    count = len(values)
    # A run of increasing values ends where a value is not above the one before it.
    run_starts = [0, *compress(range(1, count), map(ge, values, islice(values, 1, None))), count]
    if len(run_starts) == 2:  # one run (or none): all of it, without the bookkeeping's lists
        return [range(count)] if count else []
    tails: list[int] = []  # values[tail_index[k]] is the smallest tail of a run of k+1
    tail_index: list[int] = []
    previous: list[int] = [-1] * count  # set for indices placed one by one and slice heads
    first = list(range(count))  # the head of the slice an index was appended with
    for start, end in pairwise(run_starts):
        for index in range(start, end):
            value = values[index]
            if not tails or value > tails[-1]:
                previous[index] = tail_index[-1] if tail_index else -1
                first[index:end] = repeat(index, end - index)  # each follows the one before
                tails += values[index:end]
                tail_index += range(index, end)
                break
            slot = bisect_left(tails, value)
            tails[slot] = value
            tail_index[slot] = index
            previous[index] = tail_index[slot - 1] if slot > 0 else -1
    pieces: list[range] = []
    index = tail_index[-1] if tail_index else -1
    while index != -1:
        head = first[index]
        pieces.append(range(head, index + 1))
        index = previous[head]
    pieces.reverse()
    return pieces


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


def _structural_pairs(
    source: Sequence[Operation],
    target: Sequence[Operation],
    unpaired_sources: list[int],
    unpaired_targets: list[int],
    anchor_sources: list[int],
    anchor_targets: list[int],
) -> list[tuple[int, int]]:
    """Phase 2: the unambiguous, non-crossing (namespace, name, occurrence) pairs."""

    # Candidates are keyed by the gap between anchors they sit in: a pair from
    # different gaps would contradict the order the anchors fix.
    def key(gap: int, op: Operation) -> _GapKey:
        return (gap, op.identity.namespace, op.identity.name, op.identity.occurrence)

    source_candidates: dict[_GapKey, list[int]] = {}
    for i in unpaired_sources:
        gap = bisect_right(anchor_sources, i)
        source_candidates.setdefault(key(gap, source[i]), []).append(i)
    target_candidates: dict[_GapKey, list[int]] = {}
    for j in unpaired_targets:
        gap = bisect_right(anchor_targets, j)
        target_candidates.setdefault(key(gap, target[j]), []).append(j)

    by_gap: dict[int, list[tuple[int, int]]] = {}
    for candidate, sources in source_candidates.items():
        targets = target_candidates.get(candidate)
        if len(sources) != 1 or targets is None or len(targets) != 1:
            continue  # ambiguous or absent: leave unpaired
        by_gap.setdefault(candidate[0], []).append((sources[0], targets[0]))
    return [pair for pairs in by_gap.values() for pair in _non_crossing(pairs)]


def _common_run(
    source: list[OperationIdentity], target: list[OperationIdentity], i: int, j: int
) -> int:
    """How many identities from source[i] on equal those from target[j] on, one by one.

    Compared in C a stretch at a time, the stretch doubling while all match.
    """
    if source[i] != target[j]:
        return 0
    run, stretch = 1, 16
    while True:
        equal = list(
            map(eq, source[i + run : i + run + stretch], target[j + run : j + run + stretch])
        )
        if not all(equal):
            return run + equal.index(False)
        run += len(equal)
        if len(equal) < stretch:
            return run
        stretch *= 2


def _exact_partners(
    source_ids: list[OperationIdentity], target_ids: list[OperationIdentity]
) -> tuple[list[int | None], list[int], list[int]]:
    """For each source operation, the position of the target operation with its identity;
    and the positions of the source and of the target operations left without one.

    Identities are unique on each side, so two operations with the same identity face
    each other wherever the traces run alike, which related traces mostly do: those
    runs are found by comparing the two sides in order, and only what is left over is
    looked up by hashing. After a mismatch the walk looks a few operations ahead on
    each side for where the traces agree again; where they hardly agree at all, it
    stops early and leaves the rest to the lookup.
    """
    partners: list[int | None] = [None] * len(source_ids)
    left_sources: list[int] = []
    left_targets: list[int] = []
    give_up = (len(source_ids) + len(target_ids)) // 4 + _LOOKAHEAD
    i = j = 0
    while (
        i < len(source_ids)
        and j < len(target_ids)
        and len(left_sources) + len(left_targets) < give_up
    ):
        run = _common_run(source_ids, target_ids, i, j)
        if run:
            partners[i : i + run] = range(j, j + run)
            i, j = i + run, j + run
            continue
        try:  # inserted in the target?
            found = target_ids.index(source_ids[i], j + 1, j + _LOOKAHEAD)
            left_targets += range(j, found)
            j = found
            continue
        except ValueError:
            pass
        try:  # removed from the source?
            found = source_ids.index(target_ids[j], i + 1, i + _LOOKAHEAD)
            left_sources += range(i, found)
            i = found
            continue
        except ValueError:
            pass
        left_sources.append(i)
        left_targets.append(j)
        i, j = i + 1, j + 1
    left_sources += range(i, len(source_ids))
    left_targets += range(j, len(target_ids))
    if not (left_sources and left_targets):
        return partners, left_sources, left_targets
    get = {target_ids[j]: j for j in left_targets}.get
    for i in left_sources:
        partners[i] = get(source_ids[i])
    matched = {partners[i] for i in left_sources}
    return (
        partners,
        [i for i in left_sources if partners[i] is None],
        [j for j in left_targets if j not in matched],
    )


def _in_order_pairs(
    anchor_sources: list[int], anchor_targets: list[int], structural: list[tuple[int, int]]
) -> tuple[list[int], list[int], list[PairKind]]:
    """The anchors and the structural pairs, monotone in both traces, as three columns."""
    kinds: list[PairKind] = []
    if not structural:
        kinds.extend(repeat("exact", len(anchor_sources)))
        return anchor_sources, anchor_targets, kinds
    sources: list[int] = []
    targets: list[int] = []
    done = 0
    for i, j in sorted(structural):  # few, as a rule: each goes between its anchors
        cut = bisect_left(anchor_sources, i)
        sources += anchor_sources[done:cut]
        sources.append(i)
        targets += anchor_targets[done:cut]
        targets.append(j)
        kinds.extend(repeat("exact", cut - done))
        kinds.append("structural")
        done = cut
    sources += anchor_sources[done:]
    targets += anchor_targets[done:]
    kinds.extend(repeat("exact", len(anchor_sources) - done))
    return sources, targets, kinds


def _breaks(positions: list[int]) -> Iterator[int]:
    """The indices k >= 1 where positions[k] is not positions[k - 1] + 1."""
    steps = map(sub, islice(positions, 1, None), positions)
    return compress(range(1, len(positions)), map(ne, steps, repeat(1)))


def identities(operations: Sequence[Operation]) -> list[OperationIdentity]:
    """The operations' identities, in order: what `align` pairs them by."""
    return [operation.identity for operation in operations]


def align(
    source: Sequence[Operation],
    target: Sequence[Operation],
    known: tuple[list[OperationIdentity], list[OperationIdentity]] | None = None,
) -> Alignment:
    """`align_operations` as three columns, with the anchors and moves `diff()` reuses.

    `known` is `identities()` of each side, for a caller that has them already.
    """
    source_ids, target_ids = known or (identities(source), identities(target))
    partners, unpaired_sources, unpaired_targets = _exact_partners(source_ids, target_ids)
    has_partner = list(map(is_not, partners, repeat(None)))
    exact_sources = list(compress(range(len(partners)), has_partner))
    exact_targets = [j for j in partners if j is not None]
    in_order = _longest_increasing(exact_targets)
    if in_order == [range(len(exact_sources))]:
        anchor_sources, anchor_targets = exact_sources, exact_targets
        moved_at_target: dict[int, int] = {}
    else:
        anchor_sources = list(
            chain.from_iterable(exact_sources[run.start : run.stop] for run in in_order)
        )
        anchor_targets = list(
            chain.from_iterable(exact_targets[run.start : run.stop] for run in in_order)
        )
        # The moved pairs: the exact pairs between the runs.
        ends = [
            0,
            *chain.from_iterable((run.start, run.stop) for run in in_order),
            len(exact_sources),
        ]
        out_of_order = chain.from_iterable(map(range, ends[::2], ends[1::2]))
        moved_at_target = {exact_targets[k]: exact_sources[k] for k in out_of_order}
    moved_sources = set(moved_at_target.values())

    structural = _structural_pairs(
        source, target, unpaired_sources, unpaired_targets, anchor_sources, anchor_targets
    )
    paired_sources, paired_targets, paired_kinds = _in_order_pairs(
        anchor_sources, anchor_targets, structural
    )

    alignment = Alignment([], [], [], anchor_sources, anchor_targets, [])
    sources, targets, kinds, moved = (
        alignment.sources,
        alignment.targets,
        alignment.kinds,
        alignment.moved,
    )

    def between(next_source: int, i: int, next_target: int, j: int) -> None:
        """The rows before in-order pair (i, j): the source's unpaired operations from
        next_source on (its moved ones are shown where the target has them), then the
        target's moved and unpaired ones from next_target on."""
        for s in range(next_source, i):
            if s not in moved_sources:
                sources.append(s)
                targets.append(None)
                kinds.append(None)
        for t in range(next_target, j):
            s = moved_at_target.get(t)
            if s is not None:
                moved.append((s, t, len(sources)))
            sources.append(s)
            targets.append(t)
            kinds.append(None if s is None else "moved")

    # Runs of in-order pairs that follow each other directly in both traces (most of
    # them, in related traces) go in as slices.
    count = len(paired_sources)
    starts = [0, *sorted({*_breaks(paired_sources), *_breaks(paired_targets)}), count]
    last_source = last_target = -1
    for start, end in pairwise(starts if count else []):
        between(last_source + 1, paired_sources[start], last_target + 1, paired_targets[start])
        sources += paired_sources[start:end]
        targets += paired_targets[start:end]
        kinds += paired_kinds[start:end]
        last_source, last_target = paired_sources[end - 1], paired_targets[end - 1]
    between(last_source + 1, len(source), last_target + 1, len(target))
    return alignment


def align_operations(source: Sequence[Operation], target: Sequence[Operation]) -> list[AlignedPair]:
    """Align two operation sequences (each free of duplicate identities) into rows.

    Rows follow both traces' order: each operation appears in exactly one row,
    source-only rows before target-only rows where both are pending, and a
    `moved` pair at the target's position.
    """
    alignment = align(source, target)
    return list(map(AlignedPair, alignment.sources, alignment.targets, alignment.kinds))


def _inverted_moves(
    anchor_sources: list[int], anchor_targets: list[int], moved: list[tuple[int, int, int]]
) -> set[int]:
    """The rows of the `moved` pairs ordered one way in the source and the other way in
    the target against another pair of the list (an anchor or another move).

    Anchors are increasing in both traces, so of those before a move in the source the
    last has the latest target, and of those after it the first has the earliest: those
    two stand for all of them.
    """
    moved = sorted(moved)  # by source position
    later_target_before: list[bool] = []
    running_max = -1
    for _, j, _ in moved:
        later_target_before.append(running_max > j)
        running_max = max(running_max, j)
    changed: set[int] = set()
    running_min: int | None = None
    for index in range(len(moved) - 1, -1, -1):
        i, j, row = moved[index]
        slot = bisect_left(anchor_sources, i)
        if (
            later_target_before[index]
            or (running_min is not None and running_min < j)
            or (slot > 0 and anchor_targets[slot - 1] > j)
            or (slot < len(anchor_targets) and anchor_targets[slot] < j)
        ):
            changed.add(row)
        running_min = j if running_min is None else min(running_min, j)
    return changed


def lane_order_changes(
    source: Sequence[Operation], target: Sequence[Operation], alignment: Alignment
) -> set[int]:
    """The rows of `moved` pairs whose order changed within a lane.

    A lane (a task or a thread) makes one call at a time, in program order;
    the order of calls on different lanes is the scheduler's. A moved pair is a
    real order change when another identity-matched pair that shares its lane
    in the source and shares its lane in the target is ordered one way in the
    source and the other way in the target. Operations without a lane (format
    3) share one lane, so for sequential traces every move counts.
    """
    if not alignment.moved:
        return set()
    if len({op.lane for op in source}) <= 1 and len({op.lane for op in target}) <= 1:
        return _inverted_moves(alignment.anchor_sources, alignment.anchor_targets, alignment.moved)
    moves: dict[_Lanes, list[tuple[int, int, int]]] = {}
    for move in alignment.moved:
        moves.setdefault((source[move[0]].lane, target[move[1]].lane), []).append(move)
    anchors: dict[_Lanes, tuple[list[int], list[int]]] = {lanes: ([], []) for lanes in moves}
    for i, j in zip(alignment.anchor_sources, alignment.anchor_targets, strict=True):
        group = anchors.get((source[i].lane, target[j].lane))
        if group is not None:
            group[0].append(i)
            group[1].append(j)
    changed: set[int] = set()
    for lanes, group_moves in moves.items():
        changed |= _inverted_moves(*anchors[lanes], group_moves)
    return changed
