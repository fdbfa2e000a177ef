"""diff() of random traces matches the plain reference (tests/support/diff_reference.py).

The reference aligns and compares one operation at a time, as diff() did before
it was made fast. For random pairs of traces, a source and a target edited from
it (calls removed, inserted, moved, given other inputs, outputs, errors, lanes or
lineage), both must give the same alignment, rows, differences, `to_dict()` JSON
and text. Outputs lean on what type-exact comparison is about (1, 1.0 and True;
0.0 and -0.0; NaN; the same dict in another key order), and unchanged calls keep
the very objects of the source, as an in-memory branch would.
"""

from __future__ import annotations

import copy
import json
import marshal
import math
from collections.abc import Iterable
from dataclasses import astuple, dataclass, replace
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

import toolreplay
from tests.support import diff_reference
from toolreplay import JsonValue, Operation, OperationIdentity, Raised, Returned
from toolreplay.comparison import AlignmentRow, Difference, align_operations
from toolreplay.comparison.report import same_output
from toolreplay.portable import same_value
from toolreplay.trace import SessionEnding, Trace, TraceFooter, TraceHeader
from toolreplay.trace.model import Origin

EFFECTS = ("crm.customer.get", "crm.notes.add", "llm.decide")
LANES = (None, "main", "task-1")

scalars = st.sampled_from(
    [0, 1, -1, 1.0, True, False, 0.0, -0.0, 127, 255, -255, 1e308, "a", "nan", None]
) | st.floats(allow_infinity=False)
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from("abc"), children, max_size=3)
    ),
    max_leaves=6,
)


@dataclass(frozen=True)
class Call:
    """One call before it is numbered: what it was, how it ended, and how it ran."""

    effect: str
    inputs: dict[str, JsonValue]
    outcome: Returned | Raised
    lane: str | None = None
    origin: Origin = "recorded"
    patch_id: str | None = None
    source_logical_operation_id: int | None = None


outcomes = st.builds(Returned, json_values) | st.builds(
    Raised,
    st.sampled_from(["builtins.TimeoutError", "x.Rejected"]),
    st.sampled_from("ab"),
    st.none(),
)
calls = st.builds(
    Call,
    st.sampled_from(EFFECTS),
    st.fixed_dictionaries({"k": st.integers(0, 2)}),
    outcomes,
    st.sampled_from(LANES),
)


def _retyped(value: Any) -> Any:
    """`value` with what `==` overlooks changed: True -> 1 -> 1.0 -> True, 0.0 <-> -0.0,
    and the key order of every dict."""
    if isinstance(value, dict):
        return {key: _retyped(item) for key, item in reversed(list(value.items()))}
    if isinstance(value, list):
        return [_retyped(item) for item in value]
    if value is True:
        return 1
    if type(value) is int and value == 1:
        return 1.0
    if type(value) is float and value == 1:
        return True
    if type(value) is float and value == 0:
        return -value
    return value


@st.composite
def edited(draw: st.DrawFn, source: list[Call]) -> list[Call]:
    """The source with a few random edits, unchanged calls kept as the same objects."""
    target = list(source)
    for _ in range(draw(st.integers(0, 6))):
        edit = draw(
            st.sampled_from(
                [
                    "remove",
                    "insert",
                    "move",
                    "inputs",
                    "outcome",
                    "retype",
                    "copy",
                    "lane",
                    "lineage",
                ]
            )
        )
        if edit == "insert" or not target:
            target.insert(draw(st.integers(0, len(target))), draw(calls))
            continue
        k = draw(st.integers(0, len(target) - 1))
        call = target[k]
        if edit == "remove":
            del target[k]
        elif edit == "move":
            target.insert(draw(st.integers(0, len(target) - 1)), target.pop(k))
        elif edit == "inputs":
            target[k] = replace(call, inputs={"k": draw(st.integers(0, 3))})
        elif edit == "outcome":
            target[k] = replace(call, outcome=draw(outcomes))
        elif edit in ("retype", "copy") and isinstance(call.outcome, Returned):
            value = call.outcome.value
            changed = _retyped(value) if edit == "retype" else copy.deepcopy(value)
            target[k] = replace(call, outcome=Returned(changed))
        elif edit == "lane":
            target[k] = replace(call, lane=draw(st.sampled_from(LANES)))
        elif edit == "lineage":
            origin: Origin = draw(st.sampled_from(["patched", "supplied", "live"]))
            source_id = draw(st.integers(0, len(source))) if origin == "patched" else None
            patch_id = None if origin == "live" else draw(st.sampled_from(["p1", "p2"]))
            target[k] = replace(
                call, origin=origin, patch_id=patch_id, source_logical_operation_id=source_id
            )
    return target


def _trace(name: str, calls: list[Call], source_trace_id: str | None) -> Trace:
    """The calls numbered as a recording numbers them, as a loaded, complete trace."""
    seen: dict[tuple[str, str], int] = {}
    operations: list[Operation] = []
    for logical_id, call in enumerate(calls):
        namespace, _, effect_name = call.effect.rpartition(".")
        fingerprint = toolreplay.fingerprint(call.inputs)
        occurrence = seen.get((call.effect, fingerprint), 0)
        seen[(call.effect, fingerprint)] = occurrence + 1
        operations.append(
            Operation(
                logical_id,
                OperationIdentity(namespace, effect_name, fingerprint, occurrence),
                call.inputs,
                call.outcome,
                origin=call.origin,
                patch_id=call.patch_id,
                source_logical_operation_id=call.source_logical_operation_id,
                lane=call.lane,
            )
        )
    header = TraceHeader(name, "fork" if source_trace_id else "record", "test", {}, source_trace_id)
    footer = TraceFooter(len(operations), "0" * 64, SessionEnding("completed"))
    return Trace(Path(f"{name}.trp"), header, operations, footer)


@st.composite
def sources(draw: st.DrawFn) -> list[Call]:
    """Up to 14 calls; or a few calls repeated to 20-90, long enough for the alignment's
    runs and look-aheads."""
    listed = draw(st.lists(calls, max_size=14))
    if listed and draw(st.booleans()):
        return [listed[k % len(listed)] for k in range(draw(st.integers(20, 90)))]
    return listed


@st.composite
def trace_pairs(draw: st.DrawFn) -> tuple[Trace, Trace]:
    source_calls = draw(sources())
    target_calls = draw(edited(source_calls))
    forked = draw(st.booleans())
    return (
        _trace("source", source_calls, None),
        _trace("target", target_calls, "source" if forked else None),
    )


@settings(max_examples=400)
@given(trace_pairs())
def test_diff_matches_the_plain_reference(traces: tuple[Trace, Trace]) -> None:
    source, target = traces
    report = toolreplay.diff(source, target)
    source_ops, target_ops = list(source.operations), list(target.operations)

    pairs = align_operations(source_ops, target_ops)
    aligned = [(pair.source, pair.target, pair.kind) for pair in pairs]
    assert aligned == diff_reference.align(source_ops, target_ops)
    rows, differences = diff_reference.rows_and_differences(source, target)
    assert _plain(report.rows) == _plain(rows)
    assert _plain(report.differences) == _plain(differences)

    expected = diff_reference.report_dict(source, target, rows, differences)
    assert json.dumps(report.to_dict()) == json.dumps(expected)
    plain = replace(report, differences=tuple(differences))  # rows: equal, asserted above
    assert report.render_text() == plain.render_text()


def _plain(items: Iterable[AlignmentRow] | Iterable[Difference]) -> list[tuple[object, ...]]:
    # As tuples: since Python 3.13 a dataclass compares its fields one by one with `==`,
    # so a row holding a NaN output differs from an identical row; tuples compare the
    # same object as equal first, as dataclasses did before.
    return [astuple(item) for item in items]


@settings(max_examples=400)
@given(json_values, json_values)
@example({"a": math.nan}, {})  # a flat object holding a NaN, compared with itself
@example({"a": 0.0, "b": "x"}, {"a": -0.0, "b": "x"})
@example({"a": True}, {"a": 1})
def test_same_output_is_type_exact_equality(left: JsonValue, right: JsonValue) -> None:
    # The diff's fast comparison against the plain one, on what `==` overlooks: another
    # value, the same value retyped (1, 1.0, True; 0.0, -0.0; key order), a copy (its
    # NaNs are other objects) and the value itself (the same NaN objects on both sides).
    for other in (right, _retyped(left), marshal.loads(marshal.dumps(left)), left):
        assert same_output(left, other) == same_value(left, other), (left, other)
