"""Writing files so that a reader never sees half of one, and reading only regular files."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import Literal

__all__ = [
    "PRIVATE_FILE_MODE",
    "PRIVATE_FOLDER_MODE",
    "PUBLIC_FILE_MODE",
    "PUBLIC_FOLDER_MODE",
    "UnreadableFileError",
    "claim",
    "claimed_folder",
    "make_private",
    "read_regular_file",
    "regular_file_blocks",
    "remove_abandoned",
    "skip_reason",
    "source_conflict",
    "write_atomically",
]

if sys.platform != "win32":
    import fcntl

_TRIES = 100

# RFC 0007 §7: what may hold production data is its owner's alone; promoted cases
# are meant to be committed and read by everyone.
PRIVATE_FILE_MODE = 0o600
PRIVATE_FOLDER_MODE = 0o700
PUBLIC_FILE_MODE = 0o644
PUBLIC_FOLDER_MODE = 0o755


def make_private(descriptor: int) -> None:
    """Set an open file's mode to 0600 exactly (neither the umask nor an old inode decides)."""
    if hasattr(os, "fchmod"):  # not on Windows, where modes do not apply
        os.fchmod(descriptor, PRIVATE_FILE_MODE)


# --- a destination that is its source ---------------------------------------------------


def source_conflict(destination: Path, sources: Iterable[Path]) -> str | None:
    """Why writing `destination` would write over one of `sources`, or None.

    The one check every command that writes a file derived from others makes
    before it writes anything (fork, redact, migrate, promote, the debugger's
    patch files). It catches the same path however it is spelled (`./r.trp`), a
    symbolic or hard link to a source, and a folder holding a source. The phrase
    fits after the destination's name ("is the source r.trp itself", "is a hard
    link to the source r.trp (the same file)"); the caller says what to do in its
    own error.
    """
    try:
        target = os.stat(destination) if os.path.lexists(destination) else None
    except OSError:
        target = None  # a dangling or looping link: nothing of a source behind it
    real_destination = Path(os.path.realpath(destination))
    for source in sources:
        try:
            held = os.stat(source)
        except OSError:
            continue  # a source that is not there cannot be written over
        real_source = Path(os.path.realpath(source))
        if target is not None and os.path.samestat(target, held):
            if os.path.islink(destination):
                return f"is a symbolic link to the source {source}"
            if os.path.abspath(destination) == os.path.abspath(source) or (
                real_destination == real_source
            ):
                return f"is the source {source} itself"
            return f"is a hard link to the source {source} (the same file)"
        holds = target is not None and stat.S_ISDIR(target.st_mode)
        if holds and real_source.is_relative_to(real_destination):
            return f"is a folder that holds the source {source}"
    return None


# --- claims: telling an abandoned temporary file from one being written --------------------


_ClaimState = Literal["claimed", "held", "unsupported"]
"""What trying to claim a file found: claimed now, held by another, or no locks here."""


def _try_claim(descriptor: int, *, wait: bool = False) -> _ClaimState:
    if sys.platform == "win32":
        return "unsupported"
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return "held"
    except OSError:  # ENOLCK, EOPNOTSUPP: a file system without such locks
        return "unsupported"
    return "claimed"


def claim(descriptor: int) -> bool:
    """Lock an open file or folder for as long as this process keeps `descriptor` open;
    False when another process holds it.

    A file being written, or a staging folder, is claimed by the process that writes
    it; when that process dies, however (`SIGKILL` included), the system releases
    the claim, so `remove_abandoned` can tell what is left over from what is still
    being written, and a second writer of the same trace can tell it is second. Where
    there are no such locks (Windows, some network file systems) this is True and
    claims nothing: nothing can then be told apart.
    """
    return _try_claim(descriptor) != "held"


def _still_at(descriptor: int, path: Path) -> bool:
    """Whether `path` still names the file or folder open as `descriptor`."""
    try:
        return os.path.samestat(os.fstat(descriptor), os.lstat(path))
    except OSError:
        return False


def remove_abandoned(folder: Path, pattern: re.Pattern[str]) -> list[Path]:
    """Remove the entries of `folder` whose names match `pattern` and that nobody claims.

    Temporary files and staging folders are claimed (`claim`) by the process
    writing them; one that nobody claims was left by a process that was killed.
    Returns what was removed. Removes nothing where there are no locks (Windows,
    a file system without them), and never raises: a leftover that cannot be
    removed stays.
    """
    removed: list[Path] = []
    if sys.platform == "win32":
        return removed
    try:
        names = [name for name in os.listdir(folder) if pattern.fullmatch(name)]
    except OSError:
        return removed
    for name in names:
        path = folder / name
        try:
            descriptor = os.open(path, os.O_RDONLY | _NO_FOLLOW | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            continue
        try:
            if _try_claim(descriptor) != "claimed" or not _still_at(descriptor, path):
                continue  # in use, or no way to tell here
            if stat.S_ISDIR(os.fstat(descriptor).st_mode):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    path.unlink()
            removed.append(path)
        finally:
            os.close(descriptor)
    return removed


def claimed_folder(parent: Path, prefix: str) -> tuple[Path, int]:
    """A new folder `<parent>/<prefix><random>` (private, as `tempfile.mkdtemp` makes it),
    claimed (`claim`): its path, and the descriptor holding the claim (close it when the
    folder is gone or published). Raises `OSError` when it cannot be made."""
    for _ in range(_TRIES):
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        try:
            descriptor = os.open(folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            continue  # removed at once by another process's clean-up
        _try_claim(descriptor, wait=True)  # while another's clean-up holds it: after it
        if _still_at(descriptor, folder):
            return folder, descriptor
        # Another process's clean-up took it for abandoned before it was claimed.
        os.close(descriptor)
    raise FileExistsError(errno.EEXIST, f"no new folder after {_TRIES} tries", str(parent))


def _temporaries_of(path: Path) -> re.Pattern[str]:
    return re.compile(re.escape(f".{path.name}.") + r"[0-9a-f]{12}\.tmp")


def write_atomically(
    path: Path, data: bytes, *, overwrite: bool = False, mode: int = PRIVATE_FILE_MODE
) -> None:
    """Write `data` to a temporary sibling of `path`, sync it, then rename it into place.

    The file gets exactly `mode` (private to its owner unless said otherwise;
    the process umask is never changed, so other threads are unaffected). With
    `overwrite=False` an existing `path` raises `FileExistsError` and is left
    untouched (the check and the rename use a hard link, so two writers cannot
    both win); a directory at `path` raises `IsADirectoryError`. Other `OSError`s
    propagate. Nothing is left behind on failure; a temporary sibling left by a
    writer that was killed (`.<name>.<random>.tmp`, claimed by nobody) is removed
    by the next write to `path`.
    """
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    remove_abandoned(path.parent, _temporaries_of(path))
    handle, temporary = _create_sibling(path)
    try:
        with os.fdopen(handle, "wb") as file:
            if hasattr(os, "fchmod"):
                os.fchmod(file.fileno(), mode)
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
    """A new, exclusively created and claimed `.<name>.<random>.tmp` next to `path`, and
    its descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    for _ in range(_TRIES):
        temporary = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            # The kernel applies the umask to 0o666: no need to read it (os.umask can
            # only be read by setting it, which races with other threads).
            # Private from the first byte; the caller sets the final mode.
            descriptor = os.open(temporary, flags, PRIVATE_FILE_MODE)
        except FileExistsError:
            continue
        _try_claim(descriptor, wait=True)  # while another's clean-up holds it: after it
        if _still_at(descriptor, temporary):
            return descriptor, temporary
        # Another writer's clean-up took it for abandoned before it was claimed: next name.
        os.close(descriptor)
    raise FileExistsError(
        errno.EEXIST, f"no free temporary name after {_TRIES} tries", str(path.parent)
    )


UnreadableKind = Literal["missing", "directory", "not_regular", "symlink", "wrong_size", "os_error"]


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
_NO_FOLLOW: int = getattr(os, "O_NOFOLLOW", 0)


def read_regular_file(
    path: Path, what: str, *, size: int | None = None, follow_symlinks: bool = True
) -> bytes:
    """Read `path` whole, refusing anything but a regular file before reading a byte.

    `what` names the file in problems (`"trace"` gives "no such trace file",
    "is a directory, not a trace file", "cannot read the trace: <reason>").
    The file is opened without blocking and checked with `fstat` on that very
    descriptor, so a pipe (which would wait for a writer forever), a device (which
    may never end) or a folder is refused at once, even if it replaced a file a
    moment before. With `size`, a file of any other size is refused
    (`kind="wrong_size"`, its actual size in `size`) before it is read, and at
    most `size + 1` bytes are read, so a huge or sparse file cannot exhaust memory.
    With `follow_symlinks=False`, a symbolic link at `path` is refused
    (`kind="symlink"`), by the open itself where the system has `O_NOFOLLOW`.
    """
    with _opened_regular_file(path, what, follow_symlinks) as (descriptor, status):
        if size is not None and status.st_size != size:
            raise UnreadableFileError(
                f"is {status.st_size} bytes, not {size}", kind="wrong_size", size=status.st_size
            )
        try:
            # One byte more than expected shows a file that grew after the check.
            data = _read_at_most(descriptor, None if size is None else size + 1, status.st_size + 1)
        except OSError as error:
            raise _os_problem(error, what) from None
    if size is not None and len(data) != size:
        raise UnreadableFileError(
            f"is {len(data)} bytes, not {size}", kind="wrong_size", size=len(data)
        )
    return data


def regular_file_blocks(path: Path, what: str, block_bytes: int) -> Generator[bytes]:
    """`path` read `block_bytes` at a time, under `read_regular_file`'s checks.

    For files too large to hold whole besides what is made of them (a trace of a
    million operations). The file is opened and checked at the first `next()`;
    close the generator (`contextlib.closing`) to close the file early.
    """
    with _opened_regular_file(path, what, follow_symlinks=True) as (descriptor, _):
        while True:
            try:
                block = os.read(descriptor, block_bytes)
            except OSError as error:
                raise _os_problem(error, what) from None
            if not block:
                return
            yield block


@contextlib.contextmanager
def _opened_regular_file(
    path: Path, what: str, follow_symlinks: bool
) -> Generator[tuple[int, os.stat_result]]:
    """The descriptor of `path`, opened without blocking, and its `fstat`: refused
    (`UnreadableFileError`) unless it is a regular file."""
    flags = _OPEN_FLAGS
    if not follow_symlinks:
        if _NO_FOLLOW:
            flags |= _NO_FOLLOW
        elif path.is_symlink():
            raise UnreadableFileError(f"is a symbolic link, not a {what} file", kind="symlink")
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        raise UnreadableFileError(f"no such {what} file", kind="missing") from None
    except OSError as error:
        if error.errno == errno.ELOOP and not follow_symlinks:
            raise UnreadableFileError(
                f"is a symbolic link, not a {what} file", kind="symlink"
            ) from None
        raise _os_problem(error, what) from None
    try:
        try:
            status = os.fstat(descriptor)
        except OSError as error:
            raise _os_problem(error, what) from None
        if stat.S_ISDIR(status.st_mode):
            raise UnreadableFileError(f"is a directory, not a {what} file", kind="directory")
        if not stat.S_ISREG(status.st_mode):
            raise UnreadableFileError(
                f"is not a regular file (a pipe or a device?), not a {what} file",
                kind="not_regular",
            )
        yield descriptor, status
    finally:
        os.close(descriptor)


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


def skip_reason(error: Exception) -> str:
    """Why a file had to be skipped, in words, from whatever reading it raised: `find` and
    `scan` read many files, and one that cannot be read is reported, never raised."""
    if isinstance(error, RecursionError):
        return "a value nests too deeply to read (RecursionError)"
    if isinstance(error, MemoryError):
        return "too large to read in memory (MemoryError)"
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 text: byte {error.start} cannot be decoded"
    if isinstance(error, OSError):
        return f"cannot read it: {error.strerror or error}"
    return f"cannot read it: {type(error).__name__}: {error}"
