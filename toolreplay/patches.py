"""Patches: the recorded facts a fork changes, and the patch files that hold them.

A patch names its target in one of three ways: the exact identity a recording
gives a call (effect, inputs, occurrence); the number of a source operation
(`at=N`, a `replace_*` patch); or, for a `supply_*` patch that names no inputs,
the next call of its effect that the source does not hold. What it sets is a
value, an error, or an `OutputRecipe` (an adapter's `reply(...)` or `edit(...)`)
that the fork resolves against the call it answers. Its `patch_id` is derived
from its content, so the same change always has the same id, in a file, a
branch trace's lineage and a diff report alike.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, cast

from toolreplay.documents import problem, shown
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
    preview,
)
from toolreplay.trace.model import OperationIdentity, Raised, Returned

__all__ = [
    "PATCH_FILE_FORMAT",
    "PATCH_FILE_FORMAT_VERSION",
    "PATCH_KINDS",
    "RECIPE_KINDS",
    "ErrorPatch",
    "OutputPatch",
    "OutputRecipe",
    "Patch",
    "PatchKind",
    "RecipeKind",
    "TargetForm",
    "read_patches",
    "replace_error",
    "replace_output",
    "supply_error",
    "supply_output",
    "write_patches",
]

PATCH_FILE_FORMAT = "toolreplay.patches"
PATCH_FILE_FORMAT_VERSION = 3
# Version 1 held replace_output patches only; version 2 the four kinds on exact calls;
# version 3 adds at=N, next-call supply patches and recipes.
_READABLE_VERSIONS = (1, 2, 3)

PatchKind = Literal["replace_output", "replace_error", "supply_output", "supply_error"]
PATCH_KINDS: tuple[PatchKind, ...] = (
    "replace_output",
    "replace_error",
    "supply_output",
    "supply_error",
)

RecipeKind = Literal["reply", "edit"]
RECIPE_KINDS: tuple[RecipeKind, ...] = ("reply", "edit")
"""What an `OutputRecipe` can be: a reply written for the call (`reply`), or an edit of
the recorded output it replaces (`edit`, `replace_output` only)."""

TargetForm = Literal["call", "operation", "next_call"]
"""How a patch names its target: an exact call identity (effect, inputs, occurrence),
a source operation's number (`at=N`), or the next call of its effect that the source
does not hold (a supply patch without inputs)."""


@dataclass(frozen=True, slots=True)
class OutputRecipe:
    """An output an adapter builds for the call a patch answers, when the fork applies it.

    Made by an adapter's constructors (`toolreplay.adapters.openai.reply(...)` and
    `edit(...)`), not by hand: `kind` is `reply` (an answer written for the call:
    the adapter builds the provider's full response, streamed or not, for the
    request the application makes) or `edit` (changes to the recorded output a
    `replace_output` patch replaces), `namespace` the adapter's effect namespace
    (`openai`; `*` for the plain HTTP adapter, whose namespace is the name each
    instrumented client is given), and `spec` the recipe as portable JSON, which a
    patch file stores and the patch id is computed from. The resolved output is what
    the branch keeps. See `toolreplay.runtime.recipes` for how an adapter resolves it.
    """

    kind: RecipeKind
    namespace: str
    spec: JsonValue

    def __post_init__(self) -> None:
        if self.kind not in RECIPE_KINDS:
            raise PatchError(
                f"an output recipe's kind is {' or '.join(RECIPE_KINDS)}, not {self.kind!r}"
            )
        if type(self.namespace) is not str or not self.namespace:
            raise PatchError(
                f"an output recipe names the effect namespace of its adapter ('openai'), "
                f"got {self.namespace!r}"
            )
        spec = ensure_portable(self.spec, what=f"the {self.kind} recipe")
        object.__setattr__(self, "spec", copy_value(spec))


_KindT = TypeVar("_KindT", bound=str)


class _PatchTarget(Generic[_KindT]):
    """What every patch has: the call it targets and its kind.

    Not a dataclass itself: each patch class declares these fields in its own
    place in its field order, and this base shares the behaviour over them.
    `inputs` and `occurrence` are None unless the patch names an exact call;
    `at` is set when it names a source operation by number (then `namespace`
    and `name` are empty unless the effect is given too, as a check).
    """

    __slots__ = ()

    namespace: str
    name: str
    inputs: dict[str, JsonValue] | None
    occurrence: int | None
    at: int | None
    kind: _KindT
    patch_id: str

    @property
    def effect(self) -> str:
        """The dotted name of the patched effect, `namespace.name` ('' for an `at=N`
        patch that names no effect)."""
        return f"{self.namespace}.{self.name}" if self.namespace else ""

    @property
    def target_form(self) -> TargetForm:
        """How the patch names its target (see `TargetForm`)."""
        if self.at is not None:
            return "operation"
        return "next_call" if self.inputs is None else "call"

    @property
    def identity(self) -> OperationIdentity:
        """The identity of the exact call this patch targets.

        Raises `PatchError` for a patch that names a source operation (`at=N`) or
        the next new call: their identity is known only against a trace, when a
        fork resolves them.
        """
        if self.inputs is None or self.occurrence is None:
            raise PatchError(
                f"patch {self.patch_id} names {self.describe_target()}, not one exact call; "
                "a fork resolves it against the source trace"
            )
        return OperationIdentity(
            self.namespace, self.name, fingerprint(self.inputs), self.occurrence
        )

    @property
    def supplies(self) -> bool:
        """True for a call the source does not hold (`supply_*`), False for `replace_*`."""
        return self.kind.startswith("supply_")

    def describe_target(self, limit: int = 120) -> str:
        """The target in words, for messages (`crm.customer.get occurrence 0 with inputs ...`)."""
        if self.at is not None:
            return f"source operation {self.at}" + (f" ({self.effect})" if self.namespace else "")
        if self.inputs is None:
            return f"the next call of {self.effect} that the source does not hold"
        return (
            f"{self.effect} occurrence {self.occurrence} with inputs {preview(self.inputs, limit)}"
        )

    def _check_target(self, kinds: tuple[_KindT, _KindT], what: str) -> None:
        """Check the kind and the target; keep a copy of the inputs."""
        if self.kind not in kinds:
            raise PatchError(
                f'{what} patch\'s kind is "{kinds[0]}" or "{kinds[1]}", not {self.kind!r}'
            )
        if self.at is not None:
            self._check_operation_target()
            return
        problem = effect_name_problem(self.namespace, self.name)
        if problem is not None:
            raise PatchError(
                f"patch effect {self.effect or self.name!r}: {problem}; give the dotted name "
                "the trace records, like 'crm.customer.get'"
            )
        effect = self.effect
        if self.inputs is None:
            if not self.supplies:
                raise PatchError(
                    f"{self.kind} for {effect}: name the recorded call it changes, with "
                    "inputs= (and occurrence=) as the trace records them, or with at=N, its "
                    "operation number as `toolreplay show` prints it"
                )
            if self.occurrence is not None:
                raise PatchError(
                    f"{self.kind} for {effect}: occurrence={self.occurrence!r} counts calls "
                    "with the same inputs, so it needs inputs=; without inputs (and "
                    f"occurrence) the patch answers the next call of {effect} that the source "
                    "does not hold"
                )
            return
        if self.occurrence is None:
            object.__setattr__(self, "occurrence", 0)
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

    def _check_operation_target(self) -> None:
        """`at=N`: a recorded operation by number; the effect, if given, is a check."""
        at = self.at
        if type(at) is not int or at < 0:
            raise PatchError(
                f"{self.kind}: at must be a non-negative int, the number of a source "
                f"operation as `toolreplay show` prints it, got {at!r}"
            )
        if self.supplies:
            raise PatchError(
                f"{self.kind} at={at}: at= names an operation the source recorded, and a "
                "supply patch answers a call the source does not hold; use "
                f"{self.kind.replace('supply_', 'replace_')} to change operation {at}"
            )
        if self.inputs is not None or self.occurrence is not None:
            raise PatchError(
                f"{self.kind} at={at}: give either at=N or inputs= and occurrence=, not both"
            )
        if self.namespace or self.name:
            problem = effect_name_problem(self.namespace, self.name)
            if problem is not None:
                raise PatchError(
                    f"patch effect {self.namespace}.{self.name!s}: {problem}; give the dotted "
                    "name the trace records, like 'crm.customer.get'"
                )

    def _set_content_id(self) -> None:
        content = canonical_json(cast(JsonValue, self.to_dict(with_id=False)))
        object.__setattr__(self, "patch_id", "p-" + hashlib.sha256(content).hexdigest()[:16])

    def _change(self) -> dict[str, Any]:
        """What the patch makes the call do, as the patch file stores it."""
        raise NotImplementedError

    def to_dict(self, *, with_id: bool = True) -> dict[str, Any]:
        """The patch as a patch file stores it (only the target keys its form has)."""
        data: dict[str, Any] = {"kind": self.kind}
        if self.at is not None:
            data["at"] = self.at
            if self.namespace:
                data["effect"] = self.effect
        else:
            data["effect"] = self.effect
            if self.inputs is not None:
                data["inputs"] = self.inputs
                data["occurrence"] = self.occurrence
        data.update(self._change())
        if with_id:
            data["patch_id"] = self.patch_id
        return data


@dataclass(frozen=True, slots=True)
class OutputPatch(_PatchTarget[Literal["replace_output", "supply_output"]]):
    """Make a call return `value` in a fork.

    `kind` `replace_output` (what `replace_output()` builds) replaces the outcome
    of a call the source trace recorded, a value or a failure; `supply_output`
    (`supply_output()`) gives the outcome of a call the source never saw. The
    same checks apply however it is built, and inputs and value are copied.
    With `recipe` set (`reply` or `edit`), `value` is that recipe's spec, which
    the fork resolves against the call it answers. Treat a
    patch as immutable: its `patch_id` describes the content it was built with.
    """

    namespace: str
    name: str
    inputs: dict[str, JsonValue] | None
    occurrence: int | None
    value: JsonValue
    kind: Literal["replace_output", "supply_output"] = "replace_output"
    recipe: RecipeKind | None = None
    at: int | None = None
    patch_id: str = field(init=False)

    def __post_init__(self) -> None:
        self._check_target(("replace_output", "supply_output"), "an output")
        if self.recipe is not None:
            if self.recipe not in RECIPE_KINDS:
                raise PatchError(
                    f"patch for {self.describe_target()}: the recipe is "
                    f"{' or '.join(RECIPE_KINDS)}, not {self.recipe!r}"
                )
            if self.recipe == "edit" and self.supplies:
                raise PatchError(
                    f"supply_output for {self.describe_target()}: edit(...) changes a "
                    "recorded output, and a supply patch answers a call the source does not "
                    "hold; use reply(...) or the output itself, or replace_output for a "
                    "recorded call"
                )
        what = f"patch {self.recipe or 'value'} for {self.effect or self.describe_target()}"
        value = ensure_portable(self.value, what=what)
        object.__setattr__(self, "value", copy_value(value))
        self._set_content_id()

    @property
    def outcome(self) -> Returned:
        """What the patched call does in the fork: return `value`.

        Raises `PatchError` for a recipe, whose output exists only once a fork
        resolves it against the call it answers.
        """
        if self.recipe is not None:
            raise PatchError(
                f"patch {self.patch_id} holds a {self.recipe} recipe, whose output a fork "
                "builds for the call it answers"
            )
        return Returned(self.value)

    def _change(self) -> dict[str, Any]:
        return {self.recipe or "value": self.value}


@dataclass(frozen=True, slots=True)
class ErrorPatch(_PatchTarget[Literal["replace_error", "supply_error"]]):
    """Make a call raise in a fork: `error_type` with `message` and `args`.

    The failure is raised as a recorded one is on replay: an allowlisted
    built-in (`builtins.TimeoutError`, `REBUILT_EXCEPTIONS`) with `args` as
    itself, an adapter's provider error as itself, anything else as
    `ReplayedEffectError` carrying the type name and message. `kind`
    `replace_error` targets a recorded call (ok or failed), `supply_error` a call
    the source never saw. Build it with `replace_error()` or `supply_error()`.
    """

    namespace: str
    name: str
    inputs: dict[str, JsonValue] | None
    occurrence: int | None
    error_type: str
    message: str
    args: list[JsonValue] | None = None
    kind: Literal["replace_error", "supply_error"] = "replace_error"
    at: int | None = None
    patch_id: str = field(init=False)

    def __post_init__(self) -> None:
        self._check_target(("replace_error", "supply_error"), "an error")
        effect = self.effect or self.describe_target()
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
    *,
    effect: str | None = None,
    inputs: Mapping[str, object] | None = None,
    occurrence: int | None = None,
    at: int | None = None,
    value: object,
) -> OutputPatch:
    """A patch that makes a recorded call return `value`.

        patch = toolreplay.replace_output(
            effect="crm.customer.get",
            inputs={"customer_id": 42},
            occurrence=0,
            value={"id": 42, "active": False},
        )
        same = toolreplay.replace_output(at=0, value={"id": 42, "active": False})

    The call is named by `effect`, `inputs` (as the trace records them: bound
    arguments by parameter name, defaults included) and `occurrence` (default
    0), or by `at`, its operation number in the source as `toolreplay show`
    prints it (an `effect` given with `at` is checked against that operation).
    `value` is portable JSON, or an adapter's recipe (`reply(...)`,
    `edit(...)` of `toolreplay.adapters.openai`) that the fork resolves against
    the call. The patch is checked against the source trace when a fork opens.
    """
    return _output_patch(effect, inputs, occurrence, at, value, "replace_output")


def supply_output(
    *,
    effect: str,
    inputs: Mapping[str, object] | None = None,
    occurrence: int | None = None,
    value: object,
) -> OutputPatch:
    """A patch that answers a call the source trace never recorded: it returns `value`.

        toolreplay.supply_output(
            effect="review.queue.add",
            inputs={"order_id": "ord_1042", "reason": "above the limit"},
            value={"ticket": "RV-1"},
        )
        toolreplay.supply_output(effect="review.queue.add", value={"ticket": "RV-1"})

    For the calls a patched run makes that the recording never saw. With
    `inputs` it answers exactly that call (and `occurrence`); without them it
    answers the next call of `effect` the source does not hold, in the order the
    calls are made, and several such patches answer successive calls. A patch
    naming inputs wins for its own call. A fork refuses it when the source does
    hold the call (use `replace_output`). `value` may be an adapter's
    `reply(...)`, built for the request the application makes.
    """
    return _output_patch(effect, inputs, occurrence, None, value, "supply_output")


def _split(effect: str | None) -> tuple[str, str]:
    if effect is None:
        return "", ""
    if type(cast(object, effect)) is not str:
        raise PatchError(
            f"patch effect must be a dotted name like 'crm.customer.get', got {effect!r}"
        )
    namespace, _, name = effect.partition(".")
    if not namespace:
        raise PatchError(
            f"patch effect {effect!r}: give the dotted name the trace records, like "
            "'crm.customer.get'"
        )
    return namespace, name


def _output_patch(
    effect: str | None,
    inputs: Mapping[str, object] | None,
    occurrence: int | None,
    at: int | None,
    value: object,
    kind: Literal["replace_output", "supply_output"],
) -> OutputPatch:
    namespace, name = _split(effect)
    recipe: RecipeKind | None = None
    if isinstance(value, OutputRecipe):
        # "*": an adapter whose namespace is each client's own name (the plain HTTP one).
        if namespace and value.namespace not in (namespace, "*"):
            raise PatchError(
                f"patch for {effect}: this {value.kind}(...) comes from the adapter of "
                f"{value.namespace}.* effects and cannot answer a {namespace}.* call; give "
                "the output value itself"
            )
        recipe, value = value.kind, value.spec
    return OutputPatch(
        namespace,
        name,
        cast(dict[str, JsonValue] | None, inputs),
        occurrence,
        cast(JsonValue, value),
        kind,
        recipe,
        at,
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
    *,
    effect: str | None = None,
    inputs: Mapping[str, object] | None = None,
    occurrence: int | None = None,
    at: int | None = None,
    error: BaseException,
) -> ErrorPatch:
    """A patch that makes a recorded call raise `error`.

        patch = toolreplay.replace_error(
            effect="crm.customer.get",
            inputs={"customer_id": 42},
            error=TimeoutError("crm timed out"),
        )

    "What if the CRM had timed out?": the call fails in the fork whatever the
    source recorded. The call is named as for `replace_output` (effect, inputs
    and occurrence, or `at=N`). `error` is an allowlisted built-in
    (`REBUILT_EXCEPTIONS`, portable args) or `ReplayedEffectError(type_name,
    message)` for any other type; the application sees exactly what a replayed
    failure of that type is.
    """
    return _error_patch(effect, inputs, occurrence, at, error, "replace_error")


def supply_error(
    *,
    effect: str,
    inputs: Mapping[str, object] | None = None,
    occurrence: int | None = None,
    error: BaseException,
) -> ErrorPatch:
    """A patch that makes a call the source never recorded raise `error`.

    Named as for `supply_output`: exactly, or without inputs the next call of
    `effect` the source does not hold. See `replace_error` for `error`.
    """
    return _error_patch(effect, inputs, occurrence, None, error, "supply_error")


def _error_patch(
    effect: str | None,
    inputs: Mapping[str, object] | None,
    occurrence: int | None,
    at: int | None,
    error: BaseException,
    kind: Literal["replace_error", "supply_error"],
) -> ErrorPatch:
    namespace, name = _split(effect)
    raised = _failure_of(effect or f"operation {at}", error)
    return ErrorPatch(
        namespace,
        name,
        cast(dict[str, JsonValue] | None, inputs),
        occurrence,
        raised.error_type,
        raised.message,
        raised.args,
        kind,
        at,
    )


def _fits_version_2(patch: Patch) -> bool:
    """Whether a version 2 file can hold `patch`: an exact call, a value or an error."""
    return patch.target_form == "call" and (isinstance(patch, ErrorPatch) or patch.recipe is None)


def write_patches(
    path: str | os.PathLike[str], patches: Iterable[Patch], *, overwrite: bool = False
) -> Path:
    """Save patches to a versioned JSON patch file, atomically; returns its path.

    The file is format version 2 when every patch names an exact call with a value
    or an error, else version 3 (`at=N`, next-call supply patches, recipes).
    """
    target = Path(path)
    patches = list(patches)
    # Version 2 when every patch fits it, so such a file stays readable by releases
    # before version 3.
    version = 2 if all(map(_fits_version_2, patches)) else PATCH_FILE_FORMAT_VERSION
    document = {
        "format": PATCH_FILE_FORMAT,
        "format_version": version,
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
    """Load a patch file written by `write_patches` (or by hand, in the same format).

    Raises `PatchFileError` naming the file, and for a malformed entry the JSON path,
    what was expected and the value found (`toolreplay.documents.patches`).
    """
    source = Path(path)

    def fail(message: str) -> PatchFileError:
        return PatchFileError(message, path=source)

    try:
        loaded = parse_json_text(read_regular_file(source, "patch"), what="the patch file")
    except UnreadableFileError as error:
        raise fail(f"{source}: {error.problem}") from None
    except JsonTextError as error:
        raise fail(f"{source}: {error}") from None
    # The format and its version first: what the entries may hold depends on the version.
    document = cast(dict[str, Any], loaded) if type(loaded) is dict else {}
    if document.get("format") != PATCH_FILE_FORMAT:
        found = shown(document["format"]) if "format" in document else "nothing"
        raise fail(
            problem(str(source), "$.format", f'"{PATCH_FILE_FORMAT}" (a patch file)', found)
            if document
            else problem(str(source), "$", "an object (a patch file)", shown(loaded))
        )
    version = document.get("format_version")
    if type(version) is not int or version not in _READABLE_VERSIONS:
        readable = ", ".join(map(str, _READABLE_VERSIONS[:-1])) + f" or {_READABLE_VERSIONS[-1]}"
        raise fail(
            problem(
                str(source),
                "$.format_version",
                f"{readable}, the versions this toolreplay reads",
                shown(version) if "format_version" in document else "nothing",
            )
        )
    # Imported here: pydantic is loaded when a patch file is read, not with the runtime.
    from toolreplay.documents.patches import OutputEntry, PatchFileModel
    from toolreplay.documents.validation import validate_document

    model = validate_document(
        PatchFileModel, document, where=str(source), error=fail, context={"version": version}
    )
    patches: list[Patch] = []
    for index, entry in enumerate(model.patches):
        where = f"{source}: $.patches[{index}]"
        namespace, _, name = (entry.effect or "").partition(".")
        patch: Patch
        try:
            if isinstance(entry, OutputEntry):
                recipe = entry.recipe
                patch = OutputPatch(
                    namespace,
                    name,
                    entry.inputs,
                    entry.occurrence,
                    getattr(entry, recipe or "value"),
                    entry.kind,
                    recipe,
                    entry.at,
                )
            else:
                patch = ErrorPatch(
                    namespace,
                    name,
                    entry.inputs,
                    entry.occurrence,
                    entry.error.type,
                    entry.error.message,
                    entry.error.args,
                    entry.kind,
                    entry.at,
                )
        except (ValueError, NonPortableValueError) as error:
            raise fail(f"{where}: {error}") from None
        if entry.patch_id is not None and entry.patch_id != patch.patch_id:
            raise fail(
                problem(
                    where.partition(": ")[0],
                    f"$.patches[{index}].patch_id",
                    f'"{patch.patch_id}", the id of its content (the patch was edited: delete '
                    "its patch_id line to accept the edit)",
                    shown(entry.patch_id),
                )
            )
        patches.append(patch)
    return patches
