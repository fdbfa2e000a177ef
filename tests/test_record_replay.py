"""Record and strict replay of sync effects, against real trace files."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import inspect
import json
import random
import tempfile
from pathlib import Path
from typing import assert_type

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolreplay
from tests.support import crm
from toolreplay import (
    AmbiguousReplayMatch,
    EffectDefinitionError,
    JsonValue,
    NonPortableValueError,
    ReplayContractError,
    ReplayMiss,
    Returned,
    SessionError,
    SessionNestingError,
    TraceError,
    TraceExistsError,
    UnconsumedOperationsError,
)


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "refund.trp"
    with toolreplay.record(path, metadata={"runner": "tests.support.crm:handle_refund"}):
        crm.handle_refund(42, 120.0)
        crm.handle_refund(42, 5000.0)
    crm.BODY_CALLS.clear()
    return path


def test_replay_returns_what_was_recorded_without_running_a_body(recorded: Path) -> None:
    with toolreplay.record(recorded.with_name("again.trp")):
        live = [crm.handle_refund(42, 120.0), crm.handle_refund(42, 5000.0)]
    assert sum(crm.BODY_CALLS.values()) == 6
    crm.BODY_CALLS.clear()

    with toolreplay.replay(recorded) as session:
        replayed = [crm.handle_refund(42, 120.0), crm.handle_refund(42, 5000.0)]
        assert session.consumed_count == 6
    assert replayed == live
    assert replayed[1]["status"] == "retry later: billing service timed out after 30s"
    assert sum(crm.BODY_CALLS.values()) == 0


def test_the_trace_holds_inputs_with_defaults_outcomes_and_a_footer(recorded: Path) -> None:
    trace = toolreplay.read_trace(recorded)
    assert trace.complete
    assert trace.header.runner == "tests.support.crm:handle_refund"
    assert trace.footer is not None
    assert trace.footer.ending.status == "completed"
    effects = [(op.logical_id, op.effect, op.identity.occurrence) for op in trace.operations]
    assert effects == [
        (0, "crm.customer.get", 0),
        (1, "billing.refund.create", 0),
        (2, "crm.notes.add", 0),
        (3, "crm.customer.get", 1),
        (4, "billing.refund.create", 0),
        (5, "crm.notes.add", 0),
    ]
    first = trace.operations[0]
    assert first.inputs == {"customer_id": 42, "include_history": False}
    assert first.identity.fingerprint == toolreplay.fingerprint(first.inputs)
    assert first.outcome == Returned(crm.CUSTOMERS[42])
    failure = trace.operations[4].outcome
    assert isinstance(failure, toolreplay.Raised)
    assert failure.error_type == "builtins.TimeoutError"
    assert failure.args == ["billing service timed out after 30s"]
    text = recorded.read_text()
    assert "Traceback" not in text
    assert "crm.py" not in text


def test_each_replayed_output_is_a_fresh_copy(recorded: Path) -> None:
    trace = toolreplay.read_trace(recorded)
    for _ in range(2):
        with toolreplay.replay(trace):
            first = crm.handle_refund(42, 120.0)
            assert isinstance(first["refund"], dict)
            first["refund"]["amount"] = -1
            crm.handle_refund(42, 5000.0)
    assert trace.operations[1].outcome == Returned({"refund_id": "r-42-120.0", "amount": 120.0})


def test_a_changed_input_is_a_replay_miss_naming_the_difference(recorded: Path) -> None:
    with pytest.raises(ReplayMiss) as caught, toolreplay.replay(recorded):
        crm.handle_refund(42, 150.0)
    miss = caught.value
    message = str(miss)
    assert miss.identity.effect == "billing.refund.create"
    assert miss.identity.occurrence == 0
    assert miss.inputs == {"customer_id": 42, "amount": 150.0}
    assert "billing.refund.create was called" in message
    assert '"amount": 150.0' in message
    assert "$.amount: recorded 120.0, called 150.0" in message
    assert "$.amount: recorded 5000.0, called 150.0" in message
    assert [op.logical_id for op in miss.candidates] == [1, 4]
    assert "What to do" in message


def test_calling_more_often_than_recorded_is_a_miss_that_says_so(tmp_path: Path) -> None:
    path = tmp_path / "once.trp"
    with toolreplay.record(path):
        crm.get_customer(7)
    with pytest.raises(ReplayMiss, match="this call is occurrence 1") as caught:
        with toolreplay.replay(path):
            crm.get_customer(7)
            crm.get_customer(7)
    assert caught.value.candidates[0].logical_id == 0


_served: list[int] = []


@toolreplay.effect("counter.next")
def _next_of(key: int) -> dict[str, int]:
    _served.append(key)
    return {"key": key, "call": len(_served)}


def test_repeated_calls_are_served_in_order_and_misses_give_their_occurrence_back(
    tmp_path: Path,
) -> None:
    path = tmp_path / "repeats.trp"
    _served.clear()
    with toolreplay.record(path):
        recorded = [_next_of(7), _next_of(7), _next_of(8), _next_of(7)]
    assert [op.identity.occurrence for op in toolreplay.read_trace(path).operations] == [
        0,
        1,
        0,
        2,
    ]

    served: list[dict[str, int]] = []
    misses: list[str] = []
    with pytest.raises(ReplayContractError, match="caught by the application"):
        with toolreplay.replay(path):
            served.append(_next_of(7))
            with pytest.raises(ReplayMiss, match=r"counter.next occurrence 0, fingerprint"):
                _next_of(9)  # never recorded: its occurrence 0 is given back
            served += [_next_of(8), _next_of(7), _next_of(7)]
            for _ in range(2):  # a fourth call of 7, twice: each is occurrence 3
                with pytest.raises(ReplayMiss) as caught:
                    _next_of(7)
                misses.append(str(caught.value))
            with pytest.raises(ReplayMiss, match="this call is occurrence 1"):
                _next_of(8)
    assert served == [recorded[0], recorded[2], recorded[1], recorded[3]]
    assert all("this call is occurrence 3" in miss for miss in misses), misses


def test_an_effect_the_trace_never_saw_lists_what_it_did_see(recorded: Path) -> None:
    with pytest.raises(ReplayMiss, match=r"no call of llm\.decide at all; it records: ") as caught:
        with toolreplay.replay(recorded):
            asyncio.run(crm.decide("refund?"))
    assert "billing.refund.create, crm.customer.get, crm.notes.add" in str(caught.value)


def test_unconsumed_operations_fail_a_normal_exit_and_are_listed(recorded: Path) -> None:
    with pytest.raises(UnconsumedOperationsError) as caught, toolreplay.replay(recorded):
        crm.handle_refund(42, 120.0)
    error = caught.value
    assert [op.logical_id for op in error.operations] == [3, 4, 5]
    assert "3 of the 6 recorded operations" in str(error)
    assert "operation 3, line 5: crm.customer.get occurrence 1" in str(error)


def test_an_application_exception_propagates_unmodified(recorded: Path) -> None:
    failure = ValueError("the application's own bug")
    with pytest.raises(ValueError, match="own bug") as caught, toolreplay.replay(recorded):
        crm.get_customer(42)
        raise failure
    assert caught.value is failure
    assert caught.value.__context__ is None


def test_a_miss_swallowed_by_the_application_still_fails_the_session(recorded: Path) -> None:
    with pytest.raises(ReplayContractError, match="caught by the application") as caught:
        with toolreplay.replay(recorded):
            with contextlib.suppress(Exception):  # a blanket handler, as real apps have
                crm.get_customer(7)
    assert isinstance(caught.value.__cause__, ReplayMiss)


def test_sessions_do_not_nest(recorded: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.trp"
    with toolreplay.record(empty):
        pass
    with toolreplay.replay(empty), pytest.raises(SessionNestingError, match="do not nest"):
        with toolreplay.record(tmp_path / "inner.trp"):
            pass
    assert not (tmp_path / "inner.trp").exists()
    with toolreplay.record(tmp_path / "outer.trp"), pytest.raises(SessionNestingError):
        with toolreplay.replay(recorded):
            pass
    assert toolreplay.current_session() is None


def test_a_session_is_single_use(tmp_path: Path) -> None:
    session = toolreplay.record(tmp_path / "a.trp")
    with session:
        pass
    with pytest.raises(SessionError, match="already used"), session:
        pass


def test_recording_never_overwrites_silently(recorded: Path) -> None:
    before = recorded.read_bytes()
    with pytest.raises(TraceExistsError, match="never overwritten silently") as caught:
        with toolreplay.record(recorded):
            crm.get_customer(7)
    assert caught.value.path == recorded
    assert recorded.read_bytes() == before
    assert crm.BODY_CALLS["crm.customer.get"] == 0

    with toolreplay.record(recorded, overwrite=True):
        crm.get_customer(7)
    assert len(toolreplay.read_trace(recorded)) == 1


def test_recording_into_a_directory_or_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="is a directory"):
        toolreplay.record(tmp_path).__enter__()
    with pytest.raises(TraceError, match="does not exist; create it first"):
        toolreplay.record(tmp_path / "no" / "such" / "x.trp").__enter__()
    assert toolreplay.current_session() is None


def test_an_application_exception_is_recorded_as_the_ending(tmp_path: Path) -> None:
    path = tmp_path / "crash.trp"
    with pytest.raises(KeyError), toolreplay.record(path):
        crm.get_customer(42)
        crm.get_customer(404)  # the body raises KeyError: recorded, then it ends the session
    trace = toolreplay.read_trace(path)
    assert trace.complete
    assert len(trace) == 2
    assert trace.operations[1].outcome == toolreplay.Raised("builtins.KeyError", "404", [404])
    assert trace.footer is not None
    assert trace.footer.ending == toolreplay.SessionEnding("raised", "builtins.KeyError", "404")

    with pytest.raises(KeyError) as caught, toolreplay.replay(path):
        crm.get_customer(42)
        crm.get_customer(404)
    assert caught.value.args == (404,)


def test_non_portable_inputs_are_refused_before_the_body_runs(tmp_path: Path) -> None:
    path = tmp_path / "bad.trp"
    with pytest.raises(NonPortableValueError) as caught, toolreplay.record(path):
        crm.create_refund(42, float("nan"))
    assert str(caught.value).startswith("inputs of billing.refund.create: $.amount: float('nan')")
    assert crm.BODY_CALLS["billing.refund.create"] == 0
    assert len(toolreplay.read_trace(path)) == 0


@toolreplay.effect("clock.now")
def now_as_bytes() -> bytes:
    return b"2026-11-29"


def test_a_non_portable_output_is_refused_and_not_recorded(tmp_path: Path) -> None:
    path = tmp_path / "bad.trp"
    with pytest.raises(NonPortableValueError) as caught, toolreplay.record(path):
        now_as_bytes()
    message = str(caught.value)
    assert message.startswith("output of clock.now: $: b'2026-11-29' (type bytes)")
    assert "The effect ran, but its call was not recorded" in message
    assert len(toolreplay.read_trace(path)) == 0


def test_outside_a_session_the_body_just_runs() -> None:
    assert now_as_bytes() == b"2026-11-29"  # no portability check outside sessions
    assert crm.get_customer(7)["name"] == "Bo"
    assert crm.BODY_CALLS["crm.customer.get"] == 1


@toolreplay.effect("search.query")
def search(query: str, *terms: str, limit: int = 10, **filters: str) -> list[str]:
    return [query, *terms][:limit]


def test_inputs_bind_by_parameter_name_with_var_args_as_list_and_dict(tmp_path: Path) -> None:
    path = tmp_path / "search.trp"
    with toolreplay.record(path):
        search("refund", "late", "damaged", region="eu")
    operation = toolreplay.read_trace(path).operations[0]
    assert operation.inputs == {
        "query": "refund",
        "terms": ["late", "damaged"],
        "limit": 10,
        "filters": {"region": "eu"},
    }
    with toolreplay.replay(path):
        assert search("refund", "late", "damaged", region="eu") == ["refund", "late", "damaged"]


def test_the_same_call_spelled_differently_has_the_same_identity(tmp_path: Path) -> None:
    path = tmp_path / "spelling.trp"
    with toolreplay.record(path):
        crm.get_customer(42, False)
    with toolreplay.replay(path):
        assert crm.get_customer(customer_id=42)["name"] == "Ada"


def test_a_wrong_call_signature_is_a_type_error_naming_the_effect(tmp_path: Path) -> None:
    with (
        toolreplay.record(tmp_path / "x.trp"),
        pytest.raises(TypeError, match=r"crm\.customer\.get\(\)"),
    ):
        crm.get_customer()  # type: ignore[call-arg]  # the mistake under test


def test_duplicate_identities_in_a_hand_edited_trace_are_ambiguous(recorded: Path) -> None:
    lines = recorded.read_text().splitlines()
    operation = json.loads(lines[1])
    duplicate = {**operation, "logical_id": 99}
    edited = recorded.with_name("edited.trp")
    # Hand edit: an extra copy of operation 0, and the footer removed.
    edited.write_text("\n".join([*lines[:2], json.dumps(duplicate), *lines[2:-1]]) + "\n")
    with pytest.raises(AmbiguousReplayMatch) as caught, toolreplay.replay(edited):
        crm.get_customer(42)
    message = str(caught.value)
    assert "crm.customer.get occurrence 0" in message
    assert "recorded 2 times" in message
    assert "operation 0, line 2, operation 99, line 3" in message


def test_decoration_keeps_name_doc_and_signature() -> None:
    assert crm.get_customer.__name__ == "get_customer"
    assert str(inspect.signature(crm.get_customer)) == (
        "(customer_id: 'int', include_history: 'bool' = False) -> 'dict[str, JsonValue]'"
    )
    assert inspect.iscoroutinefunction(crm.decide)
    assert_type(crm.get_customer(7), dict[str, JsonValue])


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("crm",), {}, "needs a namespace and a name"),
        ((".get",), {}, "needs a namespace and a name"),
        (("crm.",), {}, "needs a namespace and a name"),
        (("crm customer.get",), {}, "is not a valid effect name"),
        (("crm.customer..get",), {}, "is not a valid effect name"),
        (("crm.x",), {"namespace": "crm"}, "not both"),
        ((), {"namespace": "crm"}, "needs a namespace and a name"),
    ],
)
def test_bad_effect_names_are_refused(
    args: tuple[str, ...], kwargs: dict[str, str], message: str
) -> None:
    with pytest.raises(EffectDefinitionError, match=message):
        toolreplay.effect(*args, **kwargs)


def test_generators_and_classes_cannot_be_effects() -> None:
    def numbers() -> object:
        yield 1

    with pytest.raises(EffectDefinitionError, match="Return a list instead"):
        toolreplay.effect("gen.numbers")(numbers)
    with pytest.raises(EffectDefinitionError, match="decorates functions"):
        toolreplay.effect("cls.thing")(dict)


def test_methods_are_refused_with_what_to_do_instead() -> None:
    with pytest.raises(EffectDefinitionError, match="Decorate a module-level function") as caught:

        class Client:
            @toolreplay.effect("crm.customer.get")
            def get(self, customer_id: int) -> None: ...

    assert "<locals>.Client.get: its inputs would include 'self'" in str(caught.value)


@toolreplay.effect("echo.value")
def echo(value: object) -> object:
    return value


@toolreplay.effect("echo.wrapped")
def echo_wrapped(label: str) -> object:
    return {"label": label, "payload": NON_PORTABLE[label]}


NON_PORTABLE: dict[str, object] = {
    "nan": float("nan"),
    "bytes": b"\x00",
    "set": {1, 2},
    "tuple": (1, 2),
    "datetime": datetime.datetime(2026, 11, 29, 12, 0),
    "object": object(),
}


@pytest.mark.parametrize("label", NON_PORTABLE)
def test_every_kind_of_non_portable_argument_is_named(tmp_path: Path, label: str) -> None:
    with toolreplay.record(tmp_path / "in.trp"), pytest.raises(NonPortableValueError) as caught:
        echo([1, NON_PORTABLE[label]])
    assert caught.value.path == "$.value[1]"
    assert str(caught.value).startswith("inputs of echo.value: $.value[1]: ")


@pytest.mark.parametrize("label", NON_PORTABLE)
def test_every_kind_of_non_portable_output_is_named(tmp_path: Path, label: str) -> None:
    # Caught by the application here, so the recording also fails when it closes:
    # the effect ran but its call is missing from the trace.
    with pytest.raises(SessionError, match="NonPortableValueError was raised during it") as exit:
        with toolreplay.record(tmp_path / "out.trp"), pytest.raises(NonPortableValueError):
            echo_wrapped(label)
    caught = exit.value.__cause__
    assert isinstance(caught, NonPortableValueError)
    assert caught.path == "$.payload"
    assert str(caught).startswith("output of echo.wrapped: $.payload: ")


@toolreplay.effect("lists.drain")
def drain(items: list[int]) -> int:
    total = sum(items)
    items.clear()  # a body that mutates its own argument
    return total


def test_inputs_are_recorded_as_they_were_before_the_body_ran(tmp_path: Path) -> None:
    path = tmp_path / "drain.trp"
    with toolreplay.record(path):
        assert drain([1, 2, 3]) == 6
    operation = toolreplay.read_trace(path.with_name("drain.trp")).operations[0]
    assert operation.inputs == {"items": [1, 2, 3]}
    with toolreplay.replay(path):
        assert drain([1, 2, 3]) == 6


@toolreplay.effect("text.broken")
def broken_text(index: int) -> str:
    return "fine" if index else "bad \ud800"


def test_an_unencodable_output_is_refused_and_the_session_keeps_working(tmp_path: Path) -> None:
    path = tmp_path / "text.trp"
    with pytest.raises(SessionError), toolreplay.record(path):
        with pytest.raises(NonPortableValueError, match="lone surrogate"):
            broken_text(0)
        assert broken_text(1) == "fine"  # not jammed by the refused call
    assert [op.inputs for op in toolreplay.read_trace(path).operations] == [{"index": 1}]


def test_a_bare_effect_decorator_says_what_to_write() -> None:
    def lookup() -> None: ...

    with pytest.raises(EffectDefinitionError, match=r"write @effect\('crm\.customer\.get'\)"):
        toolreplay.effect(lookup)  # type: ignore[arg-type]  # the mistake under test


@toolreplay.effect("shape.mixed")
def mixed(a: int, b: int = 2, *, c: str = "x", d: bool) -> list[object]:
    return [a, b, c, d]


def test_every_call_shape_binds_to_the_same_inputs_and_wrong_calls_fail_like_python(
    tmp_path: Path,
) -> None:
    path = tmp_path / "shapes.trp"
    with toolreplay.record(path):
        mixed(1, d=True)
        mixed(1, 2, c="x", d=True)
        mixed(d=True, a=1)
    operations = toolreplay.read_trace(path).operations
    assert [op.inputs for op in operations] == [{"a": 1, "b": 2, "c": "x", "d": True}] * 3
    assert [op.identity.occurrence for op in operations] == [0, 1, 2]
    with toolreplay.replay(path):
        for wrong in ({"e": 1, "d": True}, {"a": 2}):
            with pytest.raises(TypeError, match=r"shape\.mixed\(\)"):
                mixed(1, **wrong)  # type: ignore[arg-type]  # the mistakes under test
        with pytest.raises(TypeError, match=r"shape\.mixed\(\)"):
            mixed(1)  # type: ignore[call-arg]  # the missing d is the mistake under test
        mixed(1, d=True)
        mixed(a=1, b=2, d=True)
        mixed(1, 2, d=True, c="x")


_counter = iter(range(1 << 62))


@toolreplay.effect("tests.lookup")
def _lookup(key: int) -> dict[str, int]:
    return {"key": key, "answer": next(_counter)}  # a fresh answer at every call


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=12), st.randoms(use_true_random=False))
def test_a_replay_in_any_order_answers_each_call_as_recorded(
    keys: list[int], shuffler: random.Random
) -> None:
    # Replay tries the operation after the last one it served before its index. In any
    # order, the k-th call with some inputs must still get what the k-th such call got
    # when recorded, and the session must end consumed.
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "lookups.trp"
        with toolreplay.record(path):
            recorded = [_lookup(key) for key in keys]
        expected: dict[int, list[dict[str, int]]] = {}
        for key, answer in zip(keys, recorded, strict=True):
            expected.setdefault(key, []).append(answer)
        order = list(keys)
        shuffler.shuffle(order)
        with toolreplay.replay(path) as session:
            replayed = [(key, _lookup(key)) for key in order]
            assert session.consumed_count == len(keys)
    for key, answer in replayed:
        assert answer == expected[key].pop(0), (keys, order)
