"""`TraceFile`: a trace opened for browsing at once, whatever its size.

`read_trace` decodes and keeps every operation before returning, which takes
seconds and more memory than the file at a million operations. The debugger
instead reads the header, the footer (from the end of the file) and the first
screen of operations, and shows them; the rest is indexed in the background as
one byte offset per line, and an operation is decoded only when it is asked for
(a page of lines at a time, the latest pages cached). The integrity checks
`read_trace` makes (every line's rules, the footer's count and digest, or every
fingerprint of an incomplete trace) run afterwards, streaming, keeping nothing.

Background passes (`index`, `check`, `find`) take a `cancelled` callable and
return soon after it says so, and stop when the file is closed; the file is
only ever read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
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
    "PAGE_LINES",
    "Cancelled",
    "Integrity",
    "TraceFile",
    "TraceOperations",
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


def _json_string(raw: bytes) -> str:
    """The string a JSON string's raw bytes (without quotes) stand for."""
    return json.loads(b'"' + raw + b'"')


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
        self._pages: OrderedDict[int, list[Operation | TraceFormatError]] = OrderedDict()
        self._lanes: dict[bytes, str] = {}
        # Each effect's first operation, found by indexing (raw namespace and name -> effect).
        self._effects: dict[str, int] = {}
        self._effect_lines: dict[bytes, str] = {}
        self.operations = TraceOperations(self)

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
        """(footer, where the operations end, torn) from the last line."""
        try:
            item = lines.read(last, 0, torn_possible=not terminated)
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
                while cut < 0 and chunk and position + len(chunk) < self._body_end:
                    more = handle.read(
                        min(FIRST_SCREEN_BYTES, self._body_end - position - len(chunk))
                    )
                    if not more:
                        break
                    cut = more.rfind(b"\n")
                    cut = cut if cut < 0 else len(chunk) + cut
                    chunk += more  # a line longer than a chunk: read on to its newline
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

    def _note_lanes(self, data: bytes, lines: int) -> None:
        if len(self._lanes) == 1:
            (only,) = self._lanes
            if data.count(b',"lane":"' + only + b'","start_ns":') == lines:
                return  # the common case: every call on the one lane seen so far
        for raw in dict.fromkeys(_LANE.findall(data)):
            if raw not in self._lanes:
                self._lanes[raw] = _json_string(raw)

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
        effect = f"{_json_string(namespace)}.{_json_string(name)}"
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
        return tuple(self._lanes.values())

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

    def operation(self, index: int) -> Operation:
        """Operation `index`, decoded with its page on first use.

        Raises `IndexError` beyond `len()`, `TraceFormatError` for a line that
        does not decode.
        """
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
        item = page[index - first]
        if isinstance(item, TraceFormatError):
            raise item
        return item

    def _decode_page(self, first: int, stop: int) -> list[Operation | TraceFormatError]:
        _, data = self.read_lines(first, stop)
        lines = data.split(b"\n")
        page: list[Operation | TraceFormatError] = []
        for offset, line in enumerate(lines[: stop - first]):
            try:
                page.append(self.decode_line(line, first + offset))
            except TraceFormatError as error:
                page.append(error)
        self._pages[first] = page
        self._pages.move_to_end(first)
        while len(self._pages) > CACHED_PAGES:
            self._pages.popitem(last=False)
        return page

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

    def check(self, cancelled: Cancelled = _never) -> Integrity:
        """Check the trace as `read_trace` does, streaming; sets and returns `integrity`.

        A complete trace: the footer's operation count and the SHA-256 digest of
        every byte before it (a match means the file is byte for byte what the
        recording wrote, so its lines need no second reading; on a mismatch they are
        read, to name a bad line first, as `read_trace` does). An incomplete one:
        every line decoded under `read_trace`'s rules and every fingerprint
        recomputed, a torn last line set aside. Indexes first if needed. Returns
        the `checking` state unchanged when cancelled.
        """
        try:
            self.index(cancelled)
            if not self._indexed:
                return self.integrity
            if self.footer is None:
                if not self._check_lines(cancelled, fingerprints=True):
                    return self.integrity
            else:
                try:
                    if not self._check_footer(cancelled):
                        return self.integrity
                except TraceFormatError:
                    # As read_trace would, name a bad line before the footer's mismatch.
                    if not self._check_lines(cancelled, fingerprints=False):
                        return self.integrity
                    raise
        except TraceError as error:
            self.integrity = Integrity("failed", 1.0, str(error))
        except OSError as error:
            self.integrity = Integrity(
                "failed", 1.0, f"{self.path}: cannot read the trace: {error.strerror or error}"
            )
        else:
            self.integrity = Integrity("ok", 1.0)
        return self.integrity

    def _check_footer(self, cancelled: Cancelled) -> bool:
        assert self.footer is not None
        digest = hashlib.sha256()
        crlf = False
        position = 0
        last = b""
        with self.path.open("rb") as handle:
            while position < self._body_end:
                if cancelled() or self.closed:
                    return False
                chunk = handle.read(min(CHUNK_BYTES, self._body_end - position))
                if not chunk:
                    break
                digest.update(chunk)
                crlf = crlf or b"\r\n" in chunk or (chunk.startswith(b"\n") and last == b"\r")
                last = chunk[-1:]
                position += len(chunk)
                self.integrity = Integrity("checking", position / max(self._body_end, 1))
        lines = TraceLines(self.path, self._header_line)
        lines.footer = self.footer  # decoded from the end of the file when it was opened
        lines.check_footer(len(self), digest.hexdigest(), crlf=lambda: crlf, line=len(self) + 2)
        return True

    def _check_lines(self, cancelled: Cancelled, *, fingerprints: bool) -> bool:
        rules = TraceLines(self.path, self._header_line)
        number = 1
        position = 0
        carry = b""
        with self.path.open("rb") as handle:
            while True:
                if cancelled() or self.closed:
                    return False
                chunk = handle.read(CHUNK_BYTES)
                position += len(chunk)
                lines = (carry + chunk).split(b"\n")
                carry = lines.pop()
                if not chunk and carry:
                    lines.append(carry)  # the unterminated last line
                for line in lines:
                    if number == 1:
                        number = 2  # the header, decoded when the file was opened
                        continue
                    item = rules.read(line, number, torn_possible=not chunk and line is carry)
                    if item is None:
                        return True  # a torn last line, set aside
                    if isinstance(item, Operation) and fingerprints:
                        rules.check_fingerprint(item)
                    number += 1
                self.integrity = Integrity("checking", min(position / max(self.size, 1), 1.0))
                if not chunk:
                    return True

    def close(self) -> None:
        """Stop every background pass soon, and release the file."""
        self._closed.set()
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
