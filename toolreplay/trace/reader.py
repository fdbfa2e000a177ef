"""Reading a trace: one pass over the file, one identity index, no per-call scans.

A trace is trusted line by line only as far as it can be checked:

- a complete trace (one with a footer) must match the footer's operation count
  and SHA-256 digest, so a trace changed after it was written is refused;
- an incomplete trace (the recording process died, or someone removed the
  footer) has every operation's fingerprint recomputed from its inputs instead;
- a last line without its newline that does not parse is a write torn by a
  crash: it is set aside and reported, never mis-parsed. Any other bad line is
  an error naming the file and line.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolreplay.bulk import collection_paused
from toolreplay.errors import TraceError, TraceFormatError, TraceNotFoundError
from toolreplay.files import UnreadableFileError, regular_file_blocks
from toolreplay.portable import MAX_DEPTH, fingerprint
from toolreplay.trace.codec import (
    InvalidLine,
    decode_footer,
    decode_header,
    decode_operation,
    parse_line,
    parse_lines,
    reads_strictly,
)
from toolreplay.trace.model import Operation, OperationIdentity, TraceFooter, TraceHeader

__all__ = [
    "CHECKED_VALUE_BYTES",
    "Trace",
    "TraceLines",
    "check_digest",
    "parse_trace",
    "read_trace",
]

CHECKED_VALUE_BYTES = 1 << 20
"""`TraceLines.check` checks the returned value of an operation line longer than this
without decoding it into objects."""
_RETURNED_VALUE = b',"outcome":{"status":"ok","value":'
"""Where a returned value starts, as the writer writes an operation line."""
_AFTER_OUTCOME = b'},"origin":"'
"""What follows the outcome: its last occurrence in a line is the real one (a string holds
no unescaped quote, and anything of the value comes before it)."""
_VALUE_MAX_DEPTH = MAX_DEPTH + 2
_BLOCK_BYTES = 1 << 20
"""Bytes of a trace `read_trace` splits into lines at a time."""
_PARSED_TOGETHER = 256
"""Lines `read_trace` parses in one pass (`parse_lines`): enough to save the steps per
line, few enough that a line needing its own parse sends few others there too."""
"""How deeply a returned value may nest in a line (§5 of RFC 0003: values sit up to four
levels into a line, a returned value two)."""


class Trace:
    """A trace loaded in memory, indexed by operation identity.

    `operations` are in recorded order. `footer` is None for an incomplete
    trace; `torn_line` is the 1-based number of a torn last line that was set
    aside, if any. `duplicates` maps every identity the trace holds more than
    once to all of its operations (a recording never writes one; a hand edit can).
    `effects` is the set of distinct effect names (`namespace.name`).

    The index by identity (and `duplicates`, made with it) is built on first use:
    a diff or a summary never looks an operation up, and for a large trace the
    index costs a tenth of what the operations do.
    """

    __slots__ = (
        "_by_effect",
        "_by_identity",
        "_duplicates",
        "_effects",
        "_lanes",
        "footer",
        "header",
        "operations",
        "path",
        "torn_line",
    )

    def __init__(
        self,
        path: Path,
        header: TraceHeader,
        operations: Sequence[Operation],
        footer: TraceFooter | None,
        torn_line: int | None = None,
    ) -> None:
        self.path = path
        self.header = header
        self.operations = tuple(operations)
        self.footer = footer
        self.torn_line = torn_line
        self._by_identity: dict[OperationIdentity, Operation] | None = None
        self._duplicates: dict[OperationIdentity, list[Operation]] | None = None
        self._by_effect: dict[tuple[str, str], list[Operation]] | None = None
        self._lanes: tuple[str, ...] | None = None
        self._effects: frozenset[str] | None = None

    @property
    def effects(self) -> frozenset[str]:
        """The distinct effect names the trace records (`namespace.name`)."""
        if self._effects is None:
            pairs = {(op.identity.namespace, op.identity.name) for op in self.operations}
            self._effects = frozenset(f"{namespace}.{name}" for namespace, name in pairs)
        return self._effects

    @property
    def complete(self) -> bool:
        """True when the session that wrote the trace closed it (it has a footer)."""
        return self.footer is not None

    def __len__(self) -> int:
        return len(self.operations)

    def get(self, identity: OperationIdentity) -> Operation | None:
        """The operation with exactly this identity (the first, if duplicated), or None."""
        by_identity = self._by_identity
        if by_identity is None:
            by_identity = self._index()
        return by_identity.get(identity)

    @property
    def by_identity(self) -> Mapping[OperationIdentity, Operation]:
        """Every operation by its identity (the first, if duplicated): `get` as a mapping,
        for callers that look up one per call."""
        by_identity = self._by_identity
        if by_identity is None:
            by_identity = self._index()
        return by_identity

    @property
    def duplicates(self) -> Mapping[OperationIdentity, Sequence[Operation]]:
        """Every identity held more than once, to all of its operations in order."""
        if self._duplicates is None:
            self._index()
        assert self._duplicates is not None
        return self._duplicates

    def _index(self) -> dict[OperationIdentity, Operation]:
        # Reversed, so that the first of a duplicated identity is the one kept.
        by_identity = {operation.identity: operation for operation in reversed(self.operations)}
        duplicates: dict[OperationIdentity, list[Operation]] = {}
        if len(by_identity) != len(self.operations):  # only a hand edit writes one twice
            for operation in self.operations:
                identity = operation.identity
                first = by_identity[identity]
                if first is not operation:
                    duplicates.setdefault(identity, [first]).append(operation)
        self._by_identity = by_identity
        self._duplicates = duplicates
        return by_identity

    def operations_of(self, namespace: str, name: str) -> Sequence[Operation]:
        """Every operation of one effect, in recorded order (indexed on first use)."""
        if self._by_effect is None:
            by_effect: dict[tuple[str, str], list[Operation]] = {}
            for operation in self.operations:
                key = (operation.identity.namespace, operation.identity.name)
                by_effect.setdefault(key, []).append(operation)
            self._by_effect = by_effect
        return self._by_effect.get((namespace, name), ())

    @property
    def lanes(self) -> tuple[str, ...]:
        """The lanes (tasks or threads) the operations ran on, in order of first appearance.

        Empty when no operation carries a lane (a format 3 trace); more than one
        when the recorded program called effects concurrently.
        """
        if self._lanes is None:
            self._lanes = tuple(dict.fromkeys(op.lane for op in self.operations if op.lane))
        return self._lanes

    def describe_state(self) -> str:
        """One sentence on completeness, for summaries and error messages."""
        count = len(self.operations)
        if self.footer is not None:
            return f"complete, {count} operations"
        state = (
            f"incomplete: {count} operations and no footer (the recording did not close, "
            "e.g. its process was killed)"
        )
        if self.torn_line is not None:
            state += f"; a torn last line {self.torn_line} was set aside"
        return state


_NOT_FOUND_ADVICE: dict[str, str] = {
    "missing": "check the path, or record one first",
    "directory": "pass the path of a .trp file",
    "not_regular": "pass a .trp file",
}


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """Load and check a `.trp` trace file.

    Raises `TraceNotFoundError` for a missing path, a directory or anything
    else that is not a regular file (a pipe or a device is refused at once,
    never read), `TraceError` when the file cannot be read, and
    `TraceFormatError` (naming file and line) for anything malformed, of an
    unknown format version, or failing its integrity check.
    """
    trace_path = Path(path)
    # Read a block at a time: the file's bytes are never all in memory besides the
    # operations made of them (for a large trace, a third of what loading takes).
    blocks = regular_file_blocks(trace_path, "trace", _BLOCK_BYTES)
    try:
        with contextlib.closing(blocks), collection_paused():
            return _parse(trace_path, blocks)
    except UnreadableFileError as error:
        if error.kind == "os_error":
            raise TraceError(f"{trace_path}: {error.problem}", path=trace_path) from None
        raise TraceNotFoundError(
            f"{trace_path}: {error.problem}; {_NOT_FOUND_ADVICE[error.kind]}", path=trace_path
        ) from None


def parse_trace(path: Path, data: bytes) -> Trace:
    """Check and index trace bytes already read (from `path`, named in errors).

    For callers that must parse exactly the bytes they verified (a promoted
    case hashes the file, then parses that same buffer).
    """
    with collection_paused():
        return _parse(path, iter((data,)))


def _parse(path: Path, blocks: Iterator[bytes]) -> Trace:
    """A trace from its bytes, given in blocks of any size.

    Loading allocates one container per JSON object and keeps them all: the caller
    pauses the cyclic collector, which would rescan the growing heap for nothing.
    """
    chunks: list[bytes] = []
    for block in blocks:
        chunks.append(block)
        if b"\n" in block:
            break
    buffer = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if not buffer:
        raise TraceFormatError(
            "the file is empty, so it has no header; it is not a trace (or its recording "
            "never wrote a line)",
            path=path,
        )
    header_end = buffer.find(b"\n")
    if header_end < 0:  # the header alone, unterminated
        return Trace(path, TraceLines(path, buffer).header, [], None, None)
    body = _TraceBody(TraceLines(path, buffer[:header_end]))
    body.covered(buffer, 0, header_end + 1)
    # Every complete line but the last one known is read as it comes: the file's last
    # line, which may be torn or the footer, is read once no byte follows it.
    start = header_end + 1
    for block in blocks:
        if b"\n" not in block:  # the middle of a long line
            chunks = [buffer[start:], block]
            for block in blocks:
                chunks.append(block)
                if b"\n" in block:
                    break
            buffer, start = b"".join(chunks), 0
        else:
            buffer, start = buffer[start:] + block, 0
        last = buffer.rfind(b"\n")
        held = buffer.rfind(b"\n", 0, last)  # the line before `last` may be the file's last
        if held >= 0:
            body.read_lines(buffer, 0, held)
            start = held + 1
    return body.trace(path, buffer, start)


class _TraceBody:
    """The lines after a trace's header, read in order, and the digest of their bytes."""

    def __init__(self, reader: TraceLines) -> None:
        self.reader = reader
        self.operations: list[Operation] = []
        self.number = 1  # of the last line read
        self._digest = hashlib.sha256()
        self._crlf = False

    def covered(self, data: bytes, start: int, stop: int) -> None:
        """`data[start:stop]` is under the footer's digest."""
        self._digest.update(memoryview(data)[start:stop])
        # JSON lines hold no carriage return: the two-byte search runs only on a hint.
        if not self._crlf and data.find(b"\r", start, stop) >= 0:
            self._crlf = data.find(b"\r\n", start, stop) >= 0

    def read_lines(self, data: bytes, start: int, stop: int) -> None:
        """Read the lines of `data[start:stop]` (`stop` at a newline), none the file's last."""
        self.number = _read_lines(self.reader, data, start, stop, self.operations, self.number)
        self.covered(data, start, stop + 1)

    def trace(self, path: Path, data: bytes, start: int) -> Trace:
        """The trace, given the file's bytes after the lines read (`data[start:]`): the
        lines left, the last of which is the file's last line."""
        reader, operations = self.reader, self.operations
        torn_line: int | None = None
        if start < len(data):  # else the header is the only line
            terminated = data.endswith(b"\n")
            end = len(data) - 1 if terminated else len(data)
            newline = data.rfind(b"\n", start, end)
            if newline >= 0:
                self.read_lines(data, start, newline)
            last_start = start if newline < 0 else newline + 1
            # Only the last line may be torn (a crash mid-write), and only it may be the
            # footer (`read` refuses anything after one).
            self.number += 1
            item = reader.read(data[last_start:end], self.number, torn_possible=not terminated)
            if type(item) is Operation:
                operations.append(item)
            elif item is None:
                torn_line = self.number
        footer = reader.footer
        if footer is not None:  # on the last line, which starts where its digest stops
            reader.check_footer(
                len(operations),
                self._digest.hexdigest(),
                crlf=lambda: self._crlf,
                line=self.number,
            )
        else:
            for operation in operations:
                reader.check_fingerprint(operation)
        return Trace(path, reader.header, operations, footer, torn_line)


def _read_lines(
    reader: TraceLines,
    data: bytes,
    start: int,
    stop: int,
    operations: list[Operation],
    number: int,
) -> int:
    """Read the lines of `data[start:stop]` (one, empty, when `start == stop`), the first
    numbered `number + 1`, appending their operations; the number of the last one read.

    A block of about `_BLOCK_BYTES` is split into lines at a time, and its lines are
    parsed `_PARSED_TOGETHER` at a time.
    """
    read, accept, append = reader.read, reader.accept, operations.append
    while True:
        cut = stop
        if start + _BLOCK_BYTES < stop:
            cut = data.rfind(b"\n", start, start + _BLOCK_BYTES)
            if cut < 0:  # one line longer than a block
                cut = data.find(b"\n", start + _BLOCK_BYTES, stop)
                cut = stop if cut < 0 else cut
        block = data[start:cut].split(b"\n")
        for first in range(0, len(block), _PARSED_TOGETHER):
            lines = block[first : first + _PARSED_TOGETHER]
            objects = parse_lines(lines)
            if objects is None:  # one needs its own parse, and maybe its own message
                items = [read(line, n) for n, line in enumerate(lines, number + 1)]
            else:
                items = [accept(obj, n) for n, obj in enumerate(objects, number + 1)]
            number += len(lines)
            for item in items:
                if type(item) is Operation:
                    append(item)
        if cut == stop:
            return number
        start = cut + 1


def check_digest(path: Path, data: bytes) -> bool:
    """Check trace bytes against their footer without decoding the operations between.

    For a copy that must be vouched for before it is kept (a trace fetched from object
    storage): True when the last line is a footer whose operation count and digest
    match (`TraceLines.check_footer`); False when the last line is no footer (an
    incomplete trace, whose fingerprints `read_trace` checks one by one when it is
    read). Raises `TraceFormatError` (naming `path` and the line) when the header does
    not read or the footer does not match.
    """
    if not data:
        raise TraceFormatError(
            "the file is empty, so it has no header; it is not a trace", path=path
        )
    header_end = data.find(b"\n")
    if header_end < 0:
        TraceLines(path, data)  # a lone header line: refused if it does not read
        return False
    reader = TraceLines(path, data[:header_end])
    body_end = len(data) - 1 if data.endswith(b"\n") else len(data)
    footer_start = data.rfind(b"\n", 0, body_end) + 1
    if footer_start <= header_end:
        return False  # the header alone
    line = data.count(b"\n", 0, footer_start) + 1
    last = reader.read(data[footer_start:body_end], line, torn_possible=body_end == len(data))
    if not isinstance(last, TraceFooter):
        return False
    covered = memoryview(data)[:footer_start]
    reader.check_footer(
        line - 2,  # every line between the header and the footer is one operation
        hashlib.sha256(covered).hexdigest(),
        crlf=lambda: b"\r\n" in data[:footer_start],
        line=line,
    )
    return True


class TraceLines:
    """A trace's lines decoded one at a time, under `read_trace`'s rules and messages.

    For readers that stream a trace without keeping its operations (the debugger
    opens a trace at once and checks it in the background); `read_trace` reads
    through it too. Built from the header line (a bad one is a `TraceFormatError`
    at line 1). Then:

    - `read(line, number)`, for every following line in order, applies the rules
      between lines (a repeated `logical_id`, a second footer, an operation after
      it) and returns the operation or the footer (kept in `footer`), or None for
      a torn last line set aside (only when `torn_possible`);
    - `operation(line, number)` decodes one operation line on its own;
    - `check_footer` and `check_fingerprint` are the integrity checks of a
      complete and of an incomplete trace.

    Every problem is a `TraceFormatError` naming the file and the line.
    """

    __slots__ = ("_seen_ids", "footer", "header", "path")

    def __init__(self, path: Path, header_line: bytes) -> None:
        self.path = path
        try:
            self.header: TraceHeader = decode_header(parse_line(header_line))
        except InvalidLine as error:
            raise TraceFormatError(str(error), path=path, line=1) from None
        self.footer: TraceFooter | None = None
        self._seen_ids: set[int] = set()

    def read(
        self, line: bytes, number: int, *, torn_possible: bool = False
    ) -> Operation | TraceFooter | None:
        """The next line (number `number`, without its newline) under the rules.

        `torn_possible`: it is the last line and has no newline, so if it does not
        parse and no footer came before, it is a write torn by a crash (None).
        """
        try:
            obj = parse_line(line)
        except InvalidLine as error:
            if torn_possible and self.footer is None:
                return None
            raise TraceFormatError(str(error), path=self.path, line=number) from None
        return self.accept(obj, number)

    def accept(self, obj: dict[str, Any], number: int) -> Operation | TraceFooter:
        """`read` of a line already parsed (by `parse_line` or `parse_lines`)."""
        try:
            kind = obj.get("kind")
            if kind == "operation":
                if self.footer is not None:
                    raise InvalidLine("an operation follows the footer")
                operation = decode_operation(obj, number, self.header.format_version)
                if operation.logical_id in self._seen_ids:
                    raise InvalidLine(f"logical_id {operation.logical_id} appears twice")
                self._seen_ids.add(operation.logical_id)
                return operation
            if kind == "footer":
                if self.footer is not None:
                    raise InvalidLine("a second footer")
                self.footer = decode_footer(obj, self.header.format_version)
                return self.footer
            raise InvalidLine(
                f'kind must be "operation" or "footer" after the header, found {kind!r}'
            )
        except InvalidLine as error:
            raise TraceFormatError(str(error), path=self.path, line=number) from None

    def check(
        self, line: bytes | bytearray, number: int, *, torn_possible: bool = False
    ) -> Operation | TraceFooter | None:
        """`read`, for a pass that checks a trace without keeping it: an operation line
        longer than `CHECKED_VALUE_BYTES` that returned, laid out as the writer writes
        lines, has its value checked without being decoded into objects (`reads_strictly`:
        a value of many objects then costs little more memory than its text), and the
        operation returned holds `None` in its value's place. Any line this cannot vouch
        for is read by `read`, so every problem has `read`'s message."""
        span = self.value_span(line, line, len(line)) if len(line) > CHECKED_VALUE_BYTES else None
        if span is not None:
            start, after = span
            try:
                value = str(memoryview(line)[start:after], "utf-8")
            except UnicodeDecodeError:
                value = None
            if value is not None and reads_strictly(value, max_depth=_VALUE_MAX_DEPTH):
                del value
                light = bytes(line[:start]) + b"null" + bytes(line[after:])
                with contextlib.suppress(TraceFormatError):
                    return self.read(light, number, torn_possible=torn_possible)
        return self.read(bytes(line), number, torn_possible=torn_possible)

    @staticmethod
    def value_span(
        head: bytes | bytearray, tail: bytes | bytearray, size: int
    ) -> tuple[int, int] | None:
        """Where the returned value of an operation line of `size` bytes lies, `(start,
        end)` within the line, judged from its first bytes `head` and its last bytes
        `tail` as the writer lays lines out; None when they do not show one.

        A line read with the value replaced by `null` then holds everything else; if
        that line does not read, the value was not where the layout says (the caller
        reads the whole line).
        """
        marker, after = head.find(_RETURNED_VALUE), tail.rfind(_AFTER_OUTCOME)
        if marker < 0 or after < 0:
            return None
        start, end = marker + len(_RETURNED_VALUE), size - len(tail) + after
        return (start, end) if start < end else None

    def operation(self, line: bytes, number: int) -> Operation:
        """Decode operation line `number` on its own (no rule between lines applies)."""
        try:
            return decode_operation(parse_line(line), number, self.header.format_version)
        except InvalidLine as error:
            raise TraceFormatError(str(error), path=self.path, line=number) from None

    def check_footer(
        self, operation_count: int, digest: str, *, crlf: Callable[[], bool], line: int
    ) -> None:
        """Refuse a complete trace whose footer does not match what precedes it.

        `digest` is the SHA-256 (hex) of every byte before the footer line;
        `crlf()` says whether those bytes hold a CRLF line ending (asked only on a
        mismatch); `line` is the footer's line number.
        """
        footer = self.footer
        if footer is None:
            raise ValueError("check_footer needs the footer: read the lines first")
        path = self.path
        remedy = (
            "the trace was changed after it was written. If you edited it on purpose, delete "
            "its last line (the footer): it is then read as an incomplete trace whose "
            "fingerprints are checked one by one"
        )
        if footer.operation_count != operation_count:
            raise TraceFormatError(
                f"the footer counts {footer.operation_count} operations but the trace holds "
                f"{operation_count}; {remedy}",
                path=path,
                line=line,
            )
        if digest != footer.digest and crlf():
            raise TraceFormatError(
                "the footer digest does not match because the line endings were converted to "
                "CRLF (by git's autocrlf?); traces are byte-exact: restore the original file "
                'and add "*.trp -text" to .gitattributes',
                path=path,
                line=line,
            )
        if digest != footer.digest:
            raise TraceFormatError(
                f"the footer digest {footer.digest[:16]}... does not match the content "
                f"({digest[:16]}...); {remedy}",
                path=path,
                line=line,
            )

    def check_fingerprint(self, operation: Operation) -> None:
        """Refuse an operation (of an incomplete trace) whose inputs do not hash to its
        fingerprint."""
        actual = fingerprint(operation.inputs)
        if actual != operation.identity.fingerprint:
            raise TraceFormatError(
                f"operation {operation.logical_id} ({operation.effect}) has fingerprint "
                f"{operation.identity.fingerprint[:16]}... but its inputs hash to "
                f"{actual[:16]}...; the inputs were edited without updating the fingerprint. "
                "Set fingerprint to the SHA-256 of the canonical JSON of the inputs, or "
                "re-record the trace",
                path=self.path,
                line=operation.line,
            )
