"""Captured traces' file names: sortable, unique, and saying nothing about the request.

`20261201T083806.123456Z-k3qf9xg2m4pa7b5c.trp`: the UTC time the request started, to
the microsecond, then 16 random base32 characters (80 bits). Names sort in time order
(as file names, as object-storage keys, with `ls`), are unique without coordination
between processes, and say nothing about the request (metadata, which may be
sensitive, is only inside the file). Kept apart from the capture folder's storage so
that `toolreplay find`, which reads every name of a folder, imports only this.
"""

from __future__ import annotations

import base64
import functools
import os
import re
from datetime import UTC, datetime

__all__ = [
    "CAPTURE_NAME",
    "METADATA_KEY",
    "PART_SUFFIX",
    "TRACE_SUFFIX",
    "captured_at",
    "new_trace_name",
    "stamp_of",
    "stamp_time",
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
