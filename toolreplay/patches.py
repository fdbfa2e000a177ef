"""Patches: the recorded facts a fork changes, and the patch files that hold them.

A patch names its target by the exact identity a recording gives a call
(effect, inputs, occurrence), and its `patch_id` is derived from its content,
so the same change always has the same id, in a file, a branch trace's lineage
and a diff report alike.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, cast

from toolreplay.effect_names import effect_name_problem
from toolreplay.errors import (
    JsonTextError,
    NonPortableValueError,
    PatchError,
    PatchFileError,
    ReplayedEffectError,
)
from toolreplay.files import UnreadableFileError, read_regular_file, write_atomically
from toolreplay.portable import (
    JsonValue,
    canonical_json,
    copy_value,
    ensure_portable,
    fingerprint,
    parse_json_text,
)
from toolreplay.trace.model import OperationIdentity, Raised, Returned

__all__ = [
    "PATCH_FILE_FORMAT",
    "PATCH_FILE_FORMAT_VERSION",
    "PATCH_KINDS",
    "ErrorPatch",
    "OutputPatch",
    "Patch",
    "PatchKind",
    "read_patches",
    "replace_error",
    "replace_output",
    "supply_error",
    "supply_output",
    "write_patches",
]

PATCH_FILE_FORMAT = "toolreplay.patches"
PATCH_FILE_FORMAT_VERSION = 2
_READABLE_VERSIONS = (1, 2)  # version 1 held replace_output patches only

PatchKind = Literal["replace_output", "replace_error", "supply_output", "supply_error"]
PATCH_KINDS: tuple[PatchKind, ...] = (
    "replace_output",
    "replace_error",
    "supply_output",
    "supply_error",
)

_TARGET_KEYS = frozenset({"kind", "effect", "inputs", "occurrence"})
_OUTPUT_KEYS = _TARGET_KEYS | {"value"}
_ERROR_KEYS = _TARGET_KEYS | {"error"}
_ERROR_DETAIL_KEYS = frozenset({"type", "message", "args"})


_KindT = TypeVar("_KindT", bound=str)


class _PatchTarget(Generic[_KindT]):
    """What every patch has: the exact call it targets and its kind.

    Not a dataclass itself: each patch class declares these fields in its own
    place in its field order, and this base shares the behaviour over them.
    """

    __slots__ = ()

    namespace: str
    name: str
    inputs: dict[str, JsonValue]
    occurrence: int
    kind: _KindT
    patch_id: str

    @property
    def effect(self) -> str:
        """The dotted name of the patched effect, `namespace.name`."""
        return f"{self.namespace}.{self.name}"

    @property
    def identity(self) -> OperationIdentity:
        """The identity of the call this patch targets."""
        return OperationIdentity(
            self.namespace, self.name, fingerprint(self.inputs), self.occurrence
        )

    @property
    def supplies(self) -> bool:
        """True for a call the source does not hold (`supply_*`), False for `replace_*`."""
        return self.kind.startswith("supply_")

    def _check_target(self, kinds: tuple[_KindT, _KindT], what: str) -> None:
        """Check the kind, effect, occurrence and inputs; keep a copy of the inputs."""
        if self.kind not in kinds:
            raise PatchError(
                f'{what} patch\'s kind is "{kinds[0]}" or "{kinds[1]}", not {self.kind!r}'
            )
        problem = effect_name_problem(self.namespace, self.name)
        if problem is not None:
            raise PatchError(
                f"patch effect {self.effect!r}: {problem}; give the dotted name the trace "
                "records, like 'crm.customer.get'"
            )
        effect = self.effect
        if type(self.occurrence) is not int or self.occurrence < 0:
            raise PatchError(
                f"patch for {effect}: occurrence must be a non-negative int, "
                f"got {self.occurrence!r}"
            )
        if not isinstance(cast(object, self.inputs), Mapping):
            raise NonPortableValueError(
                f"patch inputs for {effect}: must be a dict of the call's arguments by "
                f"parameter name, got {type(self.inputs).__name__}",
                path="$",
            )
        # Copies: the patch_id must keep describing the content, whatever the caller
        # does with the objects it passed in.
        inputs = ensure_portable(dict(self.inputs), what=f"patch inputs for {effect}")
        object.__setattr__(self, "inputs", cast(dict[str, JsonValue], copy_value(inputs)))

    def _set_content_id(self) -> None:
        content = canonical_json(cast(JsonValue, self.to_dict(with_id=False)))
        object.__setattr__(self, "patch_id", "p-" + hashlib.sha256(content).hexdigest()[:16])

    def _change(self) -> dict[str, Any]:
        """What the patch makes the call do, as the patch file stores it."""
        raise NotImplementedError

    def to_dict(self, *, with_id: bool = True) -> dict[str, Any]:
        """The patch as a patch file stores it."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "effect": self.effect,
            "inputs": self.inputs,
            "occurrence": self.occurrence,
            **self._change(),
        }
        if with_id:
            data["patch_id"] = self.patch_id
        return data


@dataclass(frozen=True, slots=True)
class OutputPatch(_PatchTarget[Literal["replace_output", "supply_output"]]):
    """Make one exact call return `value` in a fork.

    `kind` `replace_output` (what `replace_output()` builds) replaces the outcome
    of a call the source trace recorded, a value or a failure; `supply_output`
    (`supply_output()`) gives the outcome of a call the source never saw. The
    same checks apply however it is built, and inputs and value are copied.
    Treat a patch as immutable: its `patch_id` describes the content it was
    built with.
    """

    namespace: str
    name: str
    inputs: dict[str, JsonValue]
    occurrence: int
    value: JsonValue
    kind: Literal["replace_output", "supply_output"] = "replace_output"
    patch_id: str = field(init=False)

    def __post_init__(self) -> None:
        self._check_target(("replace_output", "supply_output"), "an output")
        value = ensure_portable(self.value, what=f"patch value for {self.effect}")
        object.__setattr__(self, "value", copy_value(value))
        self._set_content_id()

    @property
    def outcome(self) -> Returned:
        """What the patched call does in the fork: return `value`."""
        return Returned(self.value)

    def _change(self) -> dict[str, Any]:
        return {"value": self.value}


@dataclass(frozen=True, slots=True)
class ErrorPatch(_PatchTarget[Literal["replace_error", "supply_error"]]):
    """Make one exact call raise in a fork: `error_type` with `message` and `args`.

    The failure is raised as a recorded one is on replay: an allowlisted
    built-in (`builtins.TimeoutError`, `REBUILT_EXCEPTIONS`) with `args` as
    itself, an adapter's provider error as itself, anything else as
    `ReplayedEffectError` carrying the type name and message. `kind`
    `replace_error` targets a recorded call (ok or failed), `supply_error` a call
    the source never saw. Build it with `replace_error()` or `supply_error()`.
    """

    namespace: str
    name: str
    inputs: dict[str, JsonValue]
    occurrence: int
    error_type: str
    message: str
    args: list[JsonValue] | None = None
    kind: Literal["replace_error", "supply_error"] = "replace_error"
    patch_id: str = field(init=False)

    def __post_init__(self) -> None:
        self._check_target(("replace_error", "supply_error"), "an error")
        effect = self.effect
        if type(self.error_type) is not str or not self.error_type.strip():
            raise PatchError(
                f"patch error for {effect}: the error type must be a qualified name like "
                f"'builtins.TimeoutError', got {self.error_type!r}"
            )
        if type(self.message) is not str:
            raise PatchError(
                f"patch error for {effect}: the message must be a string, got "
                f"{type(self.message).__name__}"
            )
        if self.args is not None:
            if type(cast(object, self.args)) is not list:
                raise NonPortableValueError(
                    f"patch error args for {effect}: must be a list or None, got "
                    f"{type(self.args).__name__}",
                    path="$",
                )
            args = ensure_portable(self.args, what=f"patch error args for {effect}")
            object.__setattr__(self, "args", copy_value(args))
        ensure_portable(self.message, what=f"patch error message for {effect}")
        self._set_content_id()

    @property
    def outcome(self) -> Raised:
        """What the patched call does in the fork: raise this failure."""
        return Raised(self.error_type, self.message, self.args)

    def _change(self) -> dict[str, Any]:
        return {"error": {"type": self.error_type, "message": self.message, "args": self.args}}


Patch = OutputPatch | ErrorPatch
"""Any patch a fork applies."""


def replace_output(
    *, effect: str, inputs: Mapping[str, object], occurrence: int = 0, value: object
) -> OutputPatch:
    """A patch that makes the recorded call `effect(**inputs)` (that occurrence) return `value`.

        patch = toolreplay.replace_output(
            effect="crm.customer.get",
            inputs={"customer_id": 42},
            occurrence=0,
            value={"id": 42, "active": False},
        )

    `inputs` are the call's inputs as the trace records them (bound arguments
    by parameter name, defaults included). Inputs and value must be portable
    JSON; the patch is checked against the source trace when a fork opens.
    """
    return _output_patch(effect, inputs, occurrence, value, "replace_output")


def supply_output(
    *, effect: str, inputs: Mapping[str, object], occurrence: int = 0, value: object
) -> OutputPatch:
    """A patch that answers a call the source trace never recorded: it returns `value`.

        toolreplay.supply_output(
            effect="review.queue.add",
            inputs={"order_id": "ord_1042", "reason": "above the limit"},
            value={"ticket": "RV-1"},
        )

    For the calls a patched run makes that the recording never saw. A fork
    refuses it when the source does hold the call (use `replace_output`).
    """
    return _output_patch(effect, inputs, occurrence, value, "supply_output")


def _output_patch(
    effect: str,
    inputs: Mapping[str, object],
    occurrence: int,
    value: object,
    kind: Literal["replace_output", "supply_output"],
) -> OutputPatch:
    namespace, _, name = effect.partition(".")
    return OutputPatch(
        namespace,
        name,
        cast(dict[str, JsonValue], inputs),
        occurrence,
        cast(JsonValue, value),
        kind,
    )


def _failure_of(effect: str, error: BaseException) -> Raised:
    # Imported here: the runtime package imports this module (through fork).
    from toolreplay.runtime.failures import REBUILT_EXCEPTIONS, rebuilt_as_itself

    if isinstance(error, ReplayedEffectError):
        return Raised(error.original_type, error.original_message, None)
    raised = rebuilt_as_itself(error) if isinstance(error, Exception) else None
    if raised is None:
        allowed = ", ".join(name.removeprefix("builtins.") for name in REBUILT_EXCEPTIONS)
        raise PatchError(
            f"patch error for {effect}: {type(error).__qualname__} would not be raised again "
            f"as itself in a fork. Give one of {allowed} (with portable arguments), or "
            "ReplayedEffectError('myapp.errors.CrmUnavailable', 'message') for any other type"
        )
    return raised


def replace_error(
    *, effect: str, inputs: Mapping[str, object], occurrence: int = 0, error: BaseException
) -> ErrorPatch:
    """A patch that makes the recorded call `effect(**inputs)` (that occurrence) raise `error`.

        patch = toolreplay.replace_error(
            effect="crm.customer.get",
            inputs={"customer_id": 42},
            error=TimeoutError("crm timed out"),
        )

    "What if the CRM had timed out?": the call fails in the fork whatever the
    source recorded. `error` is an allowlisted built-in (`REBUILT_EXCEPTIONS`,
    portable args) or `ReplayedEffectError(type_name, message)` for any other
    type; the application sees exactly what a replayed failure of that type is.
    """
    return _error_patch(effect, inputs, occurrence, error, "replace_error")


def supply_error(
    *, effect: str, inputs: Mapping[str, object], occurrence: int = 0, error: BaseException
) -> ErrorPatch:
    """A patch that makes a call the source never recorded raise `error` (see `replace_error`)."""
    return _error_patch(effect, inputs, occurrence, error, "supply_error")


def _error_patch(
    effect: str,
    inputs: Mapping[str, object],
    occurrence: int,
    error: BaseException,
    kind: Literal["replace_error", "supply_error"],
) -> ErrorPatch:
    namespace, _, name = effect.partition(".")
    raised = _failure_of(effect, error)
    return ErrorPatch(
        namespace,
        name,
        cast(dict[str, JsonValue], inputs),
        occurrence,
        raised.error_type,
        raised.message,
        raised.args,
        kind,
    )


def write_patches(
    path: str | os.PathLike[str], patches: Iterable[Patch], *, overwrite: bool = False
) -> Path:
    """Save patches to a versioned JSON patch file, atomically; returns its path."""
    target = Path(path)
    document = {
        "format": PATCH_FILE_FORMAT,
        "format_version": PATCH_FILE_FORMAT_VERSION,
        "patches": [patch.to_dict() for patch in patches],
    }
    data = (json.dumps(document, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode()
    try:
        write_atomically(target, data, overwrite=overwrite)
    except FileExistsError:
        raise PatchFileError(
            f"{target}: a file already exists here; choose another path or pass overwrite=True",
            path=target,
        ) from None
    except IsADirectoryError:
        raise PatchFileError(
            f"{target}: is a directory; give the path of a patch file", path=target
        ) from None
    except FileNotFoundError:
        raise PatchFileError(
            f"{target}: the folder {target.parent} does not exist; create it first", path=target
        ) from None
    except OSError as error:
        raise PatchFileError(
            f"{target}: cannot write the patch file: {error.strerror or error}", path=target
        ) from None
    return target


def read_patches(path: str | os.PathLike[str]) -> list[Patch]:
    """Load a patch file written by `write_patches` (or by hand, in the same format)."""
    source = Path(path)

    def fail(message: str) -> PatchFileError:
        return PatchFileError(f"{source}: {message}", path=source)

    try:
        loaded = parse_json_text(read_regular_file(source, "patch"), what="the patch file")
    except UnreadableFileError as error:
        raise fail(error.problem) from None
    except JsonTextError as error:
        raise fail(str(error)) from None
    document = cast(dict[str, Any], loaded) if type(loaded) is dict else {}
    if document.get("format") != PATCH_FILE_FORMAT:
        raise fail(f'not a patch file: expected an object with "format": "{PATCH_FILE_FORMAT}"')
    version = document.get("format_version")
    if type(version) is not int or version not in _READABLE_VERSIONS:
        raise fail(
            f"patch file format version {json.dumps(version)} is not supported; this "
            f"toolreplay reads versions {' and '.join(map(str, _READABLE_VERSIONS))}"
        )
    unknown = sorted(document.keys() - {"format", "format_version", "patches"})
    if unknown:
        raise fail(f"unknown keys {', '.join(unknown)}")
    entries = document.get("patches")
    if type(entries) is not list:
        raise fail('"patches" must be a list')
    patches: list[Patch] = []
    for index, entry in enumerate(cast(list[Any], entries)):

        def fail_entry(message: str, index: int = index) -> PatchFileError:
            return fail(f"patches[{index}]: {message}")

        patches.append(_decode_patch(entry, version, fail=fail_entry))
    return patches


def _decode_patch(entry: Any, version: int, *, fail: Callable[[str], PatchFileError]) -> Patch:
    if type(entry) is not dict:
        raise fail("must be an object")
    entry = cast(dict[str, Any], entry)
    given_id = entry.get("patch_id")
    kinds: tuple[str, ...] = ("replace_output",) if version == 1 else PATCH_KINDS
    kind = entry.get("kind")
    if kind not in kinds:
        expected = " or ".join(f'"{k}"' for k in kinds)
        found = "missing" if "kind" not in entry else f"found {json.dumps(kind)}"
        raise fail(f"kind must be {expected} (format version {version}), {found}")
    expected_keys = _OUTPUT_KEYS if kind in ("replace_output", "supply_output") else _ERROR_KEYS
    keys = entry.keys() - {"patch_id"}
    if keys != expected_keys:
        problems: list[str] = []
        if expected_keys - keys:
            problems.append(f"missing {', '.join(sorted(expected_keys - keys))}")
        if keys - expected_keys:
            problems.append(f"unknown {', '.join(sorted(keys - expected_keys))}")
        raise fail("; ".join(problems))
    if type(entry["effect"]) is not str:
        raise fail("effect must be a string")
    namespace, _, name = cast(str, entry["effect"]).partition(".")
    if kind in ("replace_error", "supply_error") and (
        type(entry["error"]) is not dict or entry["error"].keys() != _ERROR_DETAIL_KEYS
    ):
        raise fail('error must be an object with exactly "type", "message" and "args"')
    patch: Patch
    try:
        if kind in ("replace_output", "supply_output"):
            patch = OutputPatch(
                namespace, name, entry["inputs"], entry["occurrence"], entry["value"], kind
            )
        else:
            error = cast(dict[str, Any], entry["error"])
            patch = ErrorPatch(
                namespace,
                name,
                entry["inputs"],
                entry["occurrence"],
                error["type"],
                error["message"],
                error["args"],
                kind,
            )
    except (ValueError, NonPortableValueError) as error:
        raise fail(str(error)) from None
    if given_id is not None and given_id != patch.patch_id:
        raise fail(
            f"patch_id {given_id!r} does not match its content ({patch.patch_id}); the patch "
            "was edited: delete its patch_id line to accept the edit"
        )
    return patch
