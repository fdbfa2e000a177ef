"""Writing files so that a reader never sees half of one."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

__all__ = ["write_atomically"]


def write_atomically(path: Path, data: bytes, *, overwrite: bool = False) -> None:
    """Write `data` to a temporary sibling of `path`, sync it, then rename it into place.

    With `overwrite=False` an existing `path` raises `FileExistsError` and is left
    untouched (the check and the rename use a hard link, so two writers cannot
    both win); a directory at `path` raises `IsADirectoryError`. Other `OSError`s
    propagate. Nothing is left behind on failure.
    """
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private; give it the mode any new file would get.
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(handle, 0o666 & ~umask)
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
        Path(temporary).unlink(missing_ok=True)
        raise
