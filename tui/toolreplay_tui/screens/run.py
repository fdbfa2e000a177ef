"""A replay or fork running in a child process, then its result.

When a fork stops at a call the recording never made, the screen shows that
call and offers, one key each, to supply its output, supply an error, or stop.
At a model call (`toolreplay_tui.model.new_call`) it offers more: ask the model
live, answer with a line of text, call one of the tools the request offers, or
reuse the nearest recorded answer; each reply is shown before the fork runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar, Literal, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

from toolreplay import summarize_call, terminal_safe_text
from toolreplay.portable import preview
from toolreplay_tui.context import session
from toolreplay_tui.messages import PromoteFinished, RunFinished
from toolreplay_tui.model.new_call import NewModelCall, live_status, new_model_call
from toolreplay_tui.model.new_call import supported as replies_supported
from toolreplay_tui.model.runs import RunRequest
from toolreplay_tui.model.stops import UnrecordedCall, unrecorded_call
from toolreplay_tui.widgets.key_footer import KeyFooter
from toolreplay_tui.widgets.run_panel import RunPanel
from toolreplay_tui.widgets.scroll_box import ScrollBox

__all__ = ["NextStep", "RunScreen"]

NextStep = Literal[
    "diff",
    "promote",
    "promote_now",
    "supply_output",
    "supply_error",
    "ask_live",
    "answer_text",
    "call_tool",
    "reuse_answer",
]
_MODEL_STEPS = ("answer_text", "call_tool", "reuse_answer", "ask_live")


class RunScreen(ModalScreen[NextStep | None]):
    """Runs one request; `escape`/`ctrl+c` cancel it (killing the child), then close.

    Closes with the next step chosen here (`d` diff, `p` the promote form, `P`
    promote at once, `s` supply the output or `z` an error of the unrecorded call
    a fork stopped at; at a model call also `a` ask it live, `t` answer with text,
    `c` call a tool, `r` reuse the recorded answer), or None. A promote (`P`) runs
    here too.
    """

    FOOTER_PRIORITY: ClassVar[tuple[str, ...]] = (
        "run.answer_text",
        "run.call_tool",
        "run.ask_live",
        "run.reuse_answer",
        "run.supply_output",
        "run.close",
        "run.diff",
        "run.promote_now",
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Cancel / close", id="run.close"),
        Binding("ctrl+c", "cancel", "Cancel", show=False, id="run.cancel"),
        Binding("a", "step('ask_live')", "Ask the model live", id="run.ask_live"),
        Binding("t", "step('answer_text')", "Answer with text", id="run.answer_text"),
        Binding("c", "step('call_tool')", "Answer with a tool call", id="run.call_tool"),
        Binding("r", "step('reuse_answer')", "Reuse the recorded answer", id="run.reuse_answer"),
        Binding("s", "supply_output", "Supply output (full body)", id="run.supply_output"),
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
        self.model_call: NewModelCall | None = None
        """The call stopped at, when it is a model call a reply can answer."""

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

    @property
    def child_environment(self) -> Mapping[str, str]:
        """The environment the run's child runs with."""
        return self.request.env if self.request.env is not None else os.environ

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
            found = new_model_call(self.stopped_at)
            self.model_call = found if found is not None and replies_supported() else None
            self._offer(self.stopped_at)
        self.query_one("#run-box", ScrollBox).scroll_home(animate=False)
        self.post_message(RunFinished(self.request, event.result))
        self.refresh_bindings()

    def _offer(self, call: UnrecordedCall) -> None:
        offer = self.query_one("#run-offer", Static)
        offer.update(self._offer_text(call))
        offer.remove_class("hidden")

    def _offer_text(self, call: UnrecordedCall) -> Text:
        stopped = (
            "The fork stopped at a call the recording never made:"
            if call.raised is None
            else f"The application caught the miss of a call the recording never made (then "
            f"raised {call.raised}):"
        )
        heading = Text.assemble(
            terminal_safe_text(stopped, "bold yellow"),
            "\n",
            terminal_safe_text(f"  {call.effect} occurrence {call.occurrence}", "bold"),
            "\n",
        )
        model = self.model_call
        if model is None:
            nearest = (
                "the nearest recorded output of the same effect"
                if call.nearest_id is not None
                else "null (the recording never called this effect)"
            )
            return Text.assemble(
                heading,
                terminal_safe_text(f"  inputs {preview(call.inputs, 200)}"),
                "\n",
                ("s", "bold"),
                (f" supplies its output (the editor starts from {nearest})  ·  ", ""),
                ("z", "bold"),
                (" supplies an error  ·  ", ""),
                ("escape", "bold"),
                (" stops here", ""),
            )
        summary = summarize_call(call.effect, call.inputs)
        asked = summary.asked if summary is not None else preview(call.inputs, 200)
        tools = ", ".join(tool.name for tool in model.tools) or "none"
        stream = "streamed" if model.streamed else "not streamed"
        recorded = model.recorded_answer()
        status = live_status(call.effect, self.child_environment)
        key = [("  a", "bold"), " asks the model live: ", terminal_safe_text(status.describe())]
        return Text.assemble(
            heading,
            terminal_safe_text(f"  {model.api} API, {stream}; the request's tools: {tools}"),
            "\n",
            terminal_safe_text(f"  last in the request: {asked}", "dim"),
            "\n\nAnswer it, and the fork runs again:\n",
            *key,
            "\n",
            ("  t", "bold"),
            " answers with a line of text  ·  ",
            ("c", "bold"),
            " calls one of its tools (JSON arguments)\n",
            ("  r", "bold"),
            (
                f" reuses the recorded answer of #{recorded.logical_id}"
                if recorded is not None
                else " (no recorded answer of this endpoint fits the request)"
            ),
            "  ·  ",
            ("s", "bold"),
            " edits its full output  ·  ",
            ("z", "bold"),
            " makes it raise  ·  ",
            ("escape", "bold"),
            " stops here\n",
            (
                "t, c and r answer the next new call of this effect (no inputs named) and "
                "show the reply before the fork runs",
                "dim",
            ),
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("supply_output", "supply_error"):
            # Only where a fork stopped at a new call: elsewhere they are not shown.
            if self.stopped_at is None:
                return False
            return None if self.panel.running else True
        if action == "step":
            # Only at a model call: elsewhere these keys are not shown at all.
            model = self.model_call
            if model is None:
                return False
            if self.panel.running:
                return None
            if parameters == ("reuse_answer",) and model.recorded_answer() is None:
                return None
            return True
        if action == "diff":
            return True if session(self).can_diff() and not self.panel.running else None
        if action in ("promote", "promote_now"):
            # After a promote, its own result is on screen: promoting again is the form's job.
            promotable = session(self).can_promote() and self.request.command != "promote"
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

    def action_step(self, step: str) -> None:
        if step in _MODEL_STEPS:
            self.dismiss(cast(NextStep, step))

    def action_supply_error(self) -> None:
        self.dismiss("supply_error")

    def action_diff(self) -> None:
        self.dismiss("diff")

    def action_promote(self) -> None:
        self.dismiss("promote")

    def action_promote_now(self) -> None:
        self.dismiss("promote_now")
