"""Ages, the one way Tool Replay reads a length of time from text: `90s`, `30m`, `2h`, `7d`.

A whole number and a unit (seconds, minutes, hours or days, in either case, a
space between them allowed). `toolreplay find --since 7d` reads an age ago, and
`TOOLREPLAY_CAPTURE_RETAIN=7d` an age to keep traces for, both with `parse_age`.
"""

from __future__ import annotations

import re
from datetime import timedelta

__all__ = ["AGE_EXAMPLES", "parse_age"]

AGE_EXAMPLES = "90s, 30m, 2h or 7d"
"""What an age looks like, for messages."""

_AGE = re.compile(r"([0-9]+)\s*([smhd])", re.IGNORECASE)
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_age(text: str) -> timedelta | None:
    """`text` as a length of time (`"7d"`, `"12 H"`), or None when it is not one."""
    match = _AGE.fullmatch(text.strip())
    if match is None:
        return None
    return timedelta(seconds=int(match[1]) * _SECONDS[match[2].lower()])
