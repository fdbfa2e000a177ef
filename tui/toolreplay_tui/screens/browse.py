"""The main screen: the trace's header, the operation list and the detail pane."""

from __future__ import annotations

import difflib
from typing import ClassVar, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Static

from toolreplay import Operation, Trace
from toolreplay_tui.context import debugger
from toolreplay_tui.messages import (
    Notice,
    OutputEditRequested,
    PatchEdited,
    PatchRemovalRequested,
)
from toolreplay_tui.model.jsonpaths import PathError, set_at
from toolreplay_tui.model.rows import EFFECT_PREFIX, OperationRows
from toolreplay_tui.widgets.detail import DetailPane, ValueInput, output_of
from toolreplay_tui.widgets.operation_list import OperationList
from toolreplay_tui.widgets.value_view import ValueView

__all__ = ["BrowseScreen"]


class FilterInput(ValueInput):
    """The prompt of `/` (filter the operations) and `s` (search the selected output)."""


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

    def __init__(self) -> None:
        super().__init__()
        self._filter_target: Literal["list", "values"] = "list"
        self._value_query = ""

    def compose(self) -> ComposeResult:
        yield Static(id="trace-header")
        with Horizontal(id="panes"):
            with Vertical(id="list-pane"):
                yield Static(id="list-header")
                yield OperationList(id="operations")
            yield DetailPane(id="detail")
        yield FilterInput(id="filter", classes="hidden")
        yield Static(id="status")
        yield Footer()

    # --- access ----------------------------------------------------------------------

    @property
    def operations(self) -> OperationList:
        return self.query_one("#operations", OperationList)

    @property
    def detail(self) -> DetailPane:
        return self.query_one("#detail", DetailPane)

    def current_operation(self) -> Operation | None:
        trace = debugger(self).trace
        index = self.operations.current_index
        if trace is None or index is None:
            return None
        return trace.operations[index]

    # --- loading and refreshing ------------------------------------------------------

    def on_mount(self) -> None:
        app = debugger(self)
        self.query_one("#filter", FilterInput).cursor_blink = app.blink_cursors
        self.query_one("#list-pane").border_title = "operations"
        self.detail.border_title = "detail"
        self.operations.focus()
        self.show_header()
        self.show_status()
        self.watch(app, "trace", self._trace_changed)
        self.watch(app, "load_error", self.show_header, init=False)
        self.watch(app, "runner", self.show_header, init=False)
        self.watch(app, "notice", self._notice_changed, init=False)

    def show_header(self) -> None:
        app = debugger(self)
        header = self.query_one("#trace-header", Static)
        problem = app.load_error
        if problem is not None:
            header.update(
                Text.assemble(
                    (app.trace_label, "bold"), ("  cannot be opened: ", "bold red"), problem
                )
            )
            return
        trace = app.trace
        if trace is None:
            header.update(Text.assemble((app.trace_label, "bold"), ("  loading…", "dim")))
            return
        header.update(describe_header(app.trace_label, trace, app.runner_spec()))

    def _trace_changed(self, trace: Trace | None) -> None:
        app = debugger(self)
        if trace is None or app.rows is None:
            return
        self.show_header()
        listing = self.operations
        listing.set_rows(app.rows, app.pending, effect_width=app.effect_width)
        self.query_one("#list-header", Static).update(Text(listing.header_text(), style="bold"))
        self.show_status()

    def _notice_changed(self, notice: Notice) -> None:
        """The session changed: repaint the list, the detail and the status line (the
        message itself is a notification, and in the message log)."""
        self.operations.refresh()
        self.show_detail()
        self.show_status()

    def show_detail(self) -> None:
        operation = self.current_operation()
        patch = None if operation is None else debugger(self).pending.get(operation.identity)
        self.detail.show(operation, patch)

    def show_status(self, activity: str | None = None) -> None:
        """The session's state (patches, last run, filter), and `activity` (`filtering…`)."""
        app = debugger(self)
        status = app.status_text()
        rows = app.rows
        if activity is not None:
            status.append(f"  ·  {activity}", style="bold")
        elif rows is not None and rows.filtered:
            status.append(
                f"  ·  filter {rows.query!r}: {len(rows)} of {len(rows.operations)} operations "
                "(escape clears, n/N step)",
                style="bold",
            )
        self.query_one("#status", Static).update(status)

    def _problem(self, message: str) -> None:
        debugger(self).tell(message, error=True)

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
        current = output_of(operation, debugger(self).pending.get(operation.identity))
        try:
            value = set_at(current, event.path, event.value)
        except PathError as error:
            self._problem(str(error))
            return
        self.post_message(PatchEdited(operation, value))

    def on_detail_pane_problem(self, event: DetailPane.Problem) -> None:
        event.stop()
        self._problem(event.text)

    # --- filter and search -----------------------------------------------------------

    def action_filter(self) -> None:
        """`/`: filter the operation list, from any pane."""
        rows = debugger(self).rows
        self._open_prompt(
            "list",
            "filter operations (effect name or any text; effect:NAME for effect names only): "
            "enter filters, escape cancels",
            rows.query if rows is not None else "",
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
        self._apply_filter(query)

    def on_value_input_cancelled(self, event: ValueInput.Cancelled) -> None:
        if event.control.id != "filter":
            return
        event.stop()
        self.query_one("#filter", FilterInput).add_class("hidden")
        if self._filter_target == "values":
            self.detail.values.focus()
        else:
            self.operations.focus()

    def _apply_filter(self, query: str) -> None:
        rows = debugger(self).rows
        if rows is None:
            return
        if not query:
            self._filtered(query, None)
            return
        self.show_status(f"filtering by {query!r}…")
        self._compute_filter(rows, query)

    def filter_effect(self, name: str) -> None:
        """`:effect NAME`: keep the operations of effect `name` (refused, with the
        nearest names, when no operation has that effect)."""
        trace = debugger(self).trace
        if trace is None:
            return
        if name not in trace.effects:
            close = difflib.get_close_matches(name, list(trace.effects), n=3, cutoff=0.4)
            hint = f"; nearest: {', '.join(close)}" if close else ""
            self._problem(f"no operation of effect {name!r} in this trace{hint}")
            return
        self.operations.focus()
        self._apply_filter(f"{EFFECT_PREFIX}{name}")

    def jump_to(self, logical_id: int) -> None:
        """`:123`: move to the operation numbered `logical_id`, clearing a filter that
        hides it."""
        app = debugger(self)
        trace, rows = app.trace, app.rows
        if trace is None or rows is None:
            return
        index = trace_index(trace, logical_id)
        if index is None:
            self._problem(
                f"no operation #{logical_id}: this trace numbers them 0 to {len(trace) - 1}"
                if len(trace)
                else f"no operation #{logical_id}: this trace has none"
            )
            return
        if rows.filtered and rows.index_at(rows.nearest_position(index)) != index:
            self._filtered("", None)
        self.operations.focus()
        self.operations.move_to(rows.nearest_position(index), center=True)

    @work(thread=True, exclusive=True, group="filter")
    def _compute_filter(self, rows: OperationRows, query: str) -> None:
        indices = rows.compute_filter(query)
        debugger(self).call_from_thread(self._filtered, query, indices)

    def _filtered(self, query: str, indices: list[int] | None) -> None:
        rows = debugger(self).rows
        if rows is None:
            return
        keep = self.operations.current_index
        count = rows.apply_filter(query, indices)
        app = debugger(self)
        self.operations.set_rows(rows, app.pending, effect_width=app.effect_width, index=keep)
        self.show_status()
        if rows.filtered and not count:
            self._problem(f"no operation matches {query!r} (escape clears the filter)")

    def action_clear_filter(self) -> None:
        rows = debugger(self).rows
        if rows is not None and rows.filtered:
            self._filtered("", None)

    def _step(self, *, forward: bool) -> None:
        if isinstance(self.focused, ValueView):
            if not self._value_query:
                self._problem("no search yet: s searches the output")
            elif not self.detail.values.search(self._value_query, forward=forward):
                self._problem(f"nothing in this output matches {self._value_query!r}")
            return
        rows = debugger(self).rows
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
        operation = self.current_operation()
        if operation is not None:
            self.post_message(OutputEditRequested(operation))

    def action_external_edit(self) -> None:
        operation = self.current_operation()
        if operation is not None:
            self.post_message(OutputEditRequested(operation, external=True))

    def action_remove_patch(self) -> None:
        operation = self.current_operation()
        if operation is not None:
            self.post_message(PatchRemovalRequested(operation))


def trace_index(trace: Trace, logical_id: int) -> int | None:
    """The position in `trace` of the operation numbered `logical_id`, if any."""
    operations = trace.operations
    # Recordings number operations by position: look there first.
    if 0 <= logical_id < len(operations) and operations[logical_id].logical_id == logical_id:
        return logical_id
    return next((index for index, op in enumerate(operations) if op.logical_id == logical_id), None)


def describe_header(label: str, trace: Trace, runner: str | None) -> Text:
    """`refund.trp · format v3 · 3 operations · complete · record · runner m:f`."""
    text = Text()
    text.append(label, style="bold")
    text.append(f"  ·  format v{trace.header.format_version}  ·  {len(trace)} operations  ·  ")
    footer = trace.footer
    if footer is None:
        text.append("incomplete (no footer: the recording did not close)", style="bold yellow")
    elif footer.ending.status == "raised":
        text.append(f"complete, ended with {footer.ending.error_type}", style="yellow")
    else:
        text.append("complete", style="green")
    text.append(f"  ·  {trace.header.mode}")
    if trace.header.source_trace_id is not None:
        text.append(" (a fork's branch)")
    text.append("  ·  runner ")
    text.append(runner or "(none: f will ask)", style="bold" if runner else "dim")
    return text
