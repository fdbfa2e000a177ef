"""The diff report: aligned rows, typed differences, and the first divergence.

A report answers one narrow question: where do two recorded executions first
differ, observably? It compares only what the traces hold (each effect call's
identity, inputs and outcome) and claims no cause. The one attribution it makes
is the one the branch's lineage proves: an operation whose output came from a
patch.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args, overload

from toolreplay.bulk import Thawed, collection_paused
from toolreplay.comparison.alignment import PairKind
from toolreplay.portable import JsonValue, ValueDifference, same_value, value_differences
from toolreplay.terminal import terminal_safe
from toolreplay.trace.model import AttemptedCall, Operation, Raised, Returned
from toolreplay.trace.reader import Trace

__all__ = [
    "DIFFERENCE_TYPES",
    "DIFF_FORMAT_VERSION",
    "AlignmentRow",
    "AlignmentRows",
    "DiffReport",
    "Difference",
    "DifferenceType",
    "FieldDifference",
    "attributed_patch",
    "compare_pair",
    "describe_trace",
    "new_alignment_row",
    "same_output",
]

DIFF_FORMAT_VERSION = 2

DifferenceType = Literal[
    "input_changed",
    "output_changed",
    "status_changed",
    "error_changed",
    "operation_missing",
    "operation_added",
    "order_changed",
]
DIFFERENCE_TYPES: tuple[DifferenceType, ...] = get_args(DifferenceType)
"""Every difference type, in the order reports list them."""
RowStatus = Literal["same", "changed", "missing", "added"]


@dataclass(frozen=True, slots=True)
class FieldDifference:
    """A value that differs inside a pair of operations, by JSON path.

    Paths are rooted at the operation: `$.inputs.amount`, `$.output.decision`,
    `$.error.message`, `$.status`. A side where the path does not exist has
    `*_present` False (and None as its value).
    """

    path: str
    source: JsonValue
    target: JsonValue
    source_present: bool = True
    target_present: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "source": self.source,
            "target": self.target,
            "source_present": self.source_present,
            "target_present": self.target_present,
        }

    def describe(self) -> str:
        """`$.output.decision: source "approve", target "manual_review"`, values cut to 80."""
        return ValueDifference(
            self.path, self.source, self.target, self.source_present, self.target_present
        ).describe("source", "target")


@dataclass(frozen=True, slots=True)
class AlignmentRow:
    """One row of the side-by-side alignment.

    `match` says how the pair was made (`exact` identity, `moved` exact identity
    in a different relative order, `structural` same effect and occurrence with
    other inputs), None for an operation present on one side only. `attempted`
    is set on the last row of a branch that stopped at a call nothing could
    answer: an added row with no target operation (attempted, not recorded).
    """

    index: int
    source: Operation | None
    target: Operation | None
    status: RowStatus
    match: PairKind | None
    differences: tuple[DifferenceType, ...]
    fields: tuple[FieldDifference, ...]
    patch_id: str | None
    attempted: AttemptedCall | None = None


class _NewAlignmentRow(Thawed, AlignmentRow):
    __slots__ = ()

    def __init__(
        self,
        index: int,
        source: Operation | None,
        target: Operation | None,
        status: RowStatus,
        match: PairKind | None,
        differences: tuple[DifferenceType, ...],
        fields: tuple[FieldDifference, ...],
        patch_id: str | None,
        attempted: AttemptedCall | None = None,
    ) -> None:
        this: Any = self  # pyright knows the fields as frozen: `Thawed` makes them settable
        this.index = index
        this.source = source
        this.target = target
        this.status = status
        this.match = match
        this.differences = differences
        this.fields = fields
        this.patch_id = patch_id
        this.attempted = attempted
        this.__class__ = AlignmentRow


new_alignment_row: type[AlignmentRow] = _NewAlignmentRow
"""`AlignmentRow(...)` at a third of the cost: a report holds a row per operation (see
`toolreplay.bulk.Thawed`)."""


class AlignmentRows(Sequence[AlignmentRow]):
    """A report's rows in alignment order (`DiffReport.rows`), each made when it is read.

    Nearly every row of a large report says only that two operations agree. Those rows
    are kept as three columns (the source operation, the target operation and how they
    were paired) and become `AlignmentRow`s on access; the others (a difference,
    an operation on one side only, the call a branch stopped at) are kept as made.
    Reading a row twice gives two equal rows, not one object.
    """

    __slots__ = (
        "_forked_from_source",
        "_kept",
        "_kinds",
        "_sources",
        "_targets",
    )

    def __init__(
        self,
        columns: tuple[list[Operation | None], list[Operation | None], list[PairKind | None]],
        kept: dict[int, AlignmentRow],
        *,
        forked_from_source: bool,
    ) -> None:
        """Row k is `kept[k]` where there is one, else the agreeing pair of the k-th
        source operation, target operation and pair kind of `columns`. For a kept row,
        the columns hold anything (None, as a rule)."""
        self._sources, self._targets, self._kinds = columns
        self._kept = kept
        self._forked_from_source = forked_from_source

    def __len__(self) -> int:
        return len(self._kinds)

    @overload
    def __getitem__(self, index: int) -> AlignmentRow: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[AlignmentRow, ...]: ...

    def __getitem__(self, index: int | slice) -> AlignmentRow | tuple[AlignmentRow, ...]:
        if isinstance(index, slice):
            return tuple(map(self._row, range(len(self))[index]))
        index, count = operator.index(index), len(self)
        if not -count <= index < count:
            raise IndexError(f"row {index} of a report of {count} rows")
        return self._row(index % count)

    def __iter__(self) -> Iterator[AlignmentRow]:
        return map(self._row, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AlignmentRows):
            return NotImplemented
        return len(self) == len(other) and all(map(operator.eq, self, other))

    def __repr__(self) -> str:
        return f"<AlignmentRows: {len(self)} rows>"

    def _row(self, index: int) -> AlignmentRow:
        row = self._kept.get(index)
        if row is not None:
            return row
        left, right = self._sources[index], self._targets[index]
        assert left is not None  # a row not kept pairs two operations
        assert right is not None
        patch_id = attributed_patch(left, right) if self._forked_from_source else None
        return new_alignment_row(index, left, right, "same", self._kinds[index], (), (), patch_id)

    def to_dicts(self) -> list[dict[str, Any]]:
        """The rows as `DiffReport.to_dict()` lists them, without making the agreeing ones."""
        kept, forked = self._kept, self._forked_from_source
        dicts: list[dict[str, Any]] = []
        for index, (left, right, match) in enumerate(
            zip(self._sources, self._targets, self._kinds, strict=True)
        ):
            row = kept.get(index)
            if row is None:
                assert left is not None
                assert right is not None
                # An agreeing pair has one identity and one status: read once, for both.
                namespace, name, fingerprint, occurrence = left.identity
                effect, outcome = f"{namespace}.{name}", left.outcome.status
                source_ref = _reference(left, effect, occurrence, fingerprint, outcome)
                target_ref = _reference(right, effect, occurrence, fingerprint, outcome)
                status, differences, attempted = "same", [], False
                patch_id = attributed_patch(left, right) if forked else None
            else:
                source_ref = _operation_ref(row.source)
                target_ref = _operation_ref(row.target, row.attempted)
                status, match, differences, patch_id = (
                    row.status,
                    row.match,
                    list(row.differences),
                    row.patch_id,
                )
                attempted = row.attempted is not None
            dicts.append(
                {
                    "row": index,
                    "status": status,
                    "match": match,
                    "source": source_ref,
                    "target": target_ref,
                    "differences": differences,
                    "patch_id": patch_id,
                    "attempted": attempted,
                }
            )
        return dicts


@dataclass(frozen=True, slots=True)
class Difference:
    """One observable difference, at one row.

    `patch_id` is set only when the target operation's lineage proves its
    outcome came from that patch, and only on the outcome differences of that
    operation: a patch is never credited with what happened after it. An
    added call whose outcome a supply patch gave is marked by its target's
    `origin` (`supplied`, with the patch id), not credited: making the call
    was the application's doing. `attempted` is the call a branch stopped at
    (an `operation_added` with no target operation).
    """

    type: DifferenceType
    row: int
    source: Operation | None
    target: Operation | None
    fields: tuple[FieldDifference, ...]
    patch_id: str | None
    attempted: AttemptedCall | None = None

    @property
    def effect(self) -> str:
        operation = self.target or self.source or self.attempted
        assert operation is not None
        return operation.effect

    @property
    def occurrence(self) -> int:
        operation = self.target or self.source or self.attempted
        assert operation is not None
        return operation.identity.occurrence

    def describe(self) -> str:
        target = "attempted, not recorded" if self.attempted else f"#{_id(self.target)}"
        where = f"source #{_id(self.source)}, target {target}"
        text = f"{self.type} at {self.effect} occurrence {self.occurrence} ({where})"
        origin = _origin_note(self.target)
        if self.patch_id is not None and not origin:  # a supplied one says so in its note
            text += f", from patch {self.patch_id}"
        if origin:
            text += f", {origin}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "row": self.row,
            "effect": self.effect,
            "occurrence": self.occurrence,
            "source": _operation_ref(self.source),
            "target": _operation_ref(self.target, self.attempted),
            "fields": [field.to_dict() for field in self.fields],
            "patch_id": self.patch_id,
            "attempted": self.attempted is not None,
        }


def _id(operation: Operation | None) -> str:
    return "-" if operation is None else str(operation.logical_id)


def _origin_note(operation: Operation | None) -> str:
    """How a branch operation got its outcome, when not from the recording."""
    if operation is None:
        return ""
    if operation.origin == "supplied":
        return f"outcome supplied by patch {operation.patch_id}"
    if operation.origin == "live":
        return "ran live"
    return ""


def _operation_ref(
    operation: Operation | None, attempted: AttemptedCall | None = None
) -> dict[str, Any] | None:
    if operation is None:
        return None if attempted is None else _attempted_ref(attempted)
    # A report has a reference per operation: the effect is spelt out here rather than
    # through two properties (`Operation.effect`, `OperationIdentity.effect`).
    namespace, name, fingerprint, occurrence = operation.identity
    effect = f"{namespace}.{name}"
    return _reference(operation, effect, occurrence, fingerprint, operation.outcome.status)


def _reference(
    operation: Operation, effect: str, occurrence: int, fingerprint: str, status: str
) -> dict[str, Any]:
    """`_operation_ref`, given what the operation shares with an agreeing partner."""
    return {
        "logical_id": operation.logical_id,
        "effect": effect,
        "occurrence": occurrence,
        "fingerprint": fingerprint,
        "status": status,
        "origin": operation.origin,
        "patch_id": operation.patch_id,
        "source_logical_operation_id": operation.source_logical_operation_id,
    }


def _attempted_ref(attempted: AttemptedCall) -> dict[str, Any]:
    identity = attempted.identity
    return {
        "logical_id": None,
        "effect": identity.effect,
        "occurrence": identity.occurrence,
        "fingerprint": identity.fingerprint,
        "status": "attempted",
        "origin": None,
        "patch_id": None,
        "source_logical_operation_id": None,
    }


def _ending(trace: Trace) -> dict[str, Any] | None:
    """How the session that wrote the trace ended; None for an incomplete trace."""
    footer = trace.footer
    if footer is None:
        return None
    return {"status": footer.ending.status, "error_type": footer.ending.error_type}


def _trace_ref(trace: Trace, label: str) -> dict[str, Any]:
    return {
        "path": label,
        "trace_id": trace.header.trace_id,
        "mode": trace.header.mode,
        "operation_count": len(trace),
        "complete": trace.complete,
        "ending": _ending(trace),
    }


def describe_trace(trace: Trace, label: str) -> str:
    """`<label> (<mode>, <n> operations, complete|incomplete[, ended with <error type>])`."""
    state = "complete" if trace.complete else "incomplete"
    footer = trace.footer
    if footer is not None and footer.ending.status == "raised":
        state += f", ended with {footer.ending.error_type}"
    return f"{label} ({trace.header.mode}, {len(trace)} operations, {state})"


@dataclass(frozen=True)
class DiffReport:
    """What `toolreplay.diff()` returns. `to_dict()` is deterministic JSON."""

    source: Trace
    target: Trace
    source_label: str
    target_label: str
    rows: AlignmentRows
    differences: tuple[Difference, ...]

    @property
    def first_divergence(self) -> Difference | None:
        """The first observable difference in alignment order, or None if there is none."""
        return self.differences[0] if self.differences else None

    @property
    def identical(self) -> bool:
        return not self.differences

    def counts(self) -> dict[DifferenceType, int]:
        counts: dict[DifferenceType, int] = dict.fromkeys(DIFFERENCE_TYPES, 0)
        for difference in self.differences:
            counts[difference.type] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        with collection_paused():  # three dictionaries per row, none in a cycle
            return self._as_dict()

    def _as_dict(self) -> dict[str, Any]:
        first = self.first_divergence
        return {
            "format_version": DIFF_FORMAT_VERSION,
            "source": _trace_ref(self.source, self.source_label),
            "target": _trace_ref(self.target, self.target_label),
            "identical": self.identical,
            "counts": self.counts(),
            "first_divergence": None if first is None else first.to_dict(),
            "differences": [difference.to_dict() for difference in self.differences],
            "rows": self.rows.to_dicts(),
        }

    def render_text(self) -> str:
        """The deterministic text form (what `toolreplay diff` prints).

        Each line below is built from fields of the traces (their file names, effects,
        error types, patch ids); each is one line whatever those hold: a field's
        newlines and tabs are written as escapes (`terminal_safe`), so no trace can
        start a line of its own in the report.
        """
        one = terminal_safe
        lines = [
            f"source  {one(describe_trace(self.source, self.source_label))}",
            f"target  {one(describe_trace(self.target, self.target_label))}",
        ]
        if self.identical:
            lines.append(
                f"no observable difference: both traces hold the same {len(self.rows)} "
                "operations, with the same inputs and outcomes, in the same order"
            )
            return "\n".join(lines) + "\n"
        counts = ", ".join(f"{kind} {count}" for kind, count in self.counts().items() if count)
        noun = "difference" if len(self.differences) == 1 else "differences"
        lines.append(f"{len(self.differences)} {noun} ({counts})")
        first = self.first_divergence
        assert first is not None
        lines += ["", f"first observable divergence, row {first.row}: {one(first.describe())}"]
        lines += [f"  {one(field.describe())}" for field in first.fields]
        if first.patch_id is not None:
            lines.append(
                f"  the target's outcome here was set by patch {one(first.patch_id)}; the "
                "report attributes nothing after it"
            )
        lines += ["", "differences:"]
        for difference in self.differences:
            lines.append(f"  row {difference.row}: {one(difference.describe())}")
            lines += [f"    {one(field.describe())}" for field in difference.fields]
        return "\n".join(lines) + "\n"


# --- comparing one pair ---------------------------------------------------------------


def _rooted(differences: list[ValueDifference], root: str) -> list[FieldDifference]:
    return [
        FieldDifference(root + d.path[1:], d.left, d.right, d.left_present, d.right_present)
        for d in differences
    ]


def same_output(left: JsonValue, right: JsonValue) -> bool:
    """`same_value(left, right)`, quick for the usual case: two paired outputs that agree.

    `same_value` implies `==`, which C settles: unequal values differ. Equal ones are the
    same when `_types_agree`; where it cannot tell, `same_value` decides.
    """
    return left == right and (_types_agree(left, right) or same_value(left, right))


def _types_agree(left: JsonValue, right: JsonValue) -> bool:
    """For two values known to be `==`: True when each member has its partner's type
    (`==` equates 1, 1.0 and True) and no float is a zero (`==` ignores its sign) or a
    NaN (one NaN object equals itself inside a container); False when unsure."""
    kind = type(left)
    if kind is dict:
        others = cast("dict[str, JsonValue]", right)
        for key, item in cast("dict[str, JsonValue]", left).items():
            # A string or None equals nothing of another kind: most members of a usual
            # tool result, settled without a call or a look at the other side.
            if type(item) is str or item is None:
                continue
            if not _types_agree(item, others[key]):
                return False
        return True
    if kind is list:
        return all(map(_types_agree, cast("list[JsonValue]", left), cast("list[JsonValue]", right)))
    return kind is type(right) and (kind is not float or not (left == 0.0 or left != left))


def compare_pair(
    source: Operation, target: Operation, *, target_forked_from_source: bool
) -> tuple[list[tuple[DifferenceType, list[FieldDifference]]], str | None]:
    """The typed differences between two paired operations, and the attributed patch.

    A patch is attributed only when the target trace was forked from this very
    source trace and the target operation's lineage proves the patch wrote its
    outcome: a patched operation that names this source operation, or a
    supplied one (a new call paired with the source call it stands in for).
    """
    found: list[tuple[DifferenceType, list[FieldDifference]]] = []
    if source.identity.fingerprint != target.identity.fingerprint:
        found.append(
            ("input_changed", _rooted(value_differences(source.inputs, target.inputs), "$.inputs"))
        )
    left, right = source.outcome, target.outcome
    if isinstance(left, Returned) and isinstance(right, Returned):
        if not same_output(left.value, right.value):
            found.append(
                ("output_changed", _rooted(value_differences(left.value, right.value), "$.output"))
            )
    elif isinstance(left, Raised) and isinstance(right, Raised):
        errors = left.to_dict(), right.to_dict()
        fields = [] if same_output(*errors) else _rooted(value_differences(*errors), "$.error")
        if fields:
            found.append(("error_changed", fields))
    else:
        fields = [FieldDifference("$.status", left.status, right.status)]
        fields += _outcome_presence(left, "source") + _outcome_presence(right, "target")
        found.append(("status_changed", fields))
    return found, attributed_patch(source, target) if target_forked_from_source else None


def attributed_patch(source: Operation, target: Operation) -> str | None:
    """The patch that wrote the outcome of `target`, paired with `source` in a branch
    forked from the trace that holds `source`, as the target's lineage proves it."""
    if target.patch_id is None:
        return None
    if target.origin == "patched" and target.source_logical_operation_id == source.logical_id:
        return target.patch_id
    if target.origin == "supplied":
        # A new call standing where this source call stood: its outcome is the supply
        # patch's (lineage proves it); the call and its inputs are the application's.
        return target.patch_id
    return None


def _outcome_presence(
    outcome: Returned | Raised, side: Literal["source", "target"]
) -> list[FieldDifference]:
    path, value = (
        ("$.output", outcome.value)
        if isinstance(outcome, Returned)
        else ("$.error", outcome.to_dict())
    )
    if side == "source":
        return [FieldDifference(path, value, None, True, False)]
    return [FieldDifference(path, None, value, False, True)]
