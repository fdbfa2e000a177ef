"""Finding traces in a folder: which requests called an effect, failed, carried a value.

    for match in toolreplay.find_traces("traces/", effect="billing.refund.create",
                                        where=["$.outcome.status == error"]):
        print(match.path, match.metadata.get("request_id"))

The search streams: one file at a time, read in blocks, and no line is decoded
unless cheap byte tests say it can match. A trace line is written by one
deterministic encoder (RFC 0003 §1.2), so an effect's name, an object key or a
string value always has the same bytes in it: the effect `crm.customer.get` can
only be on a line holding `"namespace":"crm","name":"customer.get"`, and
`$.inputs.email == "a@b.c"` only on one holding `"email":` and `"a@b.c"`. Lines
without those bytes are skipped by `bytes.find`; the few that have them are
decoded and checked exactly. Headers and footers are decoded only for traces
that match. RFC 0008 §4 states the query language and what each part costs.

The search reads traces leniently: it never verifies digests or fingerprints
(`read_trace` does, when a match is opened). A file that does not start with a
trace header, or that cannot be read at all (a value nested too deeply to decode,
too large for memory, permissions), is listed in `unreadable` with the reason and
skipped; the other files are still searched.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeVar, cast

from toolreplay.capturing.names import (
    METADATA_KEY,
    TRACE_SUFFIX,
    stamp_of,
    stamp_time,
    time_stamp,
    valid_stamp,
)
from toolreplay.durations import AGE_EXAMPLES, parse_age
from toolreplay.effect_names import effect_name_problem
from toolreplay.errors import TraceSearchError
from toolreplay.jsonpath import JsonPath, Segment, read_path
from toolreplay.portable import JsonValue, canonical_json

__all__ = [
    "OPERATORS",
    "Condition",
    "FoundTrace",
    "TraceSearch",
    "find_traces",
    "parse_condition",
    "parse_time",
    "skip_reason",
]

Operator = Literal["==", "!=", "<", "<=", ">", ">=", "contains", "matches", "exists"]
OPERATORS: tuple[Operator, ...] = (
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "contains",
    "matches",
    "exists",
)
"""What `--where PATH OP VALUE` can test (`exists` takes no VALUE)."""

_Ordered = TypeVar("_Ordered", float, str)
_BLOCK = 8 * 1024 * 1024  # bytes read at a time: whole typical traces, bounded memory
_FIRST_READ = 64 * 1024  # larger than most traces of a request (one read suffices)
_HEADER_START = b'{"kind":"header"'
_FOOTER_START = b'{"kind":"footer"'


def _encode(value: JsonValue) -> bytes:
    # The trace writer's encoding of a value (RFC 0003 §1.2), so its bytes can be found.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def skip_reason(error: Exception) -> str:
    """Why a file had to be skipped, in words, from whatever reading it raised: `find` and
    `scan` read many files, and one that cannot be read is reported, never raised."""
    if isinstance(error, RecursionError):
        return "a value nests too deeply to read (RecursionError)"
    if isinstance(error, MemoryError):
        return "too large to read in memory (MemoryError)"
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text: byte {error.start} cannot be decoded"
    if isinstance(error, OSError):
        return f"cannot read it: {error.strerror or error}"
    return f"cannot read it: {type(error).__name__}: {error}"


@dataclass(frozen=True, slots=True)
class Condition:
    """`PATH OP VALUE`: on an operation, or on the header (`$.metadata...`) or footer
    (`$.ending...`)."""

    text: str
    target: Literal["operation", "metadata", "ending"]
    path: JsonPath
    """The path into the operation, metadata or ending (`$.inputs.x`, `$.request_id`)."""
    operator: Operator
    value: JsonValue
    needles: tuple[bytes, ...]
    """Byte strings every operation line satisfying the condition holds."""
    pattern: re.Pattern[str] | None = None

    def holds(self, document: JsonValue) -> bool:
        """Whether the condition holds for `document` (an operation, metadata or ending)."""
        values = self.path.select(document)
        if self.operator == "exists":
            return bool(values)
        if self.operator == "!=":
            return bool(values) and not any(_equal(found, self.value) for found in values)
        return any(self._holds_for(found) for found in values)

    def _holds_for(self, found: JsonValue) -> bool:
        wanted = self.value
        match self.operator:
            case "==":
                return _equal(found, wanted)
            case "contains":
                if isinstance(found, str):
                    return isinstance(wanted, str) and wanted in found
                if isinstance(found, list):
                    return any(_equal(item, wanted) for item in found)
                if isinstance(found, dict):
                    return isinstance(wanted, str) and wanted in found
                return False
            case "matches":
                assert self.pattern is not None
                return isinstance(found, str) and self.pattern.search(found) is not None
            case _:
                return _ordered(found, wanted, self.operator)


def _is_number(value: JsonValue) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _equal(found: JsonValue, wanted: JsonValue) -> bool:
    if _is_number(found) and _is_number(wanted):
        return found == wanted
    return type(found) is type(wanted) and canonical_json(found) == canonical_json(wanted)


def _ordered(found: JsonValue, wanted: JsonValue, operator: str) -> bool:
    if _is_number(found) and _is_number(wanted):
        return _compare(cast(float, found), cast(float, wanted), operator)
    if isinstance(found, str) and isinstance(wanted, str):
        return _compare(found, wanted, operator)
    return False


def _compare(left: _Ordered, right: _Ordered, operator: str) -> bool:
    if operator == "<":
        return left < right
    if operator == "<=":
        return left <= right
    if operator == ">":
        return left > right
    return left >= right


def _value(text: str) -> JsonValue:
    """VALUE as JSON if it reads as JSON (42, true, null, "x"), else as the text itself."""
    try:
        return cast(JsonValue, json.loads(text))
    except ValueError:
        return text


def parse_condition(text: str) -> Condition:
    """`"$.inputs.customer_id == 42"` (PATH OP VALUE; `exists` has no VALUE) as a `Condition`.

    Paths address an operation as its trace line does (`$.namespace`, `$.name`,
    `$.inputs...`, `$.outcome.status`, `$.outcome.value...`,
    `$.outcome.error.type`, `$.lane`), or the header's metadata (`$.metadata...`),
    or the footer's ending (`$.ending.status`, `$.ending.error_type`). Raises
    `TraceSearchError` naming the part that does not read.
    """
    where = f"--where {text!r}"
    if not text.strip().startswith("$"):
        raise TraceSearchError(
            f"{where}: a condition starts with a JSON path such as $.inputs.customer_id, "
            "$.outcome.status or $.metadata.request_id"
        )
    path, end = read_path(text.strip(), what="--where path", error=TraceSearchError)
    rest = text.strip()[end:].strip()
    operator_text, _, value_text = rest.partition(" ")
    if operator_text not in OPERATORS:
        raise TraceSearchError(
            f"{where}: after the path comes an operator, one of {', '.join(OPERATORS)}; "
            f"got {operator_text or 'nothing'!r}"
        )
    operator: Operator = operator_text
    value_text = value_text.strip()
    if operator == "exists":
        if value_text:
            raise TraceSearchError(f"{where}: exists takes no value; got {value_text!r}")
    elif not value_text:
        raise TraceSearchError(f"{where}: {operator} needs a value after it")
    value = None if operator == "exists" else _value(value_text)
    pattern: re.Pattern[str] | None = None
    if operator == "matches":
        try:
            pattern = re.compile(value_text)
        except re.error as error:
            raise TraceSearchError(f"{where}: not a regular expression: {error}") from None
        value = value_text
    target: Literal["operation", "metadata", "ending"] = "operation"
    if path.segments[:1] in ((("key", "metadata"),), (("key", "ending"),)):
        target = cast(Literal["metadata", "ending"], path.segments[0][1])
        path = JsonPath(path.text, path.segments[1:])
    needles = _needles(path.segments, operator, value) if target == "operation" else ()
    return Condition(text.strip(), target, path, operator, value, needles, pattern)


def _needles(
    segments: Sequence[Segment], operator: Operator, value: JsonValue
) -> tuple[bytes, ...]:
    """Bytes a line must hold to satisfy the condition (a necessary test, never sufficient)."""
    # A member's key, at one level or found by descent, is written `"key":` in the line.
    keys = [name for kind, name in segments if kind in ("key", "descend_key")]
    needles = [_encode(key) + b":" for key in keys]
    last_kind, last_name = segments[-1] if segments else ("all", "*")
    last = last_name if last_kind in ("key", "descend_key") else None
    # A float, 0 (which -0.0 equals) or a huge int may be spelled otherwise in the file.
    exact = not isinstance(value, dict | list | float) and not (
        isinstance(value, int) and not isinstance(value, bool) and not 0 < abs(value) < 10**15
    )
    if operator == "==" and isinstance(last, str) and exact:
        # The encoder writes `"key":value` with nothing between: the most selective test.
        needles.insert(0, _encode(last) + b":" + _encode(value))
    if operator == "==" and isinstance(value, str):
        needles.append(_encode(value))
    elif operator == "contains" and isinstance(value, str) and value:
        needles.append(
            _encode(value)[1:-1]
        )  # escaping is per character: same inside a longer string
    elif operator == "==" and (value is None or isinstance(value, bool)):
        needles.append(_encode(value))
    elif operator == "==" and isinstance(value, int) and 0 < abs(value) < 10**15:
        needles.append(str(value).encode())  # a float spelling of it (42.0) holds these digits too
    return tuple(dict.fromkeys(needles))


def parse_time(text: str, *, now: datetime | None = None) -> datetime:
    """An ISO 8601 date or time (UTC unless it says otherwise), or an age ago (`30m`, `2h`,
    `7d`: `toolreplay.durations.parse_age`)."""
    now = now or datetime.now(UTC)
    age = parse_age(text)
    if age is not None:
        return now - age
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise TraceSearchError(
            f"{text!r} is neither a date or time (2026-12-01, 2026-12-01T08:30, "
            f"2026-12-01T08:30:00+02:00) nor an age ago ({AGE_EXAMPLES})"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


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
        if not self.directory.is_dir():
            problem = "is not a folder" if self.directory.exists() else "does not exist"
            raise TraceSearchError(f"{self.directory}: {problem}; give the folder of the traces")
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
            needles.append(_encode(namespace) + b',"name":' + _encode(name))
            needles[-1] = b'"namespace":' + needles[-1]
        for condition in self._operation_conditions:
            needles.extend(condition.needles)
        # The longest needle finds candidate lines (`bytes.find` skips further with a
        # longer one, and it is usually the rarest); the rest are checked on each candidate.
        needles = sorted(dict.fromkeys(needles), key=len, reverse=True)
        self._needles = tuple(needles) or (b'{"kind":"operation"',)
        self._scan_operations = self._effect_key is not None or bool(self._operation_conditions)

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


def find_traces(
    directory: str | os.PathLike[str],
    *,
    effect: str | None = None,
    where: Sequence[str | Condition] = (),
    since: datetime | str | None = None,
    until: datetime | str | None = None,
) -> TraceSearch:
    """Search the traces below `directory`; iterate the result for matches, newest first.

    - `effect`: only traces with an operation of this effect (`crm.customer.get`);
    - `where`: conditions `PATH OP VALUE` (see `parse_condition`); operation
      conditions must all hold for one operation (of `effect`, if given);
    - `since` / `until`: when the request started (a captured trace's name, else
      the file's modification time), a datetime or text for `parse_time`.

    Raises `TraceSearchError` for a malformed query or a folder that does not exist.
    """
    conditions = tuple(
        item if isinstance(item, Condition) else parse_condition(item) for item in where
    )
    return TraceSearch(
        Path(directory),
        effect=effect,
        conditions=conditions,
        since=parse_time(since) if isinstance(since, str) else since,
        until=parse_time(until) if isinstance(until, str) else until,
    )
