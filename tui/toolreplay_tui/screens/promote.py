"""The promote form: prefilled from the fork; `enter` promotes through the command line."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Static, TextArea

from toolreplay import CASE_NAME_PATTERN, RUNNER_PATTERN
from toolreplay_tui.context import debugger
from toolreplay_tui.messages import PromoteFinished
from toolreplay_tui.model.jsontext import parse_portable
from toolreplay_tui.model.promotion import PromoteDefaults, case_folder
from toolreplay_tui.widgets.run_panel import RunPanel

__all__ = ["PromoteScreen"]


class PromoteScreen(Screen[None]):
    """Name, folder, runner and expected value of the case; the branch trace is promoted."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "promote", "Promote", key_display="enter/^s", id="promote.run"),
        Binding("escape", "close", "Back / cancel", id="promote.close"),
    ]

    def __init__(self, branch: Path, branch_label: str, defaults: PromoteDefaults) -> None:
        super().__init__()
        self.branch = branch
        self.branch_label = branch_label
        self.defaults = defaults
        self._last_name = defaults.name

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble(
                ("Promote the fork to a regression case", "bold"),
                ("   enter (or ctrl+s) promotes · escape goes back", "dim"),
            ),
            id="promote-title",
        )
        yield Static(Text.assemble(("trace   ", "dim"), self.branch_label), id="promote-trace")
        with Vertical(id="promote-form"):
            with Horizontal(classes="form-row"):
                yield Label("case name", classes="form-label")
                yield Input(self.defaults.name, id="promote-name")
            with Horizontal(classes="form-row"):
                yield Label("folder", classes="form-label")
                yield Input(self.defaults.folder, id="promote-folder")
            with Horizontal(classes="form-row"):
                yield Label("runner", classes="form-label")
                yield Input(self.defaults.runner, id="promote-runner")
            yield Label("expected return value (JSON)", classes="form-label-wide")
            yield TextArea(
                self.defaults.expected, language=None, soft_wrap=True, id="promote-expected"
            )
        yield Static(id="promote-problem", classes="hidden")
        yield RunPanel(id="promote-run")
        yield Footer()

    @property
    def panel(self) -> RunPanel:
        return self.query_one("#promote-run", RunPanel)

    def on_mount(self) -> None:
        blink = debugger(self).blink_cursors
        for field in self.query(Input):
            field.cursor_blink = blink
        self.query_one("#promote-expected", TextArea).cursor_blink = blink
        self.query_one("#promote-name", Input).focus()

    def _value(self, name: str) -> str:
        return self.query_one(f"#promote-{name}", Input).value.strip()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "promote-name":
            return
        folder = self.query_one("#promote-folder", Input)
        if folder.value.strip() == str(case_folder(self._last_name)):
            folder.value = str(case_folder(event.value.strip()))
        self._last_name = event.value.strip()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_promote()

    def _problem(self, message: str | None) -> None:
        problem = self.query_one("#promote-problem", Static)
        if message is None:
            problem.add_class("hidden")
            return
        problem.update(Text(message, style="bold"))
        problem.remove_class("hidden")

    def action_promote(self) -> None:
        if self.panel.running:
            return
        name, folder, runner = self._value("name"), self._value("folder"), self._value("runner")
        area = self.query_one("#promote-expected", TextArea)
        if not CASE_NAME_PATTERN.fullmatch(name):
            self._problem(
                "case name: 1-128 letters, digits, '_', '-' or '.', starting with a letter or digit"
            )
            self.query_one("#promote-name", Input).focus()
            return
        if not folder:
            self._problem("folder: give the case folder to create (it must not exist)")
            self.query_one("#promote-folder", Input).focus()
            return
        if not RUNNER_PATTERN.fullmatch(runner):
            self._problem("runner: give the entry point as module:callable")
            self.query_one("#promote-runner", Input).focus()
            return
        parsed = parse_portable(area.text, what="the expected value")
        if parsed.problem is not None:
            where = parsed.problem
            if where.line is not None and where.column is not None:
                area.cursor_location = (where.line - 1, where.column - 1)
            area.focus()
            self._problem(f"expected value: {where.describe()}")
            return
        self._problem(None)
        request = debugger(self).promote_request(
            self.branch, Path(folder), name, runner, parsed.value
        )
        if request is None:
            return
        self.panel.start(request, f"promote to {folder}")

    def on_run_panel_finished(self, event: RunPanel.Finished) -> None:
        event.stop()
        self.post_message(PromoteFinished(event.result))

    def action_close(self) -> None:
        if self.panel.running:
            self.panel.cancel()
            return
        self.dismiss(None)
