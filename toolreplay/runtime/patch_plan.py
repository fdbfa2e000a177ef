"""Which patch answers which call: a fork's patches tied to their targets (RFC 0004 §1).

Before any application code runs, every patch is resolved against the source trace:
a `replace_*` patch to the recorded call it changes (by identity, or by operation
number with `at=N`), a `supply_*` patch to a call the source does not hold, or,
without inputs, to a queue of the next such calls of its effect. A patch holding an
adapter's recipe (`reply(...)`, `edit(...)`) gets its output from that adapter's
resolver (`runtime/recipes.py`), at once when the call is recorded and the adapter
imported, else when the call comes. `ForkSession` asks the plan for the patch of each
call and tells it which ones it applied.
"""

from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass

from toolreplay.errors import (
    NonPortableValueError,
    PatchApplicationError,
    PatchError,
    PatchTargetError,
)
from toolreplay.patches import OutputPatch, OutputRecipe, Patch
from toolreplay.portable import JsonValue, ensure_portable, preview
from toolreplay.runtime.context import lane_key
from toolreplay.runtime.effect import declared_effects
from toolreplay.runtime.matching import explain_absence
from toolreplay.runtime.recipes import RecipeCall, recipe_resolver
from toolreplay.trace.model import (
    Operation,
    OperationIdentity,
    Raised,
    Returned,
    operation_location,
)
from toolreplay.trace.reader import Trace

__all__ = ["PatchPlan", "PlannedPatch"]


@dataclass(slots=True, eq=False)
class PlannedPatch:
    """A patch as the fork applies it: its place in the patch list, and its outcome
    (None until a recipe is resolved for the call it answers)."""

    index: int
    patch: Patch
    outcome: Returned | Raised | None

    @property
    def what(self) -> str:
        patch = self.patch
        return f"patch {patch.patch_id} ({patch.kind})"


class PatchPlan:
    """A fork's patches, each tied to the call it answers, and which ones were applied."""

    def __init__(self, patches: tuple[Patch, ...]) -> None:
        self.patches = patches
        self._targets: dict[OperationIdentity, PlannedPatch] = {}
        self._supplies: dict[OperationIdentity, PlannedPatch] = {}
        # Supply patches without inputs, per effect, in the order they answer calls.
        self._next_calls: dict[str, list[PlannedPatch]] = {}
        # The lane (task or thread) that took each effect's last next-call patch.
        self._next_lanes: dict[str, object] = {}
        self._applied: set[int] = set()  # indexes in self.patches

    @property
    def applied_count(self) -> int:
        """How many patches have answered a call so far."""
        return len(self._applied)

    def unapplied(self) -> list[Patch]:
        """The patches that have answered no call (yet)."""
        return [patch for index, patch in enumerate(self.patches) if index not in self._applied]

    def replacing(self, identity: OperationIdentity) -> PlannedPatch | None:
        """The patch that changes the recorded call `identity`, if one does."""
        return self._targets.get(identity)

    def supplying(self, identity: OperationIdentity) -> PlannedPatch | None:
        """The patch that answers `identity`, a call the source does not hold, if one does."""
        return self._supplies.get(identity) or self._next_call(identity)

    def outcome(
        self,
        planned: PlannedPatch,
        source: Trace,
        identity: OperationIdentity,
        inputs: dict[str, JsonValue],
        replaced: Returned | Raised | None,
        *,
        near: int | None,
    ) -> Returned | Raised:
        """What `planned` answers the call with: its outcome, or its recipe's for this call.

        Called while the application runs: a recipe that cannot answer is a
        `PatchApplicationError`. `replaced` is the recorded outcome a `replace_*`
        patch changes; `near` the source operation the call is at or after.
        """
        if planned.outcome is not None:
            return planned.outcome
        return self._resolve_recipe(
            planned, source, identity, inputs, replaced, near=near, applying=True
        )

    def applied(self, planned: PlannedPatch) -> None:
        """Note that `planned` answered a call (a next-call patch leaves its queue)."""
        self._applied.add(planned.index)
        if planned.patch.target_form == "next_call":
            effect = planned.patch.effect
            self._next_calls[effect].pop(0)
            self._next_lanes[effect] = lane_key()

    def resolve(self, trace: Trace, *, effects_declared: bool) -> None:
        """Every patch must name its target unambiguously, before any application code runs.

        A `replace_*` patch names a call the source holds (by identity, or by operation
        number with `at=N`); a `supply_*` patch a call it does not hold, or, without
        inputs, the next such call of its effect, of an effect the source records, an
        adapter names or this process declares (checked once `effects_declared`: the
        application is imported). A recipe is checked by its adapter's resolver when
        one is registered, and a `replace_output` recipe resolved at once.
        """
        # Start afresh: a refused entry can be retried.
        self._targets, self._supplies, self._next_calls = {}, {}, {}
        chosen: dict[OperationIdentity, PlannedPatch] = {}
        by_number = {operation.logical_id: operation for operation in trace.operations}
        for index, patch in enumerate(self.patches):
            recipe = isinstance(patch, OutputPatch) and patch.recipe is not None
            planned = PlannedPatch(index, patch, None if recipe else patch.outcome)
            form = patch.target_form
            if form == "next_call":
                self._check_known_effect(trace, patch, effects_declared=effects_declared)
                self._check_recipe(patch, patch.effect)
                self._next_calls.setdefault(patch.effect, []).append(planned)
                continue
            if form == "operation":
                recorded = self._operation_at(trace, by_number, patch)
                identity = recorded.identity
            else:
                identity = patch.identity
                recorded = trace.get(identity)
                if patch.supplies:
                    self._check_supply(trace, patch, recorded, effects_declared=effects_declared)
                elif recorded is None:
                    raise self._absent_target(trace, patch, identity)
            other = chosen.get(identity)
            if other is not None:
                raise PatchTargetError(
                    f"patches {other.patch.patch_id} and {patch.patch_id} both target "
                    f"{identity.describe()}; a call can have one outcome in a fork. Keep "
                    "one of them.",
                    patch_id=patch.patch_id,
                )
            chosen[identity] = planned
            self._check_recipe(patch, identity.effect)
            if patch.supplies:
                self._supplies[identity] = planned
                continue
            self._targets[identity] = planned
            if recorded is not None and planned.outcome is None:
                resolver = recipe_resolver(identity.namespace)
                if resolver is not None:  # else when the call comes (the adapter answers it)
                    planned.outcome = self._resolve_recipe(
                        planned,
                        trace,
                        recorded.identity,
                        recorded.inputs,
                        recorded.outcome,
                        near=recorded.logical_id,
                        applying=False,
                    )

    def _absent_target(
        self, trace: Trace, patch: Patch, identity: OperationIdentity
    ) -> PatchTargetError:
        explanation, _ = explain_absence(trace, identity, patch.inputs or {}, asked="patch")
        return PatchTargetError(
            "\n".join(
                [
                    f"patch {patch.patch_id} ({patch.kind}) targets {patch.effect} "
                    f"occurrence {patch.occurrence} with inputs {preview(patch.inputs)}, but "
                    f"the source trace {trace.path} holds no such call.",
                    *explanation,
                    "What to do: copy the inputs and occurrence of the call you mean from "
                    "`toolreplay show` of the source trace, or name it by its number there "
                    "(at=N); for a call the recording never made, use supply_output or "
                    "supply_error.",
                ]
            ),
            patch_id=patch.patch_id,
        )

    def _operation_at(
        self, trace: Trace, by_number: dict[int, Operation], patch: Patch
    ) -> Operation:
        """The source operation an `at=N` patch names (its effect checked, if given)."""
        assert patch.at is not None
        operation = by_number.get(patch.at)
        if operation is None:
            numbers = sorted(by_number)
            held = (
                f"its operations are numbered {numbers[0]} to {numbers[-1]}"
                if numbers
                else "it holds no operations"
            )
            raise PatchTargetError(
                f"patch {patch.patch_id} ({patch.kind}) names source operation {patch.at}, "
                f"but the source trace {trace.path} has no operation {patch.at}: {held}. "
                "Give a number as `toolreplay show` of the source prints it (column #).",
                patch_id=patch.patch_id,
            )
        if patch.namespace and operation.effect != patch.effect:
            raise PatchTargetError(
                f"patch {patch.patch_id} ({patch.kind}) names source operation {patch.at} as "
                f"a call of {patch.effect}, but operation {patch.at} of {trace.path} is "
                f"{operation.effect} ({operation_location(operation)}). Check the number "
                "against `toolreplay show`, or leave the effect out.",
                patch_id=patch.patch_id,
            )
        return operation

    def _check_supply(
        self, trace: Trace, patch: Patch, recorded: Operation | None, *, effects_declared: bool
    ) -> None:
        if recorded is not None:
            replacement = "replace_error" if patch.kind == "supply_error" else "replace_output"
            raise PatchTargetError(
                f"patch {patch.patch_id} ({patch.kind}) supplies {patch.effect} occurrence "
                f"{patch.occurrence} with inputs {preview(patch.inputs)}, but the source trace "
                f"{trace.path} already records that call ({operation_location(recorded)}). A "
                f"supply patch is for calls the recording never made; use {replacement} to "
                "change a recorded call.",
                patch_id=patch.patch_id,
            )
        self._check_known_effect(trace, patch, effects_declared=effects_declared)

    def _check_known_effect(self, trace: Trace, patch: Patch, *, effects_declared: bool) -> None:
        """Refuse a supply patch for an effect nothing knows (a typo, most likely)."""
        effect = patch.effect
        if (
            effects_declared
            and not trace.operations_of(patch.namespace, patch.name)
            and effect not in declared_effects()
            and recipe_resolver(patch.namespace) is None  # an adapter names its effects
        ):
            known = sorted(declared_effects() | {op.effect for op in trace.operations})
            close = difflib.get_close_matches(effect, known, n=3)
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
            raise PatchTargetError(
                f"patch {patch.patch_id} ({patch.kind}) supplies {effect}, an unknown effect: "
                f"the source trace records no call of it and no @effect of that name is "
                f"declared in this process. Check the name: {hint}known effects: "
                f"{shown or 'none'}.",
                patch_id=patch.patch_id,
            )

    def _check_recipe(self, patch: Patch, effect: str) -> None:
        """Have the adapter check a recipe now, if its adapter is imported already."""
        namespace = effect.partition(".")[0]
        recipe = _recipe_of(patch, namespace)
        resolver = recipe_resolver(namespace) if recipe is not None else None
        if recipe is None or resolver is None:
            return  # checked when resolved: the adapter is imported by the time it answers
        try:
            resolver.check(recipe, effect)
        except PatchError as error:
            raise PatchTargetError(
                f"patch {patch.patch_id} ({patch.kind}) for {effect}: {error}",
                patch_id=patch.patch_id,
            ) from None

    def _resolve_recipe(
        self,
        planned: PlannedPatch,
        source: Trace,
        identity: OperationIdentity,
        inputs: dict[str, JsonValue],
        replaced: Returned | Raised | None,
        *,
        near: int | None,
        applying: bool,
    ) -> Returned:
        """The output a patch's recipe gives this call, from its adapter's resolver.

        `applying`: the application is running (the call is being answered), so a
        failure is a `PatchApplicationError`, which fails the fork even if caught.
        """
        patch = planned.patch
        recipe = _recipe_of(patch, identity.namespace)
        assert recipe is not None
        error_class = PatchApplicationError if applying else PatchTargetError
        resolver = recipe_resolver(identity.namespace)
        if resolver is None:
            raise error_class(
                f"{planned.what} holds a {recipe.kind} recipe for {identity.effect}, but no "
                f"adapter that builds {recipe.kind} outputs for {identity.namespace}.* effects "
                "is imported in this process (toolreplay.adapters.openai does for openai.*). "
                "Import the adapter, or give the output value itself.",
                patch_id=patch.patch_id,
            )
        call = RecipeCall(recipe, patch.patch_id, identity, inputs, replaced, source, near)
        try:
            resolver.check(recipe, identity.effect)
            output = ensure_portable(
                resolver.resolve(call), what=f"the output {planned.what} resolved to"
            )
        except (PatchError, NonPortableValueError) as error:
            raise error_class(
                f"{planned.what} could not answer {identity.describe()}: {error}",
                patch_id=patch.patch_id,
            ) from None
        return Returned(output)

    def _next_call(self, identity: OperationIdentity) -> PlannedPatch | None:
        """The next-call patch that answers this call, if its effect has one left.

        Calls take them in the order they reach the fork (start order). From one
        lane, or from asyncio tasks (which one event loop starts in a fixed order),
        that order is the program's; two threads racing for "the next" patch are
        refused.
        """
        effect = identity.effect
        queue = self._next_calls.get(effect)
        if not queue:
            return None
        planned = queue[0]
        current, previous = lane_key(), self._next_lanes.get(effect)
        if (
            isinstance(previous, threading.Thread)
            and isinstance(current, threading.Thread)
            and previous is not current
            and previous.is_alive()
        ):
            raise PatchApplicationError(
                f"{planned.what} answers the next call of {effect} that the source does not "
                f"hold, but calls of {effect} come from two threads ({previous.name!r} took "
                f"the previous such patch, {current.name!r} asks now): which call is next "
                "depends on how the threads are scheduled, so the fork does not choose. Name "
                "each call's inputs (supply_output(effect=..., inputs=..., value=...), as the "
                "ReplayMiss or `toolreplay show` of the branch prints them), or make these "
                "calls from one thread.",
                patch_id=planned.patch.patch_id,
            )
        return planned


def _recipe_of(patch: Patch, namespace: str) -> OutputRecipe | None:
    """The recipe a patch holds, for a call of `namespace` (an `at=N` patch may name no
    effect: its recipe answers whichever effect that operation is)."""
    if isinstance(patch, OutputPatch) and patch.recipe is not None:
        return OutputRecipe(patch.recipe, namespace, patch.value)
    return None
