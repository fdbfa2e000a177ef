"""`CursorList`: a `ScrollView` of rows with a cursor, rendering only the visible rows.

`render_line` asks the subclass for one row at a time (`render_row`), so a list of
100,000 rows costs what the 40 rows on screen cost. Subclasses say how many rows
there are and what each looks like, and hear about cursor moves. A row may take
more than one line (`row_height`, e.g. the diff stacking source over target in a
narrow terminal); the cursor still moves by row.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from toolreplay_tui.context import textual_app

__all__ = ["CursorList", "navigation_bindings"]


def navigation_bindings(prefix: str) -> list[BindingType]:
    """`j/k`, arrows, `g/G`, home/end, page and half-page keys, with ids under `prefix`."""
    return [
        Binding("j,down", "cursor_down", "Down", show=False, id=f"{prefix}.down"),
        Binding("k,up", "cursor_up", "Up", show=False, id=f"{prefix}.up"),
        Binding("g,home", "cursor_first", "First", show=False, id=f"{prefix}.first"),
        Binding("G,end", "cursor_last", "Last", show=False, id=f"{prefix}.last"),
        Binding(
            "pagedown,ctrl+f", "cursor_page_down", "Page down", show=False, id=f"{prefix}.page_down"
        ),
        Binding("pageup,ctrl+b", "cursor_page_up", "Page up", show=False, id=f"{prefix}.page_up"),
        Binding(
            "ctrl+d",
            "cursor_half_page_down",
            "Half page down",
            show=False,
            id=f"{prefix}.half_down",
        ),
        Binding(
            "ctrl+u", "cursor_half_page_up", "Half page up", show=False, id=f"{prefix}.half_up"
        ),
    ]


class CursorList(ScrollView, can_focus=True):
    """A vertical list of rows with one selected (the cursor)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"cursor-list--cursor"}

    DEFAULT_CSS = """
    CursorList {
        overflow-x: hidden;
        overflow-y: auto;
    }
    CursorList > .cursor-list--cursor {
        background: $foreground 15%;
    }
    CursorList:focus > .cursor-list--cursor {
        background: $accent;
        color: $text;
        text-style: bold;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = navigation_bindings("list")

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.cursor = 0
        self.shown_count = 0
        """`row_count()` when the rows last changed (a list that grows compares with it)."""

    # --- what subclasses provide -----------------------------------------------------

    def row_count(self) -> int:
        return 0

    def render_row(self, position: int, width: int) -> Text:
        return Text("")

    @property
    def row_height(self) -> int:
        """Lines per row; subclasses drawing a row on several lines override it."""
        return 1

    def render_row_line(self, position: int, line: int, width: int) -> Text:
        """Line `line` (below `row_height`) of row `position`; the first is `render_row`."""
        return self.render_row(position, width) if line == 0 else Text("")

    def cursor_changed(self, position: int) -> None:
        """Called after the cursor moved (also when it is set to the same row)."""

    # --- rows ------------------------------------------------------------------------

    def rows_changed(self, *, cursor: int | None = None, center: bool = False) -> None:
        """The rows changed (count or content): resize, clamp the cursor, repaint."""
        count = self.shown_count = self.row_count()
        self._size_to_rows()
        target = self.cursor if cursor is None else cursor
        self.cursor = max(0, min(target, count - 1)) if count else 0
        self.refresh()
        self._ensure_visible(center=center)
        if count:
            self.cursor_changed(self.cursor)

    def move_to(self, position: int, *, center: bool = False) -> None:
        count = self.row_count()
        if not count:
            return
        position = max(0, min(position, count - 1))
        previous = self.cursor
        self.cursor = position
        height = self.row_height
        self.refresh_lines(previous * height, height)
        self.refresh_lines(position * height, height)
        self._ensure_visible(center=center)
        self.cursor_changed(position)

    @property
    def page_height(self) -> int:
        """Whole rows that fit on screen."""
        return max(self.scrollable_content_region.height // self.row_height, 1)

    def _size_to_rows(self) -> None:
        self.virtual_size = Size(
            max(self.scrollable_content_region.width, 1), self.row_count() * self.row_height
        )

    def _ensure_visible(self, *, center: bool = False) -> None:
        height = self.scrollable_content_region.height
        if height <= 0:
            self.call_after_refresh(self._ensure_visible, center=center)
            return
        top = round(self.scroll_offset.y)
        lines = self.row_height
        first, last = self.cursor * lines, self.cursor * lines + lines - 1
        if center:
            target = max(0, first - (height - lines) // 2)
        elif first < top:
            target = first
        elif last >= top + height:
            target = last - height + 1
        else:
            return
        self.scroll_to(y=target, animate=False, force=True)

    # --- rendering -------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        position, line = divmod(round(self.scroll_offset.y) + y, self.row_height)
        base = self.rich_style
        if position >= self.row_count() or width <= 0:
            return Strip.blank(max(width, 0), base)
        text = self.render_row_line(position, line, width)
        text.truncate(width, overflow="ellipsis", pad=True)
        if position == self.cursor:
            cursor_style: Style = self.get_component_rich_style("cursor-list--cursor")
            text.stylize(cursor_style)
        segments = list(text.render(textual_app(self).console, end=""))
        return Strip(segments).adjust_cell_length(width, base).apply_style(base)

    def on_resize(self, event: events.Resize) -> None:
        self._size_to_rows()
        self._ensure_visible()

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        self.move_to((round(self.scroll_offset.y) + offset.y) // self.row_height)

    # --- actions ---------------------------------------------------------------------

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1)

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1)

    def action_cursor_first(self) -> None:
        self.move_to(0)

    def action_cursor_last(self) -> None:
        self.move_to(self.row_count() - 1)

    def action_cursor_page_down(self) -> None:
        self.move_to(self.cursor + self.page_height)

    def action_cursor_page_up(self) -> None:
        self.move_to(self.cursor - self.page_height)

    def action_cursor_half_page_down(self) -> None:
        self.move_to(self.cursor + max(self.page_height // 2, 1))

    def action_cursor_half_page_up(self) -> None:
        self.move_to(self.cursor - max(self.page_height // 2, 1))
