"""The patches pending in the debugger: one `replace_output` per operation identity.

They are built with `toolreplay.replace_output` (so every check of the library
applies, and the patch id is the library's) and saved and loaded with
`toolreplay.write_patches` / `read_patches`. `dirty` says whether the set holds
changes not yet saved to a patch file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from toolreplay import (
    JsonValue,
    Operation,
    OperationIdentity,
    OutputPatch,
    Returned,
    Trace,
    read_patches,
    replace_output,
    write_patches,
)
from toolreplay.redaction import check_redacted_edit

__all__ = ["LoadedPatches", "PendingPatches", "SkippedPatch"]


@dataclass(frozen=True, slots=True)
class SkippedPatch:
    """A patch from a file that was not loaded, and why."""

    patch: OutputPatch
    reason: str


@dataclass(frozen=True, slots=True)
class LoadedPatches:
    """What `PendingPatches.load` did."""

    path: Path
    loaded: tuple[OutputPatch, ...]
    skipped: tuple[SkippedPatch, ...] = field(default=())


class PendingPatches:
    """Pending `replace_output` patches, keyed by the exact identity they target."""

    def __init__(self) -> None:
        self._patches: dict[OperationIdentity, OutputPatch] = {}
        self.dirty = False
        self.saved_path: Path | None = None

    def __len__(self) -> int:
        return len(self._patches)

    def __contains__(self, identity: object) -> bool:
        return identity in self._patches

    def __iter__(self) -> Iterator[OutputPatch]:
        return iter(list(self._patches.values()))

    def get(self, identity: OperationIdentity) -> OutputPatch | None:
        return self._patches.get(identity)

    def set(self, operation: Operation, value: JsonValue) -> OutputPatch:
        """Add (or replace) the patch making `operation` return `value`.

        Raises what `toolreplay.replace_output` raises for a value that is not
        portable JSON, and `RedactedValueEditError` for a value that puts
        anything but a placeholder where the recorded output holds one (RFC
        0007 §8); the pending set is then unchanged.
        """
        if isinstance(operation.outcome, Returned):
            check_redacted_edit(operation.outcome.value, value)
        patch = replace_output(
            effect=operation.effect,
            inputs=operation.inputs,
            occurrence=operation.identity.occurrence,
            value=value,
        )
        previous = self._patches.get(operation.identity)
        if previous is None or previous.patch_id != patch.patch_id:
            self._patches[operation.identity] = patch
            self.dirty = True
        return patch

    def remove(self, identity: OperationIdentity) -> OutputPatch | None:
        """Drop the patch on `identity`; returns it, or None if there was none."""
        patch = self._patches.pop(identity, None)
        if patch is not None:
            self.dirty = True
        return patch

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write every pending patch to a new patch file (never over an existing one).

        Raises `toolreplay.PatchFileError` (the file exists, the folder is missing,
        it cannot be written); on success the set is clean.
        """
        written = write_patches(path, list(self._patches.values()))
        self.dirty = False
        self.saved_path = written
        return written

    def write_copy(self, path: str | os.PathLike[str]) -> Path:
        """Write the patches for a fork without marking them saved."""
        return write_patches(path, list(self._patches.values()))

    def load(self, path: str | os.PathLike[str], trace: Trace | None = None) -> LoadedPatches:
        """Replace the pending set with the patches of a patch file.

        With `trace`, a patch whose target the trace does not hold is skipped
        (the fork would refuse it), as is a second patch on one identity. Raises
        `toolreplay.PatchFileError` for a file that cannot be read, leaving the
        pending set unchanged.
        """
        source = Path(path)
        patches = read_patches(source)
        loaded: dict[OperationIdentity, OutputPatch] = {}
        skipped: list[SkippedPatch] = []
        for patch in patches:
            identity = patch.identity
            if trace is not None and trace.get(identity) is None:
                skipped.append(
                    SkippedPatch(
                        patch,
                        f"{patch.patch_id}: this trace holds no call of {patch.effect} "
                        f"occurrence {patch.occurrence} with these inputs",
                    )
                )
            elif identity in loaded:
                skipped.append(
                    SkippedPatch(
                        patch,
                        f"{patch.patch_id}: a second patch on {patch.effect} occurrence "
                        f"{patch.occurrence} (the first, {loaded[identity].patch_id}, is kept)",
                    )
                )
            else:
                loaded[identity] = patch
        self._patches = loaded
        self.dirty = bool(skipped)
        self.saved_path = source
        return LoadedPatches(source, tuple(loaded.values()), tuple(skipped))
