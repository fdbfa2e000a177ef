"""Scanning a folder of traces for a query: each file read in blocks, lines decoded only
when the query's byte tests say they can match (see the package's notes)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from toolreplay.capturing.names import (
    METADATA_KEY,
    TRACE_SUFFIX,
    stamp_of,
    stamp_time,
    time_stamp,
    valid_stamp,
)
from toolreplay.errors import TraceSearchError
from toolreplay.files import skip_reason
from toolreplay.names import effect_name_problem
from toolreplay.portable import JsonValue
from toolreplay.search.query import Condition, encoded

__all__ = ["FoundTrace", "TraceSearch"]

_BLOCK = 8 * 1024 * 1024  # bytes read at a time: whole typical traces, bounded memory
_FIRST_READ = 64 * 1024  # larger than most traces of a request (one read suffices)
_HEADER_START = b'{"kind":"header"'
_FOOTER_START = b'{"kind":"footer"'


@dataclass(frozen=True, slots=True)
class FoundTrace:
    """A trace that matched: what its header and footer say, and which operations matched."""

    path: Path
    started: datetime
    """When the request started (a captured trace's name), else the file's modification time."""
    metadata: dict[str, JsonValue]
    complete: bool
    operation_count: int
    ending: dict[str, JsonValue] | None
    """The footer's `{"status", "error_type", "message"}`, None for an incomplete trace."""
    matching: tuple[int, ...]
    """`logical_id`s of the operations that matched (empty when the query has no operation
    condition)."""
    size: int

    def metadata_text(self) -> str:
        """The metadata on one line for people (`request_id=r-17 route=/refund`), without
        Tool Replay's own entries (capture's, `toolreplay.redaction`)."""
        return " ".join(
            f"{key}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
            for key, value in self.metadata.items()
            if key != METADATA_KEY and not key.startswith("toolreplay.")
        )

    def relative_path(self, root: Path) -> str:
        """`path` relative to `root` (the folder searched), or all of it when outside."""
        # By text first: `Path.relative_to` costs more than formatting the rest of a line.
        text, prefix = os.fspath(self.path), os.path.join(os.fspath(root), "")
        if text.startswith(prefix):
            return text[len(prefix) :]
        try:
            return str(self.path.relative_to(root))
        except ValueError:
            return text

    def to_dict(self, root: Path) -> dict[str, JsonValue]:
        """The `--format json` entry; `path` relative to `root` (the folder searched)."""
        return {
            "path": self.relative_path(root),
            "started": self.started.isoformat().replace("+00:00", "Z"),
            "metadata": self.metadata,
            "complete": self.complete,
            "operation_count": self.operation_count,
            "ending": self.ending,
            "matching_operations": list(self.matching),
            "bytes": self.size,
        }


@dataclass
class TraceSearch:
    """One search over a folder: iterate it for the matches, newest first.

    After (or during) iteration, `scanned` counts the trace files read and
    `unreadable` lists `(path, reason)` of the files (or folders) skipped: not traces,
    or not readable to the end (whatever reading one raised, it is skipped, not raised).
    """

    directory: Path
    effect: str | None = None
    conditions: tuple[Condition, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    block_size: int = _BLOCK
    """Files at least this large are read in blocks of this size, cut at line ends."""
    scanned: int = 0
    unreadable: list[tuple[Path, str]] = field(default_factory=lambda: list[tuple[Path, str]]())

    def __post_init__(self) -> None:
        self._check_source()
        self._operation_conditions = tuple(c for c in self.conditions if c.target == "operation")
        self._effect_key: tuple[str, str] | None = None
        needles: list[bytes] = []
        if self.effect is not None:
            namespace, _, name = self.effect.partition(".")
            problem = effect_name_problem(namespace, name) if name else "it has no dot"
            if problem is not None:
                raise TraceSearchError(
                    f"--effect {self.effect!r} is not an effect name such as "
                    f"crm.customer.get ({problem})"
                )
            self._effect_key = (namespace, name)
            needles.append(b'"namespace":' + encoded(namespace) + b',"name":' + encoded(name))
        for condition in self._operation_conditions:
            needles.extend(condition.needles)
        # The longest needle finds candidate lines (`bytes.find` skips further with a
        # longer one, and it is usually the rarest); the rest are checked on each candidate.
        needles = sorted(dict.fromkeys(needles), key=len, reverse=True)
        self._needles = tuple(needles) or (b'{"kind":"operation"',)
        self._scan_operations = self._effect_key is not None or bool(self._operation_conditions)

    def _check_source(self) -> None:
        if not self.directory.is_dir():
            problem = "is not a folder" if self.directory.exists() else "does not exist"
            raise TraceSearchError(f"{self.directory}: {problem}; give the folder of the traces")

    @property
    def operation_needles(self) -> tuple[bytes, ...]:
        """Bytes every operation line that can match holds (empty: operations are not
        searched, the query has no effect and no operation condition)."""
        return self._needles if self._scan_operations else ()

    def operation_matches(self, line: bytes) -> int | None:
        """The `logical_id` of the operation on `line` if it satisfies the query exactly."""
        return self._operation_matches(line)

    def files(self) -> list[tuple[str, str, str]]:
        """`(stamp, name, path)` of the `.trp` files below the folder (hidden folders
        skipped), newest first. `stamp` is the time as a capture name writes it (its own,
        else the file's modification time), so that text order is time order."""
        found: list[tuple[str, str, str]] = []
        pending = [os.fspath(self.directory)]
        while pending:
            folder = pending.pop()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        name = entry.name
                        if name.startswith("."):
                            continue
                        if entry.is_dir(follow_symlinks=False):
                            pending.append(entry.path)
                        elif name.endswith(TRACE_SUFFIX) and entry.is_file():
                            stamp = stamp_of(name)
                            if stamp is None or not valid_stamp(stamp):
                                modified = datetime.fromtimestamp(entry.stat().st_mtime, UTC)
                                stamp = time_stamp(modified)
                            found.append((stamp, name, entry.path))
            except OSError as error:  # a folder that cannot be listed: the rest still can
                self.unreadable.append((Path(folder), skip_reason(error)))
        found.sort(reverse=True)
        return found

    def __iter__(self) -> Iterator[FoundTrace]:
        yield from self.scan(self.selected_files())

    def selected_files(self) -> list[tuple[str, str]]:
        """`(stamp, path)` of the files `--since` and `--until` select, newest first: what
        iterating the search scans."""
        since = None if self.since is None else time_stamp(self.since)
        until = None if self.until is None else time_stamp(self.until)
        return [
            (stamp, path)
            for stamp, _, path in self.files()
            if (since is None or stamp >= since) and (until is None or stamp < until)
        ]

    def scan(self, files: Sequence[tuple[str, str]]) -> Iterator[FoundTrace]:
        """The matches among `files` (a slice of `selected_files()`), in their order;
        `scanned` and `unreadable` count them as they are read."""
        flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
        for stamp, path in files:
            try:
                descriptor = os.open(path, flags)
            except OSError as error:
                self.unreadable.append((Path(path), skip_reason(error)))
                continue
            self.scanned += 1
            try:
                match = self._scan(descriptor, path, stamp)
            except Exception as error:  # one bad file (too deep, too large, ...) is skipped
                self.unreadable.append((Path(path), skip_reason(error)))
                continue
            finally:
                os.close(descriptor)
            if match is not None:
                yield match

    def _scan(self, descriptor: int, path: str, stamp: str) -> FoundTrace | None:
        # Most traces are smaller than the first read: one `read`, no `fstat`.
        first = min(_FIRST_READ, self.block_size)
        data = os.read(descriptor, first)
        if len(data) == first:  # perhaps more
            size = os.fstat(descriptor).st_size
            if size >= self.block_size:
                os.lseek(descriptor, 0, os.SEEK_SET)
                return self._scan_blocks(descriptor, path, stamp)
            # Up to the end, also of a file growing as it is read.
            while more := os.read(descriptor, max(size + 1 - len(data), first)):
                data += more
        return self.judge(data, path, stamp)

    def judge(self, data: bytes, path: str, stamp: str) -> FoundTrace | None:
        """The match that the whole trace `data` (found at `path`, time `stamp`) is, if it
        is one; a file that is not a trace is added to `unreadable`."""
        # Newlines are counted only for a match.
        if not data.startswith(_HEADER_START):
            self.unreadable.append((Path(path), "it does not start with a trace header"))
            return None
        cut = data.rfind(b"\n") + 1
        matching: list[int] = []
        if self._scan_operations:
            if data.find(self._needles[0], 0, cut) == -1:  # most files: one search, done
                return None
            matching = list(self._matching_operations(data, cut))
            if not matching:
                return None
        first_line = data[: data.find(b"\n")] if cut else data
        last_line = data[cut:] or data[data.rfind(b"\n", 0, cut - 1) + 1 : cut - 1]
        return self._summary(
            path,
            stamp,
            first_line,
            last_line,
            lambda: data.count(b"\n", 0, cut),
            len(data),
            matching,
        )

    def _scan_blocks(self, descriptor: int, path: str, stamp: str) -> FoundTrace | None:
        """A large trace, in bounded blocks cut at line ends."""
        first_line = b""
        last_line = b""
        lines = 0
        size = 0
        matching: list[int] = []
        carry = b""
        while True:
            block = os.read(descriptor, self.block_size)
            size += len(block)
            if not block:
                last_line = carry or last_line  # a torn last line is not counted
                break
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            whole, carry = data[:cut], data[cut:]
            if not whole:
                continue
            if not first_line:
                if not whole.startswith(_HEADER_START):
                    self.unreadable.append((Path(path), "it does not start with a trace header"))
                    return None
                first_line = whole[: whole.index(b"\n")]
            lines += whole.count(b"\n")
            last_line = whole[whole.rfind(b"\n", 0, len(whole) - 1) + 1 : -1]
            if self._scan_operations:
                matching.extend(self._matching_operations(whole, len(whole)))
        if not first_line:
            self.unreadable.append((Path(path), "it does not start with a trace header"))
            return None
        if self._scan_operations and not matching:
            return None
        return self._summary(path, stamp, first_line, last_line, lambda: lines, size, matching)

    def _matching_operations(self, data: bytes, stop: int) -> Iterator[int]:
        """The `logical_id`s of matching operations on the complete lines of `data[:stop]`."""
        first, *others = self._needles
        position = data.find(first, 0, stop)
        while position != -1:
            start = data.rfind(b"\n", 0, position) + 1
            end = data.find(b"\n", position, stop)
            line = data[start:end]
            if all(needle in line for needle in others):
                logical_id = self._operation_matches(line)
                if logical_id is not None:
                    yield logical_id
            position = data.find(first, end, stop)

    def _operation_matches(self, line: bytes) -> int | None:
        try:
            decoded: object = json.loads(line)
        except ValueError:
            return None  # a torn last line: not an operation anyone completed
        if not isinstance(decoded, dict):
            return None
        operation = cast(dict[str, JsonValue], decoded)
        if operation.get("kind") != "operation":
            return None
        if (
            self._effect_key is not None
            and (
                operation.get("namespace"),
                operation.get("name"),
            )
            != self._effect_key
        ):
            return None
        if not all(condition.holds(operation) for condition in self._operation_conditions):
            return None
        logical_id = operation.get("logical_id")
        return logical_id if isinstance(logical_id, int) else None

    def _summary(
        self,
        path: str,
        stamp: str,
        first_line: bytes,
        last_line: bytes,
        count_lines: Callable[[], int],
        size: int,
        matching: list[int],
    ) -> FoundTrace | None:
        try:
            header: object = json.loads(first_line)
        except ValueError:
            self.unreadable.append((Path(path), "its header line is not JSON"))
            return None
        found = (
            cast(dict[str, object], header).get("metadata") if isinstance(header, dict) else None
        )
        if not isinstance(found, dict):
            self.unreadable.append((Path(path), "its header has no metadata object"))
            return None
        metadata = cast(dict[str, JsonValue], found)
        ending: dict[str, JsonValue] | None = None
        operation_count: object = None
        if last_line.startswith(_FOOTER_START):
            try:
                footer: object = json.loads(last_line)
            except ValueError:
                footer = None
            fields = cast(dict[str, object], footer) if isinstance(footer, dict) else {}
            if isinstance(fields.get("ending"), dict):
                ending = cast(dict[str, JsonValue], fields["ending"])
                operation_count = fields.get("operation_count")
        if not isinstance(operation_count, int):  # incomplete: the lines after the header
            operation_count = count_lines() - 1
        for condition in self.conditions:
            if condition.target == "metadata" and not condition.holds(metadata):
                return None
            if condition.target == "ending" and (ending is None or not condition.holds(ending)):
                return None
        started = stamp_time(stamp)
        assert started is not None  # `files` only gives valid stamps
        return FoundTrace(
            path=Path(path),
            started=started,
            metadata=metadata,
            complete=ending is not None,
            operation_count=max(operation_count, 0),
            ending=ending,
            matching=tuple(matching),
            size=size,
        )
