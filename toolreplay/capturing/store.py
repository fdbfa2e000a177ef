"""The capture folder: trace names, keeping or discarding a request's trace, retention.

**Names.** `20261201T083806.123456Z-k3qf9xg2m4pa7b5c.trp`: the UTC time the
request started, to the microsecond, then 16 random base32 characters (80
bits). Names sort in time order (as file names, as object-storage keys, with
`ls`), are unique without coordination between processes, and say nothing about
the request (metadata, which may be sensitive, is only inside the file).

**Temporary sibling.** A request is recorded to `<name>.trp.part` and renamed to
`<name>.trp` when it ends and is kept, or deleted when it is not: whether to keep
it ("only requests that failed", a predicate on the result, a capture that gave
up) is known only at the end. So a `.trp` file in the folder is always a decided,
finished trace, and `find` or a picker reading the folder never sees one being
written. A `.part` file left behind is the request of a process that died; it
reads as an incomplete trace (`toolreplay show`), and age retention removes it.

**Logging.** Capture reports through the `toolreplay.capture` logger. A storage
problem (an unwritable folder, a full disk) is logged once per folder, then not
again until a trace has been kept there; other reasons to give up are logged
once per folder and kind. Messages name the folder and the reason, never a
recorded value or metadata.
"""

from __future__ import annotations

import base64
import functools
import os
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from toolreplay.capturing.settings import Retention

__all__ = [
    "CAPTURE_NAME",
    "METADATA_KEY",
    "PART_SUFFIX",
    "TRACE_SUFFIX",
    "captured_at",
    "log_once",
    "new_trace_name",
    "stamp_of",
    "stamp_time",
    "storage_recovered",
    "sweep",
    "swept_after_keep",
    "time_stamp",
    "valid_stamp",
]

METADATA_KEY = "capture"
"""The header metadata key capture fills in: `{"name": ..., "started_at": ...}`."""

TRACE_SUFFIX = ".trp"
PART_SUFFIX = ".trp.part"
CAPTURE_NAME = re.compile(r"(?P<stamp>[0-9]{8}T[0-9]{6}\.[0-9]{6}Z)-[a-z2-7]{16}")
"""A captured trace's name without its suffix."""

_STAMP = "%Y%m%dT%H%M%S.%fZ"
_AGE_SWEEP_INTERVAL = 60.0  # seconds between sweeps when only an age is retained
LOGGER_NAME = "toolreplay.capture"


def new_trace_name(now: datetime) -> str:
    """A sortable, unique name (no suffix) for a request that started at `now` (UTC)."""
    random_part = base64.b32encode(os.urandom(10)).decode("ascii").lower()
    return f"{now.strftime(_STAMP)}-{random_part}"


def captured_at(name: str) -> datetime | None:
    """When a captured trace's request started, from its file name (None: not a capture name)."""
    stamp = stamp_of(name)
    return None if stamp is None else stamp_time(stamp)


def stamp_of(name: str) -> str | None:
    """The time part of a capture name (`20261201T083806.123456Z`), text that sorts as time."""
    stem = name.removesuffix(PART_SUFFIX).removesuffix(TRACE_SUFFIX)
    match = CAPTURE_NAME.fullmatch(stem)
    return None if match is None else match["stamp"]


def time_stamp(moment: datetime) -> str:
    """`moment` written as a capture name's time part (converted to UTC)."""
    return moment.astimezone(UTC).strftime(_STAMP)


def stamp_time(stamp: str) -> datetime | None:
    """The moment a capture name's time part stands for (None: no such moment)."""
    # By position, not strptime: `find` may call this for every file of a folder.
    try:
        return datetime(
            int(stamp[0:4]),
            int(stamp[4:6]),
            int(stamp[6:8]),
            int(stamp[9:11]),
            int(stamp[11:13]),
            int(stamp[13:15]),
            int(stamp[16:22]),
            tzinfo=UTC,
        )
    except ValueError:  # digits in the right places, but no such moment (month 13)
        return None


def valid_stamp(stamp: str) -> bool:
    """Whether `stamp_time(stamp)` is a moment, for a stamp from `stamp_of`: what `find`
    asks of every file in a folder, so it compares text and checks each day once."""
    return (
        stamp[9:11] < "24" and stamp[11:13] < "60" and stamp[13:15] < "60" and _real_day(stamp[:8])
    )


@functools.lru_cache(maxsize=1024)
def _real_day(digits: str) -> bool:
    try:
        datetime(int(digits[0:4]), int(digits[4:6]), int(digits[6:8]))
    except ValueError:  # month 13, February 30, year 0
        return False
    return True


@dataclass
class _FolderState:
    lock: threading.Lock = field(default_factory=threading.Lock)
    logged: set[str] = field(default_factory=lambda: set[str]())
    kept_since_sweep: int = 0
    last_sweep: float | None = None


_folders: dict[str, _FolderState] = {}
_folders_lock = threading.Lock()


def _state(directory: Path) -> _FolderState:
    key = os.path.abspath(directory)
    with _folders_lock:
        state = _folders.get(key)
        if state is None:
            state = _folders[key] = _FolderState()
        return state


def log_once(directory: Path | None, kind: str, message: str) -> None:
    """Log `message` at WARNING unless this folder already logged `kind` (see module doc)."""
    state = _state(directory if directory is not None else Path())
    with state.lock:
        if kind in state.logged:
            return
        state.logged.add(kind)
    import logging  # only when there is something to say: not part of `import toolreplay`

    logging.getLogger(LOGGER_NAME).warning(
        "Tool Replay capture%s: %s. The request ran as usual; its trace was not kept. "
        "(Logged once%s.)",
        f" to {directory}" if directory is not None else "",
        message,
        " until a trace is kept there again" if kind == "storage" else " per folder",
    )


def storage_recovered(directory: Path) -> None:
    """A trace was kept: the next storage problem in this folder is logged again."""
    state = _state(directory)
    with state.lock:
        state.logged.discard("storage")


def swept_after_keep(directory: Path, retention: Retention, now: datetime) -> bool:
    """Apply `retention` if it is due after one more kept trace; whether a sweep ran.

    With a count, a sweep runs every `count // 10` kept traces (at least every
    trace, at most every 100): the folder holds at most that many traces over
    the count. With only an age, at most once a minute. The first trace a
    process keeps in a folder always sweeps.
    """
    state = _state(directory)
    clock = time.monotonic()
    with state.lock:
        state.kept_since_sweep += 1
        if retention.count is not None:
            due = state.kept_since_sweep >= max(1, min(retention.count // 10, 100))
        else:
            due = False
        if state.last_sweep is None or clock - state.last_sweep >= _AGE_SWEEP_INTERVAL:
            due = due or retention.age is not None or state.last_sweep is None
        if not due:
            return False
        state.kept_since_sweep = 0
        state.last_sweep = clock
    sweep(directory, retention, now)
    return True


def sweep(directory: Path, retention: Retention, now: datetime) -> list[Path]:
    """Delete the captured traces `retention` does not keep; the paths deleted.

    Only files named as captures are considered: the oldest `.trp` files beyond
    the count, and `.trp` and `.part` files whose request started before
    `now - age`. A file another process deleted first is skipped. Raises
    `OSError` if the folder cannot be listed or a file cannot be deleted.
    """
    finished: list[tuple[str, datetime]] = []
    unfinished: list[tuple[str, datetime]] = []
    with os.scandir(directory) as entries:
        for entry in entries:
            started = captured_at(entry.name)
            if started is None:
                continue
            if entry.name.endswith(PART_SUFFIX):
                unfinished.append((entry.name, started))
            elif entry.name.endswith(TRACE_SUFFIX):
                finished.append((entry.name, started))
    finished.sort(reverse=True)  # newest first: names sort by time
    doomed: list[str] = []
    if retention.count is not None:
        doomed += [name for name, _ in finished[retention.count :]]
        finished = finished[: retention.count]
    if retention.age is not None:
        oldest = now - retention.age
        doomed += [name for name, started in finished + unfinished if started < oldest]
    removed: list[Path] = []
    for name in doomed:
        path = directory / name
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        removed.append(path)
    return removed
