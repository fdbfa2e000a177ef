"""Fetching many objects at once: concurrent GETs, each object whole.

A search reads thousands of small objects, where one request at a time pays the
store's latency for each (against a remote bucket, tens of milliseconds). The GETs
are issued through `obstore`'s async API with a bounded number in flight, on an event
loop of our own in a worker thread, so that a caller running its own loop (the
terminal interface) or none (the command line) is served the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from toolreplay.objectstore.locations import ObjectLocation
from toolreplay.objectstore.stores import open_store, store_failure

if TYPE_CHECKING:
    from obstore.store import ObjectStore

__all__ = ["IN_FLIGHT", "fetch_objects"]

IN_FLIGHT = 32
"""Requests in flight at a time: enough to hide a remote store's latency, few enough
not to be throttled (S3 serves thousands of GETs per second per prefix)."""


def fetch_objects(
    location: ObjectLocation,
    keys: Sequence[str],
    *,
    in_flight: int = IN_FLIGHT,
    doing: str = "read the object",
) -> list[bytes | None]:
    """The bytes of each of `keys` (full keys in `location`'s bucket), in their order;
    None for an object that is not found (deleted since it was listed, say by the
    bucket's lifecycle rule).

    Raises `ObjectStoreError` (naming the object and the kind of failure, never the
    store's text; `doing` says what for) for any other failure: the store
    unreachable, access denied, ...
    """
    if not keys:
        return []
    store = open_store(location)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="toolreplay-fetch") as worker:
        try:
            return worker.submit(asyncio.run, _fetch_all(store, keys, max(in_flight, 1))).result()
        except _FetchFailure as failure:
            raise store_failure(failure.error, location.url_of(failure.key), doing) from None


class _FetchFailure(Exception):
    """The first object the store failed to give (other than not found)."""

    def __init__(self, key: str, error: Exception) -> None:
        super().__init__(key)
        self.key = key
        self.error = error


async def _fetch_all(store: ObjectStore, keys: Sequence[str], in_flight: int) -> list[bytes | None]:
    import obstore

    slots = asyncio.Semaphore(in_flight)

    async def fetch(key: str) -> bytes | None:
        async with slots:
            try:
                result = await obstore.get_async(store, key)
                return bytes(await result.bytes_async())
            except FileNotFoundError:  # what obstore raises for a missing object
                return None
            except Exception as error:
                raise _FetchFailure(key, error) from None

    tasks = [asyncio.ensure_future(fetch(key)) for key in keys]
    try:
        return list(await asyncio.gather(*tasks))
    finally:  # after a failure, the requests still waiting or retrying are dropped
        for task in tasks:
            task.cancel()
