"""The patches pending in the debugger: at most one patch per call identity.

A recorded call can have its output replaced (`replace_output`, from the
editors) or be made to fail (`replace_error`); a call the recording never made
can be given an outcome (`supply_output`, `supply_error`, offered when a fork
stops at it). They are built with the library's constructors (so every check
applies, and the patch id is the library's) and saved and loaded with
`toolreplay.write_patches` / `read_patches`. `dirty` says whether the set holds
changes not yet saved to a patch file; every change (set, supply, remove, load)
can be undone, last first.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from toolreplay import (
    JsonValue,
    Operation,
    OperationIdentity,
    OutputPatch,
    Patch,
    Returned,
    read_patches,
    replace_error,
    replace_output,
    supply_error,
    supply_output,
    write_patches,
)
from toolreplay.errors import ReplayedEffectError
from toolreplay.redaction import check_redacted_edit
from toolreplay.runtime.failures import REBUILT_EXCEPTIONS

__all__ = ["UNDO_DEPTH", "LoadedPatches", "OperationLookup", "PendingPatches", "SkippedPatch"]

UNDO_DEPTH = 200
"""How many changes `PendingPatches.undo` can take back."""


class OperationLookup(Protocol):
    """A trace's operations by identity (`toolreplay.Trace`, or the debugger's `TraceFile`)."""

    def get(self, identity: OperationIdentity) -> Operation | None: ...


def _failure(error: str) -> Exception:
    """`Type: message` as the exception a patch raises: an allowlisted built-in
    (`TimeoutError`) as itself, any other type name as `ReplayedEffectError`."""
    type_name, _, message = error.partition(":")
    type_name, message = type_name.strip(), message.strip()
    qualified = type_name if "." in type_name else f"builtins.{type_name}"
    kind = REBUILT_EXCEPTIONS.get(qualified)
    return kind(message) if kind is not None else ReplayedEffectError(type_name, message)


@dataclass(frozen=True, slots=True)
class SkippedPatch:
    """A patch from a file that was not loaded, and why."""

    patch: Patch
    reason: str


@dataclass(frozen=True, slots=True)
class LoadedPatches:
    """What `PendingPatches.load` did."""

    path: Path
    loaded: tuple[Patch, ...]
    skipped: tuple[SkippedPatch, ...] = field(default=())


class PendingPatches:
    """Pending patches of every kind, keyed by the exact identity they target."""

    def __init__(self) -> None:
        self._patches: dict[OperationIdentity, Patch] = {}
        self.revision = 0
        """Counts the changes to the set (an autosave writes it when this moved on)."""
        self.dirty = False
        self.saved_path: Path | None = None
        # What each change replaced, last last: (what the change did, the set before it).
        self._history: list[tuple[str, dict[OperationIdentity, Patch]]] = []
        # The patch ids as last saved or loaded (None: loaded with some skipped, so the
        # set differs from its file whatever it holds).
        self._saved_ids: tuple[str, ...] | None = ()

    def __len__(self) -> int:
        return len(self._patches)

    def __contains__(self, identity: object) -> bool:
        return identity in self._patches

    def __iter__(self) -> Iterator[Patch]:
        return iter(list(self._patches.values()))

    def get(self, identity: OperationIdentity) -> Patch | None:
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
        self.put(patch)
        return patch

    def put(self, patch: Patch) -> Patch:
        """Add `patch`, replacing any pending patch on the same call."""
        previous = self._patches.get(patch.identity)
        if previous is None or previous.patch_id != patch.patch_id:
            what = "added" if previous is None else "changed"
            self._remember(f"{what} patch {patch.patch_id} on {patch.effect}")
            self._patches[patch.identity] = patch
            self.dirty = True
        return patch

    def _remember(self, change: str) -> None:
        self.revision += 1
        self._history.append((change, dict(self._patches)))
        del self._history[:-UNDO_DEPTH]

    def supply(
        self,
        effect: str,
        inputs: dict[str, JsonValue],
        occurrence: int,
        value: JsonValue,
    ) -> OutputPatch:
        """Give a call the trace does not hold the output `value` (`supply_output`)."""
        patch = supply_output(effect=effect, inputs=inputs, occurrence=occurrence, value=value)
        self.put(patch)
        return patch

    def supply_failure(
        self,
        effect: str,
        inputs: dict[str, JsonValue] | None,
        occurrence: int | None,
        error: str,
    ) -> Patch:
        """Make a call the trace does not hold fail (`supply_error`).

        `error` is `Type: message`; an allowlisted built-in (`TimeoutError`) is raised as
        itself, any other type name as `ReplayedEffectError`.
        """
        return self.put(
            supply_error(effect=effect, inputs=inputs, occurrence=occurrence, error=_failure(error))
        )

    def replace_failure(
        self, identity: OperationIdentity, inputs: dict[str, JsonValue] | None, error: str
    ) -> Patch:
        """Make the recorded call `identity` fail with `Type: message` (`replace_error`)."""
        return self.put(
            replace_error(
                effect=identity.effect,
                inputs=inputs,
                occurrence=identity.occurrence,
                error=_failure(error),
            )
        )

    def remove(self, identity: OperationIdentity) -> Patch | None:
        """Drop the patch on `identity`; returns it, or None. `undo` brings it back."""
        patch = self._patches.get(identity)
        if patch is None:
            return None
        self._remember(f"removed patch {patch.patch_id} on {patch.effect}")
        del self._patches[identity]
        self.dirty = True
        return patch

    def undo(self) -> str | None:
        """Take back the last change (set, supply, remove or load); returns what it
        was (`removed patch p-… on crm.customer.get`), or None when there is none.

        The set is back as it was before that change, in the same order; it is
        dirty unless that is what was last saved or loaded.
        """
        if not self._history:
            return None
        self.revision += 1
        change, self._patches = self._history.pop()
        self.dirty = self._ids() != self._saved_ids
        return change

    def _ids(self) -> tuple[str, ...]:
        return tuple(patch.patch_id for patch in self._patches.values())

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write every pending patch to a new patch file (never over an existing one).

        Raises `toolreplay.PatchFileError` (the file exists, the folder is missing,
        it cannot be written); on success the set is clean.
        """
        written = write_patches(path, list(self._patches.values()))
        self.dirty = False
        self.saved_path = written
        self._saved_ids = self._ids()
        return written

    def write_copy(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the patches (for a fork, or the autosave) without marking them saved."""
        return write_patches(path, list(self._patches.values()), overwrite=overwrite)

    def restore(self, path: str | os.PathLike[str]) -> LoadedPatches:
        """Load the patches an earlier session left unsaved (`load`, the set then unsaved).

        Their targets are not checked against the trace here (it may not be indexed
        yet): a fork refuses one that does not fit, naming it.
        """
        loaded = self.load(path)
        self.dirty = bool(len(self))
        self.saved_path = None
        self._saved_ids = ()
        return loaded

    def load(
        self, path: str | os.PathLike[str], trace: OperationLookup | None = None
    ) -> LoadedPatches:
        """Replace the pending set with the patches of a patch file.

        With `trace`, a replace patch whose target the trace does not hold, and a
        supply patch whose target it does hold, are skipped (the fork would refuse
        them), as is a second patch on one identity. A patch that names no exact
        call (`at=N`, the next new call) is skipped too: the set is kept by call. Raises
        `toolreplay.PatchFileError` for a file that cannot be read, leaving the
        pending set unchanged.
        """
        source = Path(path)
        patches = read_patches(source)
        loaded: dict[OperationIdentity, Patch] = {}
        skipped: list[SkippedPatch] = []
        for patch in patches:
            if patch.target_form != "call":
                # Kept call by call here; the command line forks with the file as it is.
                skipped.append(
                    SkippedPatch(
                        patch,
                        f"{patch.patch_id}: names {patch.describe_target(60)}, not one exact "
                        "call; fork with the patch file from the command line",
                    )
                )
                continue
            identity = patch.identity
            if trace is not None and (trace.get(identity) is None) != patch.supplies:
                holds = "already holds a" if patch.supplies else "holds no"
                skipped.append(
                    SkippedPatch(
                        patch,
                        f"{patch.patch_id}: this trace {holds} call of {patch.effect} "
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
        self._remember(f"loaded patches from {source.name}")
        self._patches = loaded
        self.dirty = bool(skipped)
        self.saved_path = source
        self._saved_ids = None if skipped else self._ids()
        return LoadedPatches(source, tuple(loaded.values()), tuple(skipped))
