"""Patches as an application writes them: `replace_output`, `supply_output`,
`replace_error` and `supply_error`, each naming its call by keywords."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, cast

from toolreplay.errors import PatchError, ReplayedEffectError
from toolreplay.failures import REBUILT_EXCEPTIONS, rebuilt_as_itself
from toolreplay.patches.model import ErrorPatch, OutputPatch, OutputRecipe, RecipeKind
from toolreplay.portable import JsonValue
from toolreplay.trace.model import Raised

__all__ = ["replace_error", "replace_output", "supply_error", "supply_output"]


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
