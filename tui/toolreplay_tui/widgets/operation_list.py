"""The operation list: index, effect, state (status, or where the outcome comes from), call.

A trace that ran on several lanes (tasks, threads) adds two columns when there is
room: the lane of each call, and a compact timeline of the calls around the
cursor, each row drawing when its call was in flight within the time those calls
span. `toolreplay_tui.model.columns` shares the width out: the call column (a
model call's summary, any other call's inputs) is given room first.
"""

from __future__ import annotations

from collections.abc import Container
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message

from toolreplay import OperationIdentity, terminal_safe_text
from toolreplay_tui.model.columns import ListColumns, list_columns, shown_width
from toolreplay_tui.model.rows import OperationRow, OperationRows
from toolreplay_tui.widgets.cursor_list import CursorList, navigation_bindings

__all__ = ["OperationList", "state_text"]


def state_text(row: OperationRow) -> str:
    """The state column: a pending patch, where a branch's outcome came from, or the
    recorded status (`ok`, `error`)."""
    if row.marker == "pending":
        return "pending*"
    return row.status if row.marker == "recorded" else row.marker


class OperationList(CursorList):
    """Every operation of the trace (or those the filter keeps), one line each."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "cursor-list--cursor",
        "operation-list--error",
        "operation-list--pending",
        "operation-list--patched",
        "operation-list--dim",
    }

    DEFAULT_CSS = """
    OperationList > .operation-list--error { color: $error; }
    OperationList > .operation-list--pending { color: $warning; text-style: bold; }
    OperationList > .operation-list--patched { color: $success; }
    OperationList > .operation-list--dim { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings("operations"),
        Binding("enter", "open", "Inspect output", show=False, id="operations.open"),
    ]

    class Highlighted(Message):
        """The cursor is on the operation at trace index `index` (None: nothing shown)."""

        def __init__(self, index: int | None) -> None:
            super().__init__()
            self.index = index

    class Opened(Message):
        """`enter` on an operation: inspect its output."""

    class ColumnsChanged(Message):
        """The columns moved (the list was resized, or lanes appeared): the header follows."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: OperationRows | None = None
        self.pending: Container[OperationIdentity] = ()
        self._index_width = 1
        self._effect_width = 6
        self._lane_width = 0  # 0: one lane, no lane or timeline column

    def set_rows(
        self,
        rows: OperationRows,
        pending: Container[OperationIdentity],
        *,
        effect_width: int,
        index: int | None = None,
    ) -> None:
        """Show `rows`; `effect_width` is the cells of the longest effect (with its
        occurrence suffix) seen so far, as shown (`model.columns.shown_width`)."""
        self.rows = rows
        self.pending = pending
        self._effect_width = effect_width
        position = 0 if index is None else rows.nearest_position(index)
        self.rows_changed(cursor=position)
        if not len(rows):
            self.post_message(self.Highlighted(None))

    def rows_changed(self, *, cursor: int | None = None, center: bool = False) -> None:
        if self.rows is not None:
            # Wide enough for the last index (the footer's count while still indexing).
            total = self.rows.trace.expected_count or len(self.rows.operations)
            self._index_width = max(len(str(total - 1)), 1)
            # Lanes are found while indexing: the lane column appears with the second one.
            rows = self.rows
            self._lane_width = (
                (max(map(shown_width, rows.lanes), default=0) or 1) if rows.concurrent else 0
            )
        super().rows_changed(cursor=cursor, center=center)
        self.post_message(self.ColumnsChanged())

    def columns(self, width: int | None = None) -> ListColumns:
        """The columns in a line of `width` cells (default the list's own width)."""
        return list_columns(
            self.size.width if width is None else width,
            index=self._index_width,
            effect=self._effect_width,
            lane=self._lane_width,
        )

    def header_text(self) -> str:
        return self.columns().header()

    def on_resize(self, event: events.Resize) -> None:
        super().on_resize(event)
        self.post_message(self.ColumnsChanged())

    @property
    def current_index(self) -> int | None:
        """The trace index of the operation under the cursor."""
        if self.rows is None or not len(self.rows):
            return None
        return self.rows.index_at(self.cursor)

    def row_count(self) -> int:
        return 0 if self.rows is None else len(self.rows)

    def render_row(self, position: int, width: int) -> Text:
        assert self.rows is not None
        columns = self.columns(width)
        row = self.rows.row(position, self.pending, preview_width=columns.call)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{row.logical_id:>{columns.index}}  ")
        if columns.lane:
            text.append(_cell(row.lane or "", columns.lane))
            text.append("  ")
        if columns.timeline:
            text.append(self.rows.timeline(position, self.cursor, columns.timeline))
            text.append("  ")
        text.append(
            _cell(row.effect, columns.effect, f"#{row.occurrence}" if row.occurrence else "")
        )
        text.append("  ")
        style = ""
        if row.marker == "pending":
            style = self.get_component_rich_style("operation-list--pending")
        elif row.status == "error":
            style = self.get_component_rich_style("operation-list--error")
        elif row.marker != "recorded":
            style = self.get_component_rich_style("operation-list--patched")
        text.append(f"{state_text(row):<{columns.state}}", style=style)
        text.append("  ")
        dim = self.get_component_rich_style("operation-list--dim")
        text.append(terminal_safe_text(row.preview, dim))
        return text

    def cursor_changed(self, position: int) -> None:
        if self._lane_width:
            self.refresh()  # the timeline follows the cursor's neighbourhood
        self.post_message(self.Highlighted(self.current_index))

    def action_open(self) -> None:
        self.post_message(self.Opened())


def _cell(text: str, width: int, suffix: str = "") -> Text:
    """`text` escaped (it is the trace's), cut with `…` and padded to `width` cells; a
    `suffix` (an occurrence, `#2`) is kept whole after a cut name."""
    cell = terminal_safe_text(text)
    room = width - len(suffix)
    if suffix and cell.cell_len + len(suffix) > width and room >= 2:
        cell.truncate(room, overflow="ellipsis")
    cell.append(suffix)
    cell.truncate(width, overflow="ellipsis", pad=True)
    return cell
