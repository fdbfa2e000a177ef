"""Writing a trace: append a line per completed operation, flush it, footer on close.

A recording is written in place rather than to a temporary sibling: the trace
of a process that is killed mid-run is the incident most worth keeping, so each
completed operation must already be at the target path. Each line goes out in
one `write` and is flushed to the operating system at once; a crash can only
tear the line being written, which the reader detects.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import BinaryIO

from toolreplay.errors import TraceError, TraceExistsError
from toolreplay.trace.codec import encode_footer, encode_header, encode_operation
from toolreplay.trace.model import (
    AttemptedCall,
    Operation,
    SessionEnding,
    TraceFooter,
    TraceHeader,
    UnobservedOperation,
)

__all__ = ["TraceWriter"]


class TraceWriter:
    """Appends a trace to `path`, one flushed line at a time.

    The file is created when the writer is constructed: an existing file is an
    error unless `overwrite=True` (`if_exists` says what to do instead), a
    directory or a missing parent folder is an error either way.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: TraceHeader,
        *,
        overwrite: bool = False,
        if_exists: str = "choose another path or delete that file",
    ) -> None:
        self.path = Path(path)
        self._file = _create(self.path, overwrite=overwrite, if_exists=if_exists)
        self._digest = hashlib.sha256()
        self._count = 0
        self._write(encode_header(header))

    @property
    def operation_count(self) -> int:
        return self._count

    def append(self, operation: Operation) -> None:
        self._write(encode_operation(operation))
        self._count += 1

    def close(
        self,
        ending: SessionEnding,
        *,
        unobserved: tuple[UnobservedOperation, ...] = (),
        attempted: AttemptedCall | None = None,
    ) -> None:
        """Write the footer (count, digest, how the session ended), sync and close.

        A fork's branch also lists the source operations it never called and the
        unrecorded call it stopped at.
        """
        footer = TraceFooter(self._count, self._digest.hexdigest(), ending, unobserved, attempted)
        try:
            self._file.write(encode_footer(footer))
            self._file.flush()
            os.fsync(self._file.fileno())
        finally:
            self._file.close()

    def _write(self, line: bytes) -> None:
        self._file.write(line)
        self._file.flush()
        self._digest.update(line)


def _create(path: Path, *, overwrite: bool, if_exists: str) -> BinaryIO:
    if path.is_dir():
        raise TraceError(
            f"{path}: is a directory; give the path of a .trp file to record into", path=path
        )
    if not path.parent.is_dir():
        raise TraceError(
            f"{path}: the folder {path.parent} does not exist; create it first", path=path
        )
    try:
        # Exclusive creation: no check-then-open race with another recorder.
        return path.open("wb" if overwrite else "xb")
    except FileExistsError:
        raise TraceExistsError(
            f"{path}: a trace already exists here, and traces are never overwritten "
            f"silently; {if_exists}",
            path=path,
        ) from None
    except OSError as error:
        raise TraceError(f"{path}: cannot create the trace: {error.strerror}", path=path) from None
