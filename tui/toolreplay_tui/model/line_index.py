"""`LineIndex`: where each operation line of a trace starts, found in passes over the
file, with the effects and lanes seen on the way.

One byte offset per line, in an array: a million operations take 8 MB. A pass
reads a chunk at a time (`CHUNK_BYTES`) and splits it on newlines; a line longer
than a chunk is read on to its end without being kept (its start names its
effect, its end its lane). Effects and lanes are found by regular expressions over
the lines as the writer writes them; a line written otherwise is decoded.
"""

from __future__ import annotations

import json
import re
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate, islice
from pathlib import Path
from typing import BinaryIO

from toolreplay import Operation, TraceFormatError

__all__ = [
    "CHUNK_BYTES",
    "EFFECT_PATTERN",
    "LARGE_HEAD_BYTES",
    "LARGE_TAIL_BYTES",
    "Cancelled",
    "LineIndex",
    "effect_key",
    "json_string",
    "never",
]

Cancelled = Callable[[], bool]
"""Asked between chunks by background passes: True stops them."""

CHUNK_BYTES = 1 << 20
"""What a background pass reads at once (a few thousand lines, a few milliseconds)."""
LARGE_HEAD_BYTES = 64 * 1024
"""What is read of a large line's start: its identity and inputs, up to its output."""
LARGE_TAIL_BYTES = 4096
"""What is read of a large line's end: its lineage, lane and times, after its output."""

EFFECT_PATTERN = re.compile(
    rb',"namespace":"((?:[^"\\\n]|\\.)*)","name":"((?:[^"\\\n]|\\.)*)","fingerprint":"'
)
"""An operation line's namespace and name, as the writer writes them (before the inputs)."""
COUNTED_EFFECTS = 4
"""Up to this many effects known, indexing counts their lines before looking for new ones."""

_LANE = re.compile(rb',"lane":"((?:[^"\\\n]|\\.)*)","start_ns":\d+,"end_ns":\d+}\r?$', re.M)
"""An operation line's lane, as the writer ends every line of a format 4 trace."""


def never() -> bool:
    """A `Cancelled` that never cancels."""
    return False


def json_string(raw: bytes) -> str | None:
    """The string a JSON string's raw bytes (without quotes) stand for; None when they do
    not decode to one a trace may hold (the line's decoding, and the check, say why)."""
    try:
        text = json.loads(b'"' + raw + b'"')
        text.encode("utf-8")  # no lone surrogate
    except (ValueError, RecursionError):
        return None
    return text if isinstance(text, str) else None


def effect_key(namespace: bytes, name: bytes) -> bytes:
    """The bytes an operation line of the effect holds, as the writer writes it (the
    namespace and name as raw JSON string contents)."""
    return b',"namespace":"' + namespace + b'","name":"' + name + b'","fingerprint":"'


class LineIndex:
    """The starts of the operation lines between `header_end` and `body_end` (where the
    footer, a torn last line or the file starts), indexed so far.

    `index` runs in a background thread while the event loop reads `len()` and the
    offsets: the array only grows, and an index is read only below `len()`.
    """

    def __init__(
        self,
        path: Path,
        header_end: int,
        body_end: int,
        *,
        decode: Callable[[bytes, int], Operation],
        closed: threading.Event,
    ) -> None:
        """`decode(line, index)` decodes an operation line written otherwise than the
        writer writes (for its effect); `closed` set stops every pass."""
        self.path = path
        self.header_end = header_end
        self.body_end = body_end
        self._decode = decode
        self._closed = closed
        self._starts = array("q", [header_end] if header_end < body_end else [])
        self._scanned = header_end  # bytes indexed so far
        self._indexed = header_end >= body_end
        self._lanes: dict[bytes, str | None] = {}
        # Each effect's first operation, found by indexing (raw namespace and name -> effect).
        self._effects: dict[str, int] = {}
        self._effect_lines: dict[bytes, str] = {}

    @property
    def indexed(self) -> bool:
        """Whether every operation line has been indexed."""
        return self._indexed

    @property
    def progress(self) -> float:
        """How much of the operations' bytes has been indexed, 0..1."""
        span = self.body_end - self.header_end
        return 1.0 if self._indexed or span <= 0 else (self._scanned - self.header_end) / span

    def __len__(self) -> int:
        """Operation lines indexed so far (all of them once `indexed`)."""
        count = len(self._starts)
        # The last start's line may still be cut at the scan's edge until indexing ends.
        return count if self._indexed or self._scanned >= self.body_end else max(count - 1, 0)

    @property
    def starts_known(self) -> int:
        """How many line starts are known (one more than `len()` while a line is cut)."""
        return len(self._starts)

    def start(self, index: int) -> int:
        """Where line `index` starts."""
        return self._starts[index]

    def end_before(self, index: int) -> int:
        """Where the run of lines before line `index` ends: its start, or `body_end`."""
        return self._starts[index] if index < len(self._starts) else self.body_end

    def line_size(self, index: int) -> int:
        """The length of line `index` (its newline included, but for the last line)."""
        return self.end_before(index + 1) - self._starts[index]

    def index_of_offset(self, offset: int) -> int:
        """The index of the line holding byte `offset`."""
        return bisect_right(self._starts, offset) - 1

    @property
    def effects(self) -> dict[str, int]:
        """The effect names of the operations indexed so far, each with the index of its
        first operation, in order of first appearance (complete once `indexed`)."""
        return dict(self._effects)

    @property
    def lanes(self) -> tuple[str, ...]:
        """The lanes (tasks or threads) of the operations indexed so far, in order of
        first appearance; empty for a format 3 trace."""
        return tuple(lane for lane in self._lanes.values() if lane is not None)

    # --- the pass ----------------------------------------------------------------------

    def index(self, cancelled: Cancelled = never, *, limit: int | None = None) -> None:
        """Index line offsets up to the end of the operations (or `limit` more bytes)."""
        end = self.body_end if limit is None else min(self.body_end, self._scanned + limit)
        with self.path.open("rb") as handle:
            handle.seek(self._scanned)
            while self._scanned < end:
                if cancelled() or self._closed.is_set():
                    return
                position = self._scanned
                chunk = handle.read(min(CHUNK_BYTES, end - position))
                cut = chunk.rfind(b"\n")
                if cut < 0 and chunk and position + len(chunk) < self.body_end:
                    # A line longer than what was read: find its end without keeping it.
                    if not self._index_long_line(handle, position, chunk, cancelled):
                        return
                    if limit is not None:
                        break  # the first screen: that line
                    handle.seek(self._scanned)
                    continue
                if cut < 0:
                    # No newline before the end: the unterminated last operation (its
                    # start is indexed), or a file that shrank (`check` reports that).
                    self._scanned = self.body_end
                    break
                # Each newline starts the next line; the one at the end of the
                # operations starts the footer (or the torn line), which is no operation.
                lines = chunk[:cut].split(b"\n")
                self._note_lanes(chunk[:cut], len(lines))
                lengths = map((1).__add__, map(len, lines))
                starts = array("q", islice(accumulate(lengths, initial=position), 1, None))
                self._note_effects(chunk[:cut], position, lines, starts, len(self._starts) - 1)
                self._scanned = starts[-1]
                if starts[-1] >= self.body_end:
                    starts.pop()
                self._starts.extend(starts)
                if limit is not None:
                    break  # one read of whole lines: the first screen
                handle.seek(self._scanned)
        if limit is None or self._scanned >= self.body_end:
            self._indexed = True

    def _index_long_line(
        self, handle: BinaryIO, position: int, first: bytes, cancelled: Cancelled
    ) -> bool:
        """Index the line starting at `position` (its first bytes: `first`), reading on to
        its newline a chunk at a time and keeping only its start (for its effect) and its
        end (for its lane). False when cancelled."""
        head, tail = first[:LARGE_HEAD_BYTES], first[-LARGE_TAIL_BYTES:]
        offset = position + len(first)
        line_end: int | None = None
        while offset < self.body_end:
            if cancelled() or self._closed.is_set():
                return False
            block = handle.read(min(CHUNK_BYTES, self.body_end - offset))
            if not block:
                break
            newline = block.find(b"\n")
            if newline >= 0:
                tail = (tail + block[:newline])[-LARGE_TAIL_BYTES:]
                line_end = offset + newline
                break
            tail = (tail + block)[-LARGE_TAIL_BYTES:]
            offset += len(block)
        following = self.body_end if line_end is None else line_end + 1
        index = len(self._starts) - 1  # this line's start is the last one indexed
        self._note_lanes(tail, 1)
        self._note_effects(head, position, [head], array("q", [following]), index)
        self._scanned = following
        if following < self.body_end:
            self._starts.append(following)
        return True

    def _note_lanes(self, data: bytes, lines: int) -> None:
        if len(self._lanes) == 1:
            (only,) = self._lanes
            if data.count(b',"lane":"' + only + b'","start_ns":') == lines:
                return  # the common case: every call on the one lane seen so far
        for raw in dict.fromkeys(_LANE.findall(data)):
            if raw not in self._lanes:
                self._lanes[raw] = json_string(raw)  # None: not a lane (the line is bad)

    def _note_effects(
        self, data: bytes, position: int, lines: list[bytes], starts: array[int], first: int
    ) -> None:
        """Note the effects first seen in `lines` (`data`, from byte `position` of the
        file: operations `first`, `first + 1`, ...; `starts[k]` is where line `k + 1`
        starts), with the index of each one's first operation.

        One regular-expression pass over the run of lines, skipped when the few effects
        known already account for every line (the common case); a line the writer did
        not write (another key order) is decoded.
        """
        known = self._effect_lines
        if 0 < len(known) <= COUNTED_EFFECTS and sum(map(data.count, known)) == len(lines):
            return
        identities = EFFECT_PATTERN.findall(data)
        if len(identities) == len(lines):  # one each: every line as the writer writes it
            for namespace, name in dict.fromkeys(identities):
                key = effect_key(namespace, name)
                if key not in known:
                    at = position + data.find(key)
                    self._add_effect(key, namespace, name, first + bisect_right(starts, at))
            return
        for number, line in enumerate(lines):  # the identity is the first match of a line
            found = EFFECT_PATTERN.search(line)
            if found is not None:
                key = effect_key(found[1], found[2])
                if key not in known:
                    self._add_effect(key, found[1], found[2], first + number)
                continue
            try:
                effect = self._decode(line, first + number).effect
            except TraceFormatError:
                continue  # shown as unreadable in the list; the check reports it
            self._effects.setdefault(effect, first + number)

    def _add_effect(self, key: bytes, namespace: bytes, name: bytes, index: int) -> None:
        namespace_text, name_text = json_string(namespace), json_string(name)
        if namespace_text is None or name_text is None:
            return  # a line that does not decode: shown as unreadable, and the check says why
        effect = f"{namespace_text}.{name_text}"
        self._effect_lines[key] = effect
        self._effects.setdefault(effect, index)
