"""Every pending patch in one place: replaced and supplied outputs and errors, replies,
edits, patches by operation number and for the next new call, and the live effects.

Supplied patches target calls the trace does not hold, so the operation list
cannot show them; this screen lists all kinds, in the order a fork applies them
(next-call patches of one effect answer its new calls in this order), edits (`e`)
and removes (`x`) them, and undoes the last change of any kind (`u`). The
effects a fork runs live (`a` at a new model call) are listed last; `x` on one
stops sending its new calls.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from toolreplay import ErrorPatch, JsonValue, Patch, terminal_safe_text
from toolreplay.portable import preview
from toolreplay_tui.context import session, textual_app
from toolreplay_tui.messages import LiveRemovalRequested, Notice, PatchChangeRequested
from toolreplay_tui.model.patches import PatchKey, describe_target
from toolreplay_tui.widgets.key_footer import KeyFooter

__all__ = ["PatchesScreen", "describe_change", "describe_patch"]

_KIND_LABELS = {
    "replace_output": "replaced output",
    "replace_error": "replaced by an error",
    "supply_output": "supplied output",
    "supply_error": "supplied error",
}


def describe_change(patch: Patch, width: int = 60) -> str:
    """What the patch makes the call do: `raises TimeoutError: slow`, a value, a reply
    (`reply → issue_refund({"amount": 250})`), or an edit (`edit $.output[0]... = "No."`)."""
    if isinstance(patch, ErrorPatch):
        return f"raises {patch.error_type.rpartition('.')[2]}: {patch.message}"
    value = patch.value
    if patch.recipe == "reply" and isinstance(value, dict):
        return "reply " + _reply_text(value, width)
    if patch.recipe == "edit" and isinstance(value, dict):
        edits = [f"{path} = {preview(new, width // 2)}" for path, new in value.items()]
        return "edit " + "; ".join(edits)
    return preview(value, width)


def _reply_text(spec: dict[str, JsonValue], width: int) -> str:
    calls = spec.get("tool_calls")
    if isinstance(calls, list) and calls:
        shown: list[str] = []
        for call in calls:
            if isinstance(call, dict):
                shown.append(f"→ {call.get('name')}({preview(call.get('arguments'), width // 2)})")
        return ", ".join(shown)
    for key in ("text", "refusal"):
        if isinstance(spec.get(key), str):
            return f"{key} {preview(spec[key], width)}"
    return preview(spec, width)


def describe_patch(patch: Patch, width: int = 60, number: int | None = None) -> Text:
    """`p-… supplied output  next new call #1 of openai.responses.create  reply → …`;
    `number` is which new call a next-call patch answers."""
    inputs = (
        terminal_safe_text(f"inputs {preview(patch.inputs, 40)}  ", "dim")
        if patch.inputs is not None
        else Text()
    )
    return Text.assemble(
        terminal_safe_text(f"{patch.patch_id}  ", "dim"),
        (f"{_KIND_LABELS[patch.kind]:<21}", "bold yellow" if patch.supplies else "bold"),
        terminal_safe_text(f"{describe_target(patch, number)}  "),
        inputs,
        terminal_safe_text(describe_change(patch, width)),
    )


class PatchesScreen(ModalScreen[None]):
    """The pending patches; changes go to the app as `PatchChangeRequested`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="patches.close"),
        Binding("e", "change('edit')", "Edit", id="patches.edit"),
        Binding("x", "change('remove')", "Remove", id="patches.remove"),
        Binding("u", "change('undo')", "Undo", id="patches.undo"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._rows: list[PatchKey | str] = []  # a patch's key, or a live effect's name

    def compose(self) -> ComposeResult:
        with Vertical(id="run-box"):
            yield Static(
                Text(
                    "Pending patches (every kind, in the order a fork applies them; f forks "
                    "with all of them)",
                    style="bold",
                ),
                id="run-title",
            )
            yield OptionList(id="patches-list")
            yield Static(id="patches-status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.watch(textual_app(self), "notice", self._notice_changed)
        self.query_one(OptionList).focus()

    def _notice_changed(self, notice: Notice) -> None:
        debug = session(self)
        listing = self.query_one(OptionList)
        highlighted = listing.highlighted
        options: list[Option] = []
        self._rows = []
        for key, patch in debug.pending.entries():
            number = debug.pending.next_call_number(key)
            options.append(Option(describe_patch(patch, number=number)))
            self._rows.append(key)
        for effect in debug.live_effects:
            options.append(
                Option(
                    Text.assemble(
                        ("live                   ", "bold cyan"),
                        terminal_safe_text(f"{effect}  "),
                        ("its new calls are sent through the application's client", "dim"),
                    )
                )
            )
            self._rows.append(effect)
        listing.clear_options()
        listing.add_options(
            options or [Option(Text("no pending patch", style="dim"), disabled=True)]
        )
        if options:
            listing.highlighted = min(highlighted or 0, len(options) - 1)
        status = self.query_one("#patches-status", Static)
        style = "bold red" if notice.error else "bold"
        status.update(terminal_safe_text(notice.text or "", style))

    def _selected(self) -> PatchKey | str | None:
        highlighted = self.query_one(OptionList).highlighted
        if highlighted is None or not 0 <= highlighted < len(self._rows):
            return None
        return self._rows[highlighted]

    def action_change(self, change: str) -> None:
        if change == "undo":
            self.post_message(PatchChangeRequested("undo", None))
            return
        selected = self._selected()
        if isinstance(selected, str):
            if change == "remove":
                self.post_message(LiveRemovalRequested(selected))
            return
        if selected is not None:
            self.post_message(PatchChangeRequested(change, selected))

    def action_close(self) -> None:
        self.dismiss(None)
