"""The side-by-side diff: one line per alignment row, source left, branch right."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.binding import BindingType
from textual.message import Message

from toolreplay_tui.model.diffrows import DiffRows
from toolreplay_tui.widgets.cursor_list import CursorList, navigation_bindings

__all__ = ["DiffView"]

_ROW_WIDTH = 6
_MARK_WIDTH = 5


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

    @staticmethod
    def header_text(width: int) -> str:
        side = max((width - _ROW_WIDTH - _MARK_WIDTH - 3) // 2, 4)
        return (
            f"{'row':>{_ROW_WIDTH - 1}} {'diff':<{_MARK_WIDTH}}{'source':<{side}} │ branch / target"
        )

    def row_count(self) -> int:
        return 0 if self.rows is None else len(self.rows)

    def render_row(self, position: int, width: int) -> Text:
        assert self.rows is not None
        side = max((width - _ROW_WIDTH - _MARK_WIDTH - 3) // 2, 4)
        row = self.rows.row(position, side - 1)
        style = self.get_component_rich_style(
            {
                "changed": "diff-view--changed",
                "missing": "diff-view--missing",
                "added": "diff-view--added",
            }.get(row.status, "diff-view--same")
        )
        first = position == self.rows.first_divergence
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{'▶' if first else ' '}{row.index:>{_ROW_WIDTH - 2}} ")
        marker = row.marker + ("P" if row.patch_id else "")
        text.append(f"{marker:<{_MARK_WIDTH}}", style=style if row.differs else "")
        left = row.left if len(row.left) <= side else row.left[: side - 1] + "…"
        right = row.right if len(row.right) <= side else row.right[: side - 1] + "…"
        text.append(f"{left:<{side}}", style=style if row.status in ("changed", "missing") else "")
        text.append(" │ ")
        text.append(right, style=style if row.status in ("changed", "added") else "")
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
