"""The one JSON path grammar (`toolreplay.jsonpath`): rendered paths read back, and a path
selects exactly what it replaces.

Its users are tested where they live: redaction rules in `test_redaction.py`, `find
--where` in `test_find.py` (quoted keys and `..name`, which it refused before it read
this grammar), the paths of `edit(...)` in `adapters/test_stream_edits.py`.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolreplay.errors import PatchError, RedactionRuleError, TraceSearchError
from toolreplay.jsonpath import JsonPath, format_path, parse_path, read_path
from toolreplay.portable import JsonValue

KEYS = st.text(max_size=8)
SEGMENTS = st.lists(st.one_of(KEYS, st.integers(min_value=0, max_value=10**6)), max_size=6)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=12,
)


@given(SEGMENTS)
def test_every_rendered_path_reads_back_to_its_segments(segments: list[str | int]) -> None:
    # What a message, a diff or the terminal UI shows can be pasted into a rule or a query.
    parsed = parse_path(format_path(segments))
    assert parsed.segments == tuple(
        ("index", segment) if isinstance(segment, int) else ("key", segment) for segment in segments
    )


PATHS = st.sampled_from(
    ["$", "$.a", "$.*", "$[0]", "$[*].a", "$..a", "$..*", "$.a..b", "$['a']..[\"b\"]", "$..a[1]"]
)


@given(value=VALUES, text=PATHS)
def test_select_finds_exactly_what_replace_replaces(value: JsonValue, text: str) -> None:
    path = parse_path(text)
    replaced: list[JsonValue] = []

    def keep(found: JsonValue) -> JsonValue:
        replaced.append(found)
        return found

    path.replace(value, keep)
    assert path.select(value) == replaced


def test_unicode_names_and_quoted_keys() -> None:
    assert parse_path("$.café.größe").segments == (("key", "café"), ("key", "größe"))
    assert parse_path("$['it']['s']").segments == (("key", "it"), ("key", "s"))
    assert parse_path("$['a \\' b']").segments == (("key", "a ' b"),)
    assert parse_path('$["a\\"b"]').segments == (("key", 'a"b'),)
    # Rendered plainly only when it is a name of the grammar and of Python alike.
    assert format_path(["a-b", "a b", "_x", 0, "é"]) == '$["a-b"]["a b"]._x[0].é'


def test_a_path_at_the_start_of_a_text_stops_at_a_space_between_steps() -> None:
    path, end = read_path("$['a key'].b == 1", what="--where path", error=TraceSearchError)
    assert path == JsonPath("$['a key'].b", (("key", "a key"), ("key", "b")))
    assert end == len("$['a key'].b")


@pytest.mark.parametrize(
    ("error", "what"),
    [(RedactionRuleError, "redaction path"), (PatchError, "edit path"), (TraceSearchError, "x")],
)
def test_each_user_gets_its_own_error_with_the_position(error: type[Exception], what: str) -> None:
    with pytest.raises(error, match=rf"{what} '\$\.a\.\[0\]', at character 5"):
        parse_path("$.a.[0]", what=what, error=error)  # pyright: ignore[reportArgumentType]
