"""The detail pane: identity, lineage, inputs, and the output navigable by JSON path.

`enter` on a value of the output opens a one-line editor for just that value;
the patch it makes still replaces the complete output (the rest copied as is).
A model call (OpenAI Responses or Chat Completions) and an MCP request show a
readable transcript in place of their raw inputs (chosen by the effect's namespace),
with the output path of each received value; `t` switches between the transcript
and the raw inputs. The raw output stays below, where edits
and JSON-path patches work as for any operation.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.json import JSON
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from toolreplay import (
    ErrorPatch,
    JsonValue,
    Operation,
    OutputPatch,
    Patch,
    Raised,
    Returned,
    terminal_safe,
    terminal_safe_text,
)
from toolreplay_tui.context import session
from toolreplay_tui.model.jsonpaths import JsonPath, PathError, get_at, path_text
from toolreplay_tui.model.jsontext import format_json, parse_portable
from toolreplay_tui.model.mcp_transcript import mcp_call_of
from toolreplay_tui.model.rows import megabytes
from toolreplay_tui.model.trace_file import LargeLine, LargeOutput
from toolreplay_tui.model.transcript import transcript_of
from toolreplay_tui.widgets.mcp_transcript_view import render_mcp_call
from toolreplay_tui.widgets.transcript_view import render_transcript
from toolreplay_tui.widgets.value_pages import describe_large
from toolreplay_tui.widgets.value_view import ValueView

__all__ = ["DetailPane", "ValueInput", "output_of", "transcript_view"]


def output_of(operation: Operation, patch: Patch | None) -> JsonValue:
    """What the value view shows: the pending patch's value, the recorded value, or the error."""
    if isinstance(patch, ErrorPatch):
        return {"type": patch.error_type, "message": patch.message, "args": patch.args}
    if patch is not None:
        return patch.value
    outcome = operation.outcome
    if isinstance(outcome, Returned):
        return outcome.value
    return {"type": outcome.error_type, "message": outcome.message, "args": outcome.args}


def transcript_view(
    operation: Operation, patch: Patch | None, shown: JsonValue
) -> RenderableType | None:
    """The operation read as what it is (a model call, an MCP request), or None; `shown`
    is its output as the pane shows it (a pending patch's, a reply resolved)."""
    if operation.effect.partition(".")[0] == "mcp":
        failed = isinstance(patch, ErrorPatch) or (
            patch is None and isinstance(operation.outcome, Raised)
        )
        call = mcp_call_of(operation.effect, operation.inputs, shown, failed=failed)
        return None if call is None else render_mcp_call(call)
    transcript = transcript_of(operation.effect, operation.inputs, shown)
    return None if transcript is None else render_transcript(transcript)


class ValueInput(Input):
    """The one-line editor of the selected value."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel edit", id="value_edit.cancel"),
    ]

    class Cancelled(Message):
        """The edit was abandoned (`control`: the field it was abandoned in)."""

        def __init__(self, field: ValueInput) -> None:
            super().__init__()
            self.field = field

        @property
        def control(self) -> ValueInput:
            """The field that was cancelled (handlers tell the filter from the value edit)."""
            return self.field

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled(self))


class DetailPane(Vertical):
    """What the selected operation is, where it comes from, what it took and returned."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "t", "toggle_transcript", "Model call: transcript or raw inputs", id="detail.transcript"
        ),
    ]

    class ValueEdited(Message):
        """The value at `path` of the operation's output was edited to `value`."""

        def __init__(self, operation: Operation, path: JsonPath, value: JsonValue) -> None:
            super().__init__()
            self.operation = operation
            self.path = path
            self.value = value

    class Problem(Message):
        """Something the user asked for cannot be done; `text` says why."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.operation: Operation | None = None
        self.patch: Patch | None = None
        self.output: JsonValue = None
        """What the value view shows: the output with the pending patch applied."""
        self._output_problem: str | None = None
        self._editing: JsonPath | None = None
        self._edit_start = ""
        self._raw_inputs = False  # model calls: raw inputs instead of the transcript

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-info-scroll"):
            yield Static(id="detail-info")
        yield Static(id="detail-path")
        yield ValueView(id="detail-values")
        yield ValueInput(id="value-input", classes="hidden")
        yield Static(id="value-error", classes="hidden")

    @property
    def values(self) -> ValueView:
        return self.query_one("#detail-values", ValueView)

    @property
    def editing(self) -> bool:
        return self._editing is not None

    def show(
        self, operation: Operation | None, patch: Patch | None, *, problem: str | None = None
    ) -> None:
        """Show `operation` (None: nothing selected, or `problem`: why the selected line
        cannot be read), with its pending patch if any."""
        same = (
            operation is not None
            and self.operation is not None
            and operation.identity == self.operation.identity
        )
        self.operation, self.patch = operation, patch
        self._stop_editing()
        if operation is not None:
            self.output, self._output_problem = session(self).patched_output(operation, patch)
        info = self.query_one("#detail-info", Static)
        if operation is None:
            info.update(
                Text("no operation selected", style="dim")
                if problem is None
                else Text.assemble(("this line cannot be read: ", "bold red"), problem)
            )
            self.query_one("#detail-path", Static).update("")
            self.values.clear()
            return
        info.update(self._info(operation, patch))
        self.values.show(self.output, keep_path=same)
        self._show_path(self.values.current_path)

    def show_large(
        self, large: LargeOutput | LargeLine, patch: Patch | None, first: bytes, last: bytes
    ) -> None:
        """Show an operation whose line is too large to decode here: its identity and
        inputs, and its output by its size and its first and last bytes (or the pending
        patch's value)."""
        self.operation, self.patch = None, patch
        self._stop_editing()
        info = self.query_one("#detail-info", Static)
        lines: list[RenderableType] = []
        if isinstance(large, LargeOutput):
            identity = large.identity
            lines += [
                Text.assemble(
                    (f"#{large.logical_id}  {large.effect}", "bold"), ("  ok", "bold green")
                ),
                Text.assemble(("identity  ", "dim"), f"fingerprint {identity.fingerprint[:24]}…"),
                Text.assemble(
                    ("          ", "dim"),
                    f"occurrence {identity.occurrence}  logical id {large.logical_id}",
                ),
                Text.assemble(("lineage   ", "dim"), f"origin {large.origin}"),
            ]
            if patch is not None:
                lines.append(
                    Text.assemble(
                        ("pending   ", "dim"),
                        (f"patch {patch.patch_id} replaces the recorded output", "bold yellow"),
                        ("  (x removes it)", "dim"),
                    )
                )
            inputs = JSON(format_json(large.inputs))
            inputs.text.no_wrap = False
            inputs.text.overflow = "fold"
            lines += [Text("inputs", style="dim"), inputs]
            size = large.value_size
            what = "output"
        else:
            size = large.size
            what = f"line {large.index + 2} ({large.effect or 'effect unknown'})"
        lines.append(Text(""))
        lines.append(
            describe_large(
                f"{what}: {size:,} bytes ({megabytes(size)})", size, first, last, keys=False
            )
        )
        lines.append(
            Text(
                "v shows its first and last pages, s there saves it, E edits it in $EDITOR",
                style="dim",
            )
        )
        info.update(Group(*lines))
        self.query_one("#detail-path", Static).update("")
        if patch is not None and not isinstance(patch, ErrorPatch):
            self.values.show(patch.value)
        else:
            self.values.clear()

    def _info(self, operation: Operation, patch: Patch | None) -> RenderableType:
        identity = operation.identity
        outcome = operation.outcome
        status = "ok" if isinstance(outcome, Returned) else "error"
        title = Text()
        title.append(f"#{operation.logical_id}  ", style="bold")
        title.append(terminal_safe_text(operation.effect, "bold"))
        title.append(f"  {status}", style="bold red" if status == "error" else "bold green")
        lines = [
            title,
            Text.assemble(("identity  ", "dim"), f"fingerprint {identity.fingerprint[:24]}…"),
            Text.assemble(
                ("          ", "dim"),
                f"occurrence {identity.occurrence}  logical id {operation.logical_id}",
            ),
        ]
        source = operation.source_logical_operation_id
        lineage = f"origin {operation.origin}"
        if operation.patch_id is not None:
            lineage += f"  patch {operation.patch_id}"
        lineage += f"  source operation {'-' if source is None else '#' + str(source)}"
        lines.append(Text.assemble(("lineage   ", "dim"), terminal_safe_text(lineage)))
        if patch is not None:
            recipe = (
                f" with {patch.recipe}(...)"
                if isinstance(patch, OutputPatch) and patch.recipe is not None
                else ""
            )
            lines.append(
                Text.assemble(
                    ("pending   ", "dim"),
                    terminal_safe_text(
                        f"patch {patch.patch_id} replaces the recorded ", "bold yellow"
                    ),
                    ("output" if isinstance(outcome, Returned) else "failure", "bold yellow"),
                    terminal_safe_text(recipe, "bold yellow"),
                    ("  (x removes it)", "dim"),
                )
            )
            if self._output_problem is not None:
                lines.append(
                    Text.assemble(
                        ("          ", "dim"), terminal_safe_text(self._output_problem, "red")
                    )
                )
        if isinstance(outcome, Raised):
            lines.append(
                Text.assemble(
                    ("raised    ", "dim"),
                    terminal_safe_text(f"{outcome.error_type}: {outcome.message}", "red"),
                )
            )
        transcript = transcript_view(operation, patch, self.output)
        if transcript is not None and not self._raw_inputs:
            lines.append(Text("transcript  (t shows the raw inputs)", style="dim"))
            return Group(*lines, transcript)
        hint = "  (t shows the transcript)" if transcript is not None else ""
        lines.append(Text(f"inputs{hint}", style="dim"))
        inputs = terminal_safe_text(JSON(format_json(operation.inputs)).text, keep="\n")
        inputs.no_wrap = False  # a long prompt wraps instead of running off the pane
        inputs.overflow = "fold"
        renderables: list[RenderableType] = [*lines, inputs]
        return Group(*renderables)

    def action_toggle_transcript(self) -> None:
        self._raw_inputs = not self._raw_inputs
        operation = self.operation
        if operation is not None:
            self.query_one("#detail-info", Static).update(self._info(operation, self.patch))

    def _show_path(self, path: JsonPath | None) -> None:
        label = self.query_one("#detail-path", Static)
        operation = self.operation
        if operation is None or path is None:
            label.update("")
            return
        if self.patch is not None:
            what = "output (pending patch)"
        elif isinstance(operation.outcome, Raised):
            what = "recorded error (e gives it a return value)"
        else:
            what = "output"
        text = Text.assemble((f"{what}  ", "dim"), terminal_safe_text(path_text(path), "bold"))
        label.update(text)

    def on_value_view_selected(self, event: ValueView.Selected) -> None:
        event.stop()
        self._show_path(event.path)

    def on_value_view_edit_requested(self, event: ValueView.EditRequested) -> None:
        event.stop()
        operation = self.operation
        if operation is None:
            return
        if self.patch is None and isinstance(operation.outcome, Raised):
            self.post_message(
                self.Problem(
                    "this call raised: press e to give it a return value (the patch turns the "
                    "failure into a return)"
                )
            )
            return
        try:
            current = get_at(self.values.value, event.path)
        except PathError as error:
            self.post_message(self.Problem(str(error)))
            return
        self._editing = event.path
        # Escaped as JSON spells it: the same value, and nothing raw in the field.
        self._edit_start = terminal_safe(format_json(current, indent=None))
        field = self.query_one("#value-input", ValueInput)
        field.value = self._edit_start
        field.remove_class("hidden")
        field.border_title = Text.assemble(
            "edit ", terminal_safe_text(path_text(event.path)), ": enter sets it, escape cancels"
        )
        self.query_one("#value-error", Static).add_class("hidden")
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "value-input":
            return
        event.stop()
        path, operation = self._editing, self.operation
        if path is None or operation is None:
            return
        parsed = parse_portable(event.value, what=f"the value at {path_text(path)}")
        error = self.query_one("#value-error", Static)
        if parsed.problem is not None:
            error.update(terminal_safe_text(parsed.problem.describe(), "bold red"))
            error.remove_class("hidden")
            field = self.query_one("#value-input", ValueInput)
            if parsed.problem.column is not None and parsed.problem.line == 1:
                field.cursor_position = parsed.problem.column - 1
            return
        self._stop_editing()
        self.values.focus()
        self.post_message(self.ValueEdited(operation, path, parsed.value))

    def on_value_input_cancelled(self, event: ValueInput.Cancelled) -> None:
        event.stop()
        self._stop_editing()
        self.values.focus()

    def _stop_editing(self) -> None:
        self._editing = None
        if self.is_mounted:
            self.query_one("#value-input", ValueInput).add_class("hidden")
            self.query_one("#value-error", Static).add_class("hidden")
