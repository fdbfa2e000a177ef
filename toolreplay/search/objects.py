"""Searching the traces in object storage (`s3://bucket/prefix`...): the query as SQL,
run by DuckDB over the JSON lines of the objects.

The keys come from one listing (`objectstore.list_traces`: only the `date=` prefixes
of the days `--since`/`--until` reach). The listed objects are then read in batches,
newest first: each batch fetched whole with concurrent GETs (`fetch_objects`), then
one DuckDB query over its bytes in memory (`FetchedFiles`, a file system registered
with the connection), one row per line (`read_json_objects`, which hands each line's
text back unchanged, so the byte tests of the local scanner are SQL `contains` on the
same bytes). A batch is fetched only when the matches before it have been taken, so
`--limit` stops the reading, and only one batch is held at a time.

The query keeps a file's header and footer lines and the operation lines that pass
the byte tests, with each file's line count and bytes; Python then checks the kept
operations exactly with the scanner's own code (`TraceSearch.operation_matches`) and
builds each match with its `_summary`, so both searches give the same answers by
construction. A file whose rows cannot say for certain what the local scanner would (a
line that is not JSON, a blank line, a last line without its newline) is judged from
its fetched bytes by the local scanner's code (`TraceSearch.judge`). An object deleted
between the listing and the fetch is skipped with the reason; any other failure of the
store ends the search with `ObjectStoreError`.

DuckDB, fsspec and obstore are imported here only, when a URL is searched.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from toolreplay.capturing.names import stamp_of, time_stamp, valid_stamp
from toolreplay.errors import ObjectStoreDependencyError, TraceSearchError
from toolreplay.files import skip_reason
from toolreplay.objectstore import cache
from toolreplay.objectstore.fetching import fetch_objects
from toolreplay.objectstore.listing import list_traces
from toolreplay.objectstore.locations import ObjectLocation
from toolreplay.search.scanner import FoundTrace, TraceSearch

if TYPE_CHECKING:
    from toolreplay.search.fetched_files import FetchedFiles

__all__ = ["ObjectTraceSearch", "trace_lines_sql"]

_HEADER_START = '{"kind":"header"'
_FOOTER_START = '{"kind":"footer"'
_INSTALL = "install it with: pip install 'toolreplay[object-store]'"
_GONE = "it was deleted after the listing (not found)"
# A batch: fetched at once, queried at once, then let go (memory stays bounded).
_FIRST_BATCH = 64
_BATCH_OBJECTS = 1024
_BATCH_BYTES = 64 * 1024 * 1024


def trace_lines_sql(needles: Sequence[bytes]) -> tuple[str, list[object]]:
    """The query over `read_json_objects` of the list parameter `$files`, and its
    parameters after `$files`: per file, its line count, valid lines and their bytes,
    and the kept lines (position, text): header, footer and, when `needles` are given,
    the operation lines holding every needle. Without needles no operation is kept."""
    parameters: list[object] = [_HEADER_START, _FOOTER_START]
    keep = "starts_with(json, $2) OR starts_with(json, $3)"
    if needles:
        tests: list[str] = []
        for needle in needles:
            parameters.append(needle.decode("utf-8", "surrogateescape"))
            tests.append(f"contains(json, ${len(parameters) + 1})")
        keep += f" OR ({' AND '.join(tests)})"
    sql = f"""
        SELECT filename,
               min(ordinality) AS first,
               max(ordinality) AS last,
               count(*) AS lines,
               count(json) AS valid,
               coalesce(sum(strlen(json::VARCHAR)), 0) AS valid_bytes,
               list(struct_pack(position := ordinality, line := json::VARCHAR)
                    ORDER BY ordinality) FILTER (WHERE {keep}) AS kept
        FROM read_json_objects($1, format = 'newline_delimited', filename = true,
                               ignore_errors = true) WITH ORDINALITY
        GROUP BY filename
    """
    return sql, parameters


@dataclass(frozen=True, slots=True)
class _Listed:
    stamp: str
    key: str
    relative: str
    size: int


def _batches(listed: Sequence[_Listed]) -> Iterator[list[_Listed]]:
    """`listed` in consecutive batches: the first small (a `--limit` answers after
    little reading), each next one twice as many up to `_BATCH_OBJECTS`, and never
    over `_BATCH_BYTES` by the listed sizes (a larger object is a batch alone)."""
    count, start = _FIRST_BATCH, 0
    while start < len(listed):
        end, total = start, 0
        while end < len(listed) and end - start < count:
            size = max(listed[end].size, 0)
            if end > start and total + size > _BATCH_BYTES:
                break
            total += size
            end += 1
        yield list(listed[start:end])
        start, count = end, min(count * 2, _BATCH_OBJECTS)


@dataclass
class ObjectTraceSearch(TraceSearch):
    """A search over the traces below an object-storage location (`s3://bucket/prefix`).

    Iterating it yields the same `FoundTrace`s as a search over a local copy of the
    prefix would, newest first; their `path` is the key relative to the prefix.
    `scanned` counts the objects read, `unreadable` the skipped ones (relative keys).
    """

    location: ObjectLocation | None = None

    def _check_source(self) -> None:
        if self.location is None:
            raise TraceSearchError("an object search needs its location")

    def _where(self) -> ObjectLocation:
        assert self.location is not None  # `_check_source` made sure
        return self.location

    def files(self) -> list[tuple[str, str, str]]:
        """`(stamp, relative key, key)` of the `.trp` objects listed, newest first (only
        the `date=` prefixes of the days `since`..`until` when `since` is given)."""
        location = self._where()
        found: list[tuple[str, str, str]] = []
        self._sizes: dict[str, int] = {}
        unlisted: list[tuple[str, str]] = []
        for stored in list_traces(location, since=self.since, until=self.until, unlisted=unlisted):
            name = stored.key.rpartition("/")[2]
            stamp = stamp_of(name)
            if stamp is None or not valid_stamp(stamp):
                stamp = time_stamp(stored.modified)
            self._sizes[stored.key] = stored.size
            found.append((stamp, location.relative(stored.key), stored.key))
        found.sort(reverse=True)
        for prefix, reason in unlisted:  # a folder the listing could not enter
            self.unreadable.append((Path(location.relative(prefix) or "."), reason))
        return found

    def selected_files(self) -> list[tuple[str, str]]:
        """`(stamp, key)` of the objects `since` and `until` select, newest first."""
        since = None if self.since is None else time_stamp(self.since)
        until = None if self.until is None else time_stamp(self.until)
        return [
            (stamp, key)
            for stamp, _, key in self.files()
            if (since is None or stamp >= since) and (until is None or stamp < until)
        ]

    def scan(self, files: Sequence[tuple[str, str]]) -> Iterator[FoundTrace]:
        """The matches among `files` (`(stamp, key)`, a slice of `selected_files()`), in
        their order, batch by batch: a batch is fetched only when the matches before it
        have all been taken."""
        location = self._where()
        sizes: dict[str, int] = getattr(self, "_sizes", {})
        listed = [
            _Listed(stamp, key, location.relative(key), sizes.get(key, -1)) for stamp, key in files
        ]
        if not listed:
            return
        connection, fetched_files = _connection(location)
        limit = cache.MAX_TRACE_BYTES  # the one limit of a trace read whole from a bucket
        too_large = [item for item in listed if item.size > limit]
        for item in too_large:  # fetched whole, it could exhaust the memory
            self.unreadable.append((Path(item.relative), _too_large(item.size, limit)))
        if too_large:
            listed = [item for item in listed if item.size <= limit]
        for batch in _batches(listed):
            bodies = fetch_objects(location, [item.key for item in batch], doing="read the trace")
            rows = self._query(connection, fetched_files, bodies)
            for position, (item, body) in enumerate(zip(batch, bodies, strict=True)):
                if body is None:  # deleted since the listing, as a file can be
                    self.unreadable.append((Path(item.relative), _GONE))
                    continue
                self.scanned += 1
                try:
                    match = self._judge_row(item, body, rows.get(position))
                except Exception as error:  # one bad object is skipped, as a bad file is
                    self.unreadable.append((Path(item.relative), skip_reason(error)))
                    continue
                if match is not None:
                    yield match

    # --- the query ------------------------------------------------------------------

    def _query(
        self, connection: Any, fetched_files: FetchedFiles, bodies: list[bytes | None]
    ) -> dict[int, tuple[Any, ...]]:
        """Each fetched object's row (by its position in the batch), from one query over
        the batch in memory. Should the query fail on the batch's bytes, there are no
        rows: every object is then judged from its bytes by the local scanner's code."""
        sql, parameters = trace_lines_sql(self.operation_needles)
        names = fetched_files.hold(bodies)
        try:
            result = connection.execute(sql, [names, *parameters]).fetchall()
        except _programming_errors():
            raise  # the query is wrong, not an object: no object would read
        except Exception:
            return {}
        return {fetched_files.position_of(found[0]): tuple(found[1:]) for found in result}

    # --- one object -----------------------------------------------------------------

    def _judge_row(
        self, item: _Listed, body: bytes, row: tuple[Any, ...] | None
    ) -> FoundTrace | None:
        if row is None:  # no line at all (an empty object), or the query failed
            return self.judge(body, item.relative, item.stamp)
        first, last, lines, valid, valid_bytes, kept_rows = row
        kept = [
            (int(entry["position"]) - first + 1, cast(str | None, entry["line"]))
            for entry in cast(list[dict[str, Any]], kept_rows or [])
        ]
        exact = (
            last - first + 1 == lines  # positions are each file's lines, in order
            and valid == lines  # every line is JSON (no torn line, no garbage)
            and valid_bytes + lines == len(body)  # no blank line, the last one ends
        )
        if not exact:  # the rows leave a doubt: the local scanner's code decides
            return self.judge(body, item.relative, item.stamp)
        if not kept or kept[0][0] != 1 or not (kept[0][1] or "").startswith(_HEADER_START):
            self.unreadable.append((Path(item.relative), "it does not start with a trace header"))
            return None
        matching: list[int] = []
        if self._scan_operations:
            for _, line in kept[1:]:
                if line is None:
                    continue
                logical_id = self.operation_matches(line.encode())
                if logical_id is not None:
                    matching.append(logical_id)
            if not matching:
                return None
        header = (kept[0][1] or "").encode()
        final = kept[-1][1] if kept[-1][0] == lines else None
        footer = final.encode() if final is not None and final.startswith(_FOOTER_START) else b""
        return self._summary(
            item.relative, item.stamp, header, footer, lambda: lines, len(body), matching
        )


def _too_large(size: int, limit: int) -> str:
    return (
        f"it is {size:,} bytes, over the {limit:,} a trace is read whole from a bucket; "
        "copy it with the store's tools and search the folder"
    )


def _programming_errors() -> tuple[type[BaseException], ...]:
    import duckdb

    return (
        duckdb.BinderException,
        duckdb.ParserException,
        duckdb.CatalogException,
        duckdb.InternalException,
        duckdb.NotImplementedException,
    )


def _connection(location: ObjectLocation) -> tuple[Any, FetchedFiles]:
    """A DuckDB connection reading the fetched objects of each batch from memory."""
    try:
        import duckdb

        # It imports fsspec: what DuckDB's registered file systems are.
        from toolreplay.search.fetched_files import FetchedFiles
    except ImportError as error:
        raise ObjectStoreDependencyError(
            f"{location.url}: searching object storage needs the {error.name} package; {_INSTALL}"
        ) from None

    # One batch's bytes are read once: no cache of them beyond the batch.
    connection = duckdb.connect(config={"enable_external_file_cache": False})
    fetched_files = FetchedFiles()
    connection.register_filesystem(fetched_files)
    return connection, fetched_files
