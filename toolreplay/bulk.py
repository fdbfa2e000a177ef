"""Making a value per operation, hundreds of thousands at once (loading a trace, a diff).

Costs that do not matter for one value dominate for a million: the generated
`__init__` of a frozen dataclass, which sets each field through `object.__setattr__`
(`Thawed`), and the cyclic garbage collector, which rescans every container made so
far each time enough new ones pile up (`collection_paused`).
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager

__all__ = ["Thawed", "collection_paused"]


class Thawed:
    """Mixed into a private subclass of a frozen, slotted dataclass, made only to build
    its values: the subclass's instances take plain attribute stores, which the frozen
    class refuses (its own `__init__` stores each field through `object.__setattr__`,
    a call a field).

    The subclass's `__init__` sets every field and ends with `self.__class__ = <the
    dataclass>`: from then on the value is an instance of the frozen dataclass itself,
    equal to one its constructor builds, and as frozen. With both of `object`'s methods
    here, CPython stores into the slots directly: a third of the cost of building an
    `Operation`, which loading a trace does once a line.
    """

    __slots__ = ()
    __setattr__ = object.__setattr__
    __delattr__ = object.__delattr__


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
