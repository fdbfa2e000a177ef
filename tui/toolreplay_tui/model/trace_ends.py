"""A trace's two ends, read at once whatever its size: the header (its first line) and,
from the end of the file, the footer, a torn last line, or neither (an incomplete
trace). Where the operations lie follows: between the header and that last line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from toolreplay import TraceError, TraceFooter, TraceFormatError, TraceLines, TraceNotFoundError

__all__ = ["TraceEnds", "read_ends"]

TAIL_WINDOW = 64 * 1024
"""What is read of the file's end at first to find its last line (more when it is longer)."""


@dataclass(frozen=True, slots=True)
class TraceEnds:
    """What the ends of a trace file say."""

    size: int
    header_line: bytes
    """The header's line, without its newline (decoded by `lines`)."""
    lines: TraceLines
    """Decodes the trace's lines under its header's format."""
    header_end: int
    """Where the first operation line starts."""
    body_end: int
    """Where the operations end: the footer, a torn last line, or the end of the file."""
    footer: TraceFooter | None
    torn: bool
    """Whether the last line is a write torn by a crash (set aside, as `read_trace` does)."""


def read_ends(path: Path) -> TraceEnds:
    """Read the header and the last line of the trace at `path`.

    Raises `TraceNotFoundError` (missing, a directory, not a regular file),
    `TraceError` (unreadable) or `TraceFormatError` (no valid header), as
    `read_trace` would; a bad last line is left to the integrity check.
    """
    if not path.exists():
        raise TraceNotFoundError(
            f"{path}: no such trace file; check the path, or record one first", path=path
        )
    if not path.is_file():
        raise TraceNotFoundError(
            f"{path}: is not a regular file (a directory, a pipe or a device?); pass the "
            "path of a .trp file",
            path=path,
        )
    try:
        with path.open("rb") as handle:
            size = path.stat().st_size
            head = handle.readline()
            if not head:
                raise TraceFormatError(
                    "the file is empty, so it has no header; it is not a trace (or its "
                    "recording never wrote a line)",
                    path=path,
                )
            header_line = head.rstrip(b"\n")
            lines = TraceLines(path, header_line)
            header_end = len(head)
            footer, body_end, torn = None, size, False
            if size > header_end:
                start, last, terminated = _tail_line(handle, size)
                footer, body_end, torn = _classify_tail(
                    TraceLines(path, header_line), last, start, terminated, size
                )
    except OSError as error:
        raise TraceError(
            f"{path}: cannot read the trace: {error.strerror or error}", path=path
        ) from None
    return TraceEnds(size, header_line, lines, header_end, body_end, footer, torn)


def _tail_line(handle: BinaryIO, size: int) -> tuple[int, bytes, bool]:
    """The last line's start offset, its bytes (no newline) and whether a newline ends it."""
    window = TAIL_WINDOW
    while True:
        start = max(0, size - window)
        handle.seek(start)
        data = handle.read(size - start)
        terminated = data.endswith(b"\n")
        body = data[:-1] if terminated else data
        newline = body.rfind(b"\n")
        if newline >= 0 or start == 0:
            return start + newline + 1, body[newline + 1 :], terminated
        window *= 4


def _classify_tail(
    lines: TraceLines, last: bytes, start: int, terminated: bool, size: int
) -> tuple[TraceFooter | None, int, bool]:
    """(footer, where the operations end, torn) from the last line (a large one read
    without keeping its value)."""
    try:
        item = lines.check(last, 0, torn_possible=not terminated)
    except TraceFormatError:
        return None, size, False  # a bad last line: `check` names it
    if item is None:
        return None, start, True  # a write torn by a crash, set aside as read_trace does
    if isinstance(item, TraceFooter):
        return item, start, False
    return None, size, False
