"""The operation list: one display row per operation, a filter, and match stepping.

Rows are decoded on demand (`row(position)`) from a `TraceFile`, so a list of a
million operations costs what the rows on screen cost. The filter's matches come
from `search.scan_matches`, streamed: `start_filter` shows an empty, growing
list that a background scan extends (`add_matches`), `finish_filter` marks it
complete; `apply_filter` does all three at once.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Literal

from toolreplay import Operation, OperationIdentity, Raised, TraceFormatError, summarize_call
from toolreplay.portable import preview
from toolreplay_tui.model.search import first_match, scan_matches
from toolreplay_tui.model.trace_file import LargeLine, LargeOutput, TraceFile

__all__ = [
    "TIMELINE_RADIUS",
    "Marker",
    "OperationRow",
    "OperationRows",
    "call_preview",
    "marker_of",
    "megabytes",
    "timeline_bar",
]

Marker = Literal["recorded", "patched", "supplied", "live", "pending"]
"""Where the row's outcome comes from: the recording; in a branch trace, a patch of a
recorded call, a patch answering a call the source never made, or a live call; or a
patch pending in the debugger that the next fork will apply."""

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


def timeline_bar(operation: Operation | LargeOutput, window: tuple[int, int], width: int) -> str:
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


def megabytes(size: int) -> str:
    """`52.4 MB`: a size as the debugger shows it."""
    return f"{size / 1e6:,.1f} MB"


def call_preview(operation: Operation, width: int, room: int | None = None) -> str:
    """A row's preview: a model call's last message and its answer (`summarize_call`) in
    `room` cells (default `width`), any other call's inputs as JSON cut at `width`."""
    summary = summarize_call(operation.effect, operation.inputs, operation.outcome)
    if summary is None:
        return preview(operation.inputs, width)
    return summary.line(room or width)


def marker_of(operation: Operation | LargeOutput, pending: Container[OperationIdentity]) -> Marker:
    if operation.identity in pending:
        return "pending"
    origin = operation.origin
    return origin if origin in ("patched", "supplied", "live") else "recorded"


class OperationRows:
    """The rows of a trace's operations, optionally narrowed by a filter.

    Positions (`row(position)`, `len()`) are in the visible, filtered list;
    `index_at(position)` maps one back to the operation's index in the trace.
    Unfiltered, the list grows with the trace's index.
    """

    def __init__(self, trace: TraceFile, preview_width: int = 60) -> None:
        self.trace = trace
        self.operations: Sequence[Operation] = trace.operations
        self.preview_width = preview_width
        self.query = ""
        self.last_query = ""
        self.scanning = False
        """Whether a filter's scan is still adding matches."""
        self._matches: array[int] | None = None

    @property
    def lanes(self) -> tuple[str, ...]:
        """The lanes the operations ran on (found while indexing); the list shows them
        when there are several."""
        return self.trace.lanes

    def __len__(self) -> int:
        return len(self.operations) if self._matches is None else len(self._matches)

    @property
    def filtered(self) -> bool:
        return bool(self.query)

    def index_at(self, position: int) -> int:
        return position if self._matches is None else self._matches[position]

    def nearest_position(self, index: int) -> int:
        """The visible position at or after trace index `index` (the last one if none)."""
        count = len(self)
        if not count:
            return 0
        if self._matches is None:
            return min(index, count - 1)
        return min(bisect_left(self._matches, index), count - 1)

    def operation_at(self, position: int) -> Operation:
        """The operation at visible `position` (raises `TraceFormatError` for a line
        that does not decode)."""
        return self.operations[self.index_at(position)]

    def row(
        self,
        position: int,
        pending: Container[OperationIdentity] = (),
        *,
        preview_width: int | None = None,
    ) -> OperationRow:
        """The row at `position`. A model call's preview fits `preview_width` cells (the
        room the list has left; default the list's `preview_width`); other calls show
        their inputs up to the list's `preview_width`, which the list cuts to its room."""
        index = self.index_at(position)
        entry = self.trace.entry(index)
        if isinstance(entry, TraceFormatError):
            return OperationRow(index, index, "(unreadable)", 0, "error", "recorded", str(entry))
        if isinstance(entry, LargeLine):
            size = f"(a {megabytes(entry.size)} line, shown raw: v)"
            return OperationRow(
                index, index, entry.effect or "(large line)", 0, "ok", "recorded", size
            )
        status = (
            "error" if isinstance(entry, Operation) and isinstance(entry.outcome, Raised) else "ok"
        )
        return OperationRow(
            index=index,
            logical_id=entry.logical_id,
            effect=entry.effect,
            occurrence=entry.identity.occurrence,
            status=status,
            marker=marker_of(entry, pending),
            preview=(
                call_preview(entry, self.preview_width, preview_width)
                if isinstance(entry, Operation)
                else preview(entry.inputs, self.preview_width)
            ),
            lane=entry.lane,
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
            operation = self.trace.entry(self.index_at(position))
            if isinstance(operation, (TraceFormatError, LargeLine)):
                continue  # no times to show: the list says why
            if operation.start_ns is not None and operation.end_ns is not None:
                starts.append(operation.start_ns)
                ends.append(operation.end_ns)
        return (min(starts), max(ends)) if starts else None

    def timeline(self, position: int, cursor: int, width: int) -> str:
        """The timeline cell of the row at `position`; blank outside the neighbourhood."""
        window = self.timeline_window(cursor)
        if window is None or position not in self.neighbourhood(cursor):
            return " " * width
        operation = self.trace.entry(self.index_at(position))
        if isinstance(operation, (TraceFormatError, LargeLine)):
            return " " * width
        return timeline_bar(operation, window, width)

    # --- the filter --------------------------------------------------------------------

    def start_filter(self, query: str) -> None:
        """Show only what matches `query` (nothing yet: a scan adds the matches);
        an empty query clears the filter."""
        wanted = query.strip()
        if not wanted:
            self.clear_filter()
            return
        self.query = self.last_query = wanted
        self._matches = array("q")
        self.scanning = True

    def add_matches(self, query: str, indices: Sequence[int]) -> bool:
        """Append a scan's matches for `query`; False (ignored) if the filter changed since."""
        if self._matches is None or query.strip() != self.query:
            return False
        self._matches.extend(indices)
        return True

    def finish_filter(self, query: str) -> None:
        if query.strip() == self.query:
            self.scanning = False

    def apply_filter(self, query: str) -> int:
        """Filter by `query` at once (scanning the whole trace here); how many match."""
        self.start_filter(query)
        if self.filtered:
            for found in scan_matches(self.trace, self.query, lambda: False, wait=False):
                self.add_matches(self.query, found)
            self.finish_filter(self.query)
        return len(self)

    def clear_filter(self) -> None:
        self.query = ""
        self._matches = None
        self.scanning = False

    def step(self, position: int, *, forward: bool = True) -> int | None:
        """The visible position of the next (or previous) match from `position`, wrapping.

        With a filter applied every visible row is a match, so this moves one row.
        Without one, it searches the whole list for the last query used (so a
        filter cleared with escape can still be stepped through in context).
        None when nothing matches.
        """
        count = len(self)
        if count == 0 or not self.last_query:
            return None
        if not 0 <= position < count:
            position = -1 if forward else count
        if self.filtered:
            return (position + (1 if forward else -1)) % count
        return self.find_match(position, forward=forward)

    def find_match(self, index: int, *, forward: bool = True) -> int | None:
        """The trace index of the next (previous) operation matching the last query, wrapping."""
        total = len(self.operations)
        if not self.last_query or total == 0:
            return None
        query = self.last_query
        if forward:
            found = first_match(self.trace, query, index + 1) if index + 1 < total else None
            return found if found is not None else first_match(self.trace, query, 0)
        found = first_match(self.trace, query, index - 1, forward=False) if index > 0 else None
        if found is not None:
            return found
        return first_match(self.trace, query, total - 1, forward=False)
