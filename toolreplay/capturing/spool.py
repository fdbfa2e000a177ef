"""The spool: where traces captured for object storage wait for their upload.

A capture to `s3://bucket/prefix` (or `gs://`, `az://`, `file://`) writes each
request's trace exactly as a capture to a folder does (part file, then rename:
`toolreplay.capturing.store`), into a folder of the spool; the uploader
(`toolreplay.capturing.upload`) then moves it to the bucket. The layout:

    SPOOL/.destination          the destination URL (so `toolreplay capture flush SPOOL`
                                knows where to upload), written by temporary sibling + rename
    SPOOL/INSTANCE/NAME.trp     a kept trace of the process whose instance id is INSTANCE
    SPOOL/INSTANCE/NAME.trp.part

Each process writes to a folder of its own instance id, claimed (`files.claim`) for
as long as the process lives: the traces of a process that was killed are in a folder
nobody claims, which the next uploader to start on this spool adopts. A trace is
uploaded under the instance id of the folder it is in, so uploading one twice (two
processes adopting the same leftovers, or a flush beside a running process) writes
the same object again, never a second one.

The bound (`spool_bytes`) is kept with a counter, never by listing the folder on the
request path: the bytes of the traces this process kept and has not uploaded yet.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
from pathlib import Path

from toolreplay.capturing.names import TRACE_SUFFIX, captured_at
from toolreplay.capturing.store import LOGGER_NAME
from toolreplay.errors import CaptureConfigError, ObjectStoreError
from toolreplay.files import claim, write_atomically
from toolreplay.objectstore.locations import ObjectLocation, check_instance, object_location

__all__ = [
    "DESTINATION_FILE",
    "Outbox",
    "default_instance",
    "default_spool",
    "instance_folders",
    "record_destination",
    "recorded_destination",
    "spooled_traces",
]

DESTINATION_FILE = ".destination"
_INSTANCE_FOLDER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_NOT_IN_INSTANCE = re.compile(r"[^A-Za-z0-9._-]+")


@functools.lru_cache(maxsize=64)
def _default_spool(url: str, cache_home: str | None, home: str) -> Path:
    base = Path(cache_home) if cache_home else Path(home) / ".cache"
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]
    return base / "toolreplay" / "spool" / digest


def default_spool(location: ObjectLocation) -> Path:
    """The spool of `location` when none is given: per user and per destination,
    `$XDG_CACHE_HOME/toolreplay/spool/<16 hex digits of sha256(url)>` (else `~/.cache`)."""
    return _default_spool(location.url, os.environ.get("XDG_CACHE_HOME"), str(Path.home()))


@functools.lru_cache(maxsize=1)
def _host_part() -> str:
    import socket  # once, for the default instance id

    host = _NOT_IN_INSTANCE.sub("-", socket.gethostname()).strip("-._") or "host"
    return host[:48]


def default_instance() -> str:
    """This process's instance id when none is set: the host name (letters, digits,
    `.`, `-`, `_`; other characters become `-`), `-`, the process id."""
    return f"{_host_part()}-{os.getpid()}"


def recorded_destination(spool: Path) -> ObjectLocation | None:
    """The destination a spool was created for (None: it records none).

    Raises `CaptureConfigError` when the record does not read as a location.
    """
    record = spool / DESTINATION_FILE
    try:
        text = record.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise CaptureConfigError(
            f"{record}: cannot read the spool's destination ({type(error).__name__})"
        ) from None
    try:
        return object_location(text)
    except ObjectStoreError as error:
        raise CaptureConfigError(f"{record}: {error}") from None


def record_destination(spool: Path, location: ObjectLocation) -> None:
    """Create `spool` (mode 0700) and record `location` in it.

    Raises `CaptureConfigError` when the spool already records another destination
    (two destinations sharing one spool would upload each other's traces), `OSError`
    when it cannot be written.
    """
    spool.mkdir(mode=0o700, parents=True, exist_ok=True)
    recorded = recorded_destination(spool)
    if recorded is not None and recorded.url != location.url:
        raise CaptureConfigError(
            f"the spool {spool} holds traces for {recorded.url}, not {location.url}: give "
            "each destination a spool of its own (spool=, TOOLREPLAY_CAPTURE_SPOOL)"
        )
    if recorded is None:
        write_atomically(spool / DESTINATION_FILE, f"{location.url}\n".encode(), overwrite=True)


def instance_folders(spool: Path) -> list[Path]:
    """The instance folders of `spool` (what else is in it is not the spool's)."""
    try:
        with os.scandir(spool) as entries:
            return sorted(
                Path(entry.path)
                for entry in entries
                if _INSTANCE_FOLDER.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)
            )
    except FileNotFoundError:
        return []


def spooled_traces(folder: Path) -> list[tuple[str, int]]:
    """The kept traces waiting in an instance folder, `(name, size)`, oldest first."""
    found: list[tuple[str, int]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(TRACE_SUFFIX) and captured_at(entry.name) is not None:
                    try:
                        found.append((entry.name, entry.stat(follow_symlinks=False).st_size))
                    except FileNotFoundError:
                        continue  # uploaded meanwhile
    except FileNotFoundError:
        return []
    found.sort()  # names sort by the time the request started
    return found


class Outbox:
    """This process's folder in a spool, with the bound and the uploader's wake-up.

    The request path asks `admits()` (a comparison), and tells `keeping(name, size)`
    when a trace is kept (a dictionary entry) and sets `wake` once it is in place: no
    listing, no network. The uploader takes traces out with `uploaded(name)`.
    """

    def __init__(self, spool: Path, location: ObjectLocation, instance: str, bound: int) -> None:
        self.spool = spool
        self.location = location
        self.instance = check_instance(instance)
        self.bound = bound
        self.folder = spool / instance
        self.wake = threading.Event()
        """Set when there is something to upload; the uploader waits on it."""
        self._lock = threading.Lock()
        self._pending: dict[str, int] = {}
        self._bytes = 0
        self._turned_off = False
        self._last_failure: str | None = None
        record_destination(spool, location)
        self.folder.mkdir(mode=0o700, exist_ok=True)
        # Held open for the life of the process: the claim tells adopters it is alive.
        # Where a folder cannot be opened (Windows) there is no claim: an adopter then
        # uploads a live process's traces too, to the same keys, which is only work.
        try:
            self._claim: int | None = os.open(
                self.folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
            )
            claim(self._claim)
        except OSError:
            self._claim = None
        for name, size in spooled_traces(self.folder):  # a restarted fixed instance id
            self._pending[name] = size
            self._bytes += size
        if self._pending:
            self.wake.set()

    # --- the request path ---

    def admits(self) -> bool:
        """Whether a new request may be captured: the spool is under its bound.

        The first refusal of an outage logs one line (see `upload_failed`)."""
        if self._bytes < self.bound:
            return True
        with self._lock:
            if self._turned_off:
                return False
            self._turned_off = True
            failure = self._last_failure
        reason = (
            f"the last upload failed: {failure}"
            if failure is not None
            else "uploads are slower than the requests"
        )
        import logging  # only when there is something to say, as `store.log_once`

        logging.getLogger(LOGGER_NAME).warning(
            "Tool Replay capture to %s: the spool %s is full (%d bytes waiting, "
            "spool_bytes=%d); new requests are not captured until uploads catch up; "
            "%s. (Logged once per outage; capture resumes by itself.)",
            self.location.url,
            self.folder,
            self._bytes,
            self.bound,
            reason,
        )
        return False

    def keeping(self, name: str, size: int) -> None:
        """A trace of `size` bytes is about to be renamed into place as `name` (in `folder`):
        count it now, for the uploader (or a flush) may take it the moment its name
        appears. Then call `wake.set()`. Should the rename fail, the uploader's next pass
        uncounts the name, which it does not find."""
        with self._lock:
            self._pending[name] = size
            self._bytes += size

    # --- the uploader ---

    def pending(self) -> list[str]:
        """The names kept and not uploaded yet."""
        with self._lock:
            return list(self._pending)

    def uploaded(self, name: str) -> None:
        """`name` left the spool (uploaded, by this process or another)."""
        with self._lock:
            self._bytes -= self._pending.pop(name, 0)

    def upload_failed(self, message: str) -> None:
        """Remember the failure, for the line logged if the spool fills (no line now:
        an outage the spool absorbs loses nothing, and says nothing)."""
        with self._lock:
            self._last_failure = message

    def caught_up(self) -> None:
        """Everything kept was uploaded: the next time the spool fills is a new outage."""
        with self._lock:
            if not self._pending:
                self._turned_off = False
                self._last_failure = None

    @property
    def bytes_waiting(self) -> int:
        """Bytes of kept traces not uploaded yet (this process's)."""
        return self._bytes
