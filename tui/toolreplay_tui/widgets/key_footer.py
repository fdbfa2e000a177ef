"""`KeyFooter`: the key hints of the focused pane, collapsing to the most important ones.

Textual's `Footer` lays every shown binding in one line and cuts it at the
terminal's edge (at 80 columns the browse screen lost everything after "d Di").
This footer measures the hints first; when they do not all fit it keeps the
enabled hints the screen ranks highest (`FOOTER_PRIORITY`, a tuple of binding
ids on the screen), in their usual order, and always `? Help`, which lists the rest
(and the command palette's key, when the app has one).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # pyright: ignore[reportPrivateUsage]

from toolreplay_tui.context import textual_app

__all__ = ["FooterHint", "KeyFooter", "collapse_hints"]

ALWAYS_KEPT = ("help", "app.help", "command_palette", "app.command_palette")
"""Hints never dropped: help (`?`) lists every key left out, the palette runs any action."""
_PALETTE = ("command_palette", "app.command_palette")


@dataclass(frozen=True, slots=True)
class FooterHint:
    """One key hint as the footer draws it."""

    binding: Binding
    key_display: str
    enabled: bool

    @property
    def width(self) -> int:
        """Cells taken by ` key description ` (the footer's padding included)."""
        return cell_len(self.key_display) + cell_len(self.binding.description) + 3


def collapse_hints(
    hints: list[FooterHint], width: int, priority: tuple[str, ...]
) -> list[FooterHint]:
    """The hints to draw in `width` cells: all when they fit, else the most important.

    Help (and the palette) are kept first, then the enabled hints in `priority` order (binding ids),
    then the remaining enabled ones in their order; disabled hints go when space
    runs out. The result keeps the original order.
    """
    if sum(hint.width for hint in hints) <= width:
        return hints

    def rank(position: int) -> tuple[int, int, int]:
        hint = hints[position]
        if hint.binding.action in ALWAYS_KEPT:
            return (0, 0, position)
        if not hint.enabled:
            return (3, 0, position)
        if hint.binding.id in priority:
            return (1, priority.index(hint.binding.id), position)
        return (2, 0, position)

    kept: set[int] = set()
    room = width
    for position in sorted(range(len(hints)), key=rank):
        if hints[position].width <= room:
            kept.add(position)
            room -= hints[position].width
    return [hint for position, hint in enumerate(hints) if position in kept]


class KeyFooter(Footer):
    """A `Footer` that never cuts a hint: narrow terminals get the important keys and `?`."""

    def __init__(self) -> None:
        super().__init__(show_command_palette=False)
        self._drawn_width = 0

    def _width(self) -> int:
        return self.size.width or textual_app(self).size.width

    def hints(self) -> list[FooterHint]:
        """Every hint the focused pane and its screen show, one per action."""
        seen: set[str] = set()
        hints: list[FooterHint] = []
        palette = textual_app(self).ENABLE_COMMAND_PALETTE
        for _node, binding, enabled, _tooltip in self.screen.active_bindings.values():
            shown = binding.show or (palette and binding.action in _PALETTE)
            if not shown or binding.action in seen:
                continue
            seen.add(binding.action)
            hints.append(FooterHint(binding, textual_app(self).get_key_display(binding), enabled))
        return hints

    def shown_hints(self) -> list[FooterHint]:
        """The hints drawn at the footer's current width."""
        priority: tuple[str, ...] = getattr(self.screen, "FOOTER_PRIORITY", ())
        return collapse_hints(self.hints(), self._width(), priority)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        self._drawn_width = self._width()
        for hint in self.shown_hints():
            binding = hint.binding
            yield FooterKey(
                binding.key,
                hint.key_display,
                binding.description,
                binding.action,
                disabled=not hint.enabled,
                tooltip=binding.tooltip,
            ).data_bind(compact=Footer.compact)

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready and event.size.width != self._drawn_width:
            self.call_after_refresh(self.recompose)
