"""Making a value per operation, hundreds of thousands at once (loading a trace, a diff).

Costs that do not matter for one value dominate for a million: the generated
`__init__` of a frozen dataclass, which sets each field through `object.__setattr__`;
the cyclic garbage collector, which rescans every container made so far each time
enough new ones pile up; and holding what the values are made from until the last is
made.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import fields
from typing import TypeVar, cast

__all__ = ["collection_paused", "draining", "slot_setters"]

A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")

SlotSetter = Callable[[object, object], None]


def slot_setters(cls: type) -> tuple[SlotSetter, ...]:
    """The setters of a frozen, slotted dataclass's fields, in field order.

    A hand-written `__init__` calls them to set what the class's `__setattr__` refuses,
    at the cost of a slot store; the instance stays as frozen as the dataclass made it.
    """
    return tuple(cast("SlotSetter", vars(cls)[field.name].__set__) for field in fields(cls))


@contextmanager
def collection_paused() -> Generator[None]:
    """The cyclic collector off inside the block (as it was, after).

    For blocks that make many containers, none of them part of a cycle: collecting
    meanwhile frees nothing and rescans a heap that grows with every pass.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


_DRAIN_BLOCK = 1 << 16


def draining(first: list[A], second: list[B], third: list[C]) -> Iterator[tuple[A, B, C]]:
    """`zip` of three equally long columns, which empties them as it goes: each block of
    rows is deleted from the columns once taken, so what the rows are made into can
    reuse the memory of what they were made from (the caller must hold no other
    reference to the columns' items for that to free anything)."""
    while first:
        block = zip(first[:_DRAIN_BLOCK], second[:_DRAIN_BLOCK], third[:_DRAIN_BLOCK], strict=True)
        del first[:_DRAIN_BLOCK], second[:_DRAIN_BLOCK], third[:_DRAIN_BLOCK]
        yield from block
