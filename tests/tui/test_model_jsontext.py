from __future__ import annotations

from toolreplay_tui.model.jsontext import format_json, parse_portable


def test_valid_json_is_read() -> None:
    parsed = parse_portable('{"decision": "manual_review", "n": [1, 2.5, null]}')
    assert parsed.ok
    assert parsed.value == {"decision": "manual_review", "n": [1, 2.5, None]}


def test_invalid_json_says_where() -> None:
    parsed = parse_portable('{\n  "decision": "manual_review"\n  "reason": 1\n}')
    assert not parsed.ok
    assert parsed.problem is not None
    assert (parsed.problem.line, parsed.problem.column) == (3, 3)
    assert "Expecting ',' delimiter" in parsed.problem.message
    assert parsed.problem.describe().startswith("line 3, column 3: not valid JSON")


def test_values_json_accepts_but_tool_replay_refuses() -> None:
    for text, expected in [
        ("NaN", "only finite floats"),
        ('{"a": [Infinity]}', "$.a[0]"),
        ('{"a": 1, "a": 2}', 'the key "a" is given twice'),
        ("   ", "is empty"),
        ("1" * 5000, "not portable JSON"),
    ]:
        parsed = parse_portable(text)
        assert parsed.problem is not None, text
        assert expected in parsed.problem.message, parsed.problem.message


def test_format_json_keeps_non_ascii_and_indents() -> None:
    assert format_json({"a": "\u00e9"}) == '{\n  "a": "\u00e9"\n}'
    assert format_json([1], indent=None) == "[1]"
