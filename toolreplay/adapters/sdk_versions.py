"""An installed SDK's release numbers, as every adapter's version check compares them.

Its own module, importing nothing, so an adapter checks the SDK's version before it
imports anything built on the SDK.
"""

from __future__ import annotations

__all__ = ["release"]


def release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version string: `2.20.0` is (2, 20, 0), `1.3.0rc1` is
    (1, 3, 0), and the numbers stop at the first part that is not one."""
    parts: list[int] = []
    for part in version.split("."):
        digits = "".join(c for c in part if c.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
        if not part.isdigit():
            break
    return tuple(parts)
