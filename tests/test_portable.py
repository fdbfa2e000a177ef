"""Portable JSON: the value domain, path-naming errors, canonical encoding, fingerprints."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import math
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolreplay import (
    NonPortableValueError,
    canonical_json,
    ensure_portable,
    fingerprint,
    value_differences,
)
from toolreplay.portable import MAX_DEPTH, JsonValue, copy_value, loads_checked

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


def typed(value: Any) -> Any:
    """A structure whose equality also compares types (1, 1.0 and True differ)."""
    if isinstance(value, dict):
        return ("dict", sorted((k, typed(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    if isinstance(value, float):
        return ("float", math.copysign(1.0, value), value)
    return (type(value).__name__, value)


@given(json_values)
def test_portable_values_pass_unchanged(value: JsonValue) -> None:
    assert ensure_portable(value) is value


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=8), st.randoms())
def test_key_order_never_changes_a_fingerprint(value: dict[str, JsonValue], rnd: Any) -> None:
    items = list(value.items())
    rnd.shuffle(items)
    assert fingerprint(dict(items)) == fingerprint(value)
    assert canonical_json(dict(items)) == canonical_json(value)


@given(json_values)
def test_canonical_encoding_round_trips(value: JsonValue) -> None:
    encoded = canonical_json(value)
    decoded = json.loads(encoded.decode("utf-8"))
    assert typed(decoded) == typed(value)
    assert canonical_json(decoded) == encoded


@given(json_values, json_values)
def test_distinct_values_have_distinct_encodings(left: JsonValue, right: JsonValue) -> None:
    if typed(left) != typed(right):
        assert canonical_json(left) != canonical_json(right)
        assert fingerprint(left) != fingerprint(right)
    else:
        assert canonical_json(left) == canonical_json(right)


def test_canonical_encoding_is_compact_sorted_utf8() -> None:
    assert canonical_json({"b": [1, 2.5], "a": "é", "c": None}) == (
        '{"a":"é","b":[1,2.5],"c":null}'.encode()
    )


def test_same_value_agrees_with_the_canonical_encoding() -> None:
    from toolreplay.portable import same_value

    assert not same_value(0.0, -0.0)
    assert not same_value({"x": 1}, {"x": 1.0})
    assert not same_value([True], [1])
    assert same_value({"a": [1, 2.5, None]}, {"a": [1, 2.5, None]})


@given(json_values, json_values)
def test_same_value_is_canonical_equality(left: JsonValue, right: JsonValue) -> None:
    from toolreplay.portable import same_value

    assert same_value(left, right) == (canonical_json(left) == canonical_json(right))


def test_one_one_point_zero_and_true_are_different_inputs() -> None:
    assert len({fingerprint({"x": 1}), fingerprint({"x": 1.0}), fingerprint({"x": True})}) == 3


def test_copy_value_is_deep() -> None:
    original: JsonValue = {"a": [{"b": 1}]}
    copied = copy_value(original)
    assert copied == original
    copied["a"][0]["b"] = 2  # type: ignore[index]  # known shape
    assert original == {"a": [{"b": 1}]}


@given(json_values)
def test_a_copy_shares_no_container_with_its_original(value: JsonValue) -> None:
    copied = copy_value(value)
    assert typed(copied) == typed(value)

    def containers(item: JsonValue) -> list[int]:
        if isinstance(item, dict):
            return [id(item), *(i for member in item.values() for i in containers(member))]
        if isinstance(item, list):
            return [id(item), *(i for member in item for i in containers(member))]
        return []

    assert not set(containers(copied)) & set(containers(value))


class Colour(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize(
    ("value", "path", "fragment"),
    [
        ({"items": [{}, {}, {}, {"price": math.nan}]}, "$.items[3].price", "float('nan')"),
        ({"x": math.inf}, "$.x", "float('inf')"),
        ({"x": -math.inf}, "$.x", "float('-inf')"),
        ({"blob": b"abc"}, "$.blob", "base64"),
        ({"tags": {"a", "b"}}, "$.tags", "sorted list"),
        ({"pair": (1, 2)}, "$.pair", "use a list"),
        ({"when": datetime.datetime(2026, 1, 2)}, "$.when", "ISO 8601"),
        ({"amount": decimal.Decimal("1.5")}, "$.amount", "Decimal"),
        ({"colour": Colour.RED}, "$.colour", "Colour"),
        ({"obj": object()}, "$.obj", "object"),
        ({"nested": OrderedDict(a=1)}, "$.nested", "OrderedDict"),
        ({"a key": [None, {"k": 1j}]}, '$["a key"][1].k', "complex"),
        ({"m": {1: "one"}}, "$.m", "dict key 1 (type int)"),
    ],
)
def test_non_portable_values_are_named_by_path(value: object, path: str, fragment: str) -> None:
    with pytest.raises(NonPortableValueError) as caught:
        ensure_portable(value, what="inputs of crm.customer.get")
    message = str(caught.value)
    assert caught.value.path == path
    assert message.startswith(f"inputs of crm.customer.get: {path}: ")
    assert fragment in message
    assert "is not portable JSON" in message


def test_nan_message_matches_the_documented_shape() -> None:
    with pytest.raises(NonPortableValueError) as caught:
        ensure_portable({"items": [0, 1, 2, {"price": float("nan")}]})
    assert str(caught.value).startswith(
        "value: $.items[3].price: float('nan') is not portable JSON"
    )


def test_lone_surrogates_are_named_by_path() -> None:
    with pytest.raises(NonPortableValueError, match="lone surrogate") as caught:
        ensure_portable({"notes": ["fine", "bad \ud800"]})
    assert caught.value.path == "$.notes[1]"
    with pytest.raises(NonPortableValueError, match="lone surrogate") as caught:
        ensure_portable({"key \udfff": 1})
    assert caught.value.path == '$["key \\udfff"]'


def test_integers_too_long_for_json_and_self_containing_values() -> None:
    with pytest.raises(NonPortableValueError, match="use a str") as caught:
        ensure_portable({"n": [10**5000]})
    assert caught.value.path == "$.n[0]"
    assert ensure_portable(10**100) == 10**100
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(NonPortableValueError, match="nested deeper than 200 levels"):
        ensure_portable(loop)
    deep: JsonValue = "leaf"
    for _ in range(200):
        deep = [deep]
    assert ensure_portable(deep) is deep
    assert copy_value(deep) == deep  # everything portable can be copied and encoded
    assert canonical_json(deep)
    with pytest.raises(NonPortableValueError, match="nested deeper"):
        ensure_portable([deep])


def test_value_differences_name_paths_with_both_sides() -> None:
    left: JsonValue = {"a": 1, "b": [1, 2], "c": {"d": "x"}, "gone": True}
    right: JsonValue = {"a": 1.0, "b": [1], "c": {"d": "y"}, "new": None}
    found = [
        (d.path, d.left, d.right, d.left_present, d.right_present)
        for d in value_differences(left, right)
    ]
    assert found == [
        ("$.a", 1, 1.0, True, True),
        ("$.b[1]", 2, None, True, False),
        ("$.c.d", "x", "y", True, True),
        ("$.gone", True, None, True, False),
        ("$.new", None, None, False, True),
    ]
    assert value_differences(left, left) == []


@given(json_values, st.booleans())
def test_loads_checked_parses_as_json_loads_and_vouches_only_for_portable_values(
    value: JsonValue, ascii_only: bool
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    parsed, portable = loads_checked(text)
    assert parsed == json.loads(text)
    if portable:
        assert ensure_portable(parsed) == parsed


@pytest.mark.parametrize(
    "text",
    [
        '{"x": NaN}',
        "[Infinity]",
        '"\\ud800"',  # a lone surrogate, escaped
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    ],
)
def test_loads_checked_leaves_what_may_not_be_portable_to_ensure_portable(text: str) -> None:
    parsed, portable = loads_checked(text)
    assert not portable
    with pytest.raises(NonPortableValueError):
        ensure_portable(parsed)


def test_loads_checked_reads_what_json_loads_reads_and_refuses_the_rest() -> None:
    assert loads_checked(' {"a": [1, 2.5, "\\ud83d\\ude00"]} \n') == (
        {"a": [1, 2.5, "\U0001f600"]},
        False,  # an escaped surrogate pair: portable, but only a walk can tell
    )
    assert loads_checked('{"a": "é"}') == ({"a": "é"}, True)
    assert loads_checked("[1]", depth=MAX_DEPTH - 1) == ([1], False)
    for invalid in ("", "{", "1 2", "[DONE]"):
        with pytest.raises(ValueError):
            loads_checked(invalid)
