"""Listing a location's captured traces, reading only the days a search needs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from toolreplay.objectstore.locations import ObjectLocation, day_of, days_between
from toolreplay.objectstore.stores import open_store, store_failure

if TYPE_CHECKING:
    from obstore import ObjectMeta
    from obstore.store import ObjectStore

__all__ = ["StoredTrace", "list_traces"]

_SUFFIX = ".trp"
_UNNAMEABLE = (
    "a key in this folder is not a valid object path (a control character or an empty "
    "segment), so the folder could not be listed; rename or delete that object"
)


@dataclass(frozen=True, slots=True)
class StoredTrace:
    """One `.trp` object: its key in the bucket, size, and last modification."""

    key: str
    size: int
    modified: datetime


def list_traces(
    location: ObjectLocation,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    unlisted: list[tuple[str, str]] | None = None,
) -> Iterator[StoredTrace]:
    """The `.trp` objects below `location`, unordered.

    With `since`, only the `date=` prefixes of the days from `since` to `until` (or
    today) are listed, so nothing outside them is read; objects outside any `date=`
    prefix are then not listed at all. Without it, everything below the prefix is.

    A key the store's client cannot name (a control character, an empty segment: a
    bucket is written by others too) fails the listing that meets it. Given a list
    `unlisted`, the listing then goes down one level at a time, so that only the
    folder holding that key is left out, and appends `(its key prefix, why)`; without
    one, it raises. Raises `ObjectStoreError` when the store cannot be listed.
    """
    store = open_store(location)  # first: it says what to install when obstore is missing
    if since is None:
        prefixes = [location.prefix]
    else:
        prefixes = [location.key(f"date={day.isoformat()}") for day in days_between(since, until)]
    for prefix in prefixes:
        try:
            entries = _entries(store, prefix, unlisted)
        except Exception as error:
            raise store_failure(error, location.url_of(prefix), "list the traces") from None
        for entry in entries:
            key = entry["path"]
            if not key.endswith(_SUFFIX):
                continue
            if since is not None and day_of(key) is None:
                continue
            yield StoredTrace(key, entry["size"], entry["last_modified"])


def _entries(
    store: ObjectStore, prefix: str, unlisted: list[tuple[str, str]] | None
) -> list[ObjectMeta]:
    """Every object below `prefix`; a folder holding a key that cannot be named is left
    out and recorded in `unlisted` (None: raise)."""
    from obstore import list as obstore_list  # pyright: ignore[reportUnknownVariableType]
    from obstore import list_with_delimiter  # pyright: ignore[reportUnknownVariableType]
    from obstore.exceptions import InvalidPathError

    try:  # the whole prefix in one listing: the usual case
        return [entry for batch in obstore_list(store, prefix or None) for entry in batch]
    except InvalidPathError:
        if unlisted is None:
            raise
    try:
        level = list_with_delimiter(store, prefix or None)
    except InvalidPathError:
        unlisted.append((prefix, _UNNAMEABLE))
        return []
    found = list(level["objects"])
    for child in level["common_prefixes"]:
        found += _entries(store, child, unlisted)
    return found
