"""The main screen: the trace's header, the operation list and the detail pane."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
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
from toolreplay_tui.context import session, textual_app
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
from toolreplay_tui.model.trace_file import Entry, LargeLine, LargeOutput, TraceFile, text_size
from toolreplay_tui.screens.full_value import (
    PAGE_BYTES,
    FullValueScreen,
    LargeValueScreen,
    describe_operation,
    describe_value,
)
from toolreplay_tui.screens.operation_filter import FilterInput, FilterMatches, OperationFilter
from toolreplay_tui.widgets.detail import DetailPane, ValueInput
from toolreplay_tui.widgets.key_footer import KeyFooter
from toolreplay_tui.widgets.operation_list import OperationList
from toolreplay_tui.widgets.trace_header import describe_header
from toolreplay_tui.widgets.value_pages import describe_large

__all__ = ["BrowseScreen"]


DETAIL_PAGE_BYTES = 1024
"""How much of a large value's start and end the detail pane shows."""


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
        self.finder = OperationFilter(self, show_status=self.show_status, problem=self._problem)

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
        debug = session(self)
        header = self.query_one("#trace-header", Static)
        problem = debug.load_error
        if problem is not None:
            header.update(
                Text.assemble(
                    terminal_safe_text(debug.trace_label, "bold"),
                    ("  cannot be opened: ", "bold red"),
                    terminal_safe_text(problem),
                )
            )
            return
        trace = debug.trace
        if trace is None:
            label = terminal_safe_text(debug.trace_label, "bold")
            header.update(Text.assemble(label, ("  loading…", "dim")))
            return
        header.update(describe_header(debug, trace))

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
        debug = session(self)
        if trace is None or debug.rows is None:
            return
        self.show_header()
        listing = self.operations
        listing.set_rows(debug.rows, debug.pending, effect_width=debug.effect_width)
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
        debug = session(self)
        status = debug.status_text()
        rows = debug.rows
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
        debug = session(self)
        pending = debug.pending.get(operation.identity)
        current, _ = debug.patched_output(operation, pending)
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

    # --- filter, search and jumps (`OperationFilter`) ---------------------------------

    def action_filter(self) -> None:
        """`/`: filter the operation list, from any pane."""
        self.finder.open_list_filter()

    def action_search_output(self) -> None:
        """`s`: search the selected operation's output, from any pane."""
        self.finder.open_output_search()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter" and self.finder.typed(event.value):
            event.stop()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            event.stop()
            self.finder.submitted(event.value)

    def on_value_input_cancelled(self, event: ValueInput.Cancelled) -> None:
        if event.control.id == "filter":
            event.stop()
            self.finder.cancelled()

    def on_filter_matches(self, message: FilterMatches) -> None:
        self.finder.matches(message)

    def filter_effect(self, name: str) -> None:
        """`:effect NAME`: keep the operations of the effect NAME names."""
        self.finder.filter_effect(name)

    def jump_to(self, logical_id: int) -> None:
        """`:123`: move to the operation numbered `logical_id`."""
        self.finder.jump_to(logical_id)

    def action_clear_filter(self) -> None:
        self.finder.clear()

    def action_next_match(self) -> None:
        self.finder.step(forward=True)

    def action_previous_match(self) -> None:
        self.finder.step(forward=False)

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
                f"this output is {megabytes(text_size(entry))}, too large for the built-in editor: "
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
        debug = session(self)
        if isinstance(entry, (LargeOutput, LargeLine)) and debug.trace is not None:
            first, last = debug.trace.value_pages(entry, PAGE_BYTES)
            title = (
                f"#{entry.logical_id} {entry.effect}  output"
                if isinstance(entry, LargeOutput)
                else f"line {entry.index + 2} ({entry.effect or 'effect unknown'}), whole"
            )
            textual_app(self).push_screen(
                LargeValueScreen(entry, describe_large(title, text_size(entry), first, last))
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
