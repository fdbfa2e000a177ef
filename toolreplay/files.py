"""Writing files so that a reader never sees half of one, and reading only regular files."""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Literal

__all__ = ["UnreadableFileError", "read_regular_file", "write_atomically"]

_TRIES = 100


def write_atomically(path: Path, data: bytes, *, overwrite: bool = False) -> None:
    """Write `data` to a temporary sibling of `path`, sync it, then rename it into place.

    The file gets the mode any new file gets (`0o666` less the process umask,
    which is never changed, so other threads are unaffected). With
    `overwrite=False` an existing `path` raises `FileExistsError` and is left
    untouched (the check and the rename use a hard link, so two writers cannot
    both win); a directory at `path` raises `IsADirectoryError`. Other `OSError`s
    propagate. Nothing is left behind on failure.
    """
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    handle, temporary = _create_sibling(path)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if overwrite:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # fails if path exists: no silent overwrite
            os.unlink(temporary)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _create_sibling(path: Path) -> tuple[int, Path]:
    """A new, exclusively created `.<name>.<random>.tmp` next to `path`, and its descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_TRIES):
        temporary = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            # The kernel applies the umask to 0o666: no need to read it (os.umask can
            # only be read by setting it, which races with other threads).
            return os.open(temporary, flags | getattr(os, "O_BINARY", 0), 0o666), temporary
        except FileExistsError:
            continue
    raise FileExistsError(
        errno.EEXIST, f"no free temporary name after {_TRIES} tries", str(path.parent)
    )


UnreadableKind = Literal["missing", "directory", "not_regular", "wrong_size", "os_error"]


class UnreadableFileError(Exception):
    """Why `read_regular_file` read nothing; callers turn it into their own `ToolReplayError`.

    `problem` is a phrase to put after the file's name ("no such trace file");
    `kind` lets a caller add its own advice.
    """

    def __init__(self, problem: str, *, kind: UnreadableKind, size: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.kind = kind
        self.size = size


_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def read_regular_file(path: Path, what: str, *, size: int | None = None) -> bytes:
    """Read `path` whole, refusing anything but a regular file before reading a byte.

    `what` names the file in problems (`"trace"` gives "no such trace file",
    "is a directory, not a trace file", "cannot read the trace: <reason>").
    The file is opened without blocking and checked with `fstat` on that very
    descriptor, so a pipe (which would wait for a writer forever), a device (which
    may never end) or a folder is refused at once, even if it replaced a file a
    moment before. With `size`, a file of any other size is refused
    (`kind="wrong_size"`, its actual size in `size`) before it is read, and at
    most `size + 1` bytes are read, so a huge or sparse file cannot exhaust memory.
    """
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise UnreadableFileError(f"no such {what} file", kind="missing") from None
    except OSError as error:
        raise _os_problem(error, what) from None
    try:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise UnreadableFileError(f"is a directory, not a {what} file", kind="directory")
        if not stat.S_ISREG(status.st_mode):
            raise UnreadableFileError(
                f"is not a regular file (a pipe or a device?), not a {what} file",
                kind="not_regular",
            )
        if size is not None and status.st_size != size:
            raise UnreadableFileError(
                f"is {status.st_size} bytes, not {size}", kind="wrong_size", size=status.st_size
            )
        # One byte more than expected shows a file that grew after the check.
        data = _read_at_most(descriptor, None if size is None else size + 1, status.st_size + 1)
    except OSError as error:
        raise _os_problem(error, what) from None
    finally:
        os.close(descriptor)
    if size is not None and len(data) != size:
        raise UnreadableFileError(
            f"is {len(data)} bytes, not {size}", kind="wrong_size", size=len(data)
        )
    return data


def _os_problem(error: OSError, what: str) -> UnreadableFileError:
    return UnreadableFileError(
        f"cannot read the {what}: {error.strerror or error}", kind="os_error"
    )


def _read_at_most(descriptor: int, limit: int | None, expected: int) -> bytes:
    """Up to `limit` bytes (all, for None); fewer only at the end of the file.

    The first read asks for the `expected` size, so a file that does not change
    is read in one call, without copying.
    """
    chunks: list[bytes] = []
    remaining = sys.maxsize if limit is None else limit
    request = expected
    while remaining > 0:
        chunk = os.read(descriptor, min(remaining, request))
        request = 1 << 20
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
