"""The uploader: moves kept traces from the spool (`toolreplay.capturing.spool`) to
object storage, in the background, so the request path never waits on the network.

One daemon thread per spool and destination in a process, started by the first
request captured to that destination. It uploads every kept trace of its folder,
oldest first, to `trace_key(destination, started, name, instance)` and deletes the
local file once the store has it; when it starts, it first adopts the folders of the
spool that no live process claims (a process that was killed) and uploads those.
A failure (store unreachable, credentials refused) is retried with exponential
backoff (0.2 s doubling to 30 s, with jitter) and never raised: the traces wait in
the spool, which fills to its bound, and then new requests are not captured
(`Outbox.admits`) until uploads catch up. At interpreter exit the uploader gets
`EXIT_DRAIN_SECONDS` to upload what is left; what remains is uploaded by the next
process to start on the spool, or by `toolreplay capture flush SPOOL`.

`obstore` is imported by the uploader's thread (or the flush), never on the request
path nor by `import toolreplay`.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolreplay.capturing.names import PART_SUFFIX, captured_at
from toolreplay.capturing.spool import (
    Outbox,
    default_instance,
    default_spool,
    instance_folders,
    recorded_destination,
    spooled_traces,
)
from toolreplay.errors import CaptureConfigError, ObjectStoreDependencyError, ObjectStoreError
from toolreplay.files import claim
from toolreplay.objectstore.locations import ObjectLocation, trace_key
from toolreplay.objectstore.stores import open_store, store_failure

if TYPE_CHECKING:
    from obstore.store import ObjectStore

__all__ = ["EXIT_DRAIN_SECONDS", "FlushResult", "flush_spool", "outbox_for", "require_store"]

EXIT_DRAIN_SECONDS = 2.0
"""How long the interpreter's exit waits for the uploaders to drain their spools."""
_FIRST_DELAY = 0.2
_MAX_DELAY = 30.0
_UPLOADING = "upload the captured traces"
# The backoff's jitter must not draw from the application's `random` (api.py's `_sampler`).
_jitter = random.Random()

_outboxes: dict[tuple[str, str, str, int], Outbox] = {}
_uploaders: list[_Uploader] = []
_registry_lock = threading.Lock()
_exit_registered = False


def require_store(location: ObjectLocation) -> None:
    """`ObjectStoreDependencyError` when the object-store extra is not installed (checked
    without importing it)."""
    if importlib.util.find_spec("obstore") is None:
        raise ObjectStoreDependencyError(
            f"{location.url}: capturing to object storage needs the obstore package; "
            "install it with: pip install 'toolreplay[object-store]'"
        )


def _open(location: ObjectLocation) -> ObjectStore:
    # The uploader retries by itself (backoff below), so the store does not: its own
    # retries would hold one upload for minutes while the spool waits behind it.
    # (No client options: giving any replaces those obstore reads from the environment,
    # AWS_ALLOW_HTTP among them; its timeouts, 5 s to connect and 30 s a request, stay.)
    return open_store(location, retry_config={"max_retries": 0})


def _upload(store: ObjectStore, location: ObjectLocation, path: Path, instance: str) -> bool:
    """Upload the trace at `path` and delete it; False when it was gone already, or
    cannot be read (it stays: one such file must not hold up the others).

    Raises `ObjectStoreError` when the store does not take it.
    """
    from obstore import put  # pyright: ignore[reportUnknownVariableType]

    started = captured_at(path.name)
    if started is None:
        return False
    try:
        data = path.read_bytes()
    except OSError:  # uploaded by another process meanwhile, or unreadable
        return False
    key = trace_key(location, started, path.name.removesuffix(".trp"), instance)
    try:
        put(store, key, data)
    except Exception as error:
        raise store_failure(error, location, _UPLOADING) from None
    path.unlink(missing_ok=True)
    return True


def _upload_folder(
    store: ObjectStore,
    location: ObjectLocation,
    folder: Path,
    done: Callable[[str], None] = lambda name: None,
) -> int:
    """Upload every kept trace of an instance folder, oldest first; how many."""
    count = 0
    for name, _ in spooled_traces(folder):
        if _upload(store, location, folder / name, folder.name):
            count += 1
        done(name)
    return count


class _Uploader:
    """The thread that empties one `Outbox` (see the module's doc)."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox
        self.closing = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name=f"toolreplay-upload-{outbox.instance}", daemon=True
        )

    def _run(self) -> None:
        outbox = self.outbox
        store: ObjectStore | None = None
        adopted = False
        delay = _FIRST_DELAY
        while True:
            # Read before the pass: when exiting, one whole pass runs after it is set.
            closing = self.closing.is_set()
            try:
                if store is None:
                    store = _open(outbox.location)
                if not adopted:
                    self._adopt(store)
                    adopted = True
                self._drain(store)
            except Exception as error:  # never raised: the traces wait in the spool
                message = (
                    str(error)
                    if isinstance(error, ObjectStoreError)
                    else f"{type(error).__name__} in the uploader"
                )
                outbox.upload_failed(message)
                if closing:
                    return  # exiting: the next start or a flush uploads the rest
                self.closing.wait(delay * _jitter.uniform(0.5, 1.0))
                delay = min(delay * 2, _MAX_DELAY)
                continue
            delay = _FIRST_DELAY
            outbox.caught_up()
            if closing:
                return
            outbox.wake.wait()
            outbox.wake.clear()

    def _drain(self, store: ObjectStore) -> None:
        outbox = self.outbox
        before = set(outbox.pending())
        seen: set[str] = set()

        def done(name: str) -> None:
            seen.add(name)
            outbox.uploaded(name)

        _upload_folder(store, outbox.location, outbox.folder, done)
        # Counted before the listing (so renamed into place before it), yet not listed:
        # another process uploaded it (a flush).
        for name in before - seen:
            outbox.uploaded(name)

    def _adopt(self, store: ObjectStore) -> None:
        """Upload the folders of the spool that no live process claims."""
        outbox = self.outbox
        for folder in instance_folders(outbox.spool):
            if folder == outbox.folder:
                continue
            try:
                descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                continue
            try:
                if not claim(descriptor):
                    continue  # its process is alive and uploads it
                _upload_folder(store, outbox.location, folder)
                _remove_if_empty(folder)
            finally:
                os.close(descriptor)


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not empty: a killed request's `.part` stays
        folder.rmdir()


def _drain_at_exit() -> None:
    deadline = time.monotonic() + EXIT_DRAIN_SECONDS
    with _registry_lock:
        uploaders = list(_uploaders)
    for uploader in uploaders:
        uploader.closing.set()
        uploader.outbox.wake.set()
    for uploader in uploaders:
        uploader.thread.join(max(0.0, deadline - time.monotonic()))


def _forget_after_fork() -> None:
    # The child has no uploader threads; it is another instance and starts its own.
    global _registry_lock
    _registry_lock = threading.Lock()
    _outboxes.clear()
    _uploaders.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def outbox_for(
    location: ObjectLocation, spool: Path | None, instance: str | None, bound: int
) -> Outbox:
    """This process's outbox for `location` (created, with its uploader, on first use).

    Raises `CaptureConfigError` or `ObjectStoreError` when the spool cannot be used,
    `OSError` when it cannot be created.
    """
    folder = spool if spool is not None else default_spool(location)
    who = instance if instance is not None else default_instance()
    key = (str(folder), location.url, who, bound)
    outbox = _outboxes.get(key)
    if outbox is not None:
        return outbox
    global _exit_registered
    with _registry_lock:
        outbox = _outboxes.get(key)
        if outbox is not None:
            return outbox
        require_store(location)
        outbox = Outbox(folder, location, who, bound)
        uploader = _Uploader(outbox)
        uploader.thread.start()
        _uploaders.append(uploader)
        _outboxes[key] = outbox
        if not _exit_registered:
            atexit.register(_drain_at_exit)
            _exit_registered = True
    return outbox


@dataclass(frozen=True, slots=True)
class FlushResult:
    """What `flush_spool` did."""

    destination: ObjectLocation
    uploaded: int
    """Traces uploaded (and deleted from the spool)."""
    unfinished: int
    """`.trp.part` files left: requests of a process killed mid-request (never uploaded)."""
    unreadable: int = 0
    """Kept traces left because they could not be read (permissions, say)."""
    failure: str | None = None
    """Why uploading stopped (the store's failure in words), or None: all uploaded."""


def flush_spool(spool: Path, destination: ObjectLocation | None = None) -> FlushResult:
    """Upload every kept trace in `spool` to `destination` (None: the one it records).

    A store failure stops the flush (`FlushResult.failure`). Raises
    `CaptureConfigError` when the spool is missing or records no destination and none
    is given, `ObjectStoreError` when the store cannot be opened.
    """
    if not spool.is_dir():
        raise CaptureConfigError(f"{spool}: no such spool folder")
    location = destination or recorded_destination(spool)
    if location is None:
        raise CaptureConfigError(
            f"{spool}: the spool records no destination; give one with --to URL"
        )
    require_store(location)
    store = _open(location)
    uploaded = 0
    failure: str | None = None
    folders = instance_folders(spool)
    for folder in folders:
        try:
            uploaded += _upload_folder(store, location, folder)
        except ObjectStoreError as error:
            failure = str(error)
            break
    unfinished = sum(
        1 for folder in folders for entry in _names(folder) if entry.endswith(PART_SUFFIX)
    )
    unreadable = 0 if failure else sum(len(spooled_traces(folder)) for folder in folders)
    return FlushResult(location, uploaded, unfinished, failure=failure, unreadable=unreadable)


def _names(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []
