"""Every pending patch in one place: replaced and supplied outputs and errors.

Supplied patches target calls the trace does not hold, so the operation list
cannot show them; this screen lists all kinds, edits (`e`) and removes (`x`)
them, and undoes the last change of any kind (`u`).
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

from toolreplay import ErrorPatch, Patch, terminal_safe_text
from toolreplay.portable import preview
from toolreplay_tui.context import debugger
from toolreplay_tui.messages import Notice, PatchChangeRequested
from toolreplay_tui.widgets.key_footer import KeyFooter

__all__ = ["PatchesScreen", "describe_patch"]

_KIND_LABELS = {
    "replace_output": "replaced output",
    "replace_error": "replaced by an error",
    "supply_output": "supplied output",
    "supply_error": "supplied error",
}


def describe_patch(patch: Patch, width: int = 60) -> Text:
    """`p-… supplied output  review.queue.add occ 0  {"ticket": …}`."""
    if isinstance(patch, ErrorPatch):
        outcome = f"raises {patch.error_type.rpartition('.')[2]}: {patch.message}"
    else:
        outcome = preview(patch.value, width)
    return Text.assemble(
        terminal_safe_text(f"{patch.patch_id}  ", "dim"),
        (f"{_KIND_LABELS[patch.kind]:<21}", "bold yellow" if patch.supplies else "bold"),
        terminal_safe_text(f"{patch.effect} occ {patch.occurrence}  "),
        terminal_safe_text(f"inputs {preview(patch.inputs, 40)}  ", "dim"),
        terminal_safe_text(outcome),
    )


class PatchesScreen(ModalScreen[None]):
    """The pending patches; changes go to the app as `PatchChangeRequested`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="patches.close"),
        Binding("e", "change('edit')", "Edit", id="patches.edit"),
        Binding("x", "change('remove')", "Remove", id="patches.remove"),
        Binding("u", "change('undo')", "Undo", id="patches.undo"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="run-box"):
            yield Static(
                Text("Pending patches (every kind; f forks with all of them)", style="bold"),
                id="run-title",
            )
            yield OptionList(id="patches-list")
            yield Static(id="patches-status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.watch(debugger(self), "notice", self._notice_changed)
        self.query_one(OptionList).focus()

    def _notice_changed(self, notice: Notice) -> None:
        listing = self.query_one(OptionList)
        highlighted = listing.highlighted
        patches = list(debugger(self).pending)
        listing.clear_options()
        listing.add_options(
            [Option(describe_patch(patch), id=patch.patch_id) for patch in patches]
            or [Option(Text("no pending patch", style="dim"), disabled=True)]
        )
        if patches:
            listing.highlighted = min(highlighted or 0, len(patches) - 1)
        status = self.query_one("#patches-status", Static)
        style = "bold red" if notice.error else "bold"
        status.update(terminal_safe_text(notice.text or "", style))

    def _selected(self) -> Patch | None:
        listing = self.query_one(OptionList)
        if listing.highlighted is None:
            return None
        option = listing.get_option_at_index(listing.highlighted)
        return next((p for p in debugger(self).pending if p.patch_id == option.id), None)

    def action_change(self, change: str) -> None:
        patch = None if change == "undo" else self._selected()
        if change != "undo" and patch is None:
            return
        self.post_message(PatchChangeRequested(change, patch))

    def action_close(self) -> None:
        self.dismiss(None)
