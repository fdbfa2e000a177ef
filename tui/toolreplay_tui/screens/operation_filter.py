"""Finding operations in the browse screen: the list's filter (`/`, `:effect NAME`),
stepping between matches (`n`, `N`), jumps by number (`:123`), and the search of the
selected output (`s`), all through one prompt (`FilterInput`).

A filter scans the trace in a worker thread (the previous scan stops when the next
starts), handing its matches to the list in batches; a jump or an effect name that
indexing has not reached yet waits for the index.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from textual.message import Message
from textual.screen import Screen

from toolreplay import Operation, TraceFormatError
from toolreplay_tui.context import session, textual_app
from toolreplay_tui.model.search import (
    effect_refusal,
    effect_resolution,
    resolve_effect,
    scan_matches,
)
from toolreplay_tui.model.trace_file import LargeLine, LargeOutput, TraceFile
from toolreplay_tui.widgets.detail import DetailPane, ValueInput
from toolreplay_tui.widgets.operation_list import OperationList
from toolreplay_tui.widgets.value_view import ValueView

__all__ = [
    "FILTER_BATCH_SECONDS",
    "JUMP_WAIT_SECONDS",
    "FilterInput",
    "FilterMatches",
    "OperationFilter",
    "trace_index",
]

FILTER_BATCH_SECONDS = 0.05
"""A filter's scan hands its matches to the list at most this often (the first at once)."""
JUMP_WAIT_SECONDS = 0.05
"""How often a jump beyond the index looks whether indexing has reached it."""


class FilterInput(ValueInput):
    """The prompt of `/` (filter the operations as you type) and `s` (search the
    selected output)."""


class FilterMatches(Message):
    """A filter's scan found `indices` for `query` (`done`: it has read the whole trace)."""

    def __init__(self, query: str, indices: list[int], *, done: bool) -> None:
        super().__init__()
        self.query = query
        self.indices = indices
        self.done = done


class OperationFilter:
    """The filter, searches and jumps of one screen holding `#operations` (an
    `OperationList`), `#detail` (a `DetailPane`) and `#filter` (a `FilterInput`).

    The screen hands it its prompt's events and `FilterMatches`; `show_status(activity)`
    repaints the screen's status line, `problem(text)` says what cannot be done.
    """

    def __init__(
        self,
        screen: Screen[None],
        *,
        show_status: Callable[[str | None], None],
        problem: Callable[[str], None],
    ) -> None:
        self.screen = screen
        self._show_status = show_status
        self._problem = problem
        self._target: Literal["list", "values"] = "list"
        self._value_query = ""
        self._query_before = ""  # the list's filter when `/` was pressed (escape restores it)
        self._anchor: int | None = None  # the operation the cursor was on
        self._placed: int | None = None  # where a batch last put the cursor
        self._scans = 0  # a scan runs while this is the number it started with

    @property
    def _operations(self) -> OperationList:
        return self.screen.query_one("#operations", OperationList)

    @property
    def _values(self) -> ValueView:
        return self.screen.query_one("#detail", DetailPane).values

    @property
    def _field(self) -> FilterInput:
        return self.screen.query_one("#filter", FilterInput)

    # --- the prompt ------------------------------------------------------------------

    def open_list_filter(self) -> None:
        """`/`: filter the operation list, from any pane."""
        rows = session(self.screen).rows
        self._query_before = rows.query if rows is not None else ""
        self._open(
            "list",
            "filter operations as you type (effect name or any text; effect:NAME for "
            "effect names only): enter keeps it, escape cancels",
            self._query_before,
        )

    def open_output_search(self) -> None:
        """`s`: search the selected operation's output, from any pane."""
        self._open(
            "values",
            "search the output (text or JSON path): enter searches, escape cancels",
            self._value_query,
        )

    def _open(self, target: Literal["list", "values"], title: str, value: str) -> None:
        field = self._field
        self._target = target
        field.border_title = title
        field.value = value
        field.remove_class("hidden")
        field.focus()

    def typed(self, value: str) -> bool:
        """The prompt's text changed: a list filter follows it. False when the prompt
        searches the output instead (the event is not the filter's)."""
        if self._target != "list":
            return False
        if not self._field.has_class("hidden"):
            self.apply(value.strip())
        return True

    def submitted(self, value: str) -> None:
        """Enter in the prompt: keep the filter, or search the output."""
        self._field.add_class("hidden")
        query = value.strip()
        if self._target == "values":
            self._value_query = query
            values = self._values
            values.focus()
            if query and not values.search(query, from_start=True):
                self._problem(f"nothing in this output matches {query!r}")
            return
        self._operations.focus()
        rows = session(self.screen).rows
        if rows is not None and rows.query != query:
            self.apply(query)

    def cancelled(self) -> None:
        """Escape in the prompt: the list's filter as it was before `/`."""
        self._field.add_class("hidden")
        if self._target == "values":
            self._values.focus()
            return
        self._operations.focus()
        rows = session(self.screen).rows
        if rows is not None and rows.query != self._query_before:
            self.apply(self._query_before)

    # --- filtering -------------------------------------------------------------------

    def apply(self, query: str, *, start: int = 0, anchor: int | None = None) -> None:
        """Show what matches `query` as a background scan finds it (the previous scan
        stops), reading from operation `start` (nothing before it matches); the cursor
        goes to the first match from `anchor` (by default, where it is)."""
        debug = session(self.screen)
        rows, trace = debug.rows, debug.trace
        if rows is None or trace is None:
            return
        listing = self._operations
        if anchor is None and rows.filtered and self._anchor is not None:
            anchor = self._anchor  # typing on: keep the operation the filter started on
        elif anchor is None:
            anchor = listing.current_index
        if not query:
            self._anchor = None
            self._scans += 1  # stops the running scan
            rows.clear_filter()
            listing.set_rows(rows, debug.pending, effect_width=debug.effect_width, index=anchor)
            self._show_status(None)
            return
        rows.start_filter(query)
        self._anchor, self._placed = anchor, None
        listing.rows_changed(cursor=0)
        self._show_status(f"filter {query!r}: scanning…")
        self._scans += 1
        self._scan(trace, rows.query, self._scans, start)

    def _scan(self, trace: TraceFile, query: str, number: int, start: int) -> None:
        """Scan for `query` from operation `start` in a worker thread, posting matches to
        the screen, until the next filter (or quitting) stops it."""
        screen = self.screen

        def cancelled() -> bool:
            return self._scans != number

        def scan() -> None:
            found: list[int] = []
            posted = 0.0
            for batch in scan_matches(trace, query, cancelled, start=start):
                found.extend(batch)
                now = time.monotonic()
                # The first matches at once, then batches: the list repaints a few times
                # a second.
                if found and (posted == 0.0 or now - posted >= FILTER_BATCH_SECONDS):
                    screen.post_message(FilterMatches(query, found, done=False))
                    found, posted = [], now
            if not cancelled() and not trace.closed:
                screen.post_message(FilterMatches(query, found, done=True))

        screen.run_worker(scan, name="scan", group="filter", thread=True)

    def matches(self, message: FilterMatches) -> None:
        """A batch of a scan's matches: into the list, the cursor kept on its anchor."""
        rows = session(self.screen).rows
        if rows is None or not rows.add_matches(message.query, message.indices):
            return  # a scan for an earlier query
        listing = self._operations
        anchor = self._anchor
        if (
            anchor is not None
            and self._placed is not None
            and listing.current_index != self._placed
        ):
            self._anchor = anchor = None  # the user moved: leave the cursor be
        if anchor is not None:
            listing.rows_changed(cursor=rows.nearest_position(anchor))
            self._placed = listing.current_index
        else:
            listing.rows_changed()
        if message.done:
            rows.finish_filter(message.query)
            self._show_status(
                f"filter {rows.query!r}: {len(rows)} of {len(rows.operations)} operations "
                "(escape clears, n/N step)"
            )
        else:
            self._show_status(f"filter {rows.query!r}: {len(rows)} so far, scanning…")

    def clear(self) -> None:
        """Escape in the list: no filter."""
        rows = session(self.screen).rows
        if rows is not None and rows.filtered:
            self._anchor = None
            self.apply("")

    def filter_effect(self, name: str) -> None:
        """`:effect NAME`: keep the operations of the effect NAME names, the cursor on
        the first (refused, with the nearest names, when no effect matches).

        Resolved against the effect names indexing collects: an exact name at once;
        anything else once the index is complete (every name known), so a partial
        name (`crm.customer`, a namespace `crm`, `customer.get`) finds all it names.
        """
        debug = session(self.screen)
        trace = debug.trace
        if trace is None:
            return
        self._operations.focus()
        effects = trace.effects
        if name.strip() not in effects and not trace.indexed:
            self._show_status(
                f"effect {name!r}: waits for indexing ({debug.background.progress_text()})"
            )
            self._when_indexed(
                trace,
                lambda: name.strip() in trace.effects,
                lambda: self.filter_effect(name),
                group="effect",
            )
            return
        found = resolve_effect(name, effects)
        if found.query is None or found.first is None:
            self._show_status(None)
            self._problem(effect_refusal(name, found, effects))
            return
        resolution = effect_resolution(name, found)
        if resolution is not None:
            debug.tell(resolution)
        # Nothing before its first operation matches: the scan starts there.
        self.apply(found.query, start=found.first, anchor=found.first)

    # --- jumps and steps ---------------------------------------------------------------

    def jump_to(self, logical_id: int) -> None:
        """`:123`: move to the operation numbered `logical_id`, clearing a filter that
        hides it. Before indexing reaches it, the jump waits for the index."""
        debug = session(self.screen)
        trace, rows = debug.trace, debug.rows
        if trace is None or rows is None:
            return
        index = trace_index(trace, logical_id)
        if index is None and not trace.indexed:
            self._show_status(
                f"jump to #{logical_id}: waits for indexing ({debug.background.progress_text()})"
            )
            self._when_indexed(
                trace,
                lambda: len(trace) > logical_id,
                lambda: self.jump_to(logical_id),
                group="jump",
            )
            return
        if index is None:
            self._show_status(None)
            self._problem(
                f"no operation #{logical_id}: this trace numbers them 0 to {len(trace) - 1}"
                if len(trace)
                else f"no operation #{logical_id}: this trace has none"
            )
            return
        self._show_status(None)
        if rows.filtered and rows.index_at(rows.nearest_position(index)) != index:
            self.apply("")
        listing = self._operations
        listing.focus()
        listing.move_to(rows.nearest_position(index), center=True)

    def _when_indexed(
        self, trace: TraceFile, reached: Callable[[], bool], then: Callable[[], None], group: str
    ) -> None:
        """In a worker thread, wait until `reached()` or indexing is complete, then call
        `then` on the event loop (a later wait of the same `group` replaces this one)."""
        app = textual_app(self.screen)

        def wait() -> None:
            while not trace.indexed and not reached():
                if trace.closed:
                    return
                time.sleep(JUMP_WAIT_SECONDS)  # polled: the index has no event to wait on
            app.call_from_thread(then)

        self.screen.run_worker(
            wait, name=f"{group}_when_indexed", group=group, exclusive=True, thread=True
        )

    def step(self, *, forward: bool) -> None:
        """`n`/`N`: the next or previous match, in the output's values when they have the
        focus, else in the operation list."""
        if isinstance(self.screen.focused, ValueView):
            if not self._value_query:
                self._problem("no search yet: s searches the output")
            elif not self._values.search(self._value_query, forward=forward):
                self._problem(f"nothing in this output matches {self._value_query!r}")
            return
        rows = session(self.screen).rows
        if rows is None:
            return
        listing = self._operations
        found = rows.step(listing.cursor, forward=forward)
        if found is None:
            self._problem(
                "no match: / sets what to look for"
                if not rows.last_query
                else f"nothing matches {rows.last_query!r}"
            )
            return
        listing.move_to(found)


def trace_index(trace: TraceFile, logical_id: int) -> int | None:
    """The position of the indexed operation numbered `logical_id`, if any."""
    # Recordings number operations by position: look there first.
    unreadable: int | None = None
    if 0 <= logical_id < len(trace):
        entry = trace.entry(logical_id)
        if isinstance(entry, (Operation, LargeOutput)) and entry.logical_id == logical_id:
            return logical_id
        if isinstance(entry, (TraceFormatError, LargeLine)):
            unreadable = logical_id  # its line says no number: where the number should be
    if not trace.indexed:
        return None  # decoding every line now would block: wait for the index
    for index in range(len(trace)):
        entry = trace.entry(index)
        if isinstance(entry, (Operation, LargeOutput)) and entry.logical_id == logical_id:
            return index
    return unreadable  # the row there shows why it has no number
