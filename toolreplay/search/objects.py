"""Searching the traces in object storage (`s3://bucket/prefix`...): the query as SQL,
run by DuckDB over the JSON lines where they lie.

The keys come from one listing (`objectstore.list_traces`: only the `date=` prefixes
of the days `--since`/`--until` reach); then one DuckDB query reads every listed
object in place, through `obstore`'s fsspec adapter, one row per line
(`read_json_objects`, which hands each line's text back unchanged, so the byte tests
of the local scanner are SQL `contains` on the same bytes). The query keeps a file's
header and footer lines and the operation lines that pass the byte tests, with each
file's line count and bytes; Python then checks the kept operations exactly with the
scanner's own code (`TraceSearch.operation_matches`) and builds each match with its
`_summary`, so both searches give the same answers by construction. A file whose
rows cannot say for certain what the local scanner would (a line that is not JSON, a
blank line, a last line without its newline) is fetched whole and judged by the
local scanner's code (`TraceSearch.judge`). A file the query cannot read is found by
halving the batch until it stands alone, and skipped with the reason.

DuckDB and obstore are imported here only, when a URL is searched.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from toolreplay.capturing.names import stamp_of, time_stamp, valid_stamp
from toolreplay.errors import ObjectStoreDependencyError, ObjectStoreError, TraceSearchError
from toolreplay.objectstore.listing import list_traces
from toolreplay.objectstore.locations import ObjectLocation, object_location
from toolreplay.objectstore.stores import open_store, store_failure
from toolreplay.search.scanner import FoundTrace, TraceSearch

if TYPE_CHECKING:
    from obstore.store import ObjectStore

__all__ = ["ObjectTraceSearch", "trace_lines_sql"]

_HEADER_START = '{"kind":"header"'
_FOOTER_START = '{"kind":"footer"'
_INSTALL = "install it with: pip install 'toolreplay[object-store]'"


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
        for stored in list_traces(location, since=self.since, until=self.until):
            name = stored.key.rpartition("/")[2]
            stamp = stamp_of(name)
            if stamp is None or not valid_stamp(stamp):
                stamp = time_stamp(stored.modified)
            self._sizes[stored.key] = stored.size
            found.append((stamp, location.relative(stored.key), stored.key))
        found.sort(reverse=True)
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
        their order, from one query over them."""
        location = self._where()
        sizes: dict[str, int] = getattr(self, "_sizes", {})
        listed = [
            _Listed(stamp, key, location.relative(key), sizes.get(key, -1)) for stamp, key in files
        ]
        if not listed:
            return
        rows = self._query(listed)
        store = open_store(location)
        for item in listed:
            if item.key in self._failed:
                continue
            self.scanned += 1
            row = rows.get(item.key)
            try:
                match = self._judge_row(item, row, store)
            except ObjectStoreError:
                raise
            except Exception as error:  # one bad object is skipped, as a bad file is
                from toolreplay.files import skip_reason

                self.unreadable.append((Path(item.relative), skip_reason(error)))
                continue
            if match is not None:
                yield match

    # --- the query ------------------------------------------------------------------

    def _query(self, listed: list[_Listed]) -> dict[str, tuple[Any, ...]]:
        """Each object's row (by key) from one query; objects the query cannot read are
        found by halving, and put in `unreadable` and `_failed`."""
        self._failed: set[str] = set()
        connection = _connection(self._where())
        sql, parameters = trace_lines_sql(self.operation_needles)
        urls = {self._url(item): item for item in listed}
        rows: dict[str, tuple[Any, ...]] = {}
        pending = [list(urls)]
        while pending:
            batch = pending.pop()
            try:
                result = connection.execute(sql, [batch, *parameters]).fetchall()
            except _programming_errors():
                raise  # the query is wrong, not an object: no object would read
            except Exception as error:
                if len(batch) > 1:
                    half = len(batch) // 2
                    pending += [batch[half:], batch[:half]]
                    continue
                item = urls[batch[0]]
                self._check_store(item)
                self._failed.add(item.key)
                self.scanned += 1
                self.unreadable.append((Path(item.relative), _query_failure(error)))
                continue
            for found in result:
                item = urls.get(found[0])
                if item is not None:
                    rows[item.key] = tuple(found[1:])
        return rows

    def _url(self, item: _Listed) -> str:
        location = self._where()
        if location.scheme == "file":
            return f"{location.bucket}/{item.key}"  # DuckDB reads a local file itself
        return location.url_of(item.key)

    def _check_store(self, item: _Listed) -> None:
        """Raise `ObjectStoreError` when the store itself fails (not just this object)."""
        import obstore

        location = self._where()
        try:
            obstore.head(open_store(location), item.key)
        except Exception as error:
            raise store_failure(error, location.child(item.relative), "read the trace") from None

    # --- one object -----------------------------------------------------------------

    def _judge_row(
        self, item: _Listed, row: tuple[Any, ...] | None, store: ObjectStore
    ) -> FoundTrace | None:
        if row is None:  # no line at all: an empty object
            return self._fetched(item, store)
        first, last, lines, valid, valid_bytes, kept_rows = row
        kept = [
            (int(entry["position"]) - first + 1, cast(str | None, entry["line"]))
            for entry in cast(list[dict[str, Any]], kept_rows or [])
        ]
        exact = (
            last - first + 1 == lines  # positions are each file's lines, in order
            and valid == lines  # every line is JSON (no torn line, no garbage)
            and valid_bytes + lines == item.size  # no blank line, the last one ends
        )
        if not exact:
            return self._fetched(item, store)
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
            item.relative, item.stamp, header, footer, lambda: lines, item.size, matching
        )

    def _fetched(self, item: _Listed, store: ObjectStore) -> FoundTrace | None:
        """The object judged from its bytes by the local scanner's code."""
        import obstore

        try:
            data = bytes(obstore.get(store, item.key).bytes())
        except Exception as error:
            raise store_failure(
                error, self._where().child(item.relative), "read the trace"
            ) from None
        return self.judge(data, item.relative, item.stamp)


def _programming_errors() -> tuple[type[BaseException], ...]:
    import duckdb

    return (
        duckdb.BinderException,
        duckdb.ParserException,
        duckdb.CatalogException,
        duckdb.InternalException,
        duckdb.NotImplementedException,
    )


def _query_failure(error: BaseException) -> str:
    """Why DuckDB could not read an object, in words of our own (never the store's text)."""
    kind = type(error).__name__
    if "IO" in kind or "HTTP" in kind:
        return f"the object could not be read ({kind})"
    return f"its lines could not be read as JSON ({kind})"


def _connection(location: ObjectLocation) -> Any:
    """A DuckDB connection that reads `location`'s store through obstore's fsspec adapter."""
    try:
        import duckdb
    except ImportError:
        raise ObjectStoreDependencyError(
            f"{location.url}: searching object storage needs the duckdb package; {_INSTALL}"
        ) from None
    open_store(location)  # says what to install when obstore is missing, and checks the setup
    connection = duckdb.connect()
    if location.scheme != "file":
        connection.register_filesystem(_filesystem(location))
    return connection


def _filesystem(location: ObjectLocation) -> Any:
    """obstore's fsspec adapter, opening each bucket's store as `open_store` does (the
    same credentials from the same standard places)."""
    from obstore.fsspec import FsspecStore

    class _Store(FsspecStore):
        def _construct_store(self, bucket: str) -> ObjectStore:  # pyright: ignore[reportImplicitOverride]
            return open_store(object_location(f"{location.scheme}://{bucket}"))

    return _Store(cast(Any, location.scheme), asynchronous=False)
