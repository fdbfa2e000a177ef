from __future__ import annotations

import json

import pytest
from toolreplay_tui.model.jsonpaths import (
    PathError,
    get_at,
    json_lines,
    set_at,
)

from toolreplay import JsonValue

VALUE = {
    "decision": "approve",
    "items": [1, {"a key": None}],
    "empty": {},
    "nested": {"deep": [True, 2.5]},
}


def test_get_at_reads_and_names_what_is_missing() -> None:
    assert get_at(VALUE, ("items", 1, "a key")) is None
    assert get_at(VALUE, ()) is VALUE
    with pytest.raises(PathError, match=r"\$\.items has 2 items, no index 5"):
        get_at(VALUE, ("items", 5))
    with pytest.raises(PathError, match='has no key "nope"'):
        get_at(VALUE, ("nope",))
    with pytest.raises(PathError, match="is not an object or a list"):
        get_at(VALUE, ("decision", "x"))
    with pytest.raises(PathError, match="is a list, not an object"):
        get_at(VALUE, ("items", "x"))


def test_set_at_returns_a_changed_copy_and_leaves_the_value_alone() -> None:
    before = json.dumps(VALUE, sort_keys=True)
    changed = set_at(VALUE, ("decision",), "manual_review")
    assert changed["decision"] == "manual_review"  # type: ignore[index]  # a dict here
    deeper = set_at(VALUE, ("nested", "deep", 1), {"x": [1]})
    assert get_at(deeper, ("nested", "deep", 1)) == {"x": [1]}
    assert json.dumps(VALUE, sort_keys=True) == before
    new: list[JsonValue] = [1]
    replaced = set_at(VALUE, ("items",), new)
    new.append(2)  # the caller's object is copied in
    assert get_at(replaced, ("items",)) == [1]
    assert set_at(VALUE, (), "whole") == "whole"
    with pytest.raises(PathError):
        set_at(VALUE, ("missing",), 1)


def test_json_lines_lay_a_value_out_as_indented_json_with_a_path_per_line() -> None:
    lines = json_lines(VALUE)
    assert "\n".join(line.render() for line in lines) == json.dumps(VALUE, indent=2)
    by_text = {line.render().strip(): line for line in lines}
    assert by_text['"decision": "approve",'].text_path == "$.decision"
    assert by_text['"a key": null'].text_path == '$.items[1]["a key"]'
    assert by_text['"empty": {},'].kind == "leaf"
    closing = [line for line in lines if line.kind == "close"]
    assert closing[-1].path == ()
    assert closing[-1].text == "}"


def test_json_lines_of_a_scalar_and_of_non_ascii() -> None:
    assert [line.render() for line in json_lines("d\u00e9cision")] == ['"d\u00e9cision"']
    assert [line.render() for line in json_lines([])] == ["[]"]
