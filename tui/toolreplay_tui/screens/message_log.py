"""`m`: every message of the session, oldest first, errors in red; notifications expire,
this log keeps them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from toolreplay import terminal_safe_text
from toolreplay_tui.widgets.key_footer import KeyFooter

if TYPE_CHECKING:
    from textual.widgets import RichLog

__all__ = ["LoggedMessage", "MessageLogScreen"]


def _rich_log() -> type[RichLog]:
    """`RichLog`, imported when the log is first shown: it brings `rich.pretty`, which
    nothing on the way to the first frame needs."""
    from textual.widgets import RichLog

    return RichLog


@dataclass(frozen=True, slots=True)
class LoggedMessage:
    """One message the debugger showed: when, what, and whether it was an error."""

    time: datetime
    text: str
    error: bool


class MessageLogScreen(ModalScreen[None]):
    """The messages of this session, scrollable, newest at the bottom."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,m", "close", "Close", id="messages.close"),
    ]

    def __init__(self, messages: Sequence[LoggedMessage]) -> None:
        super().__init__()
        self.messages = messages

    def compose(self) -> ComposeResult:
        with Vertical(id="messages-box"):
            yield Static(
                Text.assemble(
                    ("Messages of this session", "bold"),
                    (f"  {len(self.messages)}, oldest first · escape closes", "dim"),
                ),
                id="messages-title",
            )
            yield _rich_log()(id="messages-log", wrap=True, auto_scroll=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        log = self.query_one(_rich_log())
        if not self.messages:
            log.write(Text("no message yet", style="dim"))
        for message in self.messages:
            log.write(
                Text.assemble(
                    (message.time.strftime("%H:%M:%S  "), "dim"),
                    terminal_safe_text(message.text, "red" if message.error else "", keep="\n"),
                )
            )
        log.focus()

    def action_close(self) -> None:
        self.dismiss(None)
