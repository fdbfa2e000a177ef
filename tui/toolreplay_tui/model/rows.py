"""The operation list: one display row per operation, a filter, and match stepping.

Rows are computed on demand (`row(position)`), so a list of 100,000 operations
costs nothing until a row is on screen; the filter is the only pass over every
operation, and its search text is cached per operation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Literal

from toolreplay import Operation, OperationIdentity, Raised, Returned
from toolreplay.portable import preview

__all__ = [
    "EFFECT_PREFIX",
    "TIMELINE_RADIUS",
    "Marker",
    "OperationRow",
    "OperationRows",
    "marker_of",
    "matches",
    "timeline_bar",
]

Marker = Literal["recorded", "patched", "pending"]
"""Where the row's outcome comes from: the recording, a patch in this (branch) trace,
or a patch pending in the debugger that the next fork will apply."""

EFFECT_PREFIX = "effect:"
"""A query starting with this matches effect names only (`effect:crm.`)."""

TIMELINE_RADIUS = 8
"""The timeline shows the visible rows this many positions around the cursor."""

_SPAN, _IDLE = "━", "·"


@dataclass(frozen=True, slots=True)
class OperationRow:
    """What the operation list shows for one operation."""

    index: int  # position in the trace's operations
    logical_id: int
    effect: str
    occurrence: int
    status: Literal["ok", "error"]
    marker: Marker
    preview: str
    lane: str | None = None


def timeline_bar(operation: Operation, window: tuple[int, int], width: int) -> str:
    """`operation`'s start-to-end span drawn in `width` cells over the time `window`.

    `━` where the call was in flight, `·` elsewhere; at least one `━` cell, so an
    instantaneous call still shows where it happened. Blank without timing.
    """
    start, end = operation.start_ns, operation.end_ns
    if start is None or end is None or width <= 0:
        return " " * max(width, 0)
    first, last = window
    span = max(last - first, 1)
    begin = min(width - 1, max(0, (start - first) * width // span))
    finish = min(width, max(begin + 1, -(-(end - first) * width // span)))
    return _IDLE * begin + _SPAN * (finish - begin) + _IDLE * (width - finish)


def marker_of(operation: Operation, pending: Container[OperationIdentity]) -> Marker:
    if operation.identity in pending:
        return "pending"
    return "patched" if operation.origin == "patched" else "recorded"


def _search_text(operation: Operation) -> str:
    outcome = operation.outcome
    if isinstance(outcome, Returned):
        result = json.dumps(outcome.value, ensure_ascii=False, sort_keys=True)
    else:
        result = f"{outcome.error_type} {outcome.message}"
    inputs = json.dumps(operation.inputs, ensure_ascii=False, sort_keys=True)
    return f"{operation.effect}\n{inputs}\n{result}".lower()


def matches(operation: Operation, query: str, text: Callable[[], str] | None = None) -> bool:
    """Does `operation` match `query` (case-insensitive)?

    `effect:NAME` matches effect names containing NAME; any other query matches
    the effect name, the inputs or the outcome as JSON text.
    """
    wanted = query.strip().lower()
    if not wanted:
        return True
    if wanted.startswith(EFFECT_PREFIX):
        return wanted[len(EFFECT_PREFIX) :].strip() in operation.effect.lower()
    if wanted in operation.effect.lower():
        return True
    return wanted in (text() if text is not None else _search_text(operation))


class OperationRows:
    """The rows of a trace's operations, optionally narrowed by a filter.

    Positions (`row(position)`, `len()`) are in the visible, filtered list;
    `index_at(position)` maps one back to the operation's index in the trace.
    """

    def __init__(self, operations: Sequence[Operation], preview_width: int = 60) -> None:
        self.operations = operations
        self.preview_width = preview_width
        self.query = ""
        self.last_query = ""
        self._visible: Sequence[int] = range(len(operations))
        self._texts: list[str | None] = []
        self.lanes: tuple[str, ...] = tuple(dict.fromkeys(op.lane for op in operations if op.lane))
        """The lanes the operations ran on; the list shows them when there are several."""

    def __len__(self) -> int:
        return len(self._visible)

    @property
    def filtered(self) -> bool:
        return bool(self.query)

    def index_at(self, position: int) -> int:
        return self._visible[position]

    def nearest_position(self, index: int) -> int:
        """The visible position at or after trace index `index` (the last one if none)."""
        from bisect import bisect_left

        if not self._visible:
            return 0
        found = bisect_left(self._visible, index)
        return min(found, len(self._visible) - 1)

    def operation_at(self, position: int) -> Operation:
        return self.operations[self.index_at(position)]

    def row(self, position: int, pending: Container[OperationIdentity] = ()) -> OperationRow:
        index = self._visible[position]
        operation = self.operations[index]
        outcome = operation.outcome
        return OperationRow(
            index=index,
            logical_id=operation.logical_id,
            effect=operation.effect,
            occurrence=operation.identity.occurrence,
            status="error" if isinstance(outcome, Raised) else "ok",
            marker=marker_of(operation, pending),
            preview=preview(operation.inputs, self.preview_width),
            lane=operation.lane,
        )

    @property
    def concurrent(self) -> bool:
        """Whether the trace ran on more than one lane (tasks or threads)."""
        return len(self.lanes) > 1

    def neighbourhood(self, cursor: int) -> range:
        """The visible positions the timeline covers around the cursor's position."""
        return range(max(0, cursor - TIMELINE_RADIUS), min(len(self), cursor + TIMELINE_RADIUS + 1))

    def timeline_window(self, cursor: int) -> tuple[int, int] | None:
        """The time span (ns) of the cursor's neighbourhood, None when nothing there is timed."""
        starts: list[int] = []
        ends: list[int] = []
        for position in self.neighbourhood(cursor):
            operation = self.operation_at(position)
            if operation.start_ns is not None and operation.end_ns is not None:
                starts.append(operation.start_ns)
                ends.append(operation.end_ns)
        return (min(starts), max(ends)) if starts else None

    def timeline(self, position: int, cursor: int, width: int) -> str:
        """The timeline cell of the row at `position`; blank outside the neighbourhood."""
        window = self.timeline_window(cursor)
        if window is None or position not in self.neighbourhood(cursor):
            return " " * width
        return timeline_bar(self.operation_at(position), window, width)

    def _text(self, index: int) -> str:
        if not self._texts:
            self._texts = [None] * len(self.operations)
        text = self._texts[index]
        if text is None:
            text = self._texts[index] = _search_text(self.operations[index])
        return text

    def compute_filter(self, query: str) -> list[int]:
        """The trace indices matching `query` (every one for an empty query).

        Pure and slow-ish on big traces (one pass): call it off the event loop,
        then `apply_filter` the result.
        """
        if not query.strip():
            return list(range(len(self.operations)))
        return [
            index
            for index, operation in enumerate(self.operations)
            if matches(operation, query, lambda index=index: self._text(index))
        ]

    def apply_filter(self, query: str, indices: Sequence[int] | None = None) -> int:
        """Show only the operations matching `query`; returns how many match."""
        if not query.strip():
            self.clear_filter()
            return len(self.operations)
        self.query = self.last_query = query.strip()
        self._visible = list(indices) if indices is not None else self.compute_filter(query)
        return len(self._visible)

    def clear_filter(self) -> None:
        self.query = ""
        self._visible = range(len(self.operations))

    def step(self, position: int, *, forward: bool = True) -> int | None:
        """The visible position of the next (or previous) match from `position`, wrapping.

        With a filter applied every visible row is a match, so this moves one row.
        Without one, it searches the whole list for the last query used (so a
        filter cleared with escape can still be stepped through in context).
        None when nothing matches.
        """
        count = len(self._visible)
        if count == 0:
            return None
        if not 0 <= position < count:
            position = -1 if forward else count
        if self.filtered or not self.last_query:
            if not self.last_query:
                return None
            return (position + (1 if forward else -1)) % count
        return self.find_match(position, forward=forward)

    def find_match(self, index: int, *, forward: bool = True) -> int | None:
        """The trace index of the next (previous) operation matching the last query."""
        total = len(self.operations)
        if not self.last_query or total == 0:
            return None
        direction = 1 if forward else -1
        for offset in range(1, total + 1):
            candidate = (index + direction * offset) % total
            if matches(
                self.operations[candidate],
                self.last_query,
                lambda candidate=candidate: self._text(candidate),
            ):
                return candidate
        return None
