"""Writing a trace: append a line per completed operation, flush it, footer on close.

A recording is written in place rather than to a temporary sibling: the trace
of a process that is killed mid-run is the incident most worth keeping, so each
completed operation must already be at the target path. Each line goes to the
operating system in one unbuffered `write`; a crash can only tear the line
being written, which the reader detects.

A write that fails (a full disk, a file size limit) is undone: the file is cut
back to the end of the last complete line, so every operation acknowledged
before stays readable and the failed one never appears. If even that fails,
the writer refuses every further line rather than write after a partial one.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from toolreplay.errors import TraceError, TraceExistsError, TraceWriteError
from toolreplay.files import (
    PRIVATE_FILE_MODE,
    claim,
    make_private,
    source_conflict,
    write_atomically,
)
from toolreplay.trace.codec import encode_footer, encode_header, encode_operation
from toolreplay.trace.model import (
    AttemptedCall,
    Operation,
    SessionEnding,
    TraceFooter,
    TraceHeader,
    UnobservedOperation,
)

__all__ = ["TraceWriter", "check_copy_path", "check_new_trace_path", "write_whole_trace"]


class TraceWriter:
    """Appends a trace to `path`, one line per `write` to the operating system.

    The file is created when the writer is constructed: an existing file is an
    error unless `overwrite=True` (`if_exists` says what to do instead), a
    directory or a missing parent folder is an error either way. A header that
    cannot be written leaves no file behind. A line that cannot be written
    raises `TraceWriteError` and is taken back out of the file.
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
        self._descriptor: int | None = _create(self.path, overwrite=overwrite, if_exists=if_exists)
        self._digest = hashlib.sha256()
        self._count = 0
        self._size = 0  # bytes of complete lines: where an undone write cuts back to
        self._broken: TraceWriteError | None = None
        try:
            self._write(encode_header(header), "the header")
        except BaseException:
            self.discard()
            raise

    @property
    def operation_count(self) -> int:
        return self._count

    @property
    def size(self) -> int:
        """Bytes of the complete lines written so far."""
        return self._size

    def append(self, operation: Operation, value_text: str | None = None) -> None:
        """Write one operation; on failure nothing of it stays in the file. `value_text`
        is its returned value as `encode_value` wrote it, when the caller has it."""
        self.append_line(encode_operation(operation, value_text), operation.logical_id)

    def append_line(self, line: bytes, logical_id: int) -> None:
        """Write the line of operation `logical_id` as the codec encoded it (sessions use
        `encode_operation_fields`, and build no `Operation` only to write it); on failure
        nothing of it stays in the file."""
        self._write(line, logical_id)
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
        unrecorded call it stopped at. The file is closed whatever happens. A
        footer that cannot be written is undone, leaving a readable incomplete
        trace, and raises `TraceWriteError`.
        """
        descriptor = self._descriptor
        if descriptor is None:
            return
        footer = TraceFooter(self._count, self._digest.hexdigest(), ending, unobserved, attempted)
        try:
            self._write(encode_footer(footer), "the footer")
            try:
                os.fsync(descriptor)
            except OSError as error:
                raise self._failure("sync the trace to disk", error) from error
        finally:
            self._descriptor = None
            os.close(descriptor)

    def _write(self, line: bytes, what: str | int) -> None:
        """Write a whole line; `what` names it in errors (an int: the operation's logical id,
        formatted only for an error)."""
        descriptor = self._descriptor
        if descriptor is None:
            raise TraceError(f"{self.path}: the trace is already closed", path=self.path)
        if self._broken is not None:
            raise TraceWriteError(
                f"{self.path}: {_line_name(what)} was not written: an earlier write to this "
                f"trace failed and could not be undone ({self._broken.reason}), so nothing "
                f"more is appended after it. The {self._count} operations before it are kept.",
                path=self.path,
                reason=self._broken.reason,
            )
        try:
            written = os.write(descriptor, line)
            if written < len(line):  # a short write is continued, not repeated
                view = memoryview(line)[written:]
                while view:
                    view = view[os.write(descriptor, view) :]
        except BaseException as error:
            self._undo(descriptor)
            if isinstance(error, OSError):
                raise self._failure(f"write {_line_name(what)}", error) from error
            raise
        self._size += len(line)
        self._digest.update(line)

    def _undo(self, descriptor: int) -> None:
        """Cut the file back to its last complete line, or refuse every later write."""
        try:
            os.ftruncate(descriptor, self._size)
            os.lseek(descriptor, self._size, os.SEEK_SET)
        except OSError as error:
            self._broken = TraceWriteError(
                f"{self.path}: cannot take back a partly written line: {error.strerror}",
                path=self.path,
                reason=error.strerror or str(error),
            )

    def _failure(self, action: str, error: OSError) -> TraceWriteError:
        reason = error.strerror or str(error)
        kept = (
            "it was taken back out, so the trace reads as before"
            if self._broken is None
            else "it could not be taken back out, so nothing more is appended"
        )
        return TraceWriteError(
            f"{self.path}: cannot {action}: {reason}; {kept}. The {self._count} "
            "operations written before are kept. Free space (or raise the file size "
            "limit) and run again.",
            path=self.path,
            reason=reason,
        )

    def discard(self) -> None:
        """Close and remove the trace (a header that never made it, an abandoned recording).

        A retry must not find the path taken; nothing of the file stays.
        """
        descriptor, self._descriptor = self._descriptor, None
        if descriptor is not None:
            os.close(descriptor)
        self.path.unlink(missing_ok=True)


def _line_name(what: str | int) -> str:
    return f"operation {what}" if isinstance(what, int) else what


def check_new_trace_path(
    path: Path,
    *,
    overwrite: bool = False,
    if_exists: str = "choose another path or delete that file",
) -> None:
    """Raise the `TraceError` that creating a trace at `path` would raise, creating nothing.

    For callers that refuse a bad output path before running anything (the
    command line checks it before it imports the application). Creating the
    trace checks again: the path may change in between.
    """
    if path.is_dir():
        raise TraceError(
            f"{path}: is a directory; give the path of a .trp file to record into", path=path
        )
    if not path.parent.is_dir():
        raise TraceError(
            f"{path}: the folder {path.parent} does not exist; create it first", path=path
        )
    if not overwrite and (path.exists() or path.is_symlink()):
        raise _exists_error(path, if_exists)


def _exists_error(path: Path, if_exists: str) -> TraceExistsError:
    return TraceExistsError(
        f"{path}: a trace already exists here, and traces are never overwritten "
        f"silently; {if_exists}",
        path=path,
    )


def _create(path: Path, *, overwrite: bool, if_exists: str) -> int:
    check_new_trace_path(path, overwrite=True)
    # Exclusive creation: no check-then-open race with another recorder. Private to
    # its owner (RFC 0007 §7): traces hold production data. Unbuffered, so a failed
    # write is never retried behind the writer's back.
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    if not overwrite:
        flags |= os.O_EXCL
    try:
        descriptor = os.open(path, flags, PRIVATE_FILE_MODE)
    except FileExistsError:
        raise _exists_error(path, if_exists) from None
    except OSError as error:
        raise TraceError(f"{path}: cannot create the trace: {error.strerror}", path=path) from None
    # Claimed for as long as it is written: a second writer of the same file, which only
    # an overwrite can open, is refused before it truncates anything, rather than both
    # reporting success while their lines overwrite each other.
    if not claim(descriptor):
        os.close(descriptor)
        raise TraceError(
            f"{path}: another process is writing this trace right now (a recording, or a "
            "fork, still running); wait for it to finish, or record to another path",
            path=path,
        )
    try:
        if overwrite:
            os.ftruncate(descriptor, 0)  # only now: the claim above is this writer's
    except OSError as error:
        os.close(descriptor)
        raise TraceError(
            f"{path}: cannot empty the old trace to overwrite it: {error.strerror}", path=path
        ) from None
    try:
        make_private(descriptor)  # an overwritten file keeps its old mode otherwise
    except OSError as error:
        os.close(descriptor)
        raise TraceError(
            f"{path}: cannot make the trace private to its owner: {error.strerror}", path=path
        ) from None
    return descriptor


def check_copy_path(source: Path, output: Path, *, operation: str, copy: str) -> None:
    """Raise `TraceError` when a copy of the trace `source` written to `output` would write
    over `source` (see `files.source_conflict`); `operation` ("a migration") and `copy`
    ("the migrated copy") name them in the message."""
    problem = source_conflict(output, [source])
    if problem is not None:
        raise TraceError(
            f"{output} {problem}: {operation} never writes over the trace it reads; "
            f"give {copy} another path",
            path=output,
        )


def write_whole_trace(
    path: Path,
    header: TraceHeader,
    operations: Sequence[Operation],
    ending: SessionEnding | None,
    *,
    overwrite: bool,
    what: str,
) -> None:
    """Write a trace made all at once (a migration, a redaction) atomically.

    The header, the operations, and a footer with their count and digest when
    `ending` is given (a copy of a trace that had no footer has none either).
    `what` names the trace in errors: `TraceExistsError` when `path` exists and
    `overwrite` is false, `TraceError` for any other failure to write.
    """
    lines = [encode_header(header), *map(encode_operation, operations)]
    if ending is not None:
        digest = hashlib.sha256(b"".join(lines)).hexdigest()
        lines.append(encode_footer(TraceFooter(len(operations), digest, ending)))
    try:
        write_atomically(path, b"".join(lines), overwrite=overwrite)
    except FileExistsError:
        raise TraceExistsError(
            f"{path} already exists; choose another output, or pass --overwrite", path=path
        ) from None
    except OSError as error:
        raise TraceError(
            f"{path}: cannot write the {what}: {error.strerror or error}", path=path
        ) from None
