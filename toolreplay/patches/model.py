"""The patch types: what a patch targets and sets, checked when it is built.

`OutputPatch` and `ErrorPatch` share `_PatchTarget`'s three ways of naming a
target (an exact call, a source operation `at=N`, the next new call) and its
checks; an `OutputRecipe` is an output an adapter builds when the fork applies
it. Each patch's `patch_id` is derived from `to_dict`, its patch-file form.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, cast

from toolreplay.errors import NonPortableValueError, PatchError
from toolreplay.names import effect_name_problem
from toolreplay.portable import (
    JsonValue,
    canonical_json,
    copy_value,
    ensure_portable,
    fingerprint,
    preview,
)
from toolreplay.trace.model import OperationIdentity, Raised, Returned

__all__ = [
    "PATCH_KINDS",
    "RECIPE_KINDS",
    "ErrorPatch",
    "OutputPatch",
    "OutputRecipe",
    "Patch",
    "PatchKind",
    "RecipeKind",
    "TargetForm",
]

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
