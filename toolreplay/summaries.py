"""One line per call, for lists: what a call was asked and what it answered.

A model call's inputs are a whole conversation and its output a provider's
envelope; shown as JSON cut to a column, every turn of an agent reads the same
(`{"body": {"include": ...`). A *summarizer* reads the call as what matters: the
last message or tool output it was given, and the answer text or the tool calls
it made (`→ get_order({"order_id": 8812})`). `toolreplay show`, the terminal
debugger's operation list and its diff all show calls through `summarize_call`.

Summarizers are registered per effect namespace (`register_summarizer`); the
OpenAI and MCP adapters' are built in, each imported only when a call of its
namespace is first summarized (neither needs its SDK: reading a trace never does). Effects no
summarizer knows give None, and the caller shows their inputs as it always did.

Every summary is bounded: each part holds at most `SUMMARY_LIMIT` characters,
on one line, without control characters, whatever the trace holds; `line(width)`
fits both parts into a number of terminal cells.
"""

from __future__ import annotations

import importlib
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from toolreplay.portable import JsonValue
from toolreplay.terminal import terminal_safe
from toolreplay.trace.model import Outcome

__all__ = [
    "NARROW",
    "SUMMARY_LIMIT",
    "CallSummary",
    "Summarizer",
    "fit_to_width",
    "register_summarizer",
    "summarize_call",
    "summary_text",
]

SUMMARY_LIMIT = 160
"""Characters a summary's part holds at most (a column is narrower; a detail line not)."""

ARROW = " → "
NARROW = 32
"""Below this many cells a summary line shows only the answer (a list that shows both
parts gives its column at least this much)."""


def _cells(character: str) -> int:
    """Terminal cells a character takes: 2 for wide East Asian ones, 0 for combining marks."""
    if unicodedata.combining(character):
        return 0
    return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1


def fit_to_width(text: str, width: int) -> str:
    """`text` cut to `width` cells, ending in `…` when cut."""
    if width <= 0:
        return ""
    if _width(text) <= width:
        return text
    used = 0
    for index, character in enumerate(text):
        used += _cells(character)
        if used > width - 1:
            return text[:index].rstrip() + "…"
    return text


def _width(text: str) -> int:
    return len(text) if text.isascii() else sum(map(_cells, text))


def summary_text(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """`text` as one bounded line: whitespace runs become one space, control and
    format characters (which could move a terminal's cursor or reorder its text)
    are shown escaped (`\\u202e`), and at most `limit` characters are kept."""
    head = text[: limit * 4]  # enough for `limit` after collapsing; never the whole text
    collapsed = terminal_safe(" ".join(head.split()))
    if len(collapsed) > limit or len(head) < len(text):
        cut = collapsed[: limit - 1]
        # Never half an escape: `\\u20` would read as text the trace did not hold.
        escape = cut.rfind("\\u", max(0, len(cut) - 5))
        if escape != -1 and len(cut) - escape < 6:
            cut = cut[:escape]
        return cut.rstrip() + "…"
    return collapsed


@dataclass(frozen=True, slots=True)
class CallSummary:
    """What a call was asked and what it answered, each one bounded line.

    For a model call: `asked` is the last message or tool output of the request
    (`user: Please refund order 8812`, `tool get_order: {"status": "lost"}`),
    `answered` the answer's text or its tool calls (`get_order({"order_id":
    8812})`), or the error the call ended with; empty while there is no answer.
    """

    asked: str
    answered: str

    def line(self, width: int) -> str:
        """`asked → answered` in at most `width` terminal cells. When it does not fit,
        each part takes what it needs up to half the room, and the other the rest;
        in fewer than `NARROW` cells, only `→ answered` is shown (what the call did
        tells turns apart better than half of each)."""
        if not self.answered:
            return fit_to_width(self.asked, width)
        room = width - len(ARROW)
        asked, answered = _width(self.asked), _width(self.answered)
        if asked + answered <= room:
            return f"{self.asked}{ARROW}{self.answered}"
        if width < NARROW:
            return fit_to_width(f"{ARROW.lstrip()}{self.answered}", width)
        answer_room = min(answered, max(room // 2, room - asked))
        shown_asked = fit_to_width(self.asked, room - answer_room)
        return f"{shown_asked}{ARROW}{fit_to_width(self.answered, answer_room)}"


Summarizer = Callable[[str, JsonValue, "Outcome | None"], CallSummary | None]
"""`(effect, inputs, outcome) -> CallSummary | None`: the summary of a call of one
namespace (outcome None for a call with no outcome yet, e.g. the one a fork stopped
at), or None for a call it does not summarize. It must not raise on any portable
value: traces are untrusted input."""

_BUILT_IN = {
    "anthropic": "toolreplay.adapters.anthropic_summary",
    "google_genai": "toolreplay.adapters.gemini_summary",
    "openai": "toolreplay.adapters.openai_summary",
    "mcp": "toolreplay.adapters.mcp_summary",
}
"""Namespaces whose summarizer ships with Tool Replay: the module defining `summarize`."""
_registered: dict[str, Summarizer] = {}


def register_summarizer(namespace: str, summarizer: Summarizer) -> None:
    """Summarize the calls of every effect in `namespace` (`"acme"` for `acme.*`) with
    `summarizer`, in place of what was registered (or built in) for it before."""
    if not namespace or "." in namespace:
        raise ValueError(
            f"a summarizer is registered for a namespace such as 'openai', not {namespace!r}"
        )
    _registered[namespace] = summarizer


def _summarizer(namespace: str) -> Summarizer | None:
    found = _registered.get(namespace)
    if found is None and namespace in _BUILT_IN:
        module = importlib.import_module(_BUILT_IN[namespace])
        found = _registered.setdefault(namespace, module.summarize)
    return found


def summarize_call(
    effect: str, inputs: JsonValue, outcome: Outcome | None = None
) -> CallSummary | None:
    """The summary of one call of `effect`, or None when no summarizer knows it.

        summary = summarize_call(op.effect, op.inputs, op.outcome)
        print(summary.line(60) if summary else preview(op.inputs, 60))

    A summarizer that fails on a value it did not expect gives None too: a list
    falls back to the raw inputs rather than breaking on one odd call.
    """
    summarizer = _summarizer(effect.partition(".")[0])
    if summarizer is None:
        return None
    try:
        summary = summarizer(effect, inputs, outcome)
    except Exception:  # an odd value from an untrusted trace: show the raw inputs instead
        return None
    if summary is None:
        return None
    return CallSummary(summary_text(summary.asked), summary_text(summary.answered))
