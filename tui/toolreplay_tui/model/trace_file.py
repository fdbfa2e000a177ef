"""`TraceFile`: a trace opened for browsing at once, whatever its size.

`read_trace` decodes and keeps every operation before returning, which takes
seconds and more memory than the file at a million operations. The debugger
instead reads the header, the footer (from the end of the file) and the first
screen of operations, and shows them; the rest is indexed in the background as
one byte offset per line, and an operation is decoded only when it is asked for
(a page of lines at a time, the latest pages cached). The integrity checks
`read_trace` makes (every line's rules, then the footer's count and digest, or
every fingerprint of an incomplete trace) run afterwards, streaming, keeping
nothing. The ends are read by `trace_ends`, the index kept by `line_index`, the
check made by `trace_check`.

Background passes (`index`, `check`, `find`) take a `cancelled` callable and
return soon after it says so, and stop when the file is closed; the file is
only ever read.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, overload

from toolreplay import (
    JsonValue,
    Operation,
    OperationIdentity,
    TraceFormatError,
    TraceHeader,
    TraceLines,
)
from toolreplay_tui.model.line_index import (
    CHUNK_BYTES,
    EFFECT_PATTERN,
    LARGE_HEAD_BYTES,
    LARGE_TAIL_BYTES,
    Cancelled,
    LineIndex,
    effect_key,
    json_string,
    never,
)
from toolreplay_tui.model.trace_check import Integrity, check_in_child, check_lines, checked
from toolreplay_tui.model.trace_ends import TraceEnds, read_ends

__all__ = [
    "FIRST_SCREEN_BYTES",
    "LARGE_LINE_BYTES",
    "PAGE_LINES",
    "Entry",
    "LargeLine",
    "LargeOutput",
    "TraceFile",
    "TraceOperations",
    "text_size",
    "text_span",
]

FIRST_SCREEN_BYTES = 64 * 1024
"""Read before anything is shown: the header and a few hundred operations."""
PAGE_LINES = 64
"""Operations decoded together when one of them is asked for (one read, one page)."""
CACHED_PAGES = 64
LARGE_LINE_BYTES = 1 << 20
"""An operation line longer than this is not decoded for the list or the detail pane: its
output is shown through a bounded view (`LargeOutput`), and decoded only when asked for."""


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


class TraceFile:
    """A trace being browsed: its header, its footer, and its operations by index.

    Open it with `TraceFile.open` (header, footer and first screen, at once),
    then call `index` in a background thread until `indexed`, then `check`.
    `len()` and `operations` grow while it indexes. Behaves like a loaded
    `toolreplay.Trace` where the debugger needs one: `header`, `footer`,
    `complete`, `torn_line`, `operations`, `get(identity)`.
    """

    def __init__(self, path: Path, ends: TraceEnds) -> None:
        self.path = path
        self._lines = ends.lines  # decodes single lines; `check` uses its own
        self._header_line = ends.header_line
        self.header: TraceHeader = ends.lines.header
        self.size = ends.size
        self.footer = ends.footer
        """The footer, read from the end of the file when the trace was opened."""
        self.integrity = Integrity("checking")
        self._body_end = ends.body_end  # where the footer, a torn last line or the file starts
        self._torn = ends.torn
        self._closed = threading.Event()
        self._lines_index = LineIndex(
            path, ends.header_end, ends.body_end, decode=self.decode_line, closed=self._closed
        )
        self._lock = threading.Lock()
        self._handle: BinaryIO = path.open("rb")
        self._pages: OrderedDict[int, list[Entry]] = OrderedDict()
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
        trace = cls(path, read_ends(path))
        trace.index(limit=first_screen)
        return trace

    # --- indexing ----------------------------------------------------------------------

    @property
    def indexed(self) -> bool:
        """Whether every operation line has been indexed."""
        return self._lines_index.indexed

    @property
    def index_progress(self) -> float:
        """How much of the file has been indexed, 0..1."""
        return self._lines_index.progress

    @property
    def expected_count(self) -> int | None:
        """The footer's operation count, known before indexing ends (None without a footer)."""
        return None if self.footer is None else self.footer.operation_count

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def index(self, cancelled: Cancelled = never, *, limit: int | None = None) -> None:
        """Index line offsets up to the end of the operations (or `limit` more bytes)."""
        self._lines_index.index(cancelled, limit=limit)

    @property
    def effects(self) -> dict[str, int]:
        """The effect names of the operations indexed so far, each with the index of its
        first operation, in order of first appearance (complete once `indexed`)."""
        return self._lines_index.effects

    @property
    def lanes(self) -> tuple[str, ...]:
        """The lanes (tasks or threads) of the operations indexed so far, in order of
        first appearance; empty for a format 3 trace."""
        return self._lines_index.lanes

    def __len__(self) -> int:
        """Operations indexed so far (all of them once `indexed`)."""
        return len(self._lines_index)

    @property
    def complete(self) -> bool:
        """True when the session that wrote the trace closed it (it has a footer)."""
        return self.footer is not None

    @property
    def torn_line(self) -> int | None:
        """The line number of a torn last line set aside, once indexing knows it."""
        index = self._lines_index
        return index.starts_known + 2 if self._torn and index.indexed else None

    # --- reading lines -----------------------------------------------------------------

    def line_span(self, index: int) -> tuple[int, int]:
        """The byte range of operation `index`'s line, without its newline."""
        lines = self._lines_index
        start = lines.start(index)
        last = index + 1 >= lines.starts_known
        end = self._body_end if last else lines.start(index + 1) - 1
        if last and end > start:
            with self._lock:
                self._handle.seek(end - 1)
                if self._handle.read(1) == b"\n":
                    end -= 1
        return start, end

    def read_lines(self, first: int, stop: int) -> tuple[int, bytes]:
        """The bytes of operation lines `first` to `stop - 1` (newlines kept) and their offset."""
        start, end = self._lines_index.start(first), self._lines_index.end_before(stop)
        with self._lock:
            self._handle.seek(start)
            return start, self._handle.read(end - start)

    def index_of_offset(self, offset: int) -> int:
        """The index of the operation whose line holds byte `offset`."""
        return self._lines_index.index_of_offset(offset)

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

    def _decode_page(self, first: int, stop: int) -> list[Entry]:
        page: list[Entry] = []
        line_size = self._lines_index.line_size
        index = first
        while index < stop:
            if line_size(index) > LARGE_LINE_BYTES:
                page.append(self._large(index))
                index += 1
                continue
            run = index + 1  # a run of ordinary lines, read at once
            while run < stop and line_size(run) <= LARGE_LINE_BYTES:
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
        found = EFFECT_PATTERN.search(head)
        effect = None
        if found is not None:
            namespace, name = json_string(found[1]), json_string(found[2])
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
                if self.indexed or not wait:
                    return
                self._closed.wait(0.02)  # indexing is ahead of us in a moment
                continue
            target = self._lines_index.start(position) + size
            size = min(2 * size, CHUNK_BYTES)
            stop = max(position + 1, min(available, self._lines_index.index_of_offset(target)))
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
        for first, _, offset, data in self.spans(0, never, wait=False):
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
        key = effect_key(
            json.dumps(namespace, ensure_ascii=False)[1:-1].encode(),
            json.dumps(name, ensure_ascii=False)[1:-1].encode(),
        )
        found: list[Operation] = []
        seen: set[int] = set()
        for first, _, offset, data in self.spans(0, never, wait=False):
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
        if not found and f"{namespace}.{name}" in self._lines_index.effects:
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

    def check(self, cancelled: Cancelled = never, *, index: bool = True) -> Integrity:
        """Check the trace as `read_trace` does, streaming (`trace_check.check_lines`); sets
        and returns `integrity`. Indexes first if needed (`index=False`: not at all, for a
        process that only checks and needs no line offsets). Returns the `checking` state
        unchanged when cancelled."""

        def lines() -> bool:
            if index:
                self.index(cancelled)
                if not self.indexed:
                    return False
            return check_lines(
                self.path,
                self._header_line,
                footer=self.footer,
                body_end=self._body_end,
                size=self.size,
                stopped=lambda: cancelled() or self.closed,
                progress=self._checking,
            )

        verdict = checked(self.path, lines)
        if verdict is not None:
            self.integrity = verdict
        return self.integrity

    def _checking(self, integrity: Integrity) -> None:
        self.integrity = integrity

    def _running(self, checker: subprocess.Popen[str] | None) -> None:
        self._checker = checker

    def check_elsewhere(self, cancelled: Cancelled = never) -> Integrity:
        """`check`, with the decoding done in a child process
        (`python -m toolreplay_tui.model.trace_check TRACE`, this interpreter): the work,
        which grows with the trace and its largest value, then takes neither this
        process's memory nor its interpreter lock from the UI. Indexes here first. Runs
        `check` here when the child cannot be started or ends without an answer."""
        self.index(cancelled)
        if not self.indexed:
            return self.integrity
        answered = check_in_child(
            [sys.executable, "-m", "toolreplay_tui.model.trace_check", str(self.path)],
            stopped=lambda: cancelled() or self.closed,
            report=self._checking,
            running=self._running,
        )
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
