"""The promote form: prefilled from the fork; `enter` promotes through the command line,
from every field (the expected value's box too: `ctrl+j` starts a new line there).

A branch the secret scanner flags is refused, as `toolreplay promote` refuses it: the
form lists the findings (effect, part, JSON path and rule; never the value) and offers
an unchecked box that promotes anyway (`--allow-secret-findings`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Checkbox, Input, Label, Static, TextArea

from toolreplay import (
    CASE_NAME_PATTERN,
    RUNNER_PATTERN,
    JsonValue,
    SecretFinding,
    terminal_safe,
    terminal_safe_text,
)
from toolreplay.redaction import describe_findings
from toolreplay_tui.context import session
from toolreplay_tui.messages import PromoteFinished
from toolreplay_tui.model.jsontext import parse_portable
from toolreplay_tui.model.promotion import PromoteDefaults, case_folder
from toolreplay_tui.model.runs import RunRequest
from toolreplay_tui.widgets.key_footer import KeyFooter
from toolreplay_tui.widgets.run_panel import RunPanel
from toolreplay_tui.widgets.scroll_box import ScrollBox

__all__ = ["ExpectedValueBox", "PromoteForm", "PromoteScreen"]


@dataclass(frozen=True, slots=True)
class PromoteForm:
    """What the form asks promote to do: the branch trace, the case's folder, name and
    runner, its expected value, and whether to promote despite secret findings."""

    branch: Path
    folder: Path
    name: str
    runner: str
    expected: JsonValue
    allow_secret_findings: bool = False


class ExpectedValueBox(TextArea):
    """The expected value's JSON: `enter` promotes, as everywhere in the form."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Priority: the text area would otherwise take enter as a new line.
        Binding(
            "enter",
            "screen.promote",
            "Promote",
            show=False,  # the form's "enter/^s Promote" says it
            priority=True,
            id="promote.expected_enter",
        ),
        Binding("ctrl+j", "new_line", "New line", id="promote.new_line"),
    ]

    def action_new_line(self) -> None:
        self.insert("\n")


class PromoteScreen(Screen[None]):
    """Name, folder, runner and expected value of the case; the branch trace is promoted."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "promote", "Promote", key_display="enter/^s", id="promote.run"),
        Binding("escape", "close", "Back / cancel", id="promote.close"),
    ]

    def __init__(
        self,
        branch: Path,
        branch_label: str,
        defaults: PromoteDefaults,
        promote_request: Callable[[PromoteForm], RunRequest | None],
        findings: Sequence[SecretFinding] = (),
    ) -> None:
        """`promote_request(form)`: the promote command for the form (None: it cannot be made,
        and the session has said why)."""
        super().__init__()
        self.branch = branch
        self.branch_label = branch_label
        self.defaults = defaults
        self.promote_request = promote_request
        self.findings = tuple(findings)
        """What the secret scanner flags in the branch (promote refuses it by default)."""
        self._last_name = defaults.name

    def compose(self) -> ComposeResult:
        yield Static(
            Text.assemble(
                ("Promote the fork to a regression case", "bold"),
                ("   enter (or ctrl+s) promotes from any field · escape goes back", "dim"),
            ),
            id="promote-title",
        )
        label = terminal_safe_text(self.branch_label)
        yield Static(Text.assemble(("trace   ", "dim"), label), id="promote-trace")
        with ScrollBox(id="promote-body"):
            with Vertical(id="promote-form"):
                with Horizontal(classes="form-row"):
                    yield Label("case name", classes="form-label")
                    yield Input(self.defaults.name, id="promote-name")
                with Horizontal(classes="form-row"):
                    yield Label("folder", classes="form-label")
                    yield Input(self.defaults.folder, id="promote-folder")
                with Horizontal(classes="form-row"):
                    yield Label("runner", classes="form-label")
                    # A trace's runner with a control character is no runner: shown escaped.
                    yield Input(terminal_safe(self.defaults.runner), id="promote-runner")
                yield Label("expected return value (JSON)", classes="form-label-wide")
                yield ExpectedValueBox(
                    self.defaults.expected, language=None, soft_wrap=True, id="promote-expected"
                )
                if self.findings:
                    yield Static(self._findings_text(), id="promote-findings")
                    yield Checkbox(
                        "promote anyway: these are not real secrets (--allow-secret-findings)",
                        value=False,
                        id="promote-allow-secrets",
                    )
            yield Static(id="promote-problem", classes="hidden")
            yield RunPanel(id="promote-run")
        yield KeyFooter()

    def _findings_text(self) -> Text:
        count = len(self.findings)
        values = (
            "a value that matches a secret rule"
            if count == 1
            else f"{count} values that match secret rules"
        )
        # The branch's path is on the line above: each finding names where, not the file.
        where = describe_findings([replace(finding, file=None) for finding in self.findings])
        return Text.assemble(
            (f"The secret scanner flags this trace: it holds {values} (not shown).\n", "bold"),
            terminal_safe_text(where, keep="\n"),
            "\nA case is meant to be committed: promote refuses this trace unless the box "
            "below is checked. Better, redact it first (toolreplay redact).",
        )

    @property
    def allow_secret_findings(self) -> bool:
        """Whether the user checked "promote anyway" (only offered when there are findings)."""
        boxes = self.query("#promote-allow-secrets").results(Checkbox)
        return any(box.value for box in boxes)

    @property
    def panel(self) -> RunPanel:
        return self.query_one("#promote-run", RunPanel)

    def on_mount(self) -> None:
        blink = session(self).blink_cursors
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
        allow = self.allow_secret_findings
        request = self.promote_request(
            PromoteForm(self.branch, Path(folder), name, runner, parsed.value, allow)
        )
        if request is None:
            return
        despite = " despite the secret findings" if allow else ""
        self.panel.start(request, f"promote to {folder}{despite}")

    def on_run_panel_finished(self, event: RunPanel.Finished) -> None:
        event.stop()
        # The form fills a small terminal: bring the result (the case's folder) into view,
        # and let the keys scroll it.
        body = self.query_one("#promote-body", ScrollBox)
        body.focus()
        self.call_after_refresh(body.scroll_to_widget, self.panel, animate=False, top=True)
        self.post_message(PromoteFinished(event.result))
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Once the case is written, promoting again could only fail (its folder exists):
        # the footer shows the key dimmed rather than offering it.
        result = self.panel.result
        if action == "promote" and result is not None and result.ok:
            return None
        return True

    def action_close(self) -> None:
        if self.panel.running:
            self.panel.cancel()
            return
        self.dismiss(None)
