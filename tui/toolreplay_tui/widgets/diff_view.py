"""The diff: one line per alignment row, source left, branch right; stacked when narrow.

Below `STACK_BELOW` columns the two sides would be cut to a few words each, so
each row takes two lines instead: the source over the branch, both at full width.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.message import Message

from toolreplay import terminal_safe_text
from toolreplay_tui.model.diffrows import DiffRows
from toolreplay_tui.widgets.cursor_list import CursorList, navigation_bindings

__all__ = ["DiffView"]

_ROW_WIDTH = 6
_MARK_WIDTH = 5
_SIDE_LABEL_WIDTH = 7  # "source " / "target "

STACK_BELOW = 100
"""Narrower than this (in columns), the view stacks source over target."""


def _side_width(width: int) -> int:
    return max((width - _ROW_WIDTH - _MARK_WIDTH - 3) // 2, 4)


def _cell(text: str, width: int, style: str | Style) -> Text:
    """`text` escaped (a trace's), cut with `…` and padded to `width` cells."""
    cell = terminal_safe_text(text, style)
    cell.truncate(width, overflow="ellipsis", pad=True)
    return cell


class DiffView(CursorList):
    """Aligned rows of a diff report; rows with a difference are marked and coloured."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "cursor-list--cursor",
        "diff-view--changed",
        "diff-view--missing",
        "diff-view--added",
        "diff-view--first",
        "diff-view--same",
        "diff-view--patch",
    }

    DEFAULT_CSS = """
    DiffView > .diff-view--changed { color: $warning; }
    DiffView > .diff-view--missing { color: $error; }
    DiffView > .diff-view--added { color: $success; }
    DiffView > .diff-view--first { background: $warning 25%; text-style: bold; }
    DiffView > .diff-view--same { color: $text-muted; }
    DiffView > .diff-view--patch { color: $accent; text-style: bold; }
    """

    BINDINGS: ClassVar[list[BindingType]] = navigation_bindings("diff")

    class Highlighted(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: DiffRows | None = None

    def set_rows(self, rows: DiffRows) -> None:
        self.rows = rows
        first = rows.first_divergence
        self.rows_changed(cursor=first or 0, center=first is not None)

    @property
    def stacked(self) -> bool:
        """Whether the view is too narrow for two sides (its width, not its content's:
        the scrollbar that stacking may bring must not switch it back)."""
        return self.size.width < STACK_BELOW

    def header_text(self) -> str:
        """The column titles above the rows, for the view's current width."""
        head = f"{'row':>{_ROW_WIDTH - 1}} {'diff':<{_MARK_WIDTH}}"
        if self.stacked:
            return f"{head}source, with the branch / target below it"
        side = _side_width(self.scrollable_content_region.width)
        return f"{head}{'source':<{side}} │ branch / target"

    def row_count(self) -> int:
        return 0 if self.rows is None else len(self.rows)

    @property
    def row_height(self) -> int:
        return 2 if self.stacked else 1

    def _row_style(self, status: str) -> Style:
        return self.get_component_rich_style(
            {
                "changed": "diff-view--changed",
                "missing": "diff-view--missing",
                "added": "diff-view--added",
            }.get(status, "diff-view--same")
        )

    def render_row_line(self, position: int, line: int, width: int) -> Text:
        if not self.stacked:
            return self.render_row(position, width)
        assert self.rows is not None
        side = width - _ROW_WIDTH - _MARK_WIDTH - _SIDE_LABEL_WIDTH
        row = self.rows.row(position, side - 1)
        style = self._row_style(row.status)
        first = position == self.rows.first_divergence
        text = Text(no_wrap=True, overflow="ellipsis")
        if line == 0:
            text.append(f"{'▶' if first else ' '}{row.index:>{_ROW_WIDTH - 2}} ")
            marker = row.marker + ("P" if row.patch_id else "")
            text.append(f"{marker:<{_MARK_WIDTH}}", style=style if row.differs else "")
            text.append("source ", style=self.get_component_rich_style("diff-view--same"))
            shown = style if row.status in ("changed", "missing") else ""
            text.append(_cell(row.left or "(none)", side, shown))
            if row.patch_id:
                text.stylize(
                    self.get_component_rich_style("diff-view--patch"),
                    _ROW_WIDTH,
                    _ROW_WIDTH + _MARK_WIDTH,
                )
        else:
            text.append(" " * (_ROW_WIDTH + _MARK_WIDTH))
            text.append("target ", style=self.get_component_rich_style("diff-view--same"))
            shown = style if row.status in ("changed", "added") else ""
            text.append(_cell(row.right or "(none)", side, shown))
        if first:
            text.stylize(self.get_component_rich_style("diff-view--first"))
        return text

    def render_row(self, position: int, width: int) -> Text:
        assert self.rows is not None
        side = _side_width(width)
        row = self.rows.row(position, side - 1)
        style = self._row_style(row.status)
        first = position == self.rows.first_divergence
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{'▶' if first else ' '}{row.index:>{_ROW_WIDTH - 2}} ")
        marker = row.marker + ("P" if row.patch_id else "")
        text.append(f"{marker:<{_MARK_WIDTH}}", style=style if row.differs else "")
        left = _cell(row.left, side, style if row.status in ("changed", "missing") else "")
        text.append(left)
        text.append(" │ ")
        right = _cell(row.right, side, style if row.status in ("changed", "added") else "")
        right.rstrip()
        text.append(right)
        if row.patch_id:
            text.stylize(
                self.get_component_rich_style("diff-view--patch"),
                _ROW_WIDTH,
                _ROW_WIDTH + _MARK_WIDTH,
            )
        if first:
            text.stylize(self.get_component_rich_style("diff-view--first"))
        return text

    def cursor_changed(self, position: int) -> None:
        self.post_message(self.Highlighted(position))

    def step_difference(self, *, forward: bool = True) -> bool:
        """Move to the next (previous) row with a difference; False if there is none."""
        if self.rows is None:
            return False
        found = self.rows.next_difference(self.cursor, forward=forward)
        if found is None:
            return False
        self.move_to(found, center=True)
        return True
