"""`TraceFile`: a trace opened for browsing at once, whatever its size.

`read_trace` decodes and keeps every operation before returning, which takes
seconds and more memory than the file at a million operations. The debugger
instead reads the header, the footer (from the end of the file) and the first
screen of operations, and shows them; the rest is indexed in the background as
one byte offset per line, and an operation is decoded only when it is asked for
(a page of lines at a time, the latest pages cached). The integrity checks
`read_trace` makes (every line's rules, then the footer's count and digest, or
every fingerprint of an incomplete trace) run afterwards, streaming, keeping
nothing.

Background passes (`index`, `check`, `find`) take a `cancelled` callable and
return soon after it says so, and stop when the file is closed; the file is
only ever read.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import re
import subprocess
import sys
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate, islice
from pathlib import Path
from typing import BinaryIO, Literal, overload

from toolreplay import (
    JsonValue,
    Operation,
    OperationIdentity,
    TraceError,
    TraceFooter,
    TraceFormatError,
    TraceHeader,
    TraceLines,
    TraceNotFoundError,
)

__all__ = [
    "CHUNK_BYTES",
    "FIRST_SCREEN_BYTES",
    "LARGE_LINE_BYTES",
    "PAGE_LINES",
    "Cancelled",
    "Entry",
    "Integrity",
    "LargeLine",
    "LargeOutput",
    "TraceFile",
    "TraceOperations",
    "text_size",
]

Cancelled = Callable[[], bool]
"""Asked between chunks by background passes: True stops them."""

FIRST_SCREEN_BYTES = 64 * 1024
"""Read before anything is shown: the header and a few hundred operations."""
CHUNK_BYTES = 1 << 20
"""What a background pass reads at once (a few thousand lines, a few milliseconds)."""
PAGE_LINES = 64
"""Operations decoded together when one of them is asked for (one read, one page)."""
CACHED_PAGES = 64
LARGE_LINE_BYTES = 1 << 20
"""An operation line longer than this is not decoded for the list or the detail pane: its
output is shown through a bounded view (`LargeOutput`), and decoded only when asked for."""
LARGE_HEAD_BYTES = 64 * 1024
"""What is read of a large line's start: its identity and inputs, up to its output."""
LARGE_TAIL_BYTES = 4096
"""What is read of a large line's end: its lineage, lane and times, after its output."""


_EFFECT = re.compile(
    rb',"namespace":"((?:[^"\\\n]|\\.)*)","name":"((?:[^"\\\n]|\\.)*)","fingerprint":"'
)
"""An operation line's namespace and name, as the writer writes them (before the inputs)."""
COUNTED_EFFECTS = 4
"""Up to this many effects known, indexing counts their lines before looking for new ones."""

_LANE = re.compile(rb',"lane":"((?:[^"\\\n]|\\.)*)","start_ns":\d+,"end_ns":\d+}\r?$', re.M)
"""An operation line's lane, as the writer ends every line of a format 4 trace."""


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class LargeOutput:
    """An operation whose line is too large to decode for display (`LARGE_LINE_BYTES`):
    everything but its returned value, decoded under the reader's rules, and where that
    value's JSON text lies in the file. The value itself is read a page at a time
    (`TraceFile.value_pages`), or decoded only for an action that needs it (an edit)."""

    index: int
    logical_id: int
    identity: OperationIdentity
    inputs: dict[str, JsonValue]
    origin: str
    patch_id: str | None
    source_logical_operation_id: int | None
    lane: str | None
    start_ns: int | None
    end_ns: int | None
    value_offset: int
    """The file offset of the value's first byte."""
    value_size: int
    """The value's size in bytes, as JSON text."""
    line_size: int

    @property
    def effect(self) -> str:
        return self.identity.effect

    @staticmethod
    def of(head: Operation, index: int, offset: int, size: int, line_size: int) -> LargeOutput:
        """From `head`, the operation decoded with its value left out."""
        return LargeOutput(
            index,
            head.logical_id,
            head.identity,
            head.inputs,
            head.origin,
            head.patch_id,
            head.source_logical_operation_id,
            head.lane,
            head.start_ns,
            head.end_ns,
            offset,
            size,
            line_size,
        )


@dataclass(frozen=True, slots=True)
class LargeLine:
    """A line too large to decode for display whose output is not where the writer puts
    it (its inputs are large, it failed with a large error, or it is malformed): shown by
    its size and raw text; the check decodes it."""

    index: int
    offset: int
    size: int
    effect: str | None
    """The effect its start names, when it is laid out as the writer writes lines."""


def text_span(large: LargeOutput | LargeLine) -> tuple[int, int]:
    """Where a large value's JSON text lies in the file (the whole line, for a
    `LargeLine`): its offset and size in bytes."""
    if isinstance(large, LargeOutput):
        return large.value_offset, large.value_size
    return large.offset, large.size


def text_size(large: LargeOutput | LargeLine) -> int:
    """The size in bytes of a large value's JSON text (of the whole line, for a `LargeLine`)."""
    return text_span(large)[1]


Entry = Operation | LargeOutput | LargeLine | TraceFormatError
"""What the list shows for a line: the operation, a large one without its output, a
large line as raw text, or why the line cannot be read."""


@dataclass(frozen=True, slots=True)
class Integrity:
    """The background integrity check: `checking` (with `progress` 0..1), `ok` or `failed`."""

    state: Literal["checking", "ok", "failed"] = "checking"
    progress: float = 0.0
    problem: str | None = None


def _tail_line(handle: BinaryIO, size: int) -> tuple[int, bytes, bool]:
    """The last line's start offset, its bytes (no newline) and whether a newline ends it."""
    window = 64 * 1024
    while True:
        start = max(0, size - window)
        handle.seek(start)
        data = handle.read(size - start)
        terminated = data.endswith(b"\n")
        body = data[:-1] if terminated else data
        newline = body.rfind(b"\n")
        if newline >= 0 or start == 0:
            return start + newline + 1, body[newline + 1 :], terminated
        window *= 4


def _json_string(raw: bytes) -> str | None:
    """The string a JSON string's raw bytes (without quotes) stand for; None when they do
    not decode to one a trace may hold (the line's decoding, and the check, say why)."""
    try:
        text = json.loads(b'"' + raw + b'"')
        text.encode("utf-8")  # no lone surrogate
    except (ValueError, RecursionError):
        return None
    return text if isinstance(text, str) else None


class TraceFile:
    """A trace being browsed: its header, its footer, and its operations by index.

    Open it with `TraceFile.open` (header, footer and first screen, at once),
    then call `index` in a background thread until `indexed`, then `check`.
    `len()` and `operations` grow while it indexes. Behaves like a loaded
    `toolreplay.Trace` where the debugger needs one: `header`, `footer`,
    `complete`, `torn_line`, `operations`, `get(identity)`.
    """

    def __init__(
        self,
        path: Path,
        lines: TraceLines,
        size: int,
        header_end: int,
        body_end: int,
        footer: TraceFooter | None,
        torn: bool,
        header_line: bytes,
    ) -> None:
        self.path = path
        self._lines = lines  # decodes single lines; `check` uses its own
        self._header_line = header_line
        self.header: TraceHeader = lines.header
        self.size = size
        self.footer = footer
        """The footer, read from the end of the file when the trace was opened."""
        self.integrity = Integrity("checking")
        self._header_end = header_end
        self._body_end = body_end  # where the footer, a torn last line or the file starts/ends
        self._torn = torn
        self._starts = array("q", [header_end] if header_end < body_end else [])
        self._scanned = header_end  # bytes indexed so far
        self._indexed = header_end >= body_end
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._handle: BinaryIO = path.open("rb")
        self._pages: OrderedDict[int, list[Entry]] = OrderedDict()
        self._lanes: dict[bytes, str | None] = {}
        # Each effect's first operation, found by indexing (raw namespace and name -> effect).
        self._effects: dict[str, int] = {}
        self._effect_lines: dict[bytes, str] = {}
        self.operations = TraceOperations(self)
        self._checker: subprocess.Popen[str] | None = None  # `check_elsewhere`'s child

    # --- opening -----------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, first_screen: int = FIRST_SCREEN_BYTES) -> TraceFile:
        """Read the header, the footer and the first `first_screen` bytes' operations.

        Raises `TraceNotFoundError` (missing, a directory, not a regular file),
        `TraceError` (unreadable) or `TraceFormatError` (no valid header), as
        `read_trace` would; everything else is left to `check`.
        """
        if not path.exists():
            raise TraceNotFoundError(
                f"{path}: no such trace file; check the path, or record one first", path=path
            )
        if not path.is_file():
            raise TraceNotFoundError(
                f"{path}: is not a regular file (a directory, a pipe or a device?); pass the "
                "path of a .trp file",
                path=path,
            )
        try:
            with path.open("rb") as handle:
                size = path.stat().st_size
                head = handle.readline()
                if not head:
                    raise TraceFormatError(
                        "the file is empty, so it has no header; it is not a trace (or its "
                        "recording never wrote a line)",
                        path=path,
                    )
                header_line = head.rstrip(b"\n")
                lines = TraceLines(path, header_line)
                header_end = len(head)
                footer, body_end, torn = None, size, False
                if size > header_end:
                    start, last, terminated = _tail_line(handle, size)
                    footer, body_end, torn = cls._classify_tail(
                        TraceLines(path, header_line), last, start, terminated, size
                    )
        except OSError as error:
            raise TraceError(
                f"{path}: cannot read the trace: {error.strerror or error}", path=path
            ) from None
        trace = cls(path, lines, size, header_end, body_end, footer, torn, header_line)
        trace.index(limit=first_screen)
        return trace

    @staticmethod
    def _classify_tail(
        lines: TraceLines, last: bytes, start: int, terminated: bool, size: int
    ) -> tuple[TraceFooter | None, int, bool]:
        """(footer, where the operations end, torn) from the last line (a large one read
        without keeping its value)."""
        try:
            item = lines.check(last, 0, torn_possible=not terminated)
        except TraceFormatError:
            return None, size, False  # a bad last line: `check` names it
        if item is None:
            return None, start, True  # a write torn by a crash, set aside as read_trace does
        if isinstance(item, TraceFooter):
            return item, start, False
        return None, size, False

    # --- indexing ----------------------------------------------------------------------

    @property
    def indexed(self) -> bool:
        """Whether every operation line has been indexed."""
        return self._indexed

    @property
    def index_progress(self) -> float:
        """How much of the file has been indexed, 0..1."""
        span = self._body_end - self._header_end
        return 1.0 if self._indexed or span <= 0 else (self._scanned - self._header_end) / span

    @property
    def expected_count(self) -> int | None:
        """The footer's operation count, known before indexing ends (None without a footer)."""
        return None if self.footer is None else self.footer.operation_count

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def index(self, cancelled: Cancelled = _never, *, limit: int | None = None) -> None:
        """Index line offsets up to the end of the operations (or `limit` more bytes)."""
        end = self._body_end if limit is None else min(self._body_end, self._scanned + limit)
        with self.path.open("rb") as handle:
            handle.seek(self._scanned)
            while self._scanned < end:
                if cancelled() or self.closed:
                    return
                position = self._scanned
                chunk = handle.read(min(CHUNK_BYTES, end - position))
                cut = chunk.rfind(b"\n")
                if cut < 0 and chunk and position + len(chunk) < self._body_end:
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
                    self._scanned = self._body_end
                    break
                # Each newline starts the next line; the one at the end of the
                # operations starts the footer (or the torn line), which is no operation.
                lines = chunk[:cut].split(b"\n")
                self._note_lanes(chunk[:cut], len(lines))
                lengths = map((1).__add__, map(len, lines))
                starts = array("q", islice(accumulate(lengths, initial=position), 1, None))
                self._note_effects(chunk[:cut], position, lines, starts, len(self._starts) - 1)
                self._scanned = starts[-1]
                if starts[-1] >= self._body_end:
                    starts.pop()
                self._starts.extend(starts)
                if limit is not None:
                    break  # one read of whole lines: the first screen
                handle.seek(self._scanned)
        if limit is None or self._scanned >= self._body_end:
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
        while offset < self._body_end:
            if cancelled() or self.closed:
                return False
            block = handle.read(min(CHUNK_BYTES, self._body_end - offset))
            if not block:
                break
            newline = block.find(b"\n")
            if newline >= 0:
                tail = (tail + block[:newline])[-LARGE_TAIL_BYTES:]
                line_end = offset + newline
                break
            tail = (tail + block)[-LARGE_TAIL_BYTES:]
            offset += len(block)
        following = self._body_end if line_end is None else line_end + 1
        index = len(self._starts) - 1  # this line's start is the last one indexed
        self._note_lanes(tail, 1)
        self._note_effects(head, position, [head], array("q", [following]), index)
        self._scanned = following
        if following < self._body_end:
            self._starts.append(following)
        return True

    def _note_lanes(self, data: bytes, lines: int) -> None:
        if len(self._lanes) == 1:
            (only,) = self._lanes
            if data.count(b',"lane":"' + only + b'","start_ns":') == lines:
                return  # the common case: every call on the one lane seen so far
        for raw in dict.fromkeys(_LANE.findall(data)):
            if raw not in self._lanes:
                self._lanes[raw] = _json_string(raw)  # None: not a lane (the line is bad)

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
        identities = _EFFECT.findall(data)
        if len(identities) == len(lines):  # one each: every line as the writer writes it
            for namespace, name in dict.fromkeys(identities):
                key = self._effect_key(namespace, name)
                if key not in known:
                    at = position + data.find(key)
                    self._add_effect(key, namespace, name, first + bisect_right(starts, at))
            return
        for number, line in enumerate(lines):  # the identity is the first match of a line
            found = _EFFECT.search(line)
            if found is not None:
                key = self._effect_key(found[1], found[2])
                if key not in known:
                    self._add_effect(key, found[1], found[2], first + number)
                continue
            try:
                effect = self.decode_line(line, first + number).effect
            except TraceFormatError:
                continue  # shown as unreadable in the list; the check reports it
            self._effects.setdefault(effect, first + number)

    @staticmethod
    def _effect_key(namespace: bytes, name: bytes) -> bytes:
        return b',"namespace":"' + namespace + b'","name":"' + name + b'","fingerprint":"'

    def _add_effect(self, key: bytes, namespace: bytes, name: bytes, index: int) -> None:
        namespace_text, name_text = _json_string(namespace), _json_string(name)
        if namespace_text is None or name_text is None:
            return  # a line that does not decode: shown as unreadable, and the check says why
        effect = f"{namespace_text}.{name_text}"
        self._effect_lines[key] = effect
        self._effects.setdefault(effect, index)

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

    def __len__(self) -> int:
        """Operations indexed so far (all of them once `indexed`)."""
        count = len(self._starts)
        # The last start's line may still be cut at the scan's edge until indexing ends.
        return count if self._indexed or self._scanned >= self._body_end else max(count - 1, 0)

    @property
    def complete(self) -> bool:
        """True when the session that wrote the trace closed it (it has a footer)."""
        return self.footer is not None

    @property
    def torn_line(self) -> int | None:
        """The line number of a torn last line set aside, once indexing knows it."""
        return len(self._starts) + 2 if self._torn and self._indexed else None

    # --- reading lines -----------------------------------------------------------------

    def line_span(self, index: int) -> tuple[int, int]:
        """The byte range of operation `index`'s line, without its newline."""
        start = self._starts[index]
        end = self._starts[index + 1] - 1 if index + 1 < len(self._starts) else self._body_end
        if index + 1 >= len(self._starts) and end > start:
            with self._lock:
                self._handle.seek(end - 1)
                if self._handle.read(1) == b"\n":
                    end -= 1
        return start, end

    def read_lines(self, first: int, stop: int) -> tuple[int, bytes]:
        """The bytes of operation lines `first` to `stop - 1` (newlines kept) and their offset."""
        start = self._starts[first]
        end = self._starts[stop] if stop < len(self._starts) else self._body_end
        with self._lock:
            self._handle.seek(start)
            return start, self._handle.read(end - start)

    def index_of_offset(self, offset: int) -> int:
        """The index of the operation whose line holds byte `offset`."""
        return bisect_right(self._starts, offset) - 1

    def decode_line(self, line: bytes, index: int) -> Operation:
        """Decode operation `index`'s line; a bad one raises `TraceFormatError` naming it."""
        return self._lines.operation(line, index + 2)

    def entry(self, index: int) -> Entry:
        """What the list shows for line `index`, decoded with its page on first use: the
        operation, or for a large line (`LARGE_LINE_BYTES`) the operation without its
        output (`LargeOutput`) or the line as raw text (`LargeLine`), or why the line
        cannot be read. Raises `IndexError` beyond `len()`."""
        if not 0 <= index < len(self):
            raise IndexError(f"operation {index} is not indexed (of {len(self)})")
        first = index - index % PAGE_LINES
        page = self._pages.get(first)
        if page is None:
            page = self._decode_page(first, min(first + PAGE_LINES, len(self)))
        else:
            self._pages.move_to_end(first)
        if index - first >= len(page):  # the page was decoded while it was still growing
            page = self._decode_page(first, min(first + PAGE_LINES, len(self)))
        return page[index - first]

    def operation(self, index: int) -> Operation:
        """Operation `index`, decoded with its page on first use (a large line is decoded
        in full, each time: only an action that needs its whole output asks).

        Raises `IndexError` beyond `len()`, `TraceFormatError` for a line that
        does not decode.
        """
        item = self.entry(index)
        if isinstance(item, (LargeOutput, LargeLine)):
            start, end = self.line_span(index)
            with self._lock:
                self._handle.seek(start)
                line = self._handle.read(end - start)
            return self.decode_line(line, index)
        if isinstance(item, TraceFormatError):
            raise item
        return item

    def _line_size(self, index: int) -> int:
        """The length of line `index` (its newline included, but for the last line)."""
        end = self._starts[index + 1] if index + 1 < len(self._starts) else self._body_end
        return end - self._starts[index]

    def _decode_page(self, first: int, stop: int) -> list[Entry]:
        page: list[Entry] = []
        index = first
        while index < stop:
            if self._line_size(index) > LARGE_LINE_BYTES:
                page.append(self._large(index))
                index += 1
                continue
            run = index + 1  # a run of ordinary lines, read at once
            while run < stop and self._line_size(run) <= LARGE_LINE_BYTES:
                run += 1
            _, data = self.read_lines(index, run)
            for offset, line in enumerate(data.split(b"\n")[: run - index]):
                try:
                    page.append(self.decode_line(line, index + offset))
                except TraceFormatError as error:
                    page.append(error)
            index = run
        self._pages[first] = page
        self._pages.move_to_end(first)
        while len(self._pages) > CACHED_PAGES:
            self._pages.popitem(last=False)
        return page

    def _large(self, index: int) -> LargeOutput | LargeLine:
        """A large line, read only at its start and end: everything but its returned value
        is decoded under the reader's rules (with `null` in the value's place)."""
        start, end = self.line_span(index)
        with self._lock:
            self._handle.seek(start)
            head = self._handle.read(min(LARGE_HEAD_BYTES, end - start))
            tail_start = max(start, end - LARGE_TAIL_BYTES)
            self._handle.seek(tail_start)
            tail = self._handle.read(end - tail_start)
        found = _EFFECT.search(head)
        effect = None
        if found is not None:
            namespace, name = _json_string(found[1]), _json_string(found[2])
            effect = None if namespace is None or name is None else f"{namespace}.{name}"
        span = TraceLines.value_span(head, tail, end - start)
        if span is not None:
            value_start, value_end = span
            light = head[:value_start] + b"null" + tail[value_end - (end - start) + len(tail) :]
            try:
                head_operation = self.decode_line(light, index)
            except TraceFormatError:
                pass  # not laid out as the writer writes: shown raw, checked in full
            else:
                size = value_end - value_start
                return LargeOutput.of(head_operation, index, start + value_start, size, end - start)
        return LargeLine(index, start, end - start, effect)

    def value_pages(self, large: LargeOutput | LargeLine, page: int) -> tuple[bytes, bytes]:
        """The first and the last `page` bytes of a large value's (or line's) text (all of
        it, and nothing, when it is no longer than two pages)."""
        offset, size = text_span(large)
        with self._lock:
            self._handle.seek(offset)
            if size <= 2 * page:
                return self._handle.read(size), b""
            first = self._handle.read(page)
            self._handle.seek(offset + size - page)
            return first, self._handle.read(page)

    def value_text(self, large: LargeOutput | LargeLine) -> bytes:
        """A large value's (or line's) whole text, read from the file, not decoded."""
        offset, size = text_span(large)
        with self._lock:
            self._handle.seek(offset)
            return self._handle.read(size)

    def spans(
        self, start: int, cancelled: Cancelled, *, wait: bool = True
    ) -> Iterator[tuple[int, int, int, bytes]]:
        """`(first, stop, offset, bytes)` of successive runs of whole lines from `start`,
        growing from `FIRST_SCREEN_BYTES` to `CHUNK_BYTES`.

        With `wait`, follows the index as it grows until every line is read;
        else stops at the lines indexed now. Stops when `cancelled()`.
        """
        position = start
        size = FIRST_SCREEN_BYTES  # small runs first: the first results come at once
        while True:
            if cancelled() or self.closed:
                return
            available = len(self)
            if position >= available:
                if self._indexed or not wait:
                    return
                self._closed.wait(0.02)  # indexing is ahead of us in a moment
                continue
            target = self._starts[position] + size
            size = min(2 * size, CHUNK_BYTES)
            stop = max(position + 1, min(available, bisect_right(self._starts, target) - 1))
            offset, data = self.read_lines(position, stop)
            yield position, stop, offset, data
            position = stop

    # --- lookups -----------------------------------------------------------------------

    def get(self, identity: OperationIdentity) -> Operation | None:
        """The first indexed operation with exactly this identity, or None.

        Finds lines holding the fingerprint's hex digits, then decodes those: a
        pass over the file at C speed (call it off the event loop on big traces).
        """
        needle = identity.fingerprint.encode("ascii")
        for first, _, offset, data in self.spans(0, _never, wait=False):
            found = data.find(needle)
            while found >= 0:
                index = self.index_of_offset(offset + found)
                if index >= first:
                    try:
                        operation = self.operation(index)
                    except TraceFormatError:
                        operation = None
                    if operation is not None and operation.identity == identity:
                        return operation
                found = data.find(needle, found + len(needle))
        return None

    def operations_of(self, namespace: str, name: str) -> list[Operation]:
        """Every indexed operation of one effect, in recorded order (what a recipe
        resolver reads of a source: `toolreplay.runtime.recipes.RecipeSource`).

        Finds the lines holding the effect as the writer writes it, then decodes
        those: a pass over the file at C speed. A trace written another way (keys
        in another order) is decoded line by line.
        """
        key = self._effect_key(
            json.dumps(namespace, ensure_ascii=False)[1:-1].encode(),
            json.dumps(name, ensure_ascii=False)[1:-1].encode(),
        )
        found: list[Operation] = []
        seen: set[int] = set()
        for first, _, offset, data in self.spans(0, _never, wait=False):
            at = data.find(key)
            while at >= 0:
                index = self.index_of_offset(offset + at)
                if index >= first and index not in seen:
                    seen.add(index)
                    with contextlib.suppress(TraceFormatError):
                        operation = self.operation(index)
                        if (operation.identity.namespace, operation.identity.name) == (
                            namespace,
                            name,
                        ):
                            found.append(operation)
                at = data.find(key, at + len(key))
        if not found and f"{namespace}.{name}" in self._effects:
            found = [
                operation
                for operation in self._decoded_operations()
                if (operation.identity.namespace, operation.identity.name) == (namespace, name)
            ]
        return found

    def _decoded_operations(self) -> Iterator[Operation]:
        for index in range(len(self)):
            with contextlib.suppress(TraceFormatError):
                yield self.operation(index)

    # --- the integrity check -------------------------------------------------------------

    def check(self, cancelled: Cancelled = _never, *, index: bool = True) -> Integrity:
        """Check the trace as `read_trace` does, streaming; sets and returns `integrity`.

        Every line is decoded under `read_trace`'s rules, keeping nothing (a trace
        is untrusted input: a footer whose digest matches proves only that whoever
        wrote the footer hashed the lines above it, not that they decode). Then a
        complete trace's footer must give the operation count and the SHA-256 of
        every byte before it; an incomplete trace's fingerprints are recomputed,
        a torn last line set aside. Indexes first if needed (`index=False`: not at
        all, for a process that only checks and needs no line offsets). Returns the
        `checking` state unchanged when cancelled.
        """
        try:
            if index:
                self.index(cancelled)
                if not self._indexed:
                    return self.integrity
            if not self._check_lines(cancelled):
                return self.integrity
        except TraceError as error:
            self.integrity = Integrity("failed", 1.0, str(error))
        except OSError as error:
            self.integrity = Integrity(
                "failed", 1.0, f"{self.path}: cannot read the trace: {error.strerror or error}"
            )
        else:
            self.integrity = Integrity("ok", 1.0)
        return self.integrity

    def _check_lines(self, cancelled: Cancelled) -> bool:
        """Read every line under the rules (and hash what the footer covers); False when
        cancelled."""
        rules = TraceLines(self.path, self._header_line)
        digest = hashlib.sha256()
        crlf = False
        number = 1
        position = 0  # bytes read so far
        covered = self._body_end if self.footer is not None else 0
        carry = bytearray()  # the start of a line longer than what was read
        count = 0
        last = b""
        with self.path.open("rb") as handle:
            while True:
                if cancelled() or self.closed:
                    return False
                chunk = handle.read(CHUNK_BYTES)
                if position < covered:
                    part = chunk[: covered - position]
                    digest.update(part)
                    crlf = crlf or b"\r\n" in part or (part.startswith(b"\n") and last == b"\r")
                    last = part[-1:]
                position += len(chunk)
                lines: list[bytes | bytearray] = [*chunk.split(b"\n")]
                if carry:
                    carry += lines[0]
                    lines[0], carry = carry, bytearray()  # the long line, grown in place
                tail = lines.pop()
                if chunk and tail:
                    carry += tail  # no newline yet: the line goes on in the next chunk
                elif not chunk and tail:
                    lines.append(tail)  # the unterminated last line
                for line in lines:
                    if number == 1:
                        number = 2  # the header, decoded when the file was opened
                        continue
                    torn_possible = not chunk and line is tail
                    item = rules.check(line, number, torn_possible=torn_possible)
                    if item is None:
                        return True  # a torn last line, set aside
                    if isinstance(item, Operation):
                        count += 1
                        if self.footer is None:
                            rules.check_fingerprint(item)
                    number += 1
                self.integrity = Integrity("checking", min(position / max(self.size, 1), 1.0))
                if not chunk:
                    break
        if rules.footer is not None:
            rules.check_footer(count, digest.hexdigest(), crlf=lambda: crlf, line=number - 1)
        return True

    def check_elsewhere(self, cancelled: Cancelled = _never) -> Integrity:
        """`check`, with the decoding done in a child process
        (`python -m toolreplay_tui.model.trace_file TRACE`, this interpreter): the work,
        which grows with the trace and its largest value, then takes neither this
        process's memory nor its interpreter lock from the UI. Indexes here first. Runs
        `check` here when the child cannot be started or ends without an answer."""
        self.index(cancelled)
        if not self._indexed:
            return self.integrity
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "toolreplay_tui.model.trace_file", str(self.path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
            )
        except OSError:
            return self.check(cancelled)
        self._checker = process
        answered = False
        try:
            assert process.stdout is not None
            for line in process.stdout:
                if cancelled() or self.closed:
                    return self.integrity
                report = json.loads(line)
                if "progress" in report:
                    self.integrity = Integrity("checking", float(report["progress"]))
                    continue
                problem = report.get("problem")
                self.integrity = Integrity("ok" if problem is None else "failed", 1.0, problem)
                answered = True
        except (ValueError, OSError):
            answered = False
        finally:
            with contextlib.suppress(OSError):
                process.kill()
            process.wait()
            self._checker = None
        if answered or cancelled() or self.closed:
            return self.integrity
        return self.check(cancelled)

    def close(self) -> None:
        """Stop every background pass soon, and release the file."""
        self._closed.set()
        checker = self._checker
        if checker is not None:
            with contextlib.suppress(OSError):
                checker.kill()
        with self._lock:
            self._handle.close()

    def __enter__(self) -> TraceFile:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class TraceOperations(Sequence[Operation]):
    """A `TraceFile`'s operations as a sequence, decoded on access (grows while indexing)."""

    def __init__(self, trace: TraceFile) -> None:
        self._trace = trace

    def __len__(self) -> int:
        return len(self._trace)

    @overload
    def __getitem__(self, index: int) -> Operation: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Operation]: ...
    def __getitem__(self, index: int | slice) -> Operation | Sequence[Operation]:
        if isinstance(index, slice):
            return [self._trace.operation(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        return self._trace.operation(index)


PROGRESS_SECONDS = 0.1
"""How often the checking child reports how far it is."""


def check_main(arguments: list[str]) -> int:
    """`python -m toolreplay_tui.model.trace_file TRACE`: check TRACE (`TraceFile.check`),
    printing `{"progress": p}` lines while it goes, then `{"problem": ...}`, null when
    it holds. The child process of `TraceFile.check_elsewhere`."""
    if len(arguments) != 1:
        sys.stderr.write("usage: python -m toolreplay_tui.model.trace_file TRACE\n")
        return 2
    try:
        trace = TraceFile.open(Path(arguments[0]), first_screen=0)
    except TraceError as error:
        print(json.dumps({"problem": str(error)}), flush=True)
        return 0
    # This process only checks: every object it decodes is dropped at once, so cyclic
    # garbage collection would only cost time.
    gc.disable()
    with trace:
        worker = threading.Thread(target=trace.check, kwargs={"index": False})
        worker.daemon = True
        worker.start()
        while worker.is_alive():
            worker.join(PROGRESS_SECONDS)
            if worker.is_alive():
                print(json.dumps({"progress": trace.integrity.progress}), flush=True)
        print(json.dumps({"problem": trace.integrity.problem}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(check_main(sys.argv[1:]))
