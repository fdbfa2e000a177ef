"""A replay or fork running in a child process, then its result.

When a fork stops at a call the recording never made, the screen shows that
call and offers, one key each, to supply its output, supply an error, or stop.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

from toolreplay import terminal_safe_text
from toolreplay.portable import preview
from toolreplay_tui.context import debugger
from toolreplay_tui.messages import PromoteFinished, RunFinished
from toolreplay_tui.model.runs import RunRequest
from toolreplay_tui.model.stops import UnrecordedCall, unrecorded_call
from toolreplay_tui.widgets.key_footer import KeyFooter
from toolreplay_tui.widgets.run_panel import RunPanel
from toolreplay_tui.widgets.scroll_box import ScrollBox

__all__ = ["NextStep", "RunScreen"]

NextStep = Literal["diff", "promote", "promote_now", "supply_output", "supply_error"]


class RunScreen(ModalScreen[NextStep | None]):
    """Runs one request; `escape`/`ctrl+c` cancel it (killing the child), then close.

    Closes with the next step chosen here (`d` diff, `p` the promote form, `P`
    promote at once, `s` supply the output or `z` an error of the unrecorded call
    a fork stopped at), or None. A promote (`P`) runs here too.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Cancel / close", id="run.close"),
        Binding("ctrl+c", "cancel", "Cancel", show=False, id="run.cancel"),
        Binding("s", "supply_output", "Supply output", id="run.supply_output"),
        Binding("z", "supply_error", "Supply error", id="run.supply_error"),
        Binding("d", "diff", "Diff", id="run.diff"),
        Binding("p", "promote", "Promote…", id="run.promote"),
        Binding("P", "promote_now", "Promote now", id="run.promote_now"),
    ]

    def __init__(self, request: RunRequest, title: str) -> None:
        super().__init__()
        self.request = request
        self.title_text = title
        self.stopped_at: UnrecordedCall | None = None

    def compose(self) -> ComposeResult:
        with ScrollBox(id="run-box"):
            # Text, not str: a str is read as markup, and a title names trace files.
            yield Static(terminal_safe_text(self.title_text), id="run-title")
            yield Static(id="run-offer", classes="hidden")
            yield RunPanel(id="run-panel")
        yield KeyFooter()

    @property
    def panel(self) -> RunPanel:
        return self.query_one("#run-panel", RunPanel)

    def on_mount(self) -> None:
        self.query_one("#run-box", ScrollBox).focus()
        self.panel.start(self.request, self.request.command)

    def on_run_panel_finished(self, event: RunPanel.Finished) -> None:
        event.stop()
        if self.request.command == "promote":
            self.post_message(PromoteFinished(event.result))
            self.refresh_bindings()
            return
        self.stopped_at = unrecorded_call(event.result)
        if self.stopped_at is not None:
            self._offer(self.stopped_at)
        self.query_one("#run-box", ScrollBox).scroll_home(animate=False)
        self.post_message(RunFinished(self.request, event.result))
        self.refresh_bindings()

    def _offer(self, call: UnrecordedCall) -> None:
        nearest = (
            "the nearest recorded output of the same effect"
            if call.nearest_id is not None
            else "null (the recording never called this effect)"
        )
        offer = self.query_one("#run-offer", Static)
        offer.update(
            Text.assemble(
                ("The fork stopped at a call the recording never made:\n", "bold yellow"),
                terminal_safe_text(f"  {call.effect} occurrence {call.occurrence}", "bold"),
                "\n",
                terminal_safe_text(f"  inputs {preview(call.inputs, 200)}"),
                "\n",
                ("s", "bold"),
                (f" supplies its output (the editor starts from {nearest})  ·  ", ""),
                ("z", "bold"),
                (" supplies an error  ·  ", ""),
                ("escape", "bold"),
                (" stops here", ""),
            )
        )
        offer.remove_class("hidden")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("supply_output", "supply_error"):
            return True if self.stopped_at is not None and not self.panel.running else None
        if action == "diff":
            return True if debugger(self).can_diff() and not self.panel.running else None
        if action in ("promote", "promote_now"):
            # After a promote, its own result is on screen: promoting again is the form's job.
            promotable = debugger(self).can_promote() and self.request.command != "promote"
            return True if promotable and not self.panel.running else None
        return True

    def action_cancel(self) -> None:
        self.panel.cancel()

    def action_close(self) -> None:
        if self.panel.running:
            self.panel.cancel()
            return
        self.dismiss(None)

    def action_supply_output(self) -> None:
        self.dismiss("supply_output")

    def action_supply_error(self) -> None:
        self.dismiss("supply_error")

    def action_diff(self) -> None:
        self.dismiss("diff")

    def action_promote(self) -> None:
        self.dismiss("promote")

    def action_promote_now(self) -> None:
        self.dismiss("promote_now")
