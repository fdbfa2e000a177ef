"""Small modal dialogs: a yes/no question and a one-line prompt."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from toolreplay import terminal_safe_text
from toolreplay_tui.context import session

__all__ = ["ConfirmScreen", "PromptScreen"]


class ConfirmScreen(ModalScreen[bool]):
    """Ask a yes/no question; dismisses with True for yes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str, *, yes: str = "yes", no: str = "no") -> None:
        super().__init__()
        self.question = question
        self.yes, self.no = yes, no

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            # Text, not str: a str is read as markup, and a question may quote a trace.
            yield Static(terminal_safe_text(self.question), classes="dialog-question")
            yield Static(Text(f"y  {self.yes}     n  {self.no}"), classes="dialog-keys")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class PromptScreen(ModalScreen[str | None]):
    """Ask for one line of text; dismisses with it, or None when cancelled.

    `check` returns a problem to show (the prompt stays open) or None to accept.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="prompt.cancel"),
    ]

    def __init__(
        self,
        question: str,
        value: str = "",
        *,
        check: Callable[[str], str | None] | None = None,
        placeholder: str = "",
    ) -> None:
        super().__init__()
        self.question = question
        self.initial = value
        self.check = check
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(terminal_safe_text(self.question), classes="dialog-question")
            yield Input(self.initial, placeholder=self.placeholder, id="prompt-input")
            yield Static(id="prompt-problem", classes="dialog-problem")
            yield Static("enter  accept     escape  cancel", classes="dialog-keys")

    def on_mount(self) -> None:
        field = self.query_one("#prompt-input", Input)
        field.cursor_blink = session(self).blink_cursors
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        problem = self.check(value) if self.check is not None else None
        if problem is not None:
            self.query_one("#prompt-problem", Static).update(terminal_safe_text(problem))
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)
