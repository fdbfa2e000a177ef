"""The last guard between the debugger and the terminal: no unsafe character is drawn.

Every pane escapes what it shows of a trace (`toolreplay.terminal_safe_text`), so that
an ESC, a bidi override or a zero-width character reads as `\\u001b`, `\\u202e`,
`\\u200b`, marked. This line filter, applied by Textual to every line of every widget
just before it is written, removes any such character a pane did not escape (a value
shown where nobody thought of it, a widget of Textual's own): a control sequence from
a trace can never reach the terminal, whatever draws it. It keeps each segment's width,
so the layout does not move.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from toolreplay import is_terminal_safe, terminal_safe_parts

__all__ = ["TERMINAL_SAFE", "TerminalSafeFilter"]


class TerminalSafeFilter(LineFilter):
    """Removes every terminal-unsafe character from the text of the segments drawn."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if all(segment.control or is_terminal_safe(segment.text) for segment in segments):
            return segments
        return [_safe(segment) for segment in segments]


TERMINAL_SAFE = TerminalSafeFilter()
"""The one filter both apps (the debugger, the picker) add to Textual's."""


def _safe(segment: Segment) -> Segment:
    text = segment.text
    if segment.control or is_terminal_safe(text):
        return segment
    kept = "".join(part for part, escaped in terminal_safe_parts(text) if not escaped)
    padding = cell_len(text) - cell_len(kept)
    return Segment(kept + " " * max(padding, 0), segment.style, segment.control)
