"""Answering a model call a fork stopped at: pick a tool, then see the reply before it is sent.

`ToolPickerScreen` lists the function tools the request offers (a reply can call
only those); `ReplyPreviewScreen` shows the answer the fork will give the
application, read as a transcript (the request's last entries, then the reply),
resolved exactly as the fork resolves it (`toolreplay_tui.model.new_call.preview`).
Enter runs the fork with it; escape goes back without adding anything.
"""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from toolreplay import terminal_safe_text
from toolreplay_tui.model.new_call import OfferedTool, ReplyPreview
from toolreplay_tui.widgets.key_footer import KeyFooter
from toolreplay_tui.widgets.scroll_box import ScrollBox
from toolreplay_tui.widgets.transcript_view import render_transcript

__all__ = ["ReplyPreviewScreen", "ToolPickerScreen"]


class ToolPickerScreen(ModalScreen[str | None]):
    """The tools a request offers; dismisses with the chosen tool's name, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "choose", "Call this tool", id="tools.choose"),
        Binding("escape", "cancel", "Back", id="tools.cancel"),
    ]

    def __init__(self, effect: str, tools: tuple[OfferedTool, ...]) -> None:
        super().__init__()
        self.effect = effect
        self.tools = tools

    def compose(self) -> ComposeResult:
        with Vertical(id="run-box"):
            yield Static(
                Text.assemble(
                    ("Which tool does the model call? ", "bold"),
                    terminal_safe_text(f"(the tools this {self.effect} request offers)", "dim"),
                ),
                id="run-title",
            )
            yield OptionList(
                *(
                    Option(
                        Text.assemble(
                            terminal_safe_text(tool.name, "bold"),
                            "  ",
                            terminal_safe_text(tool.description, "dim"),
                        ),
                        id=f"tool-{index}",
                    )
                    for index, tool in enumerate(self.tools)
                ),
                id="tool-list",
            )
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.tools[event.option_index].name)

    def action_choose(self) -> None:
        highlighted = self.query_one(OptionList).highlighted
        if highlighted is not None:
            self.dismiss(self.tools[highlighted].name)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReplyPreviewScreen(ModalScreen[bool]):
    """The reply the fork will give; dismisses with True to fork with it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "answer(True)", "Fork with this answer", id="reply.accept"),
        Binding("escape", "answer(False)", "Back (nothing added)", id="reply.back"),
    ]

    def __init__(self, heading: str, shown: ReplyPreview, patch_text: str) -> None:
        super().__init__()
        self.heading = heading
        self.shown = shown
        self.patch_text = patch_text

    def compose(self) -> ComposeResult:
        with ScrollBox(id="run-box"):
            yield Static(terminal_safe_text(self.heading, "bold"), id="run-title")
            yield Static(self._body(), id="reply-preview")
        yield KeyFooter()

    def _body(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self.shown.transcript is not None:
            parts.append(render_transcript(self.shown.transcript))
        else:
            parts.append(Text("(this answer does not read as a model call's reply)", "dim"))
        parts.append(Text())
        parts.append(Text.assemble(("pending patch  ", "dim"), terminal_safe_text(self.patch_text)))
        parts.append(
            Text(
                "enter forks with it (the patch is added to the pending ones) · escape goes back",
                style="dim",
            )
        )
        return Group(*parts)

    def on_mount(self) -> None:
        self.query_one("#run-box", ScrollBox).focus()

    def action_answer(self, accept: bool) -> None:
        self.dismiss(accept)
