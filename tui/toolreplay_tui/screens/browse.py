"""The main screen: the trace's header, the operation list and the detail pane."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import ClassVar, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Static

from toolreplay import (
    NonPortableValueError,
    Operation,
    PatchError,
    RedactedValueEditError,
    TraceFormatError,
    terminal_safe_text,
)
from toolreplay_tui.context import DebugSession, session, textual_app
from toolreplay_tui.messages import (
    LargeValueRequested,
    Notice,
    OutputEditRequested,
    PatchEdited,
    PatchMade,
    PatchRemovalRequested,
)
from toolreplay_tui.model.answers import STREAMED_NAMESPACES, edit_patch, stream_edit
from toolreplay_tui.model.jsonpaths import PathError, get_at, set_at
from toolreplay_tui.model.rows import megabytes
from toolreplay_tui.model.search import (
    EffectMatch,
    nearest_effects,
    resolve_effect,
    scan_matches,
)
from toolreplay_tui.model.trace_file import Entry, LargeLine, LargeOutput, TraceFile
from toolreplay_tui.screens.full_value import (
    PAGE_BYTES,
    FullValueScreen,
    LargeValueScreen,
    describe_operation,
    describe_value,
)
from toolreplay_tui.widgets.detail import DetailPane, ValueInput
from toolreplay_tui.widgets.key_footer import KeyFooter
from toolreplay_tui.widgets.operation_list import OperationList
from toolreplay_tui.widgets.value_pages import describe_large
from toolreplay_tui.widgets.value_view import ValueView

__all__ = ["BrowseScreen"]


FILTER_BATCH_SECONDS = 0.05
"""A filter's scan hands its matches to the list at most this often (the first at once)."""
EFFECTS_LISTED = 12
"""An unknown `:effect` name with no near one lists the trace's effects when this few."""
JUMP_WAIT_SECONDS = 0.05
DETAIL_PAGE_BYTES = 1024
"""How much of a large value's start and end the detail pane shows."""
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


class BrowseScreen(Screen[None]):
    """Browse the trace, edit outputs into pending patches, and start runs."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter ops", key_display="/", id="browse.filter"),
        Binding("s", "search_output", "Search output", id="browse.search_output"),
        Binding("n", "next_match", "Next match", show=False, id="browse.next_match"),
        Binding("N", "previous_match", "Previous match", show=False, id="browse.previous_match"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="browse.clear_filter"),
        Binding("tab", "next_pane", "Next pane", show=False, id="browse.next_pane"),
        Binding(
            "shift+tab", "previous_pane", "Previous pane", show=False, id="browse.previous_pane"
        ),
        # The panes never scroll sideways, so arrows left and right reach these.
        Binding("h,left", "pane_left", "Pane to the left", show=False, id="browse.pane_left"),
        Binding("l,right", "pane_right", "Pane to the right", show=False, id="browse.pane_right"),
        Binding("e", "edit", "Edit", tooltip="Edit the output in the editor", id="browse.edit"),
        Binding("E", "external_edit", "Edit in $EDITOR", show=False, id="browse.external_edit"),
        Binding("x", "remove_patch", "Remove patch", show=False, id="browse.remove_patch"),
        Binding("v", "full_value", "Full value", id="browse.full_value"),
        Binding("u", "app.undo", "Undo patch change", show=False, id="browse.undo"),
        Binding("L", "app.patches", "List patches", show=False, id="browse.patches"),
        Binding(
            "w",
            "app.save_patches",
            "Save",
            tooltip="Save the pending patches to a new patch file",
            id="browse.save_patches",
        ),
        Binding("o", "app.load_patches", "Load patches", show=False, id="browse.load_patches"),
        Binding("f", "app.fork", "Fork", id="browse.fork"),
        Binding(
            "r",
            "app.replay",
            "Replay",
            show=False,  # the footer keeps room for the fork, diff and promote loop
            tooltip="Replay the trace strictly (no patches)",
            id="browse.replay",
        ),
        Binding("d", "app.diff", "Diff", id="browse.diff"),
        Binding("p", "app.promote", "Promote…", id="browse.promote"),
        Binding("P", "app.promote_now", "Promote now", id="browse.promote_now"),
        Binding("q", "app.request_quit", "Quit", id="browse.quit"),
    ]
    FOOTER_PRIORITY: ClassVar[tuple[str, ...]] = (
        "browse.fork",
        "browse.diff",
        "browse.promote_now",
        "browse.promote",
        "values.edit",
        "browse.search_output",
        "browse.filter",
        "browse.edit",
        "browse.full_value",
        "values.fold",
        "browse.quit",
        "browse.save_patches",
    )
    """What a narrow footer keeps (binding ids, most important first); `?` lists the rest."""

    def __init__(self) -> None:
        super().__init__()
        self._filter_target: Literal["list", "values"] = "list"
        self._value_query = ""
        self._query_before = ""  # the list's filter when `/` was pressed (escape restores it)
        self._filter_anchor: int | None = None  # the operation the cursor was on
        self._filter_placed: int | None = None  # where a batch last put the cursor
        self._scans = 0  # a scan runs while this is the number it started with

    def compose(self) -> ComposeResult:
        yield Static(id="trace-header")
        with Horizontal(id="panes"):
            with Vertical(id="list-pane"):
                yield Static(id="list-header")
                yield OperationList(id="operations")
            yield DetailPane(id="detail")
        yield FilterInput(id="filter", classes="hidden")
        yield Static(id="status")
        yield KeyFooter()

    # --- access ----------------------------------------------------------------------

    @property
    def operations(self) -> OperationList:
        return self.query_one("#operations", OperationList)

    @property
    def detail(self) -> DetailPane:
        return self.query_one("#detail", DetailPane)

    def current_entry(self) -> Entry | None:
        """What the line under the list's cursor holds (None: no line)."""
        trace = session(self).trace
        index = self.operations.current_index
        if trace is None or index is None:
            return None
        try:
            return trace.entry(index)
        except IndexError:
            return None

    def current_operation(self) -> Operation | None:
        """The operation under the list's cursor; None when there is none, its line cannot
        be read, or it is too large to decode for the list (`current_entry` says which)."""
        entry = self.current_entry()
        return entry if isinstance(entry, Operation) else None

    # --- loading and refreshing ------------------------------------------------------

    def on_mount(self) -> None:
        self.query_one("#filter", FilterInput).cursor_blink = session(self).blink_cursors
        self.query_one("#list-pane").border_title = "operations"
        self.detail.border_title = "detail"
        self.operations.focus()
        self.show_header()
        self.show_status()
        app = textual_app(self)
        self.watch(app, "trace", self._trace_changed)
        self.watch(app, "background", self._background_changed, init=False)
        self.watch(app, "load_error", self.show_header, init=False)
        self.watch(app, "runner", self.show_header, init=False)
        self.watch(app, "notice", self._notice_changed, init=False)

    def show_header(self) -> None:
        app = session(self)
        header = self.query_one("#trace-header", Static)
        problem = app.load_error
        if problem is not None:
            header.update(
                Text.assemble(
                    terminal_safe_text(app.trace_label, "bold"),
                    ("  cannot be opened: ", "bold red"),
                    terminal_safe_text(problem),
                )
            )
            return
        trace = app.trace
        if trace is None:
            label = terminal_safe_text(app.trace_label, "bold")
            header.update(Text.assemble(label, ("  loading…", "dim")))
            return
        header.update(describe_header(app, trace))

    def _background_changed(self) -> None:
        """Indexing went on (more rows) or the integrity check moved on."""
        self.show_header()
        rows = session(self).rows
        listing = self.operations
        if rows is not None and not rows.filtered and listing.row_count() != listing.shown_count:
            listing.rows_changed()
            self._show_list_header()

    def on_operation_list_columns_changed(self, event: OperationList.ColumnsChanged) -> None:
        event.stop()
        self._show_list_header()

    def _show_list_header(self) -> None:
        self.query_one("#list-header", Static).update(
            Text(self.operations.header_text(), style="bold")
        )

    def _trace_changed(self, trace: TraceFile | None) -> None:
        app = session(self)
        if trace is None or app.rows is None:
            return
        self.show_header()
        listing = self.operations
        listing.set_rows(app.rows, app.pending, effect_width=app.effect_width)
        self._show_list_header()
        self.show_status()

    def _notice_changed(self, notice: Notice) -> None:
        """The session changed: repaint the list, the detail and the status line (the
        message itself is a notification, and in the message log)."""
        self.operations.refresh()
        self.show_detail()
        self.show_status()

    def show_detail(self) -> None:
        entry = self.current_entry()
        pending = session(self).pending
        if isinstance(entry, TraceFormatError):
            self.detail.show(None, None, problem=str(entry))
        elif isinstance(entry, (LargeOutput, LargeLine)):
            trace = session(self).trace
            assert trace is not None
            patch = pending.get(entry.identity) if isinstance(entry, LargeOutput) else None
            first, last = trace.value_pages(entry, DETAIL_PAGE_BYTES)
            self.detail.show_large(entry, patch, first, last)
        else:
            patch = None if entry is None else pending.get(entry.identity)
            self.detail.show(entry, patch)

    def show_status(self, activity: str | None = None) -> None:
        """The session's state (patches, last run, filter), and `activity` (`filtering…`)."""
        app = session(self)
        status = app.status_text()
        rows = app.rows
        if activity is not None:
            status.append(f"  ·  {activity}", style="bold")
        elif rows is not None and rows.filtered:
            status.append(
                terminal_safe_text(
                    f"  ·  filter {rows.query!r}: {len(rows)} of {len(rows.operations)} "
                    "operations (escape clears, n/N step)",
                    "bold",
                )
            )
        self.query_one("#status", Static).update(status)

    def _problem(self, message: str) -> None:
        session(self).tell(message, error=True)

    # --- list and detail events ------------------------------------------------------

    def on_operation_list_highlighted(self, event: OperationList.Highlighted) -> None:
        event.stop()
        self.show_detail()

    def on_operation_list_opened(self, event: OperationList.Opened) -> None:
        event.stop()
        self.detail.values.focus()

    def on_detail_pane_value_edited(self, event: DetailPane.ValueEdited) -> None:
        event.stop()
        operation = event.operation
        app = session(self)
        pending = app.pending.get(operation.identity)
        current, _ = app.patched_output(operation, pending)
        try:
            # One value of a streamed answer is an edit of the answer it is part of:
            # deltas, done events and the final response are rewritten to agree.
            change = (
                stream_edit(current, event.path, event.value)
                if operation.identity.namespace in STREAMED_NAMESPACES
                else None
            )
            if change is not None:
                patch = edit_patch(operation, pending, current, change)
                self.post_message(PatchMade(operation, patch))
                return
            value = set_at(current, event.path, event.value)
        except (PathError, PatchError, RedactedValueEditError, NonPortableValueError) as error:
            self._problem(str(error))
            return
        self.post_message(PatchEdited(operation, value))

    def on_detail_pane_problem(self, event: DetailPane.Problem) -> None:
        event.stop()
        self._problem(event.text)

    # --- filter and search -----------------------------------------------------------

    def action_filter(self) -> None:
        """`/`: filter the operation list, from any pane."""
        rows = session(self).rows
        self._query_before = rows.query if rows is not None else ""
        self._open_prompt(
            "list",
            "filter operations as you type (effect name or any text; effect:NAME for "
            "effect names only): enter keeps it, escape cancels",
            self._query_before,
        )

    def action_search_output(self) -> None:
        """`s`: search the selected operation's output, from any pane."""
        self._open_prompt(
            "values",
            "search the output (text or JSON path): enter searches, escape cancels",
            self._value_query,
        )

    def _open_prompt(self, target: Literal["list", "values"], title: str, value: str) -> None:
        field = self.query_one("#filter", FilterInput)
        self._filter_target = target
        field.border_title = title
        field.value = value
        field.remove_class("hidden")
        field.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "filter" or self._filter_target != "list":
            return
        event.stop()
        if not event.input.has_class("hidden"):
            self._apply_filter(event.value.strip())

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "filter":
            return
        event.stop()
        field = self.query_one("#filter", FilterInput)
        field.add_class("hidden")
        query = event.value.strip()
        if self._filter_target == "values":
            self._value_query = query
            values = self.detail.values
            values.focus()
            if query and not values.search(query, from_start=True):
                self._problem(f"nothing in this output matches {query!r}")
            return
        self.operations.focus()
        rows = session(self).rows
        if rows is not None and rows.query != query:
            self._apply_filter(query)

    def on_value_input_cancelled(self, event: ValueInput.Cancelled) -> None:
        if event.control.id != "filter":
            return
        event.stop()
        self.query_one("#filter", FilterInput).add_class("hidden")
        if self._filter_target == "values":
            self.detail.values.focus()
            return
        self.operations.focus()
        rows = session(self).rows
        if rows is not None and rows.query != self._query_before:
            self._apply_filter(self._query_before)

    def _apply_filter(self, query: str, *, start: int = 0, anchor: int | None = None) -> None:
        """Show what matches `query` as a background scan finds it (the previous scan
        stops), reading from operation `start` (nothing before it matches); the cursor
        goes to the first match from `anchor` (by default, where it is)."""
        app = session(self)
        rows, trace = app.rows, app.trace
        if rows is None or trace is None:
            return
        listing = self.operations
        if anchor is None and rows.filtered and self._filter_anchor is not None:
            anchor = self._filter_anchor  # typing on: keep the operation the filter started on
        elif anchor is None:
            anchor = listing.current_index
        if not query:
            self._filter_anchor = None
            self._scans += 1  # stops the running scan
            rows.clear_filter()
            listing.set_rows(rows, app.pending, effect_width=app.effect_width, index=anchor)
            self.show_status()
            return
        rows.start_filter(query)
        self._filter_anchor, self._filter_placed = anchor, None
        listing.rows_changed(cursor=0)
        self.show_status(f"filter {query!r}: scanning…")
        self._scans += 1
        self._scan(trace, rows.query, self._scans, start)

    @work(thread=True, group="filter")
    def _scan(self, trace: TraceFile, query: str, number: int, start: int) -> None:
        """Scan for `query` from operation `start`, posting matches, until the next
        filter (or quitting) stops it."""

        def cancelled() -> bool:
            return self._scans != number

        found: list[int] = []
        posted = 0.0
        for batch in scan_matches(trace, query, cancelled, start=start):
            found.extend(batch)
            now = time.monotonic()
            # The first matches at once, then batches: the list repaints a few times a second.
            if found and (posted == 0.0 or now - posted >= FILTER_BATCH_SECONDS):
                self.post_message(FilterMatches(query, found, done=False))
                found, posted = [], now
        if not cancelled() and not trace.closed:
            self.post_message(FilterMatches(query, found, done=True))

    def on_filter_matches(self, message: FilterMatches) -> None:
        app = session(self)
        rows = app.rows
        if rows is None or not rows.add_matches(message.query, message.indices):
            return  # a scan for an earlier query
        listing = self.operations
        anchor = self._filter_anchor
        if (
            anchor is not None
            and self._filter_placed is not None
            and listing.current_index != self._filter_placed
        ):
            self._filter_anchor = anchor = None  # the user moved: leave the cursor be
        if anchor is not None:
            listing.rows_changed(cursor=rows.nearest_position(anchor))
            self._filter_placed = listing.current_index
        else:
            listing.rows_changed()
        if message.done:
            rows.finish_filter(message.query)
            self.show_status(
                f"filter {rows.query!r}: {len(rows)} of {len(rows.operations)} operations "
                "(escape clears, n/N step)"
            )
        else:
            self.show_status(f"filter {rows.query!r}: {len(rows)} so far, scanning…")

    def filter_effect(self, name: str) -> None:
        """`:effect NAME`: keep the operations of the effect NAME names, the cursor on
        the first (refused, with the nearest names, when no effect matches).

        Resolved against the effect names indexing collects: an exact name at once;
        anything else once the index is complete (every name known), so a partial
        name (`crm.customer`, a namespace `crm`, `customer.get`) finds all it names.
        """
        app = session(self)
        trace = app.trace
        if trace is None:
            return
        self.operations.focus()
        effects = trace.effects
        if name.strip() not in effects and not trace.indexed:
            self.show_status(
                f"effect {name!r}: waits for indexing ({app.background.progress_text()})"
            )
            self._effect_when_indexed(trace, name)
            return
        found = resolve_effect(name, effects)
        if found.query is None or found.first is None:
            self.show_status()
            self._problem(_effect_refusal(name, found, effects))
            return
        if found.names != (name.strip(),):
            app.tell(
                f"effect {name!r}: {found.names[0]}"
                if len(found.names) == 1
                else f"effect {name!r}: {len(found.names)} effects, {', '.join(found.names)}"
            )
        # Nothing before its first operation matches: the scan starts there.
        self._apply_filter(found.query, start=found.first, anchor=found.first)

    @work(thread=True, exclusive=True, group="effect")
    def _effect_when_indexed(self, trace: TraceFile, name: str) -> None:
        """Wait until indexing has seen effect `name` or is complete."""
        while not trace.indexed and name.strip() not in trace.effects:
            if trace.closed:
                return
            time.sleep(JUMP_WAIT_SECONDS)
        textual_app(self).call_from_thread(self.filter_effect, name)

    def jump_to(self, logical_id: int) -> None:
        """`:123`: move to the operation numbered `logical_id`, clearing a filter that
        hides it. Before indexing reaches it, the jump waits for the index."""
        app = session(self)
        trace, rows = app.trace, app.rows
        if trace is None or rows is None:
            return
        index = trace_index(trace, logical_id)
        if index is None and not trace.indexed:
            self.show_status(
                f"jump to #{logical_id}: waits for indexing ({app.background.progress_text()})"
            )
            self._jump_when_indexed(trace, logical_id)
            return
        if index is None:
            self.show_status()
            self._problem(
                f"no operation #{logical_id}: this trace numbers them 0 to {len(trace) - 1}"
                if len(trace)
                else f"no operation #{logical_id}: this trace has none"
            )
            return
        self.show_status()
        if rows.filtered and rows.index_at(rows.nearest_position(index)) != index:
            self._apply_filter("")
        self.operations.focus()
        self.operations.move_to(rows.nearest_position(index), center=True)

    @work(thread=True, exclusive=True, group="jump")
    def _jump_when_indexed(self, trace: TraceFile, logical_id: int) -> None:
        """Wait until the index holds operation `logical_id`'s position or is complete."""
        while not trace.indexed and len(trace) <= logical_id:
            if trace.closed:
                return
            time.sleep(JUMP_WAIT_SECONDS)
        textual_app(self).call_from_thread(self.jump_to, logical_id)

    def action_clear_filter(self) -> None:
        rows = session(self).rows
        if rows is not None and rows.filtered:
            self._filter_anchor = None
            self._apply_filter("")

    def _step(self, *, forward: bool) -> None:
        if isinstance(self.focused, ValueView):
            if not self._value_query:
                self._problem("no search yet: s searches the output")
            elif not self.detail.values.search(self._value_query, forward=forward):
                self._problem(f"nothing in this output matches {self._value_query!r}")
            return
        rows = session(self).rows
        if rows is None:
            return
        found = rows.step(self.operations.cursor, forward=forward)
        if found is None:
            self._problem(
                "no match: / sets what to look for"
                if not rows.last_query
                else f"nothing matches {rows.last_query!r}"
            )
            return
        self.operations.move_to(found)

    def action_next_match(self) -> None:
        self._step(forward=True)

    def action_previous_match(self) -> None:
        self._step(forward=False)

    # --- panes ----------------------------------------------------------------------

    def _panes(self) -> list[Widget]:
        return [
            self.operations,
            self.detail.values,
            self.query_one("#detail-info-scroll"),
        ]

    def _cycle(self, step: int, *, wrap: bool = True) -> None:
        panes = self._panes()
        focused = self.focused
        current = panes.index(focused) if focused in panes else -1
        target = current + step
        if not wrap:
            target = max(0, min(target, len(panes) - 1))
        panes[target % len(panes)].focus()

    def action_next_pane(self) -> None:
        """The operation list, then the output's values, then the inputs above them."""
        self._cycle(1)

    def action_previous_pane(self) -> None:
        self._cycle(-1)

    def action_pane_right(self) -> None:
        """`l`/`→`: the next pane, stopping at the last."""
        self._cycle(1, wrap=False)

    def action_pane_left(self) -> None:
        """`h`/`←`: the previous pane, stopping at the operation list."""
        self._cycle(-1, wrap=False)

    def on_descendant_focus(self) -> None:
        """Say in the detail pane's title which of its two stops has the focus."""
        focused = self.focused
        stop = (
            "output"
            if focused is self.detail.values
            else "inputs"
            if focused is not None and focused.id == "detail-info-scroll"
            else None
        )
        self.detail.border_title = "detail" if stop is None else f"detail: {stop} (focused)"

    # --- editing ---------------------------------------------------------------------

    def action_edit(self) -> None:
        entry = self.current_entry()
        if isinstance(entry, (LargeOutput, LargeLine)):
            self._problem(
                f"this output is {megabytes(_size(entry))}, too large for the built-in editor: "
                "E edits it in $EDITOR, v shows its first and last pages"
            )
        elif isinstance(entry, Operation):
            self.post_message(OutputEditRequested(entry))

    def action_external_edit(self) -> None:
        entry = self.current_entry()
        if isinstance(entry, (LargeOutput, LargeLine)):
            self.post_message(LargeValueRequested(entry, "edit"))
        elif isinstance(entry, Operation):
            self.post_message(OutputEditRequested(entry, external=True))

    def action_full_value(self) -> None:
        """`v`: what is cut off, in full: the value under the cursor when the output's
        values have the focus, else the whole operation (fingerprint, inputs, outcome);
        a value too large for that by its size and first and last pages."""
        entry = self.current_entry()
        app = session(self)
        if isinstance(entry, (LargeOutput, LargeLine)) and app.trace is not None:
            first, last = app.trace.value_pages(entry, PAGE_BYTES)
            title = (
                f"#{entry.logical_id} {entry.effect}  output"
                if isinstance(entry, LargeOutput)
                else f"line {entry.index + 2} ({entry.effect or 'effect unknown'}), whole"
            )
            textual_app(self).push_screen(
                LargeValueScreen(entry, describe_large(title, _size(entry), first, last))
            )
            return
        operation = entry if isinstance(entry, Operation) else None
        if operation is None:
            return
        values = self.detail.values
        path = values.current_path
        if self.focused is values and path is not None:
            content = describe_value(operation, path, get_at(values.value, path))
        else:
            content = describe_operation(operation, session(self).pending.get(operation.identity))
        textual_app(self).push_screen(FullValueScreen(content))

    def action_remove_patch(self) -> None:
        entry = self.current_entry()
        if isinstance(entry, (Operation, LargeOutput)):
            self.post_message(PatchRemovalRequested(entry.identity))


def _size(large: LargeOutput | LargeLine) -> int:
    return large.value_size if isinstance(large, LargeOutput) else large.size


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


def describe_header(app: DebugSession, trace: TraceFile) -> Text:
    """`refund.trp · format v3 · 3 operations · complete · checked · record · runner m:f`.

    While the trace is indexed or checked, says how far; a failed check in red.
    """
    state = app.background
    text = Text()
    text.append(terminal_safe_text(app.trace_label, "bold"))
    text.append(f"  ·  format v{trace.header.format_version}  ·  ")
    expected = trace.expected_count
    if state.indexed:
        text.append(f"{state.count:,} operations")
    elif expected is not None:
        text.append(f"{expected:,} operations")
        text.append(f" ({state.count:,} indexed)", style="dim")
    else:
        text.append(f"{state.count:,}+ operations")
    text.append("  ·  ")
    footer = trace.footer
    if footer is None:
        text.append("incomplete (no footer: the recording did not close)", style="bold yellow")
    elif footer.ending.status == "raised":
        ended = f"complete, ended with {footer.ending.error_type}"
        text.append(terminal_safe_text(ended, "yellow"))
    else:
        text.append("complete", style="green")
    text.append("  ·  ")
    integrity = state.integrity
    if integrity.state == "checking":
        text.append(f"{state.progress_text()}…", style="bold cyan")
    elif integrity.state == "ok":
        text.append("checked", style="green")
    else:
        text.append(terminal_safe_text(f"integrity check failed: {integrity.problem}", "bold red"))
    text.append(f"  ·  {trace.header.mode}")
    if trace.header.source_trace_id is not None:
        text.append(" (a fork's branch)")
    text.append("  ·  runner ")
    runner = app.runner_spec()
    text.append(terminal_safe_text(runner or "(none: f will ask)", "bold" if runner else "dim"))
    return text


def _effect_refusal(name: str, found: EffectMatch, effects: Mapping[str, int]) -> str:
    """Why `:effect NAME` filters nothing: no such effect (with the nearest names), or
    several that no one filter keeps apart from the others."""
    if found.names:
        return (
            f"effect {name!r} names {len(found.names)} effects: {', '.join(found.names)}; "
            "give one of them"
        )
    refusal = f"no operation of effect {name!r} in this trace"
    nearest = nearest_effects(name, effects)
    if nearest:
        return f"{refusal}; nearest: {', '.join(nearest)}"
    if 0 < len(effects) <= EFFECTS_LISTED:
        return f"{refusal}; its effects: {', '.join(effects)}"
    return refusal
