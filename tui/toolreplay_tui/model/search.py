"""Finding the operations that match a filter query, straight from a trace's bytes.

Decoding every line of a million-operation trace to test it takes seconds, so a
scan first looks for the query in the raw lines, a run of lines at a time, at C
speed, and decodes only the lines that may match, confirming each with
`matches` (which alone defines what matches).

Why a raw line can stand for the decoded operation: `matches` looks for the
query in the effect name, the inputs as JSON and the outcome (its JSON value,
or the error's type and message). Split the query into its *words*, the pieces
between JSON punctuation, whitespace and the dots of effect names
(`SEPARATORS`): each word that occurs in that text occurs, byte for byte, in
the line the project's writer wrote, since the line holds the same strings and
numbers with the same escapes, only with other spacing, key order and quoting.
So a line lacking one of the query's words cannot match. Exceptions are
handled, never guessed: words with non-ASCII letters are not looked for (only
ASCII case folds bytewise), and a line with `\\u` escapes is always decoded. A line
too large to decode for the list (`LARGE_LINE_BYTES`) is not decoded for a filter
either: it matches by its effect and inputs, or by holding every word of the query.
A number a hand edit wrote in another notation (`1E2` for `100.0`) is found by
the digits the file holds.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from toolreplay import Operation, Returned, TraceFormatError
from toolreplay_tui.model.line_index import Cancelled
from toolreplay_tui.model.trace_file import LARGE_LINE_BYTES, Entry, LargeOutput, TraceFile

__all__ = [
    "EFFECTS_LISTED",
    "EFFECT_PREFIX",
    "SEPARATORS",
    "EffectMatch",
    "effect_refusal",
    "effect_resolution",
    "first_match",
    "matches",
    "nearest_effects",
    "query_words",
    "resolve_effect",
    "scan_matches",
]

EFFECT_PREFIX = "effect:"
"""A query starting with this matches effect names only (`effect:crm.`)."""

EFFECTS_LISTED = 12
"""An unknown `:effect` name with no near one lists the trace's effects when this few."""

SEPARATORS = re.compile(r'[\s,:"{}\[\]\\.]+')
"""What may be written differently between the searched text and a trace line."""

_ESCAPE = b"\\u"


def _search_text(operation: Operation) -> str:
    outcome = operation.outcome
    if isinstance(outcome, Returned):
        result = json.dumps(outcome.value, ensure_ascii=False, sort_keys=True)
    else:
        result = f"{outcome.error_type} {outcome.message}"
    inputs = json.dumps(operation.inputs, ensure_ascii=False, sort_keys=True)
    return f"{operation.effect}\n{inputs}\n{result}".lower()


def matches(operation: Operation, query: str) -> bool:
    """Does `operation` match `query` (case-insensitive)?

    `effect:NAME` matches effect names containing NAME; any other query matches
    the effect name, the inputs or the outcome as JSON text.
    """
    wanted = query.strip().lower()
    if not wanted:
        return True
    if wanted.startswith(EFFECT_PREFIX):
        return wanted[len(EFFECT_PREFIX) :].strip() in operation.effect.lower()
    return wanted in operation.effect.lower() or wanted in _search_text(operation)


def query_words(query: str) -> list[bytes]:
    """The lowercase ASCII words every line matching `query` holds (longest first).

    Empty when nothing can be required of the line (only punctuation, or
    non-ASCII words, or control characters): every line is then decoded.
    """
    wanted = query.strip().lower()
    if wanted.startswith(EFFECT_PREFIX):
        wanted = wanted[len(EFFECT_PREFIX) :]
    if any(ord(char) < 0x20 and not char.isspace() for char in wanted):
        return []
    words = {word for word in SEPARATORS.split(wanted) if word and word.isascii()}
    return sorted((word.encode("ascii") for word in words), key=len, reverse=True)


def _candidate_lines(data: bytes, words: list[bytes]) -> Iterator[tuple[int, int]]:
    """`(start, end)` within `data` of each line holding every word (or a `\\u` escape)."""
    lowered = data.lower()
    if not words:
        start = 0
        while start < len(lowered):
            end = lowered.find(b"\n", start)
            end = len(lowered) if end < 0 else end
            yield start, end
            start = end + 1
        return
    first, rest = words[0], words[1:]
    # The next occurrence of each, looked for again only once passed: looking past every
    # line for a `\u` the data does not hold would read the rest of it once per match.
    word_at, escape_at = lowered.find(first), lowered.find(_ESCAPE)
    while word_at >= 0 or escape_at >= 0:
        found = min(hit for hit in (word_at, escape_at) if hit >= 0)
        start = lowered.rfind(b"\n", 0, found) + 1
        end = lowered.find(b"\n", found)
        end = len(lowered) if end < 0 else end
        line = lowered[start:end]
        if _ESCAPE in line or all(word in line for word in rest):
            yield start, end
        if 0 <= word_at < end:
            word_at = lowered.find(first, end)
        if 0 <= escape_at < end:
            escape_at = lowered.find(_ESCAPE, end)


def _confirmed(trace: TraceFile, line: bytes, index: int, query: str) -> bool:
    if len(line) > LARGE_LINE_BYTES:
        return _large_matches(trace.entry(index), query)
    try:
        operation: Operation = trace.decode_line(line, index)
    except TraceFormatError:
        return False  # shown as unreadable in the list, and reported by the check
    return matches(operation, query)


def _large_matches(entry: Entry, query: str) -> bool:
    """A large line (not decoded for a filter) matches by its effect name and inputs as
    any other, and by the words of the query its text holds (it is a candidate)."""
    if isinstance(entry, (TraceFormatError, Operation)):
        return False
    wanted = query.strip().lower()
    effect = (entry.effect or "").lower()
    if wanted.startswith(EFFECT_PREFIX):
        return wanted[len(EFFECT_PREFIX) :].strip() in effect
    if wanted in effect:
        return True
    if isinstance(entry, LargeOutput):
        inputs = json.dumps(entry.inputs, ensure_ascii=False, sort_keys=True).lower()
        if wanted in inputs:
            return True
    return bool(query_words(query))


def scan_matches(
    trace: TraceFile,
    query: str,
    cancelled: Cancelled,
    *,
    start: int = 0,
    stop: int | None = None,
    wait: bool = True,
) -> Iterator[list[int]]:
    """Batches (one per run of lines read, possibly empty) of the indices matching
    `query`, in order, from `start` to `stop` (the end by default).

    With `wait`, follows the trace's index as it grows, until every line is
    scanned; stops soon after `cancelled()` says so.
    """
    words = query_words(query)
    for first, last, offset, data in trace.spans(start, cancelled, wait=wait):
        found: list[int] = []
        limit = last if stop is None else min(last, stop)
        for candidates, (begin, end) in enumerate(_candidate_lines(data, words), 1):
            if candidates % 256 == 0 and cancelled():
                return  # decoding candidates is the slow part: stop within it too
            index = trace.index_of_offset(offset + begin)
            if index >= limit:
                break
            if index >= first and _confirmed(trace, data[begin:end], index, query):
                found.append(index)
        yield found
        if stop is not None and last >= stop:
            return


def first_match(trace: TraceFile, query: str, start: int, *, forward: bool = True) -> int | None:
    """The index of the first operation matching `query` from `start` on (or before
    it, backwards), not wrapping; None when there is none. Reads until it finds one."""

    def never() -> bool:
        return False

    if forward:
        for found in scan_matches(trace, query, never, start=start, wait=False):
            if found:
                return found[0]
        return None
    # Backwards: scan runs of lines ending at `start`, nearest run first.
    stop = start + 1
    while stop > 0:
        begin = max(0, stop - 4096)
        found = [
            index
            for batch in scan_matches(trace, query, never, start=begin, stop=stop, wait=False)
            for index in batch
        ]
        if found:
            return found[-1]
        stop = begin
    return None


@dataclass(frozen=True, slots=True)
class EffectMatch:
    """What `:effect NAME` stands for among a trace's effect names."""

    names: tuple[str, ...]
    """The effects NAME names (empty: none; several: all of them, or a choice to make)."""
    query: str | None
    """The filter that shows exactly those effects' operations (None: no filter does)."""
    first: int | None
    """The index of the first operation that filter keeps."""


def _names(effect: str, wanted: str, rank: int) -> bool:
    """Whether the lowercase `effect` is named by `wanted` at `rank` (0 best, 3 loosest)."""
    if rank == 0:
        return effect == wanted
    if rank == 1:
        return effect.startswith(wanted + ".") or effect.endswith("." + wanted)
    return effect.startswith(wanted) if rank == 2 else wanted in effect


def resolve_effect(name: str, effects: Mapping[str, int]) -> EffectMatch:
    """The effects `name` names, among `effects` (name -> index of its first operation).

    The exact name first; else, ignoring case, the first of these that matches any:
    the same name, a dotted part (`crm` for `crm.customer.get`, its namespace, or
    `customer.get`, the name without it), a prefix, a part of the name. The filter
    (`effect:TEXT`, which keeps effect names containing TEXT) is the one name's, or
    `name` itself when the names it keeps are exactly those found.
    """
    wanted = name.strip()
    lowered = wanted.lower()
    names: list[str] = [wanted] if wanted in effects else []
    for rank in range(4 if not names else 0):
        names = [effect for effect in effects if _names(effect.lower(), lowered, rank)]
        if names:
            break
    if not names or not lowered:
        return EffectMatch((), None, None)
    text = names[0] if len(names) == 1 else wanted
    kept = [effect for effect in effects if text.lower() in effect.lower()]
    if len(names) > 1 and set(kept) != set(names):
        return EffectMatch(tuple(names), None, None)  # no filter shows just them
    return EffectMatch(tuple(names), f"{EFFECT_PREFIX}{text}", min(effects[e] for e in kept))


def nearest_effects(name: str, effects: Mapping[str, int], count: int = 3) -> list[str]:
    """The effect names most like `name` (misspelt: `crm.custmer.get`), nearest first."""
    by_lowered = {effect.lower(): effect for effect in effects}
    close = difflib.get_close_matches(name.strip().lower(), list(by_lowered), n=count, cutoff=0.6)
    return [by_lowered[effect] for effect in close]


def effect_resolution(name: str, found: EffectMatch) -> str | None:
    """What `:effect NAME` stood for, when it named something other than itself
    (`crm.customer` for `crm.customer.get`, or a namespace's effects); None for an
    exact name, or when no filter follows (`effect_refusal` says why)."""
    if found.query is None or found.names == (name.strip(),):
        return None
    if len(found.names) == 1:
        return f"effect {name!r}: {found.names[0]}"
    return f"effect {name!r}: {len(found.names)} effects, {', '.join(found.names)}"


def effect_refusal(name: str, found: EffectMatch, effects: Mapping[str, int]) -> str:
    """Why `:effect NAME` filters nothing: no such effect (with the nearest names, or
    every name when the trace has few), or several that no one filter keeps apart
    from the others."""
    if found.names:
        return (
            f"effect {name!r} names {len(found.names)} effects: {', '.join(found.names)}; "
            "give one of them"
        )
    refusal = f"no operation of effect {name!r} in this trace"
    nearest = nearest_effects(name, effects)
    if nearest:
        return f"{refusal}; nearest: {', '.join(nearest)}"
    if 0 < len(effects) <= EFFECTS_LISTED:
        return f"{refusal}; its effects: {', '.join(effects)}"
    return refusal
