"""The working folder: where the debugger writes branch traces and patch files.

By default `.toolreplay/` next to the trace being debugged. Every path handed
out is new: names are numbered (`refund-fork-1.trp`, `refund-fork-2.trp`, ...)
and a number is used only when nothing of that number exists; files the
debugger writes itself are created exclusively, so a file that appeared in the
meantime is never overwritten (the next number is taken instead). The source
trace is only ever read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from toolreplay.redaction import PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE

__all__ = ["FORK_SUFFIX", "ForkPaths", "Workspace", "display_path"]

FORK_SUFFIX = ".trp"
_T = TypeVar("_T")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_MAX_TRIES = 10_000


def display_path(path: Path, base: Path | None = None) -> str:
    """`path` relative to `base` (the working directory) when it is inside it."""
    base = Path.cwd() if base is None else base
    try:
        return str(Path(os.path.abspath(path)).relative_to(os.path.abspath(base)))
    except ValueError:
        return str(path)


@dataclass(frozen=True, slots=True)
class ForkPaths:
    """The files of one fork: the patches it applies and the branch it writes."""

    number: int
    patches: Path
    branch: Path


def _taken_meanwhile(error: BaseException) -> bool:
    """The error says the path was taken: it, or what it was raised from, is a FileExistsError."""
    return any(
        isinstance(candidate, FileExistsError)
        for candidate in (error, error.__cause__, error.__context__)
    )


class Workspace:
    """Numbered, never-overwritten files in one folder, named after a trace."""

    def __init__(self, trace_path: Path, root: Path | None = None) -> None:
        self.trace_path = trace_path
        self.root = root if root is not None else trace_path.parent / ".toolreplay"
        stem = _UNSAFE.sub("-", trace_path.stem).strip("-.") or "trace"
        self.stem = stem

    def ensure(self) -> Path:
        """Create the folder (and its parents) if needed, private to its owner; returns it.

        What the debugger writes here (patches, branches, scratch files) comes
        from traces of production runs, so a folder it creates is 0700 (RFC 0007).
        """
        if not self.root.is_dir():
            self.root.mkdir(parents=True, exist_ok=True)
            self.root.chmod(PRIVATE_FOLDER_MODE)
        return self.root

    def _taken(self, *paths: Path) -> bool:
        return any(path.exists() or path.is_symlink() for path in paths)

    def _numbered(self, names: Callable[[int], tuple[Path, ...]]) -> int:
        for number in range(1, _MAX_TRIES + 1):
            if not self._taken(*names(number)):
                return number
        raise FileExistsError(f"{self.root}: no free file name left after {_MAX_TRIES} tries")

    def fork_paths(self) -> ForkPaths:
        """Paths for the next fork, neither of which exists yet."""

        def names(number: int) -> tuple[Path, Path]:
            return (
                self.root / f"{self.stem}-fork-{number}.patches.json",
                self.root / f"{self.stem}-fork-{number}{FORK_SUFFIX}",
            )

        number = self._numbered(names)
        patches, branch = names(number)
        return ForkPaths(number, patches, branch)

    def next_path(self, kind: str, suffix: str) -> Path:
        """`<root>/<stem>-<kind>-<n><suffix>` for the first `n` not taken."""
        number = self._numbered(lambda n: (self.root / f"{self.stem}-{kind}-{n}{suffix}",))
        return self.root / f"{self.stem}-{kind}-{number}{suffix}"

    def unsaved_patches_path(self) -> Path:
        """Where the pending patches are kept while they are not saved, so that a crash
        does not lose them: the next session on this trace restores them from here."""
        return self.root / f"{self.stem}-unsaved.patches.json"

    def patch_file_path(self) -> Path:
        """Where `w` proposes to save the pending patches."""
        return self.next_path("patches", ".json")

    def latest(self, kind: str, suffix: str) -> Path | None:
        """The highest-numbered existing `<stem>-<kind>-<n><suffix>`, if any."""
        pattern = re.compile(re.escape(f"{self.stem}-{kind}-") + r"(\d+)" + re.escape(suffix))
        best: tuple[int, Path] | None = None
        if not self.root.is_dir():
            return None
        for entry in self.root.iterdir():
            found = pattern.fullmatch(entry.name)
            if found is not None and (best is None or int(found[1]) > best[0]):
                best = (int(found[1]), entry)
        return None if best is None else best[1]

    def write_new(self, kind: str, suffix: str, write: Callable[[Path], _T]) -> _T:
        """Call `write(path)` on the next free path, again on the next if it now exists.

        `write` must create its file exclusively and raise `FileExistsError` (or an
        error whose `__cause__`/`__context__` is one, as `toolreplay.write_patches`'s
        `PatchFileError` is) if it is taken. Any other error propagates.
        """
        self.ensure()
        for _ in range(_MAX_TRIES):
            path = self.next_path(kind, suffix)
            try:
                return write(path)
            except Exception as error:
                if not _taken_meanwhile(error):
                    raise
        raise FileExistsError(f"{self.root}: no free file name left after {_MAX_TRIES} tries")

    def write_text(self, kind: str, suffix: str, text: str) -> Path:
        """Write `text` (UTF-8) to a new numbered file; returns its path."""

        def write(path: Path) -> Path:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            with os.fdopen(os.open(path, flags, PRIVATE_FILE_MODE), "w", encoding="utf-8") as file:
                file.write(text)
            return path

        return self.write_new(kind, suffix, write)
