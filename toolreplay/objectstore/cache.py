"""One trace fetched from object storage into a local cache, checked before it is kept.

`fetched_trace("s3://bucket/.../NAME.trp")` returns a local copy that every command
then reads exactly as a local file: the fetched bytes are untrusted input like any
trace, and go through the same reader and the same terminal-safety rule.

The copy lives in the user's cache folder (`$XDG_CACHE_HOME/toolreplay/objects/`, or
`~/.cache/toolreplay/objects/`, private to its owner), one subfolder per SHA-256 of
the URL, under the object's own name. It is written through a temporary sibling and
renamed into place only once its footer digest matches what precedes it
(`toolreplay.trace.check_digest`), so a copy in the cache is always whole. A trace
without a footer (its process died mid-request) is kept too: it is what one wants to
inspect, and the reader checks its operations' fingerprints instead whenever it is
read, and says it is incomplete. Traces are written once, so a copy already cached
is used again, without a request, as long as it still checks.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from toolreplay.errors import ObjectStoreError, TraceFormatError
from toolreplay.files import (
    PRIVATE_FOLDER_MODE,
    UnreadableFileError,
    read_regular_file,
    write_atomically,
)
from toolreplay.objectstore.locations import ObjectLocation, object_location
from toolreplay.objectstore.stores import open_store, store_failure
from toolreplay.trace.reader import check_digest

__all__ = ["MAX_TRACE_BYTES", "cache_folder", "fetched_trace"]

MAX_TRACE_BYTES = 1 << 30
"""The largest object `fetched_trace` fetches (1 GiB): the whole trace is held in memory
to be checked before it is written."""

_SUFFIX = ".trp"


def cache_folder() -> Path:
    """Where fetched traces are kept: `$XDG_CACHE_HOME/toolreplay/objects` (an absolute
    `XDG_CACHE_HOME` only, as the XDG rules say), else `~/.cache/toolreplay/objects`."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "toolreplay" / "objects"


def _split(url: str) -> tuple[ObjectLocation, str]:
    """The location of the bucket (or folder) holding `url`'s object, and its key."""
    location = object_location(url)
    if location.scheme == "file":
        folder, _, name = location.bucket.rpartition("/")
        return object_location(f"file://{folder or '/'}"), name
    return object_location(location.root), location.prefix


def _private_folder(folder: Path, url: str) -> None:
    """Create `folder` and the cache folders above it, each its owner's alone."""
    root = cache_folder()
    try:
        folder.mkdir(mode=PRIVATE_FOLDER_MODE, parents=True, exist_ok=True)
        for each in (root.parent, root, folder):
            if hasattr(os, "chmod") and each.stat().st_mode & 0o077:
                os.chmod(each, PRIVATE_FOLDER_MODE)
    except OSError as error:
        raise ObjectStoreError(
            f"{url}: cannot create the cache folder {folder}: {error.strerror or error}; "
            "set XDG_CACHE_HOME to a folder you can write"
        ) from None


def _checked_copy(path: Path) -> bool:
    """Whether a copy is cached at `path` and still checks against its footer."""
    try:
        data = read_regular_file(path, "trace", follow_symlinks=False)
        check_digest(path, data)
    except (UnreadableFileError, TraceFormatError):
        return False
    return True


def fetched_trace(url: str) -> Path:
    """The local copy of the trace object at `url` (`s3://`, `gs://`, `az://`, `file://`,
    ending in `.trp`), fetched into the cache unless a copy there still checks.

    Raises `ObjectStoreDependencyError` when the object-store extra is missing, and
    `ObjectStoreError` naming `url` when it names no trace object, or the object is
    missing, refused, unreachable, larger than `MAX_TRACE_BYTES`, or does not match its
    footer digest (nothing is cached then). No message carries the store's response
    text or a credential.
    """
    location, key = _split(url)
    name = key.rpartition("/")[2]
    if not name.endswith(_SUFFIX) or name == _SUFFIX:
        raise ObjectStoreError(
            f"{url}: not a trace object (its name does not end in {_SUFFIX}); give the URL of "
            "one .trp object, or search a prefix with: toolreplay find URL"
        )
    shown = location.url_of(key)
    folder = cache_folder() / hashlib.sha256(shown.encode()).hexdigest()
    cached = folder / name
    if _checked_copy(cached):
        return cached

    store = open_store(location)  # first: it says what to install when obstore is missing
    import obstore

    try:
        result = obstore.get(store, key)
        size = result.meta["size"]
        if size > MAX_TRACE_BYTES:
            raise ObjectStoreError(
                f"{url}: the object is {size} bytes, more than the {MAX_TRACE_BYTES} bytes "
                "a trace is fetched up to; copy it with the store's own tools and open the "
                "local file"
            )
        data = bytes(result.bytes())
    except ObjectStoreError:
        raise
    except Exception as error:  # obstore's errors: named by kind, never by their text
        raise store_failure(error, url, "fetch the trace") from None
    if len(data) > MAX_TRACE_BYTES:  # replaced by a larger object while it was read
        raise ObjectStoreError(
            f"{url}: the object grew past {MAX_TRACE_BYTES} bytes while it was fetched"
        )
    try:
        check_digest(Path(name), data)
    except TraceFormatError as error:
        if error.line is None or error.line == 1:
            problem = f"it does not read as a trace ({error})"
        else:
            problem = (
                f"line {error.line} of {name} does not check against the footer it was "
                "written with (digest mismatch): the object changed after it was written or "
                "was damaged in transit"
            )
        raise ObjectStoreError(f"{url}: refused, nothing was cached: {problem}") from None
    _private_folder(folder, url)
    try:
        write_atomically(cached, data, overwrite=True)
    except OSError as error:
        raise ObjectStoreError(
            f"{url}: cannot write its copy {cached}: {error.strerror or error}"
        ) from None
    return cached
