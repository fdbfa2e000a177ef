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
from typing import Any, Literal, cast

from toolreplay.errors import JsonTextError, NonPortableValueError, PatchError, PatchFileError
from toolreplay.files import UnreadableFileError, read_regular_file, write_atomically
from toolreplay.portable import (
    JsonValue,
    canonical_json,
    copy_value,
    ensure_portable,
    fingerprint,
    parse_json_text,
)
from toolreplay.trace.model import OperationIdentity, effect_name_problem

__all__ = [
    "PATCH_FILE_FORMAT",
    "PATCH_FILE_FORMAT_VERSION",
    "OutputPatch",
    "read_patches",
    "replace_output",
    "write_patches",
]

PATCH_FILE_FORMAT = "toolreplay.patches"
PATCH_FILE_FORMAT_VERSION = 1

_PATCH_KEYS = frozenset({"kind", "effect", "inputs", "occurrence", "value"})


@dataclass(frozen=True, slots=True)
class OutputPatch:
    """Replace the recorded output of one exact call with `value`.

    Build it with `replace_output()` (or directly: the same checks apply, and
    inputs and value are copied). The patched call returns `value` in the
    fork, whatever the source recorded (a value or a failure). Treat a patch as
    immutable: its `patch_id` describes the content it was built with.
    """

    namespace: str
    name: str
    inputs: dict[str, JsonValue]
    occurrence: int
    value: JsonValue
    patch_id: str = field(init=False)
    kind: Literal["replace_output"] = field(default="replace_output", init=False)

    def __post_init__(self) -> None:
        problem = effect_name_problem(self.namespace, self.name)
        if problem is not None:
            raise PatchError(
                f"patch effect {self.effect!r}: {problem}; give the dotted name the trace "
                "records, like 'crm.customer.get'"
            )
        effect = self.effect
        if type(self.occurrence) is not int or self.occurrence < 0:
            raise PatchError(
                f"patch for {effect}: occurrence must be a non-negative int, got "
                f"{self.occurrence!r}"
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
        value = ensure_portable(self.value, what=f"patch value for {effect}")
        object.__setattr__(self, "inputs", copy_value(inputs))
        object.__setattr__(self, "value", copy_value(value))
        content = canonical_json(cast(JsonValue, self.to_dict(with_id=False)))
        object.__setattr__(self, "patch_id", "p-" + hashlib.sha256(content).hexdigest()[:16])

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

    def to_dict(self, *, with_id: bool = True) -> dict[str, Any]:
        """The patch as a patch file stores it."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "effect": self.effect,
            "inputs": self.inputs,
            "occurrence": self.occurrence,
            "value": self.value,
        }
        if with_id:
            data["patch_id"] = self.patch_id
        return data


def replace_output(
    *, effect: str, inputs: Mapping[str, object], occurrence: int = 0, value: object
) -> OutputPatch:
    """A patch that makes the call `effect(**inputs)` (that occurrence) return `value`.

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
    namespace, _, name = effect.partition(".")
    return OutputPatch(
        namespace,
        name,
        cast(dict[str, JsonValue], inputs),
        occurrence,
        cast(JsonValue, value),
    )


def write_patches(
    path: str | os.PathLike[str], patches: Iterable[OutputPatch], *, overwrite: bool = False
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


def read_patches(path: str | os.PathLike[str]) -> list[OutputPatch]:
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
    if document.get("format_version") != PATCH_FILE_FORMAT_VERSION:
        raise fail(
            f"patch file format version {json.dumps(document.get('format_version'))} is not "
            f"supported; this toolreplay reads version {PATCH_FILE_FORMAT_VERSION}"
        )
    unknown = sorted(document.keys() - {"format", "format_version", "patches"})
    if unknown:
        raise fail(f"unknown keys {', '.join(unknown)}")
    entries = document.get("patches")
    if type(entries) is not list:
        raise fail('"patches" must be a list')
    patches: list[OutputPatch] = []
    for index, entry in enumerate(cast(list[Any], entries)):

        def fail_entry(message: str, index: int = index) -> PatchFileError:
            return fail(f"patches[{index}]: {message}")

        patches.append(_decode_patch(entry, fail=fail_entry))
    return patches


def _decode_patch(entry: Any, *, fail: Callable[[str], PatchFileError]) -> OutputPatch:
    if type(entry) is not dict:
        raise fail("must be an object")
    entry = cast(dict[str, Any], entry)
    given_id = entry.get("patch_id")
    keys = entry.keys() - {"patch_id"}
    if keys != _PATCH_KEYS:
        problems: list[str] = []
        if _PATCH_KEYS - keys:
            problems.append(f"missing {', '.join(sorted(_PATCH_KEYS - keys))}")
        if keys - _PATCH_KEYS:
            problems.append(f"unknown {', '.join(sorted(keys - _PATCH_KEYS))}")
        raise fail("; ".join(problems))
    if entry["kind"] != "replace_output":
        raise fail(f'kind must be "replace_output", found {json.dumps(entry["kind"])}')
    if type(entry["effect"]) is not str:
        raise fail("effect must be a string")
    try:
        patch = replace_output(
            effect=entry["effect"],
            inputs=entry["inputs"],
            occurrence=entry["occurrence"],
            value=entry["value"],
        )
    except (ValueError, NonPortableValueError) as error:
        raise fail(str(error)) from None
    if given_id is not None and given_id != patch.patch_id:
        raise fail(
            f"patch_id {given_id!r} does not match its content ({patch.patch_id}); the patch "
            "was edited: delete its patch_id line to accept the edit"
        )
    return patch
