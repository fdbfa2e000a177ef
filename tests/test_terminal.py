"""`toolreplay.terminal`: the one rule that makes text from a trace safe to show."""

from __future__ import annotations

import json
import unicodedata

import pytest
from rich.console import Console

import toolreplay
from toolreplay import TERMINAL_UNSAFE_RANGES, terminal_safe, terminal_safe_parts
from toolreplay.terminal import ESCAPE_STYLE, terminal_safe_text

# Categories escaped whole: controls, format characters, surrogates, line and paragraph
# separators. Every other escaped character is listed in the module, with its reason.
ESCAPED_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}
EVERY_CHARACTER = "".join(map(chr, range(0x110000)))


def unsafe(point: int) -> bool:
    return any(first <= point <= last for first, last in TERMINAL_UNSAFE_RANGES)


def test_every_control_and_format_character_this_python_knows_is_escaped() -> None:
    categorised = [
        point
        for point in range(0x110000)
        if unicodedata.category(chr(point)) in ESCAPED_CATEGORIES and not unsafe(point)
    ]
    assert categorised == [], [f"U+{point:04X}" for point in categorised]


def test_only_the_listed_characters_are_escaped_and_nothing_else_changes() -> None:
    parts = terminal_safe_parts(EVERY_CHARACTER)
    escaped = sum(1 for _, is_escape in parts if is_escape)
    listed = sum(last - first + 1 for first, last in TERMINAL_UNSAFE_RANGES)
    assert escaped == listed
    kept = "".join(text for text, is_escape in parts if not is_escape)
    assert kept == "".join(c for c in EVERY_CHARACTER if not unsafe(ord(c)))


def test_each_escape_is_json_and_reads_back_as_the_character() -> None:
    for first, last in TERMINAL_UNSAFE_RANGES:
        for point in (first, last):
            escaped = terminal_safe(chr(point))
            assert escaped.isascii(), escaped
            assert escaped.startswith("\\u"), escaped
            assert json.loads(f'"{escaped}"') == chr(point)
    # Inside a JSON document written unescaped, the escape keeps it valid and equal.
    value = {"k\u202e": "a\x1b]52;c;eA==\x07\u009b\U000e0041\ud800\x7f"}
    document = terminal_safe(json.dumps(value, ensure_ascii=False))
    assert document.isascii()
    assert json.loads(document) == value


@pytest.mark.parametrize(
    ("text", "keep", "shown"),
    [
        ("\x1b[2J", "", "\\u001b[2J"),
        ("\x1b]0;pwned\x07", "", "\\u001b]0;pwned\\u0007"),
        ("\u202eevil", "", "\\u202eevil"),
        ("a\u200bb\ufeffc\u00add", "", "a\\u200bb\\ufeffc\\u00add"),
        ("tag\U000e0041", "", "tag\\udb40\\udc41"),
        ("two\nlines\tand\r", "", "two\\u000alines\\u0009and\\u000d"),
        ("two\nlines\tand\r", "\n\t", "two\nlines\tand\\u000d"),
        ("café ❤️ 中文 [red]x[/red]", "", "café ❤️ 中文 [red]x[/red]"),
    ],
)
def test_examples(text: str, keep: str, shown: str) -> None:
    assert terminal_safe(text, keep=keep) == shown


def test_rich_text_marks_escapes_and_never_reads_markup() -> None:
    text = terminal_safe_text("[bold]x\x1b[2J[link=https://evil.example]y[/link]", "red")
    assert text.plain == "[bold]x\\u001b[2J[link=https://evil.example]y[/link]"
    assert text.style == "red"
    assert [(span.start, span.end, span.style) for span in text.spans] == [(7, 13, ESCAPE_STYLE)]
    console = Console(record=True, width=200, force_terminal=True, color_system="standard")
    console.print(text)
    drawn = console.export_text(styles=True, clear=False)
    assert "\x1b[2J" not in drawn  # only Rich's own style sequences
    assert "[bold]x\\u001b[2J[link=" in console.export_text()


def test_the_rule_is_public() -> None:
    assert toolreplay.terminal_safe is terminal_safe
    assert "terminal_safe_text" in toolreplay.__all__


def test_a_rich_text_keeps_its_styles_on_the_characters_they_covered() -> None:
    from rich.text import Text

    text = Text("ab")
    text.append("c\x1bd\u202e", style="red")
    text.append("ef", style="blue")
    safe = terminal_safe_text(text)
    assert safe.plain == "abc\\u001bd\\u202eef"
    assert [(span.start, span.end, span.style) for span in safe.spans] == [
        (2, 16, "red"),
        (16, 18, "blue"),
        (3, 9, ESCAPE_STYLE),
        (10, 16, ESCAPE_STYLE),
    ]
    plain = Text("nothing to escape", style="bold")
    assert terminal_safe_text(plain) is plain


def test_is_terminal_safe() -> None:
    assert toolreplay.is_terminal_safe("café [red] ❤️")
    assert not toolreplay.is_terminal_safe("a\u200bb")
    assert not toolreplay.is_terminal_safe("two\nlines")
    assert toolreplay.is_terminal_safe("two\nlines", keep="\n")
