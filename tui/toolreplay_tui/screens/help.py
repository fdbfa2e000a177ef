"""`?`: every key of every screen, from the bindings themselves (ids and descriptions)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["HelpScreen", "HelpSection", "key_text"]

HelpSection = tuple[str, Sequence[BindingType]]

_KEY_NAMES = {
    "up": "↑",
    "down": "↓",
    "left": "←",
    "right": "→",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "home": "Home",
    "end": "End",
    "escape": "esc",
    "enter": "enter",
    "tab": "tab",
    "shift+tab": "shift+tab",
    "question_mark": "?",
    "slash": "/",
}


def key_text(binding: Binding) -> str:
    """`j ↓` for `j,down`; the binding's own key_display wins."""
    if binding.key_display:
        return binding.key_display
    return " ".join(_KEY_NAMES.get(key.strip(), key.strip()) for key in binding.key.split(","))


def _bindings(items: Iterable[BindingType]) -> list[Binding]:
    found: list[Binding] = []
    for item in items:
        if isinstance(item, Binding):
            found.append(item)
        elif len(item) >= 2:
            found.append(Binding(item[0], item[1], item[2] if len(item) > 2 else ""))
    return found


def _section(title: str, items: Sequence[BindingType], *, navigation: bool) -> RenderableType:
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 2, 0, 0))
    table.add_column("key", style="bold", width=12, no_wrap=True)
    table.add_column("what")
    moves = False
    for binding in _bindings(items):
        if binding.action.startswith("cursor_") and not navigation:
            moves = True
            continue
        if binding.description:
            # The footer's short label, or the longer tooltip it stands for.
            table.add_row(key_text(binding), binding.tooltip or binding.description)
    if moves:
        table.add_row("j k g G …", "move as in the operation list")
    return Group(Text.assemble((title, "bold underline")), table, Text(""))


def help_renderable(sections: Sequence[HelpSection], left: int = 2) -> RenderableType:
    """The sections in two columns, `left` of them on the left; the first lists the
    movement keys once."""
    rendered = [
        _section(title, items, navigation=index == 0)
        for index, (title, items) in enumerate(sections)
    ]
    half = left
    grid = Table.grid(padding=(0, 4), expand=True)
    grid.add_column(ratio=1)
    grid.add_column(ratio=1)
    grid.add_row(Group(*rendered[:half]), Group(*rendered[half:]))
    return Group(
        Text("Tool Replay: keys", style="bold"),
        Text(
            "the footer shows the keys of the pane you are in; escape or ? closes this", style="dim"
        ),
        Text(""),
        grid,
    )


class HelpScreen(ModalScreen[None]):
    """The keys of every screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close help", id="help.close"),
    ]

    def __init__(self, sections: Sequence[HelpSection]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(help_renderable(self.sections), id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help-box", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
