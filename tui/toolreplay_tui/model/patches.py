"""The patches pending in the debugger: at most one per call, in the order they were made.

A recorded call can have its output replaced (`replace_output`, from the
editors, a value or an `edit(...)` of a streamed answer) or be made to fail
(`replace_error`); a call the recording never made can be given an outcome
(`supply_output`, `supply_error`, offered when a fork stops at it), for that
exact call or, naming no inputs, for the next new call of its effect (several
such patches answer successive calls, in their order here). A patch file may
also name a recorded call by its number (`at=N`). Every patch has a key: the
identity of the call it targets (an `at=N` patch's is its operation's, found in
the trace when loaded), or a slot of its own for a next-call patch, so that two
next-call patches, even equal ones, are two entries.

They are built with the library's constructors (so every check applies, and the
patch id is the library's) and saved and loaded with `toolreplay.write_patches` /
`read_patches`, as they are: a file read back holds the same patches, in the
same order. `dirty` says whether the set holds changes not yet saved to a patch
file; every change (set, supply, remove, load) can be undone, last first.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
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
    TraceFormatError,
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

__all__ = [
    "UNDO_DEPTH",
    "LoadedPatches",
    "NextCallSlot",
    "OperationLookup",
    "PatchKey",
    "PendingPatches",
    "SkippedPatch",
    "describe_target",
]

UNDO_DEPTH = 200
"""How many changes `PendingPatches.undo` can take back."""


class OperationLookup(Protocol):
    """A trace's operations by identity and by number (`toolreplay.Trace`, or the
    debugger's `TraceFile`)."""

    @property
    def operations(self) -> Sequence[Operation]: ...

    def get(self, identity: OperationIdentity) -> Operation | None: ...


@dataclass(frozen=True, slots=True)
class NextCallSlot:
    """The key of a patch that answers the next new call of `effect` (no call of its own)."""

    effect: str
    serial: int


PatchKey = OperationIdentity | NextCallSlot
"""What a pending patch is kept by: its call's identity, or a slot of its own."""


def describe_target(patch: Patch, number: int | None = None) -> str:
    """The call a patch answers, in words, for lists: `crm.customer.get occ 0`,
    `#3 (llm.refund.decide)`, `next new call #2 of openai.responses.create`."""
    if patch.at is not None:
        return f"#{patch.at}" + (f" ({patch.effect})" if patch.effect else "")
    if patch.inputs is None:
        ordinal = f" #{number}" if number is not None else ""
        return f"next new call{ordinal} of {patch.effect}"
    return f"{patch.effect} occ {patch.occurrence}"


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
        self._patches: dict[PatchKey, Patch] = {}
        self._serial = 0  # numbers the next-call slots
        self.revision = 0
        """Counts the changes to the set (an autosave writes it when this moved on)."""
        self.dirty = False
        self.saved_path: Path | None = None
        # What each change replaced, last last: (what the change did, the set before it).
        self._history: list[tuple[str, dict[PatchKey, Patch]]] = []
        # The patch ids as last saved or loaded (None: loaded with some skipped, so the
        # set differs from its file whatever it holds).
        self._saved_ids: tuple[str, ...] | None = ()

    def __len__(self) -> int:
        return len(self._patches)

    def __contains__(self, identity: object) -> bool:
        return identity in self._patches

    def __iter__(self) -> Iterator[Patch]:
        return iter(list(self._patches.values()))

    def entries(self) -> list[tuple[PatchKey, Patch]]:
        """Every pending patch with its key, in order."""
        return list(self._patches.items())

    def get(self, key: PatchKey) -> Patch | None:
        """The patch on a call (its identity), or in a next-call slot."""
        return self._patches.get(key)

    def next_call_number(self, key: PatchKey) -> int | None:
        """Which new call of its effect a next-call patch answers (1: the first), or None."""
        if not isinstance(key, NextCallSlot):
            return None
        slots = [k for k in self._patches if isinstance(k, NextCallSlot) and k.effect == key.effect]
        return slots.index(key) + 1 if key in slots else None

    def next_calls(self, effect: str) -> int:
        """How many next-call patches of `effect` are pending (what a new one follows)."""
        return sum(
            1 for key in self._patches if isinstance(key, NextCallSlot) and key.effect == effect
        )

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

    def put(self, patch: Patch, key: PatchKey | None = None) -> Patch:
        """Add `patch`, replacing the pending patch under `key` (kept in its place).

        `key` defaults to the patch's call (its identity); a patch that answers the
        next new call gets a slot of its own after the others, unless `key` names
        the slot it replaces. An `at=N` patch needs `key` (its operation's identity).
        """
        if key is None:
            if patch.target_form == "next_call":
                self._serial += 1
                key = NextCallSlot(patch.effect, self._serial)
            else:
                key = patch.identity
        previous = self._patches.get(key)
        if previous is None or previous.patch_id != patch.patch_id:
            what = "added" if previous is None else "changed"
            self._remember(
                f"{what} patch {patch.patch_id} on {patch.effect or describe_target(patch)}"
            )
            self._patches[key] = patch
            self.dirty = True
        return patch

    def _remember(self, change: str) -> None:
        self.revision += 1
        self._history.append((change, dict(self._patches)))
        del self._history[:-UNDO_DEPTH]

    def supply(
        self,
        effect: str,
        inputs: dict[str, JsonValue] | None,
        occurrence: int | None,
        value: object,
    ) -> OutputPatch:
        """Give a call the trace does not hold the output `value` (`supply_output`):
        that exact call, or without inputs the next new call of `effect`. `value` may
        be an adapter's recipe (`reply(...)`)."""
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

    def fail_instead(self, key: PatchKey, error: str) -> Patch:
        """Make the patch under `key` raise `Type: message` instead, naming the same call
        the same way (exact, `at=N` or the next new call), in the same place."""
        patch = self._patches[key]
        effect = patch.effect or None
        if patch.supplies:
            assert effect is not None  # a supply patch always names its effect
            made: Patch = supply_error(
                effect=effect,
                inputs=patch.inputs,
                occurrence=patch.occurrence,
                error=_failure(error),
            )
        else:
            made = replace_error(
                effect=effect,
                inputs=patch.inputs,
                occurrence=patch.occurrence,
                at=patch.at,
                error=_failure(error),
            )
        return self.put(made, key)

    def remove(self, key: PatchKey) -> Patch | None:
        """Drop the patch under `key` (a call's identity, or a next-call slot); returns
        it, or None. `undo` brings it back, in its place."""
        patch = self._patches.get(key)
        if patch is None:
            return None
        self._remember(
            f"removed patch {patch.patch_id} on {patch.effect or describe_target(patch)}"
        )
        del self._patches[key]
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
        """Replace the pending set with the patches of a patch file, in its order.

        Every target form is kept: an exact call, a source operation by number
        (`at=N`, kept as it is and shown on that operation) and the next new call
        of an effect. With `trace`, a patch the fork would refuse is skipped, with
        the reason: a replace patch whose call the trace does not hold (or an
        `at=N` beyond its operations, or naming another effect), a supply patch
        whose exact call it does hold, and a second patch on one call. Raises
        `toolreplay.PatchFileError` for a file that cannot be read, leaving the
        pending set unchanged.
        """
        source = Path(path)
        patches = read_patches(source)
        loaded: dict[PatchKey, Patch] = {}
        skipped: list[SkippedPatch] = []
        serial = self._serial
        for patch in patches:
            if patch.target_form == "next_call":
                serial += 1
                loaded[NextCallSlot(patch.effect, serial)] = patch
                continue
            problem, identity = self._target(patch, trace)
            if problem is None and identity is not None and identity in loaded:
                first = loaded[identity]
                problem = (
                    f"a second patch on {describe_target(patch)} (the first, "
                    f"{first.patch_id}, is kept)"
                )
            if problem is not None:
                skipped.append(SkippedPatch(patch, f"{patch.patch_id}: {problem}"))
                continue
            assert identity is not None
            loaded[identity] = patch
        self._remember(f"loaded patches from {source.name}")
        self._patches = loaded
        self._serial = serial
        self.dirty = bool(skipped)
        self.saved_path = source
        self._saved_ids = None if skipped else self._ids()
        return LoadedPatches(source, tuple(loaded.values()), tuple(skipped))

    @staticmethod
    def _target(
        patch: Patch, trace: OperationLookup | None
    ) -> tuple[str | None, OperationIdentity | None]:
        """(why the fork would refuse it, or None; the identity of its call)."""
        if patch.at is not None:
            if trace is None:
                return "names an operation by number, and no trace is open to find it", None
            operations = trace.operations
            try:
                operation = operations[patch.at] if patch.at < len(operations) else None
            except TraceFormatError:
                operation = None  # an unreadable line: the integrity check says which
            if operation is None or operation.logical_id != patch.at:
                return f"this trace has no operation #{patch.at}", None
            if patch.effect and operation.effect != patch.effect:
                return (
                    f"operation #{patch.at} of this trace is {operation.effect}, not {patch.effect}"
                ), None
            return None, operation.identity
        identity = patch.identity
        if trace is not None and (trace.get(identity) is None) != patch.supplies:
            holds = "already holds a" if patch.supplies else "holds no"
            return (
                f"this trace {holds} call of {patch.effect} occurrence {patch.occurrence} "
                "with these inputs"
            ), identity
        return None, identity
