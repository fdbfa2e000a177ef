"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import errno
import os
import secrets
from pathlib import Path

__all__ = ["write_atomically"]

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
