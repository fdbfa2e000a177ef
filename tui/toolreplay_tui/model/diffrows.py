"""A `toolreplay.DiffReport` as display rows: side by side, a marker per difference type.

Rows are formatted on demand (a diff of 100,000 rows formats only what is on
screen). Stepping between differences uses the sorted list of rows that hold
one, by bisection.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from toolreplay import (
    AlignmentRow,
    AlignmentRows,
    AttemptedCall,
    DiffReport,
    FieldDifference,
    Operation,
    Returned,
    summarize_call,
)
from toolreplay.comparison import DIFFERENCE_TYPES, DifferenceType, describe_trace
from toolreplay.portable import JsonValue, preview

__all__ = [
    "MARKERS",
    "DiffRow",
    "DiffRows",
    "FieldLine",
    "describe_attempted",
    "describe_side",
    "describe_trace",
    "marker_for",
]

MARKERS: dict[DifferenceType, str] = {
    "input_changed": "I",
    "output_changed": "O",
    "status_changed": "S",
    "error_changed": "E",
    "operation_missing": "-",
    "operation_added": "+",
    "order_changed": "M",
}
"""One character per difference type, shown in the row's marker column."""

MARKER_LEGEND = (
    "I input changed  O output changed  S status changed  E error changed  "
    "- missing  + added  M moved"
)


_ORIGIN_TAGS = {"supplied": " [supplied]", "live": " [live]"}
"""How a branch operation's origin is marked when its outcome is not the recording's
(a patched one is marked by its patch id in its own column)."""


def describe_attempted(call: AttemptedCall, width: int = 60) -> str:
    """`review.queue.add attempted, not recorded {"order_id": …}`: where a fork stopped
    (a model call by its last message)."""
    head = f"{call.effect}"
    if call.identity.occurrence:
        head += f" (occ {call.identity.occurrence})"
    head += " attempted, not recorded"
    room = max(width - len(head) - 1, 12)
    summary = summarize_call(call.effect, call.inputs)
    return f"{head} {preview(call.inputs, room) if summary is None else summary.line(room)}"


def marker_for(differences: tuple[DifferenceType, ...]) -> str:
    """The markers of a row's differences in report order, `=` for an identical pair."""
    if not differences:
        return "="
    return "".join(MARKERS[kind] for kind in differences)


def describe_side(operation: Operation | None, width: int = 60) -> str:
    """`#2 llm.refund.decide ok {"decision":"approve"}`, the outcome cut to fit `width`."""
    if operation is None:
        return ""
    outcome = operation.outcome
    head = f"#{operation.logical_id} {operation.effect}"
    if operation.identity.occurrence:
        head += f" (occ {operation.identity.occurrence})"
    head += _ORIGIN_TAGS.get(operation.origin, "")
    room = max(width - len(head) - 7, 12)
    summary = summarize_call(operation.effect, operation.inputs, outcome)
    if summary is not None:  # a model call: its last message and its answer
        return f"{head} {summary.line(room + 4)}"
    if isinstance(outcome, Returned):
        return f"{head} ok {preview(outcome.value, room)}"
    message = f"{outcome.error_type.rpartition('.')[2]}: {outcome.message}"
    if len(message) > room:
        message = message[: room - 3] + "..."
    return f"{head} error {message}"


def _field_side(
    operation: Operation | None, path: str, value: JsonValue, present: bool, width: int
) -> str:
    """`#2 llm.refund.decide "approve" at $.output.decision`: the value before its path.

    The value gets the room first; a path that does not fit loses its beginning.
    """
    assert operation is not None
    head = f"#{operation.logical_id} {operation.effect}"
    if operation.identity.occurrence:
        head += f" (occ {operation.identity.occurrence})"
    head += _ORIGIN_TAGS.get(operation.origin, "")
    shown = _shown(value, present, max(min(width - len(head) - 10, 40), 12))
    room = width - len(head) - len(shown) - 5
    if len(path) > room:
        path = "…" + path[len(path) - max(room - 1, 4) :]
    return f"{head} {shown} at {path}"


@dataclass(frozen=True, slots=True)
class DiffRow:
    """What one line of the side-by-side view shows."""

    index: int
    status: str
    match: str | None
    marker: str
    left: str
    right: str
    patch_id: str | None
    differs: bool


def _shown(value: JsonValue, present: bool, width: int) -> str:
    return preview(value, width) if present else "(absent)"


@dataclass(frozen=True, slots=True)
class FieldLine:
    """One field difference of the selected row: the JSON path and both values."""

    path: str
    source: str
    target: str

    @classmethod
    def of(cls, field: FieldDifference, width: int = 60) -> FieldLine:
        return cls(
            field.path,
            _shown(field.source, field.source_present, width),
            _shown(field.target, field.target_present, width),
        )


class DiffRows:
    """The rows of a diff report, the first divergence, and stepping between differences."""

    def __init__(self, report: DiffReport) -> None:
        self.report = report
        self._rows: AlignmentRows = report.rows
        self.difference_rows: list[int] = sorted({d.row for d in report.differences})
        first = report.first_divergence
        self.first_divergence: int | None = None if first is None else first.row

    def __len__(self) -> int:
        return len(self._rows)

    def alignment(self, index: int) -> AlignmentRow:
        return self._rows[index]

    def row(self, index: int, width: int = 60) -> DiffRow:
        """The row's two sides; a changed pair shows its first differing field on each."""
        aligned = self._rows[index]
        first = aligned.fields[0] if aligned.fields and aligned.source and aligned.target else None
        if first is not None and first.path != "$.status":
            left = _field_side(
                aligned.source, first.path, first.source, first.source_present, width
            )
            right = _field_side(
                aligned.target, first.path, first.target, first.target_present, width
            )
        else:
            left = describe_side(aligned.source, width)
            right = describe_side(aligned.target, width)
        if aligned.attempted is not None:
            right = describe_attempted(aligned.attempted, width)
        return DiffRow(
            index=aligned.index,
            status=aligned.status,
            match=aligned.match,
            marker=marker_for(aligned.differences),
            left=left,
            right=right,
            patch_id=aligned.patch_id,
            differs=bool(aligned.differences),
        )

    def next_difference(self, index: int, *, forward: bool = True) -> int | None:
        """The next (previous) row after (before) `index` holding a difference, or None."""
        rows = self.difference_rows
        if forward:
            found = bisect_right(rows, index)
            return rows[found] if found < len(rows) else None
        found = bisect_left(rows, index) - 1
        return rows[found] if found >= 0 else None

    def difference_number(self, index: int) -> int | None:
        """1-based number of the difference row `index` among all rows with differences."""
        found = bisect_left(self.difference_rows, index)
        if found < len(self.difference_rows) and self.difference_rows[found] == index:
            return found + 1
        return None

    def fields(self, index: int, width: int = 60) -> list[FieldLine]:
        return [FieldLine.of(field, width) for field in self._rows[index].fields]

    def attribution(self, index: int) -> str | None:
        """What the row's patch did, when the branch's lineage proves one set it."""
        aligned = self._rows[index]
        if aligned.attempted is not None:
            return (
                "the fork stopped at this call: the recording never made it and no patch "
                "supplied it (f after supplying its outcome runs past it)"
            )
        stood = (
            ""
            if aligned.source is None
            else f"; it stands where the recording's #{aligned.source.logical_id} stood, "
            "which the fork never called"
        )
        if aligned.target is not None and aligned.target.origin == "live":
            return (
                "this call ran live in the fork (fork --live); its outcome is not recorded" + stood
            )
        if aligned.patch_id is None:
            return None
        if aligned.target is not None and aligned.target.origin == "supplied":
            return (
                f"the recording never made this call; its outcome was supplied by patch "
                f"{aligned.patch_id}" + stood
            )
        if any(
            kind in ("output_changed", "status_changed", "error_changed")
            for kind in aligned.differences
        ):
            return (
                f"the target's outcome here was set by patch {aligned.patch_id}; nothing after "
                "it is attributed to the patch"
            )
        return f"patch {aligned.patch_id} was applied here and gave the recorded value"

    def summary(self) -> str:
        """`2 differences (output_changed 1, operation_added 1)` or `no observable difference`."""
        if self.report.identical:
            return f"no observable difference in {len(self._rows)} rows"
        counts = self.report.counts()
        shown = ", ".join(f"{kind} {counts[kind]}" for kind in DIFFERENCE_TYPES if counts[kind])
        total = len(self.report.differences)
        noun = "difference" if total == 1 else "differences"
        return f"{total} {noun} ({shown})"

    def row_description(self, index: int) -> str:
        """`row 2: output_changed, input_changed (exact match)`."""
        aligned = self._rows[index]
        kinds = ", ".join(aligned.differences) or "same"
        how = f" ({aligned.match} match)" if aligned.match else ""
        return f"row {aligned.index}: {kinds}{how}"
