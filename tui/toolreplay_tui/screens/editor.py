"""Edit an operation's whole output as JSON text; `ctrl+s` makes it a pending patch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static, TextArea

from toolreplay import JsonValue, Operation, Returned, terminal_safe, terminal_safe_text
from toolreplay_tui.context import session, textual_app
from toolreplay_tui.model.jsontext import parse_portable
from toolreplay_tui.screens.dialogs import ConfirmScreen
from toolreplay_tui.widgets.key_footer import KeyFooter

__all__ = ["Edited", "EditorScreen"]


@dataclass(frozen=True, slots=True)
class Edited:
    """The value the editor was saved with (`null` included, hence the wrapper)."""

    value: JsonValue


class EditorScreen(Screen[Edited | None]):
    """A plain-text JSON editor (no tree-sitter: it crashes on Textual's JSON query).

    Dismisses with the new value after a successful `ctrl+s`, or None when the
    edit is dropped. Invalid JSON keeps the buffer, moves the cursor to the
    problem and says what it is.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Make patch", id="editor.save"),
        Binding("escape", "cancel", "Cancel", id="editor.cancel"),
    ]

    def __init__(
        self,
        operation: Operation | None,
        text: str,
        *,
        problem: str | None = None,
        heading: str | None = None,
        select_all: bool = False,
        save_label: str = "makes it a pending patch",
    ) -> None:
        """Edit `operation`'s output, or (`operation` None) what `heading` describes.

        `select_all` starts with the whole text selected, so typing replaces it;
        `save_label` says what ctrl+s does with the value.
        """
        super().__init__()
        self.save_label = save_label
        self.select_all = select_all
        self.operation = operation
        # JSON text: an escaped character (`\u202e`) is the same value, and shows.
        self.initial = terminal_safe(text, keep="\n\t")
        self.initial_problem = problem
        self.heading = heading

    def _heading(self) -> str:
        if self.heading is not None or self.operation is None:
            return self.heading or "Edit the value"
        operation = self.operation
        what = "output" if isinstance(operation.outcome, Returned) else "return value (it raised)"
        return (
            f"Edit the {what} of #{operation.logical_id} {operation.effect} occurrence "
            f"{operation.identity.occurrence}"
        )

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble(
                terminal_safe_text(self._heading(), "bold"),
                (f"   ctrl+s {self.save_label} · escape cancels", "dim"),
            ),
            id="editor-title",
        )
        yield TextArea(
            self.initial,
            language=None,
            soft_wrap=False,
            show_line_numbers=True,
            id="editor-text",
        )
        yield Static(id="editor-problem", classes="hidden")
        yield KeyFooter()

    @property
    def text_area(self) -> TextArea:
        return self.query_one("#editor-text", TextArea)

    def on_mount(self) -> None:
        area = self.text_area
        area.cursor_blink = session(self).blink_cursors
        area.indent_width = 2
        area.focus()
        if self.select_all:
            area.select_all()
        if self.initial_problem is not None:
            self.show_problem(self.initial_problem)

    def show_problem(self, message: str) -> None:
        problem = self.query_one("#editor-problem", Static)
        problem.update(terminal_safe_text(message, "bold", keep="\n"))
        problem.remove_class("hidden")

    def action_save(self) -> None:
        parsed = parse_portable(self.text_area.text, what="the output")
        if parsed.problem is None:
            self.dismiss(Edited(parsed.value))
            return
        where = parsed.problem
        if where.line is not None and where.column is not None:
            self.text_area.cursor_location = (where.line - 1, where.column - 1)
        self.text_area.focus()
        self.show_problem(f"not saved: {where.describe()}")

    def action_cancel(self) -> None:
        if self.text_area.text == self.initial:
            self.dismiss(None)
            return

        def answered(drop: bool | None) -> None:
            if drop:
                self.dismiss(None)

        textual_app(self).push_screen(
            ConfirmScreen("Drop your changes to this output?", yes="drop them", no="keep editing"),
            answered,
        )
