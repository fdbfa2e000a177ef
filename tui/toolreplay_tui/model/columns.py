"""How the operation list shares its width among its columns.

A row is `#  [lane  timeline  ]effect  state  call`. The call column holds what
tells rows apart: a model call's summary (its last message or tool output, and
its answer: `toolreplay.summarize_call`), any other call's inputs. Every other
column is bounded, whatever the trace holds (an effect or a lane name is the
trace's, of any length), and measured in terminal cells of the text as the list
shows it (escaped: `toolreplay.terminal`). When the call column would get fewer
than `CALL_ROOM` cells, the columns it needs less yield to it, in this order:
the timeline goes, the lane column narrows to `LANE_MIN` and then goes, and the
effect column narrows to `EFFECT_MIN` (cut in the middle of the name, keeping an
occurrence suffix).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len

from toolreplay import terminal_safe
from toolreplay.summaries import NARROW

__all__ = [
    "CALL_ROOM",
    "EFFECT_MAX",
    "EFFECT_MIN",
    "GAP",
    "LANE_MAX",
    "LANE_MIN",
    "STATE_WIDTH",
    "TIMELINE_WIDTH",
    "ListColumns",
    "list_columns",
    "shown_width",
]

CALL_ROOM = NARROW
"""Cells the call column is given before anything else: a model call's summary shows
both what it was asked and what it answered from this width on."""
EFFECT_MAX = 40
EFFECT_MIN = 16
LANE_MAX = 16
LANE_MIN = 6
STATE_WIDTH = 8
"""`ok`, `error`, `patched`, `supplied`, `live`, `pending*`."""
TIMELINE_WIDTH = 12
GAP = 2
"""Blank cells between two columns."""


def shown_width(text: str) -> int:
    """Terminal cells `text` takes as the list shows it (escaped)."""
    return cell_len(terminal_safe(text))


@dataclass(frozen=True, slots=True)
class ListColumns:
    """The width of each column (0: not shown) in a list `width` cells wide."""

    width: int
    index: int
    lane: int
    timeline: int
    effect: int
    state: int = STATE_WIDTH

    @property
    def room(self) -> int:
        """The width left for the call column (below 0 when the others do not fit)."""
        used = self.index + GAP + self.effect + GAP + self.state + GAP
        if self.lane:
            used += self.lane + GAP
        if self.timeline:
            used += self.timeline + GAP
        return self.width - used

    @property
    def call(self) -> int:
        """The width of the call column (never below 0)."""
        return max(self.room, 0)

    def header(self) -> str:
        lane = f"{'lane':<{self.lane}}  " if self.lane else ""
        timeline = f"{'timeline':<{self.timeline}}  " if self.timeline else ""
        effect = "effect"[: self.effect]
        return (
            f"{'#':>{self.index}}  {lane}{timeline}{effect:<{self.effect}}  "
            f"{'state':<{self.state}}  call"
        )


def list_columns(width: int, *, index: int, effect: int, lane: int) -> ListColumns:
    """The columns of a list `width` cells wide whose longest index takes `index`
    cells, whose longest effect (with its occurrence suffix) `effect` cells and
    longest lane `lane` cells (0: the trace ran on one lane, no lane or timeline)."""
    effect = max(min(effect, EFFECT_MAX), 6)
    lane = max(min(lane, LANE_MAX), 4) if lane else 0
    columns = ListColumns(width, index, lane, TIMELINE_WIDTH if lane else 0, effect)
    if columns.room >= CALL_ROOM:
        return columns
    # The call column needs room: what matters less yields, one step at a time.
    short = CALL_ROOM - columns.room
    if columns.timeline:
        columns = ListColumns(width, index, lane, 0, effect)
        short -= TIMELINE_WIDTH + GAP
    if short > 0 and lane:
        narrower = max(lane - short, LANE_MIN)
        if narrower < lane:
            short -= lane - narrower
            lane = narrower
        if short > 0:
            short -= lane + GAP
            lane = 0
        columns = ListColumns(width, index, lane, 0, effect)
    if short > 0:
        columns = ListColumns(width, index, lane, 0, max(effect - short, min(effect, EFFECT_MIN)))
    return columns
