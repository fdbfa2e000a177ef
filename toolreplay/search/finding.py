"""`find_traces`: the search of a folder (`scanner`) or of an object-storage prefix
(`objects`), by what the location is."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from toolreplay.objectstore.locations import is_object_url, object_location
from toolreplay.search.query import Condition, parse_condition, parse_time
from toolreplay.search.scanner import TraceSearch

__all__ = ["find_traces"]


def find_traces(
    directory: str | os.PathLike[str],
    *,
    effect: str | None = None,
    where: Sequence[str | Condition] = (),
    since: datetime | str | None = None,
    until: datetime | str | None = None,
) -> TraceSearch:
    """Search the traces below `directory`, a folder or an object-storage URL
    (`s3://bucket/prefix`, `gs://`, `az://`, `file://`: `ObjectTraceSearch`, the same
    answers through SQL); iterate the result for matches, newest first.

    - `effect`: only traces with an operation of this effect (`crm.customer.get`);
    - `where`: conditions `PATH OP VALUE` (see `parse_condition`); operation
      conditions must all hold for one operation (of `effect`, if given);
    - `since` / `until`: when the request started (a captured trace's name, else
      the file's modification time), a datetime or text for `parse_time`.

    Raises `TraceSearchError` for a malformed query or a folder that does not exist;
    for a URL, `ObjectStoreError` when the store cannot be listed or read (and
    `ObjectStoreDependencyError` when the object-store extra is not installed).
    """
    conditions = tuple(
        item if isinstance(item, Condition) else parse_condition(item) for item in where
    )
    since_time = parse_time(since) if isinstance(since, str) else since
    until_time = parse_time(until) if isinstance(until, str) else until
    if isinstance(directory, str) and is_object_url(directory):
        # Imported here: a folder's search never loads DuckDB or obstore.
        from toolreplay.search.objects import ObjectTraceSearch

        return ObjectTraceSearch(
            Path(),
            effect=effect,
            conditions=conditions,
            since=since_time,
            until=until_time,
            location=object_location(directory),
        )
    return TraceSearch(
        Path(directory),
        effect=effect,
        conditions=conditions,
        since=since_time,
        until=until_time,
    )
