"""`ScrollBox`: a scrolling panel (run results, help) moved by the list keys too."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll

__all__ = ["ScrollBox"]


class ScrollBox(VerticalScroll):
    """A `VerticalScroll` that also answers `j/k`, `g/G` and `ctrl+f/b`, as the lists do,
    so that nothing a small terminal cuts off is out of reach of the keyboard."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "scroll_down", "Scroll down", show=False, id="scroll.down"),
        Binding("k", "scroll_up", "Scroll up", show=False, id="scroll.up"),
        Binding("g", "scroll_home", "Scroll to the top", show=False, id="scroll.top"),
        Binding("G", "scroll_end", "Scroll to the end", show=False, id="scroll.end"),
        Binding("ctrl+f", "page_down", "Page down", show=False, id="scroll.page_down"),
        Binding("ctrl+b", "page_up", "Page up", show=False, id="scroll.page_up"),
    ]
