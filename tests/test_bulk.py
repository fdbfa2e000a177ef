"""`toolreplay.bulk`: the helpers for making a value per operation, a million at once."""

from __future__ import annotations

import copy
import gc
import pickle
from dataclasses import FrozenInstanceError, dataclass, replace
from typing import Any

import pytest

from toolreplay.bulk import Thawed, collection_paused
from toolreplay.trace.model import (
    Operation,
    OperationIdentity,
    Returned,
    new_operation,
    new_returned,
)


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


class _NewPoint(Thawed, _Point):
    __slots__ = ()

    def __init__(self, x: int, y: str) -> None:
        this: Any = self
        this.x = x
        this.y = y
        this.__class__ = _Point


def test_a_thawed_builder_makes_the_frozen_dataclass_itself() -> None:
    point = _NewPoint(3, "three")
    assert type(point) is _Point
    assert point == _Point(3, "three")
    assert hash(point) == hash(_Point(3, "three"))
    assert repr(point) == "_Point(x=3, y='three')"
    with pytest.raises(FrozenInstanceError):
        point.x = 4  # type: ignore[misc]  # what the test shows is refused
    with pytest.raises(FrozenInstanceError):
        del point.y  # type: ignore[misc]  # the deletion the test shows is refused
    assert replace(point, x=5) == _Point(5, "three")
    assert copy.deepcopy(point) == point
    assert pickle.loads(pickle.dumps(point)) == point


def test_the_trace_models_builders_equal_their_constructors() -> None:
    identity = OperationIdentity("crm", "customer.get", "0" * 64, 2)
    made = new_operation(7, identity, {"id": 1}, new_returned({"ok": True}), "patched", "p1", 3)
    built = Operation(
        logical_id=7,
        identity=identity,
        inputs={"id": 1},
        outcome=Returned({"ok": True}),
        origin="patched",
        patch_id="p1",
        source_logical_operation_id=3,
    )
    assert (type(made), type(made.outcome)) == (Operation, Returned)
    assert made == built
    assert (made.line, made.lane, made.start_ns, made.end_ns) == (None, None, None, None)
    assert made.outcome.status == "ok"
    with pytest.raises(FrozenInstanceError):
        made.origin = "recorded"  # type: ignore[misc]  # what the test shows is refused
