"""`:`: a one-line command prompt at the bottom of the screen (`:123`, `:effect NAME`…).

What was typed is parsed by `toolreplay_tui.model.commandline`; a command that
cannot be parsed keeps the prompt open, with what was typed and why it was refused.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from toolreplay_tui.context import session
from toolreplay_tui.model.commandline import Command, CommandLineError, parse_command

__all__ = ["CommandLineScreen"]


class CommandLineScreen(ModalScreen[Command | None]):
    """Dismisses with the command typed, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="command_line.cancel"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="command-line-box"):
            yield Static(id="command-line-problem", classes="hidden")
            yield Input(placeholder="123 · effect NAME · w · q · help", id="command-line-input")

    def on_mount(self) -> None:
        field = self.query_one("#command-line-input", Input)
        field.cursor_blink = session(self).blink_cursors
        field.border_title = ": command (enter runs it, escape cancels)"
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            command = parse_command(event.value)
        except CommandLineError as error:
            problem = self.query_one("#command-line-problem", Static)
            problem.update(Text(str(error), style="bold"))
            problem.remove_class("hidden")
            session(self).tell(str(error), error=True, toast=False)
            return
        self.dismiss(command)

    def action_cancel(self) -> None:
        self.dismiss(None)
