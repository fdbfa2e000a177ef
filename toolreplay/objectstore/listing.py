"""Listing a location's captured traces, reading only the days a search needs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from toolreplay.objectstore.locations import ObjectLocation, day_of, days_between
from toolreplay.objectstore.stores import open_store, store_failure

__all__ = ["StoredTrace", "list_traces"]

_SUFFIX = ".trp"


@dataclass(frozen=True, slots=True)
class StoredTrace:
    """One `.trp` object: its key in the bucket, size, and last modification."""

    key: str
    size: int
    modified: datetime


def list_traces(
    location: ObjectLocation, *, since: datetime | None = None, until: datetime | None = None
) -> Iterator[StoredTrace]:
    """The `.trp` objects below `location`, unordered.

    With `since`, only the `date=` prefixes of the days from `since` to `until` (or
    today) are listed, so nothing outside them is read; objects outside any `date=`
    prefix are then not listed at all. Without it, everything below the prefix is.
    Raises `ObjectStoreError` when the store cannot be listed.
    """
    store = open_store(location)  # first: it says what to install when obstore is missing
    from obstore import list as obstore_list  # pyright: ignore[reportUnknownVariableType]

    if since is None:
        prefixes = [location.prefix]
    else:
        prefixes = [location.key(f"date={day.isoformat()}") for day in days_between(since, until)]
    for prefix in prefixes:
        try:
            batches = obstore_list(store, prefix or None)
            for batch in batches:
                for entry in batch:
                    key = entry["path"]
                    if not key.endswith(_SUFFIX):
                        continue
                    if since is not None and day_of(key) is None:
                        continue
                    yield StoredTrace(key, entry["size"], entry["last_modified"])
        except Exception as error:
            raise store_failure(
                error,
                location.child(prefix[len(location.prefix) :])
                if prefix != location.prefix
                else location,
                "list the traces",
            ) from None
