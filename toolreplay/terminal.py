"""Text from a trace made safe to show: the one rule every output of Tool Replay applies.

A trace, a case, a patch file or capture metadata may come from someone else's
machine, and any string in it may hold characters a terminal acts on instead of
showing: ESC and C1 controls start escape sequences (`ESC ] 52` writes the
clipboard, `ESC [ 2J` clears the screen, `U+009B` is a one-byte CSI), a carriage
return or backspace overwrites what came before, a bidi override (`U+202E`) shows
text in another order than it is, and zero-width characters hide text or make two
different names look the same.

`terminal_safe(text)` replaces every such character by its escape, `\\u001b`,
`\\u202e`, `\\udb40\\udc01` (a character beyond U+FFFF as its UTF-16 pair), the
spelling JSON, Python and JavaScript all read back as that character, so an escape
written inside a JSON string keeps the document valid and equal. On a terminal,
`terminal_safe_text` gives the same text as a Rich `Text` whose escapes are drawn in
`ESCAPE_STYLE`, so they stand out from text that merely looks like an escape. A
backslash itself is not escaped: plain text output cannot tell `\\u202e` typed into a
trace from an escaped U+202E, but neither can ever act on the terminal.

Which characters (`TERMINAL_UNSAFE_RANGES`): every control (C0 `U+0000`-`U+001F`,
DEL, C1 `U+0080`-`U+009F`), every format character (Unicode category Cf: bidi
embeddings, overrides and isolates, zero-width space and joiners, word joiner,
byte order mark, soft hyphen, interlinear annotations, tag characters), line and
paragraph separators (`U+2028`, `U+2029`), lone surrogates, and a few invisible
characters of other categories (the combining grapheme joiner, Hangul fillers,
Khmer inherent vowels, Mongolian variation selectors and the variation selectors
supplement, which can carry hidden text). Newline and tab are escaped too unless
the caller keeps them (`keep="\\n\\t"`) for a layout of several lines.
Variation selectors 1-16 (`U+FE00`-`U+FE0F`) are not escaped: emoji need them and
they cannot carry more than 4 bits a character.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import cache
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.style import Style
    from rich.text import Text

__all__ = [
    "ESCAPE_STYLE",
    "TERMINAL_UNSAFE_RANGES",
    "is_terminal_safe",
    "terminal_safe",
    "terminal_safe_parts",
    "terminal_safe_text",
]

TERMINAL_UNSAFE_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x001F),  # C0 controls (newline and tab only when a caller keeps them)
    (0x007F, 0x009F),  # DEL, C1 controls (U+009B is CSI, U+009D OSC)
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x0600, 0x0605),  # Arabic number signs (format)
    (0x061C, 0x061C),  # Arabic letter mark (bidi)
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),  # Hangul fillers (invisible)
    (0x17B4, 0x17B5),  # Khmer inherent vowels (invisible)
    (0x180B, 0x180F),  # Mongolian variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space, joiners, LRM, RLM
    (0x2028, 0x202E),  # line and paragraph separators, bidi embeddings and overrides
    (0x2060, 0x2064),  # word joiner, invisible operators
    (0x2066, 0x206F),  # bidi isolates, deprecated format characters
    (0x3164, 0x3164),  # Hangul filler
    (0xD800, 0xDFFF),  # lone surrogates
    (0xFEFF, 0xFEFF),  # zero-width no-break space, byte order mark
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF9, 0xFFFB),  # interlinear annotation
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),  # Egyptian hieroglyph format controls
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol format controls
    (0xE0001, 0xE0001),  # language tag
    (0xE0020, 0xE007F),  # tag characters (invisible ASCII)
    (0xE0100, 0xE01EF),  # variation selectors supplement (invisible)
)
"""First and last code point of each range `terminal_safe` escapes."""

ESCAPE_STYLE = "reverse"
"""How a terminal draws an escape: reversed, so it reads as a mark, in colour or not."""


def _class_item(first: int, last: int) -> str:
    return re.escape(chr(first)) + ("" if first == last else "-" + re.escape(chr(last)))


@cache
def _unsafe(keep: str) -> re.Pattern[str]:
    """The pattern of the unsafe characters, except those in `keep`."""
    kept = "".join(re.escape(char) for char in keep)
    items = "".join(_class_item(first, last) for first, last in TERMINAL_UNSAFE_RANGES)
    return re.compile(f"(?![{kept}])[{items}]" if kept else f"[{items}]")


def _escape(char: str) -> str:
    point = ord(char)
    if point <= 0xFFFF:
        return f"\\u{point:04x}"
    point -= 0x10000  # beyond the BMP: the UTF-16 pair, as JSON spells it
    return f"\\u{0xD800 + (point >> 10):04x}\\u{0xDC00 + (point & 0x3FF):04x}"


def _replace(match: re.Match[str]) -> str:
    return _escape(match.group())


def is_terminal_safe(text: str, *, keep: str = "") -> bool:
    """Whether `text` holds no terminal-unsafe character (except those in `keep`)."""
    return _unsafe(keep).search(text) is None


def terminal_safe(text: str, *, keep: str = "") -> str:
    """`text` with every terminal-unsafe character (see the module) replaced by its
    `\\uXXXX` escape; characters in `keep` (newline, tab) are left as they are."""
    return _unsafe(keep).sub(_replace, text)


def terminal_safe_parts(text: str, *, keep: str = "") -> list[tuple[str, bool]]:
    """`terminal_safe(text)` in parts `(text, is_escape)`, in order, for a renderer that
    marks escapes; runs of safe text are one part each."""
    parts: list[tuple[str, bool]] = []
    position = 0
    for match in _unsafe(keep).finditer(text):
        if match.start() > position:
            parts.append((text[position : match.start()], False))
        parts.append((_escape(match.group()), True))
        position = match.end()
    if position < len(text):
        parts.append((text[position:], False))
    return parts


def terminal_safe_text(
    text: str | Text,
    style: str | Style = "",
    *,
    keep: str = "",
    escape_style: str | Style = ESCAPE_STYLE,
) -> Text:
    """`text` as a Rich `Text`, its unsafe characters escaped and drawn in `escape_style`.

    A `str` becomes a `Text` in `style` and is never parsed as markup (`[bold]` in a
    trace stays those characters). A `Text` keeps its styles, each on the characters it
    covered (`style` is not used); it is returned as it is when nothing needs escaping.
    Rich itself drops a few controls (BEL, backspace, carriage return, form feed) from
    a `Text` as it is built, so escape a `str`, not a `Text` made of it, to show them.
    """
    from rich.text import Span, Text  # only a caller that draws pays for Rich

    if isinstance(text, str):
        safe = Text(style=style)
        for part, escaped in terminal_safe_parts(text, keep=keep):
            safe.append(part, style=escape_style if escaped else None)
        return safe
    plain = text.plain
    matches = list(_unsafe(keep).finditer(plain))
    if not matches:
        return text
    starts = [match.start() for match in matches]
    escapes = [_escape(match.group()) for match in matches]
    grown = list(accumulate(len(escape) - 1 for escape in escapes))  # after each match

    def moved(index: int) -> int:  # where `index` of `plain` is in the escaped text
        before = bisect_left(starts, index)
        return index + (grown[before - 1] if before else 0)

    pieces: list[str] = []
    position = 0
    for start, escape in zip(starts, escapes, strict=True):
        pieces += [plain[position:start], escape]
        position = start + 1
    pieces.append(plain[position:])
    safe = text.blank_copy("".join(pieces))
    safe.spans[:] = [Span(moved(s.start), moved(s.end), s.style) for s in text.spans]
    safe.spans.extend(
        Span(moved(start), moved(start) + len(escape), escape_style)
        for start, escape in zip(starts, escapes, strict=True)
    )
    return safe
