"""The objects of one batch, fetched into memory, as files DuckDB opens by name.

DuckDB reads a file system registered with its connection (an fsspec file system)
by calling back into Python: `glob`, `info`, `open` and the file's `read`/`seek`.
Here those calls serve bytes already in memory, so the query reads the lines as
they were fetched, and nothing is written to disk. The names are positions in the
batch (`PROTOCOL://3`), never the objects' keys, which may hold characters DuckDB
would take for a glob pattern.

Imported only when a URL is searched (it imports fsspec).
"""

from __future__ import annotations

import io
from typing import Any

from fsspec import AbstractFileSystem  # pyright: ignore[reportMissingTypeStubs]

__all__ = ["PROTOCOL", "FetchedFiles"]

PROTOCOL = "toolreplay-fetched"


class FetchedFiles(AbstractFileSystem):
    """A read-only file system of `files` (name -> bytes), replaced batch by batch."""

    protocol = (PROTOCOL,)
    cachable = False  # fsspec would otherwise keep the instance, and its bytes, alive

    def __init__(self) -> None:
        super().__init__()  # pyright: ignore[reportUnknownMemberType]
        self.files: dict[str, bytes] = {}

    def hold(self, bodies: list[bytes | None]) -> list[str]:
        """Serve `bodies` (a batch, None for an object not fetched) in place of the
        previous batch; the names DuckDB reads the fetched ones by, in order."""
        self.files = {
            str(position): body for position, body in enumerate(bodies) if body is not None
        }
        return [
            f"{PROTOCOL}://{position}" for position, body in enumerate(bodies) if body is not None
        ]

    @staticmethod
    def position_of(name: str) -> int:
        """The position in the batch of the file DuckDB read as `name`."""
        return int(name.rpartition("/")[2])

    def _data(self, path: str) -> bytes:
        try:
            return self.files[path.rpartition("/")[2]]  # with or without the protocol
        except KeyError:
            raise FileNotFoundError(path) from None

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:  # pyright: ignore[reportImplicitOverride]
        return {"name": path, "size": len(self._data(path)), "type": "file"}

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:  # pyright: ignore[reportImplicitOverride]
        return [self.info(path)] if detail else [path]

    def _open(  # pyright: ignore[reportImplicitOverride, reportIncompatibleMethodOverride]
        self, path: str, mode: str = "rb", *args: Any, **kwargs: Any
    ) -> io.BytesIO:
        if mode != "rb":
            raise PermissionError(f"{path}: the fetched objects are read-only")
        return io.BytesIO(self._data(path))  # shares the bytes until written to
