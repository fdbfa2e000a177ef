"""A replay or fork running in a child process, then its result."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from toolreplay_tui.context import debugger
from toolreplay_tui.messages import RunFinished
from toolreplay_tui.model.runs import RunRequest
from toolreplay_tui.widgets.run_panel import RunPanel

__all__ = ["RunScreen"]


class RunScreen(ModalScreen[Literal["diff", "promote"] | None]):
    """Runs one request; `escape`/`ctrl+c` cancel it (killing the child), then close.

    Closes with the next step chosen here (`d` diff, `p` promote), or None.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Cancel / close", id="run.close"),
        Binding("ctrl+c", "cancel", "Cancel", show=False, id="run.cancel"),
        Binding("d", "diff", "Diff", id="run.diff"),
        Binding("p", "promote", "Promote", id="run.promote"),
    ]

    def __init__(self, request: RunRequest, title: str) -> None:
        super().__init__()
        self.request = request
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="run-box"):
            yield Static(self.title_text, id="run-title")
            yield RunPanel(id="run-panel")
        yield Footer()

    @property
    def panel(self) -> RunPanel:
        return self.query_one("#run-panel", RunPanel)

    def on_mount(self) -> None:
        self.panel.start(self.request, self.request.command)

    def on_run_panel_finished(self, event: RunPanel.Finished) -> None:
        event.stop()
        self.post_message(RunFinished(self.request, event.result))
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "diff":
            return True if debugger(self).can_diff() and not self.panel.running else None
        if action == "promote":
            return True if debugger(self).can_promote() and not self.panel.running else None
        return True

    def action_cancel(self) -> None:
        self.panel.cancel()

    def action_close(self) -> None:
        if self.panel.running:
            self.panel.cancel()
            return
        self.dismiss(None)

    def action_diff(self) -> None:
        self.dismiss("diff")

    def action_promote(self) -> None:
        self.dismiss("promote")
