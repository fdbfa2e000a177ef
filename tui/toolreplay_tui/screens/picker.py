"""`toolreplay tui DIRECTORY`: pick one trace of a folder (a capture folder, usually), or
of an object-storage prefix (`s3://bucket/prefix`, the same search run there).

The picker lists the traces below the folder newest first, as `toolreplay find`
does (`toolreplay.find_traces`, which reads only each file's header and footer),
with when the request started, its metadata, its operation count and how it
ended. Typing in the filter keeps the rows whose text contains every word typed;
enter opens the highlighted trace in the debugger, escape or q leaves.

It runs as an app of its own before the debugger (`pick_trace`), so the
debugger itself stays an app about exactly one trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.filter import LineFilter
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from toolreplay import FoundTrace, ToolReplayError, find_traces, terminal_safe_text
from toolreplay_tui.context import textual_app
from toolreplay_tui.terminal_filter import TERMINAL_SAFE

__all__ = ["CELL_LIMITS", "PickerRow", "TracePickerApp", "TracePickerScreen", "pick_trace"]

CELL_LIMITS = (19, 48, 10, 32, 64)
"""The most cells each column shows (started, metadata, ops, ending, trace); a longer
value ends in `…` (the filter still matches all of it)."""


def _bounded(cell: str, limit: int) -> Text:
    text = terminal_safe_text(cell)
    text.truncate(limit, overflow="ellipsis")
    return text


@dataclass(frozen=True, slots=True)
class PickerRow:
    """One trace as the picker lists it."""

    path: Path
    started: str
    metadata: str
    operations: str
    ending: str
    name: str

    @classmethod
    def of(cls, found: FoundTrace, folder: Path) -> PickerRow:
        ending = found.ending
        if ending is None:
            how = "incomplete"
        elif ending.get("status") == "completed":
            how = "completed"
        else:
            how = f"raised {ending.get('error_type')}"
        try:
            name = str(found.path.relative_to(folder))
        except ValueError:
            name = str(found.path)
        return cls(
            path=found.path,
            started=found.started.strftime("%Y-%m-%d %H:%M:%S"),
            metadata=found.metadata_text(),
            operations=str(found.operation_count),
            ending=how,
            name=name,
        )

    @property
    def cells(self) -> tuple[str, str, str, str, str]:
        return (self.started, self.metadata, self.operations, self.ending, self.name)

    def matches(self, words: list[str]) -> bool:
        text = " ".join(self.cells).lower()
        return all(word in text for word in words)


class TracePickerScreen(Screen[Path | str | None]):
    """The traces of a folder (or of an object-storage prefix, `s3://bucket/prefix`),
    newest first; dismissed with the chosen path (for a prefix, the trace's URL), or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open", id="picker.open"),
        Binding("slash", "filter", "Filter", key_display="/", id="picker.filter"),
        Binding("escape", "leave", "Back/quit", id="picker.leave"),
        Binding("q", "leave", "Quit", show=False, id="picker.quit"),
    ]

    def __init__(self, folder: Path | str) -> None:
        super().__init__()
        self.folder = folder
        self.rows: list[PickerRow] = []
        self.shown: list[PickerRow] = []
        self.problem: str | None = None
        reading = terminal_safe_text(f"Traces in {self.folder}: reading …")
        self.header = Static(reading, id="picker-header")
        self.filter = Input(placeholder="filter: words the row must contain", id="picker-filter")
        self.table: DataTable[Text] = DataTable(
            id="picker-table", cursor_type="row", zebra_stripes=True
        )

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.filter
        yield self.table
        yield Footer()

    def on_mount(self) -> None:
        self.table.add_columns("started (UTC)", "metadata", "ops", "ending", "trace")
        self.table.focus()
        self._load()

    @work(thread=True, exclusive=True)
    def _load(self) -> None:
        try:
            search = find_traces(self.folder)
            # A prefix's matches are named by their keys below it.
            root = self.folder if isinstance(self.folder, Path) else Path()
            rows = [PickerRow.of(found, root) for found in search]
            problem = f"{len(search.unreadable)} files skipped" if search.unreadable else None
        except ToolReplayError as error:
            rows, problem = [], str(error)
        textual_app(self).call_from_thread(self._loaded, rows, problem)

    def _loaded(self, rows: list[PickerRow], problem: str | None) -> None:
        self.rows, self.problem = rows, problem
        self._show(self.filter.value)

    def _show(self, text: str) -> None:
        words = text.lower().split()
        self.shown = [row for row in self.rows if row.matches(words)]
        table = self.table
        table.clear()
        for row in self.shown:
            # Text, not str: a str cell is read as markup, and each is the trace's: escaped,
            # and cut to its column's bound, so no trace widens a column past the screen.
            table.add_row(
                *(_bounded(cell, limit) for cell, limit in zip(row.cells, CELL_LIMITS, strict=True))
            )
        count = len(self.rows)
        summary = f"Traces in {self.folder}: {count} trace{'' if count == 1 else 's'}, newest first"
        if words:
            summary += f"; {len(self.shown)} match the filter"
        if self.problem:
            summary += f" ({self.problem})"
        self.header.update(terminal_safe_text(summary))

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._show(event.value)

    @on(Input.Submitted, "#picker-filter")
    def _filter_done(self) -> None:
        self.table.focus()

    @on(DataTable.RowSelected, "#picker-table")
    def _row_selected(self) -> None:
        self.action_open()

    def action_open(self) -> None:
        table = self.table
        if self.shown and 0 <= table.cursor_row < len(self.shown):
            chosen = self.shown[table.cursor_row].path
            if isinstance(self.folder, str):  # a prefix: the trace's URL, fetched by the caller
                self.dismiss(f"{self.folder.rstrip('/')}/{chosen.as_posix()}")
            else:
                self.dismiss(chosen)

    def action_filter(self) -> None:
        self.filter.focus()

    def action_leave(self) -> None:
        field = self.filter
        if field.has_focus and field.value:
            field.value = ""
            return
        self.dismiss(None)


class TracePickerApp(App[Path | str | None]):
    """The picker on its own: returns the chosen trace's path (a URL for a prefix), or None."""

    TITLE = "Tool Replay"
    ENABLE_COMMAND_PALETTE = False

    def get_line_filters(self) -> Sequence[LineFilter]:
        # The last guard: no character a terminal acts on is drawn, whatever draws it.
        return [*super().get_line_filters(), TERMINAL_SAFE]

    CSS = """
    #picker-header { height: auto; padding: 0 1; background: $panel; }
    #picker-filter { height: 3; }
    #picker-table { height: 1fr; }
    """

    def __init__(self, folder: Path | str) -> None:
        super().__init__()
        self.folder = folder

    def on_mount(self) -> None:
        self.push_screen(TracePickerScreen(self.folder), self.exit)


def pick_trace(folder: Path | str) -> Path | str | None:
    """Let the user pick a trace below `folder` (or an object-storage prefix URL); its
    path (for a prefix, its URL), or None if they left."""
    return TracePickerApp(folder).run()
