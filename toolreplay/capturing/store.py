"""The capture folder: keeping or discarding a request's trace, retention.

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

import os
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from toolreplay.capturing.names import PART_SUFFIX, TRACE_SUFFIX, captured_at
from toolreplay.capturing.settings import Retention

__all__ = ["log_once", "storage_recovered", "sweep", "swept_after_keep"]

_AGE_SWEEP_INTERVAL = 60.0  # seconds between sweeps when only an age is retained
LOGGER_NAME = "toolreplay.capture"


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
