"""`toolreplay.bulk`: the helpers for making a value per operation, a million at once."""

from __future__ import annotations

import gc
from dataclasses import FrozenInstanceError, dataclass

import pytest

from toolreplay.bulk import collection_paused, draining, slot_setters


@pytest.mark.parametrize("rows", [0, 1, 65_535, 65_536, 65_537, 200_001])
def test_draining_yields_what_zip_does_and_empties_the_columns(rows: int) -> None:
    first = list(range(rows))
    second = [str(n) for n in range(rows)]
    third = [n % 3 == 0 for n in range(rows)]
    expected = list(zip(first, second, third, strict=True))

    drained = list(draining(first, second, third))

    assert drained == expected
    assert (first, second, third) == ([], [], [])


def test_draining_frees_each_block_before_the_next_is_read() -> None:
    first, second, third = list(range(200_000)), [None] * 200_000, [0] * 200_000
    rows = draining(first, second, third)
    for _ in range(70_000):  # into the second block
        next(rows)
    assert len(first) == len(second) == len(third) == 200_000 - 2 * 65_536


def test_draining_refuses_columns_of_different_lengths() -> None:
    with pytest.raises(ValueError, match="shorter"):
        list(draining([1, 2], [1, 2], [1]))


def test_the_collector_is_off_inside_the_block_and_as_it_was_after() -> None:
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block found it off, and left it off
    assert gc.isenabled()
    with pytest.raises(KeyError), collection_paused():
        raise KeyError("the block raised")
    assert gc.isenabled()


@dataclass(frozen=True, slots=True)
class _Point:
    x: int
    y: str


def test_slot_setters_set_a_frozen_dataclass_which_stays_frozen() -> None:
    set_x, set_y = slot_setters(_Point)
    point = object.__new__(_Point)
    set_x(point, 3)
    set_y(point, "three")
    assert point == _Point(3, "three")
    with pytest.raises(FrozenInstanceError):
        point.x = 4  # type: ignore[misc]  # what the test shows is refused
