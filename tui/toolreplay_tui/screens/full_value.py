"""`v`: the full text of what a pane cuts off (a long string, the inputs, the fingerprint).

The list, the detail pane and the value lines cut long values with `…` to keep
one line per row; this screen shows the whole value, wrapped, and scrolls. A value
too large for that (`LARGE_LINE_BYTES`) is shown by its size and its first and last
pages, read from the file as they are (`LargeValueScreen`), with keys to save it to
a file or open it in `$EDITOR`: memory and time stay those of two pages, whatever its
size.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.json import JSON
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

from toolreplay import (
    AlignmentRow,
    ErrorPatch,
    JsonValue,
    Operation,
    Patch,
    Raised,
    terminal_safe_text,
)
from toolreplay_tui.context import textual_app
from toolreplay_tui.messages import LargeValueRequested
from toolreplay_tui.model.jsonpaths import JsonPath, path_text
from toolreplay_tui.model.jsontext import format_json
from toolreplay_tui.model.trace_file import LargeLine, LargeOutput
from toolreplay_tui.widgets.scroll_box import ScrollBox

__all__ = [
    "PAGE_BYTES",
    "FullValueScreen",
    "LargeValueScreen",
    "describe_aligned",
    "describe_operation",
    "describe_value",
]

PAGE_BYTES = 4096
"""How much of a large value's start and end `LargeValueScreen` shows: about a screen each."""


def _json(value: JsonValue) -> RenderableType:
    rendered = terminal_safe_text(JSON(format_json(value)).text, keep="\n")
    rendered.no_wrap = False
    rendered.overflow = "fold"  # a long string wraps, nothing is cut
    return rendered


def describe_value(operation: Operation, path: JsonPath, value: JsonValue) -> RenderableType:
    """The value at `path` of the operation's (shown) output, in full."""
    return Group(
        Text.assemble(
            terminal_safe_text(f"#{operation.logical_id} {operation.effect}", "bold"),
            ("  output  ", "dim"),
            terminal_safe_text(path_text(path), "bold"),
        ),
        Text(""),
        _json(value),
    )


def describe_operation(operation: Operation, patch: Patch | None) -> RenderableType:
    """Everything the list and the detail pane shorten: identity, lineage, inputs, outcome."""
    identity = operation.identity
    parts: list[RenderableType] = [
        terminal_safe_text(f"#{operation.logical_id} {operation.effect}", "bold"),
        Text.assemble(("fingerprint  ", "dim"), identity.fingerprint),
        Text.assemble(("occurrence   ", "dim"), str(identity.occurrence)),
        Text.assemble(("origin       ", "dim"), operation.origin),
    ]
    if operation.patch_id is not None:
        patch_id = terminal_safe_text(operation.patch_id)
        parts.append(Text.assemble(("patch        ", "dim"), patch_id))
    parts += [Text(""), Text("inputs", style="bold"), _json(operation.inputs), Text("")]
    outcome = operation.outcome
    if isinstance(outcome, Raised):
        parts.append(Text("raised", style="bold"))
        parts.append(terminal_safe_text(f"{outcome.error_type}: {outcome.message}", "red"))
    else:
        parts.append(Text("output", style="bold"))
        parts.append(_json(outcome.value))
    if patch is not None:
        parts += [Text(""), terminal_safe_text(f"pending patch {patch.patch_id}", "bold yellow")]
        if isinstance(patch, ErrorPatch):
            parts.append(terminal_safe_text(f"{patch.error_type}: {patch.message}", "red"))
        else:
            parts.append(_json(patch.value))
    return Group(*parts)


def describe_aligned(row: AlignmentRow) -> RenderableType:
    """Both sides of a diff row in full: the source operation, then the branch's (or the
    call it attempted)."""
    parts: list[RenderableType] = [Text(f"diff row {row.index}", style="bold underline"), Text("")]
    for side, operation in (("source", row.source), ("branch / target", row.target)):
        parts.append(Text(side, style="bold reverse"))
        if operation is not None:
            parts.append(describe_operation(operation, None))
        elif side != "source" and row.attempted is not None:
            attempted = row.attempted
            parts += [
                terminal_safe_text(f"{attempted.effect}: attempted, not recorded", "bold"),
                Text.assemble(("fingerprint  ", "dim"), attempted.identity.fingerprint),
                Text.assemble(("occurrence   ", "dim"), str(attempted.identity.occurrence)),
                Text("inputs", style="bold"),
                _json(attempted.inputs),
            ]
        else:
            parts.append(Text("(no operation on this side)", style="dim"))
        parts.append(Text(""))
    return Group(*parts)


class _ValueScreen(ModalScreen[None]):
    """A value shown in a scrolled box that has the focus; `action_close` closes it."""

    def __init__(self, content: RenderableType) -> None:
        super().__init__()
        self.content = content

    def compose(self) -> ComposeResult:
        with ScrollBox(id="full-value-box"):
            yield Static(self.content, id="full-value-text")

    def on_mount(self) -> None:
        self.query_one("#full-value-box", ScrollBox).focus()

    def action_close(self) -> None:
        self.dismiss(None)


class LargeValueScreen(_ValueScreen):
    """A large value by its size, first and last pages; `s` saves it to a file, `E` opens
    it in `$EDITOR`, `escape`, `v` or `q` close."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,v,q", "close", "Close", key_display="esc", id="large_value.close"),
        Binding("s", "save", "Save to a file", id="large_value.save"),
        Binding("E", "external_edit", "Edit in $EDITOR", id="large_value.external_edit"),
    ]

    def __init__(self, large: LargeOutput | LargeLine, content: RenderableType) -> None:
        super().__init__(content)
        self.large = large

    def action_save(self) -> None:
        textual_app(self).post_message(LargeValueRequested(self.large, "save"))

    def action_external_edit(self) -> None:
        self.dismiss(None)
        textual_app(self).post_message(LargeValueRequested(self.large, "edit"))


class FullValueScreen(_ValueScreen):
    """A value in full, wrapped; `escape`, `v` or `q` close it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,v,q", "close", "Close", key_display="esc", id="full_value.close"),
    ]
