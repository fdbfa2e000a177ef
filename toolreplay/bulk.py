"""Making a value per operation, hundreds of thousands at once (loading a trace, a diff).

Two costs that do not matter for one value dominate for a million: the generated
`__init__` of a frozen dataclass, which sets each field through `object.__setattr__`,
and the cyclic garbage collector, which rescans every container made so far each time
enough new ones pile up.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import fields
from typing import cast

__all__ = ["collection_paused", "slot_setters"]

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
