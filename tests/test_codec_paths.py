"""The trace codec's two decoders of an operation line agree on every input.

The codec stays hand-written for speed (RFC 0003 §1.3): a well-formed line takes one
pass of plain checks (`_decode_fast`), and anything in doubt goes to the checks that
word the error (`_decode_checked`). These properties prove the fast path never accepts
what the checked path refuses, and never decodes a line differently; and that
`decode_operation`, which chooses between them, answers as the checked path does.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolreplay.trace.codec import (
    InvalidLine,
    decode_operation,
    encode_operation,
    operation_to_dict,
    parse_line,
    parse_lines,
)
from toolreplay.trace.codec.decoding import (
    _OPERATION_KEYS_V3,  # pyright: ignore[reportPrivateUsage]
    _decode_checked,  # pyright: ignore[reportPrivateUsage]  # the paths under test
    _decode_fast,  # pyright: ignore[reportPrivateUsage]
    _expect_keys,  # pyright: ignore[reportPrivateUsage]
)
from toolreplay.trace.model import Operation

FINGERPRINT = "0123456789abcdef" * 4
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4)
)
ANYTHING = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)


COUNTS = st.integers(min_value=0, max_value=2**70)
ODD = st.one_of(
    st.sampled_from([-1, True, False, None, "", 0.5, "x", FINGERPRINT.upper()]),
    # New containers per draw: `lines` mutates what it drew, and a literal shared
    # between examples would change what later examples draw (hypothesis calls it flaky).
    st.builds(list),
    st.builds(dict),
    st.integers(min_value=-3, max_value=-1),
    st.fixed_dictionaries({"status": st.sampled_from(["ok", "error", "OK"])}),
    ANYTHING,
)
"""Values a corrupted or hand-edited line may hold where a field should be."""

RETURNED = st.fixed_dictionaries({"status": st.just("ok"), "value": ANYTHING})
OUTCOMES = st.one_of(
    RETURNED,
    RETURNED,
    st.fixed_dictionaries(
        {
            "status": st.just("error"),
            "error": st.fixed_dictionaries(
                {
                    "type": st.text(max_size=8),
                    "message": st.text(max_size=8),
                    "args": st.none() | st.lists(JSON_SCALARS, max_size=2),
                }
            ),
        }
    ),
)
VALID = {
    "kind": st.just("operation"),
    "logical_id": COUNTS,
    "namespace": st.text(max_size=6),
    "name": st.text(max_size=6),
    "fingerprint": st.just(FINGERPRINT),
    "occurrence": COUNTS,
    "inputs": st.dictionaries(st.text(max_size=3), ANYTHING, max_size=2),
    "outcome": OUTCOMES,
    "origin": st.sampled_from(["recorded", "recorded", "patched", "supplied", "live"]),
    "patch_id": st.none() | st.text(max_size=6),
    "source_logical_operation_id": st.none() | COUNTS,
}
TIMING_VALID = {
    "lane": st.sampled_from(["main", "worker-1"]),
    "start_ns": st.integers(min_value=0, max_value=10),
    "end_ns": st.integers(min_value=0, max_value=10),
}


@st.composite
def lines(
    draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]], *, keys_too: bool = False
) -> dict[str, Any]:
    """A well-formed object, with up to two fields (or parts of its outcome) corrupted,
    and (`keys_too`) sometimes a key missing or renamed."""
    obj = {key: draw(strategy) for key, strategy in fields.items()}
    for key in draw(st.sets(st.sampled_from(sorted(fields)), max_size=2)):  # mostly one
        obj[key] = draw(ODD)
    if keys_too and draw(st.integers(min_value=0, max_value=7)) == 0:
        # A key missing, or renamed (as many keys, one unknown): the fast path counts keys.
        key = draw(st.sampled_from(sorted(obj)))
        value = obj.pop(key)
        if draw(st.booleans()):
            obj[key + "_"] = value
    outcome = obj.get("outcome")
    if isinstance(outcome, dict) and draw(st.booleans()):
        part = draw(st.sampled_from(["status", "value", "error", "extra", "drop"]))
        if part == "drop" and outcome:
            outcome.pop(draw(st.sampled_from(sorted(outcome))), None)
        elif part != "drop":
            outcome[part] = draw(ODD)
        error = outcome.get("error")
        if isinstance(error, dict) and draw(st.booleans()):
            error[draw(st.sampled_from(["type", "message", "args"]))] = draw(ODD)
    return obj


COMMON = lines(VALID, keys_too=True)
TIMING = lines(TIMING_VALID)


def checked(obj: dict[str, Any], version: int, *timing: Any) -> Operation | None:
    try:
        _expect_keys(obj, "operation", _OPERATION_KEYS_V3)  # the timing keys come apart
        return _decode_checked(obj, 1, version, *timing)
    except InvalidLine:
        return None


@settings(max_examples=600)
@given(obj=COMMON, version=st.sampled_from([3, 4, 5]), timing=TIMING)
def test_the_fast_path_decodes_only_what_the_checked_path_decodes_and_the_same(
    obj: dict[str, Any], version: int, timing: dict[str, Any]
) -> None:
    for lane in ((), (timing["lane"], timing["start_ns"], timing["end_ns"])):
        try:
            fast = _decode_fast(obj, 1, *lane)
        except KeyError:  # a field missing: the caller goes to the checked path
            continue
        if fast is not None:
            assert checked(obj, version, *lane) == fast


@settings(max_examples=600)
@given(obj=COMMON, version=st.sampled_from([4, 5]), timing=TIMING)
def test_decode_operation_answers_as_the_checked_path(
    obj: dict[str, Any], version: int, timing: dict[str, Any]
) -> None:
    line = {**obj, **timing}
    try:
        decoded: Operation | None = decode_operation(line, 1, version)
    except InvalidLine:
        decoded = None
    lane, start_ns, end_ns = timing["lane"], timing["start_ns"], timing["end_ns"]
    well_timed = (
        type(lane) is str
        and type(start_ns) is int
        and type(end_ns) is int
        and 0 <= start_ns <= end_ns
    )
    if lane is None and start_ns is None and end_ns is None:  # a line recorded untimed
        expected = checked(obj, version)
    else:
        expected = checked(obj, version, lane, start_ns, end_ns) if well_timed else None
    assert decoded == expected


@given(obj=COMMON)
def test_a_version_3_line_decodes_as_the_checked_path_does(obj: dict[str, Any]) -> None:
    try:
        decoded: Operation | None = decode_operation(obj, 1, 3)
    except InvalidLine:
        decoded = None
    assert decoded == checked(obj, 3)


@given(obj=COMMON, timing=TIMING)
def test_what_decodes_encodes_back_to_the_same_line(
    obj: dict[str, Any], timing: dict[str, Any]
) -> None:
    line = {**obj, **timing}
    try:
        operation = decode_operation(line, 1, 5)
    except InvalidLine:
        return
    assert decode_operation(parse_line(encode_operation(operation)), 1, 5) == operation


@given(
    obj=COMMON,
    timing=st.fixed_dictionaries(
        {"lane": st.text(max_size=6), "start_ns": COUNTS, "end_ns": COUNTS}
    ),
    timed=st.booleans(),
)
def test_an_operation_line_is_the_encoders_text_of_its_object(
    obj: dict[str, Any], timing: dict[str, Any], timed: bool
) -> None:
    # `encode_operation` writes the fields one by one for speed; the line must be what
    # the JSON encoder writes for the operation's object, byte for byte (strings with
    # any escape, unicode, counts past 64 bits, absent timing as nulls).
    try:
        operation = decode_operation(obj, 1, 3)
    except InvalidLine:
        return
    if timed:
        operation = dataclasses.replace(
            operation, lane=timing["lane"], start_ns=timing["start_ns"], end_ns=timing["end_ns"]
        )
    expected = json.dumps(
        operation_to_dict(operation), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    assert encode_operation(operation) == (expected + "\n").encode("utf-8")


LINE_PIECES = st.sampled_from(
    [
        b'{"kind":"operation","a":1}',
        b'{"x":[1,2.5,"s"]}',
        b"{}",
        b" {}",
        b"{} ",
        b"{}\r",
        b"{},{}",
        b"[]",
        b"",
        b"{",
        b'{"n":NaN}',
        b'{"f":1e400}',
        b'{"s":"\\ud800"}',
        b'{"s":"\\ud83d\\ude00"}',
        b'{"s":"caf\xc3\xa9, ok"}',
        b'{"bad":"\xff"}',
        b"{" * 120 + b"}" * 120,
        b'{"a":' + b"[" * 203 + b"]" * 203 + b"}",
        b"\x0c{}",
        b"{}\x0c",
        b"1",
    ]
)


@settings(max_examples=400)
@given(lines=st.lists(LINE_PIECES, max_size=6))
def test_lines_parsed_together_are_what_each_line_parses_to(lines: list[bytes]) -> None:
    # `parse_lines` parses many lines in one pass; it must return exactly what
    # `parse_line` returns for each, or None (the reader then parses them one by one),
    # and never accept a line `parse_line` refuses.
    together = parse_lines(lines)
    one_by_one: list[dict[str, Any]] | None = []
    for line in lines:
        try:
            one_by_one.append(parse_line(line))
        except InvalidLine:
            one_by_one = None
            break
    if one_by_one is None:
        assert together is None
    elif together is not None:
        assert together == one_by_one
        assert [list(obj) for obj in together] == [list(obj) for obj in one_by_one]


def test_ordinary_lines_are_parsed_together() -> None:
    # The one-pass path must actually be taken for the lines a recording writes.
    lines = [b'{"kind":"operation","text":"a, b,\\tc","n":[1,{"x":null}]}'] * 3
    assert parse_lines(lines) == [parse_line(line) for line in lines]
