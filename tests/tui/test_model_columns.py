"""How the operation list shares its width: the call column first, every column bounded."""

from __future__ import annotations

import pytest
from toolreplay_tui.model.columns import (
    CALL_ROOM,
    EFFECT_MAX,
    EFFECT_MIN,
    LANE_MAX,
    ListColumns,
    list_columns,
    shown_width,
)

MODEL = len("openai.responses.create")


def used(columns: ListColumns) -> int:
    parts = [columns.index, columns.effect, columns.state, columns.call]
    parts += [part for part in (columns.lane, columns.timeline) if part]
    return sum(parts) + 2 * (len(parts) - 1)


def test_at_120_columns_a_model_call_summary_gets_its_room_and_the_effect_stays_whole() -> None:
    # 120 columns: the list is 70 cells wide inside its border.
    columns = list_columns(70, index=1, effect=MODEL, lane=0)
    assert columns.call >= CALL_ROOM
    assert columns.effect == MODEL
    assert used(columns) == 70


def test_lanes_yield_to_the_call_column_then_come_back_when_there_is_room() -> None:
    narrow = list_columns(70, index=1, effect=MODEL, lane=6)
    assert (narrow.lane, narrow.timeline) == (0, 0)
    assert narrow.call >= CALL_ROOM
    wide = list_columns(94, index=1, effect=MODEL, lane=6)  # 160 columns
    assert (wide.lane, wide.timeline) == (6, 12)
    assert wide.call >= CALL_ROOM
    # In between, the lane column narrows before it goes.
    between = list_columns(
        1 + 2 + 10 + 2 + MODEL + 2 + 8 + 2 + CALL_ROOM, index=1, effect=MODEL, lane=14
    )
    assert (between.lane, between.timeline) == (10, 0)
    assert between.call == CALL_ROOM


def test_the_effect_narrows_last_and_never_below_its_minimum() -> None:
    tight = list_columns(38, index=1, effect=MODEL, lane=0)  # 80 columns
    assert tight.effect == EFFECT_MIN
    assert used(tight) == 38
    short = list_columns(38, index=1, effect=10, lane=0)
    assert short.effect == 10  # a short effect is not widened to the minimum


@pytest.mark.parametrize("width", [38, 53, 70, 94, 200])
def test_a_hostile_lane_or_effect_never_pushes_a_column_off_the_line(width: int) -> None:
    lane = shown_width("\x1b]52;c;" + "A" * 500)  # escaped, it is even longer
    effect = shown_width("x." + "y" * 300)
    columns = list_columns(width, index=6, effect=effect, lane=lane)
    assert columns.lane <= LANE_MAX
    assert columns.effect <= EFFECT_MAX
    assert used(columns) == width  # every column on the line, the call column last
    assert shown_width("\x1b") == len("\\u001b")
