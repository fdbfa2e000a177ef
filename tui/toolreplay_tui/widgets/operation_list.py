"""The operation list: index, effect, ok/error, where the outcome comes from, inputs.

A trace that ran on several lanes (tasks, threads) adds two columns: the lane
of each call, and a compact timeline of the calls around the cursor, each row
drawing when its call was in flight within the time those calls span.
"""

from __future__ import annotations

from collections.abc import Container
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message

from toolreplay import OperationIdentity, terminal_safe_text
from toolreplay_tui.model.rows import OperationRows
from toolreplay_tui.widgets.cursor_list import CursorList, navigation_bindings

__all__ = ["OperationList"]

_MARKER_TEXT = {"recorded": "recorded", "patched": "patched", "pending": "pending*"}
TIMELINE_WIDTH = 12


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
        self.rows = rows
        self.pending = pending
        self._effect_width = max(min(effect_width, 40), 6)
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
            self._lane_width = max(4, *(len(lane) for lane in rows.lanes)) if rows.concurrent else 0
        super().rows_changed(cursor=cursor, center=center)

    def header_text(self) -> str:
        lane = f"{'lane':<{self._lane_width}}  " if self._lane_width else ""
        timeline = f"{'timeline':<{TIMELINE_WIDTH}}  " if self._lane_width else ""
        return (
            f"{'#':>{self._index_width}}  {lane}{'effect':<{self._effect_width}}  "
            f"{'status':<6}  {'origin':<8}  {timeline}inputs"
        )

    @property
    def current_index(self) -> int | None:
        """The trace index of the operation under the cursor."""
        if self.rows is None or not len(self.rows):
            return None
        return self.rows.index_at(self.cursor)

    def row_count(self) -> int:
        return 0 if self.rows is None else len(self.rows)

    def _preview_width(self, width: int) -> int:
        """The cells left for the preview after the other columns, in a line of `width`."""
        used = self._index_width + 2 + self._effect_width + 2 + 6 + 2 + 8 + 2
        if self._lane_width:
            used += self._lane_width + 2 + TIMELINE_WIDTH + 2
        return max(width - used, 12)

    def render_row(self, position: int, width: int) -> Text:
        assert self.rows is not None
        row = self.rows.row(position, self.pending, preview_width=self._preview_width(width))
        effect = row.effect
        if row.occurrence:
            effect = f"{effect}#{row.occurrence}"
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{row.logical_id:>{self._index_width}}  ")
        if self._lane_width:
            text.append(_cell(row.lane or "", self._lane_width))
            text.append("  ")
        text.append(_cell(effect, self._effect_width))
        text.append("  ")
        status_style = (
            self.get_component_rich_style("operation-list--error") if row.status == "error" else ""
        )
        text.append(f"{row.status:<6}", style=status_style)
        text.append("  ")
        marker_style = ""
        if row.marker == "pending":
            marker_style = self.get_component_rich_style("operation-list--pending")
        elif row.marker == "patched":
            marker_style = self.get_component_rich_style("operation-list--patched")
        text.append(f"{_MARKER_TEXT[row.marker]:<8}", style=marker_style)
        text.append("  ")
        if self._lane_width:
            text.append(self.rows.timeline(position, self.cursor, TIMELINE_WIDTH))
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


def _cell(text: str, width: int) -> Text:
    """`text` escaped (it is the trace's), cut with `…` and padded to `width` cells."""
    cell = terminal_safe_text(text)
    cell.truncate(width, overflow="ellipsis", pad=True)
    return cell
