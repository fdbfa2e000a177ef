"""`@effect`: the one place where application code meets record and replay."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, ParamSpec, TypeVar, cast

from toolreplay.errors import EffectDefinitionError, NonPortableValueError, RedactionRuleError
from toolreplay.jsonpath import JsonPath, parse_path
from toolreplay.names import effect_name_problem
from toolreplay.portable import JsonValue, ensure_portable
from toolreplay.runtime.context import PendingCall, offline_guard, running_call_var, session_var
from toolreplay.runtime.recording import RecordSession
from toolreplay.runtime.replaying import ReplaySession

__all__ = ["EffectSpec", "declared_effects", "effect"]

P = ParamSpec("P")
R = TypeVar("R")

_declared: set[str] = set()


def declared_effects() -> frozenset[str]:
    """The dotted names of every effect declared with `@effect` in this process so far.

    A fork checks a supply patch's effect against it (and the source trace), so a
    misspelt name is refused before the application runs.
    """
    return frozenset(_declared)


class EffectSpec:
    """An effect's name and how to turn a call's arguments into its inputs.

    Inputs are the bound arguments by parameter name, defaults applied; `*args`
    become a list and `**kwargs` a dict, so every input is a JSON object.
    """

    __slots__ = (
        "_defaults",
        "_inputs_of",
        "_names",
        "_parameters",
        "_positional",
        "name",
        "namespace",
        "qualified_name",
        "redact",
        "signature",
    )

    def __init__(
        self,
        namespace: str,
        name: str,
        signature: inspect.Signature,
        redact: tuple[JsonPath, ...] = (),
    ) -> None:
        self.namespace = namespace
        self.name = name
        self.qualified_name = f"{namespace}.{name}"
        self._inputs_of = f"inputs of {self.qualified_name}"
        self.signature = signature
        self.redact = redact
        self._parameters = signature.parameters
        kinds = [p.kind for p in self._parameters.values()]
        simple = all(
            kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            for kind in kinds
        )
        # Fast path for signatures without *args, **kwargs or positional-only
        # parameters: binding is a few dict operations, not Signature.bind.
        self._names: tuple[str, ...] | None = tuple(self._parameters) if simple else None
        self._positional = tuple(
            key
            for key, p in self._parameters.items()
            if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        self._defaults = {
            key: p.default
            for key, p in self._parameters.items()
            if p.default is not inspect.Parameter.empty
        }

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, JsonValue]:
        """The call's inputs, checked to be portable JSON."""
        names = self._names
        if names is not None and not kwargs and len(args) == len(names):
            # Every parameter given by position: the usual call (lengths equal, so not strict).
            inputs = dict(zip(names, args, strict=False))
        else:
            inputs = self._bind_simply(args, kwargs)
            if inputs is None:
                inputs = self._bind_generally(args, kwargs)
        ensure_portable(inputs, what=self._inputs_of)
        return inputs  # pyright: ignore[reportReturnType]  # checked just above

    def _bind_simply(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, object] | None:
        """Inputs in parameter order, or None when the general binder must decide (or fail)."""
        names = self._names
        if names is None or len(args) > len(self._positional):
            return None
        given: dict[str, object] = dict(
            zip(self._positional, args, strict=False)
        )  # fewer args: defaults
        for key, value in kwargs.items():
            if key in given or key not in self._parameters:
                return None  # given twice, or unknown: let Signature.bind word the error
            given[key] = value
        if len(given) == len(names) and not kwargs:
            return given
        try:
            return {key: given[key] if key in given else self._defaults[key] for key in names}
        except KeyError:
            return None  # a required argument is missing

    def _bind_generally(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, object]:
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{self.qualified_name}(): {error}") from None
        bound.apply_defaults()
        inputs: dict[str, object] = {}
        for key, value in bound.arguments.items():
            if self._parameters[key].kind is inspect.Parameter.VAR_POSITIONAL:
                value = list(cast(tuple[object, ...], value))
            inputs[key] = value
        return inputs


def _parse_name(
    qualified_name: str | None, namespace: str | None, name: str | None
) -> tuple[str, str]:
    if qualified_name is not None:
        if namespace is not None or name is not None:
            raise EffectDefinitionError(
                "give the effect either a dotted name (@effect('crm.customer.get')) or "
                "namespace= and name=, not both"
            )
        namespace, _, name = qualified_name.partition(".")
    if not namespace or not name:
        given = (
            repr(qualified_name)
            if qualified_name is not None
            else f"namespace={namespace!r}, name={name!r}"
        )
        raise EffectDefinitionError(
            f"@effect({given}) needs a namespace and a name: write "
            "@effect('crm.customer.get') (namespace 'crm', name 'customer.get') or "
            "@effect(namespace='crm', name='customer.get')"
        )
    problem = effect_name_problem(namespace, name)
    if problem is not None:
        raise EffectDefinitionError(problem)
    return namespace, name


def effect(
    qualified_name: str | None = None,
    /,
    *,
    namespace: str | None = None,
    name: str | None = None,
    redact: Iterable[str] = (),
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Declare a function (sync or async) as an effect that sessions record and replay.

    The name is dotted: `namespace.name`, where the namespace is the text before
    the first dot (`@effect("crm.customer.get")`), or given by keyword
    (`@effect(namespace="crm", name="customer.get")`). Arguments and the return
    value must be portable JSON. Outside any session the function runs as if
    undecorated; under `record()` it runs and is recorded; under `replay()` it
    never runs (an async one is not even called) and the recorded outcome is
    returned or raised. The decorated function keeps its signature and type.

    `redact` lists JSON paths (`["$.email", "$.card.number", "$.items[*].token"]`)
    whose values, in the inputs and in the output, are replaced by keyed-hash
    placeholders before anything is fingerprinted or written (RFC 0007); a
    malformed path raises `RedactionRuleError` here.
    """
    if callable(qualified_name):
        raise EffectDefinitionError(
            f"@effect needs the effect's name: write @effect('crm.customer.get') above "
            f"{getattr(qualified_name, '__qualname__', qualified_name)!s}, not a bare @effect"
        )
    effect_namespace, effect_name = _parse_name(qualified_name, namespace, name)
    if isinstance(redact, str):
        raise RedactionRuleError(
            f"@effect({effect_namespace}.{effect_name}, redact=...) takes a list of paths, "
            f"such as redact=[{redact!r}]"
        )
    redact_paths = tuple(parse_path(path) for path in redact)

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        if isinstance(function, type) or not callable(function):
            raise EffectDefinitionError(
                f"@effect({effect_namespace}.{effect_name!s}) decorates functions; got {function!r}"
            )
        if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
            raise EffectDefinitionError(
                f"@effect({effect_namespace}.{effect_name!s}) cannot record a generator "
                f"({function.__qualname__}): its values are produced lazily. Return a list instead."
            )
        signature = inspect.signature(function)
        first = next(iter(signature.parameters), None)
        if first in ("self", "cls"):
            raise EffectDefinitionError(
                f"@effect({effect_namespace}.{effect_name!s}) cannot decorate the method "
                f"{function.__qualname__}: its inputs would include {first!r}, which is not "
                "portable JSON. Decorate a module-level function that takes the values it "
                "needs, and call it from the method."
            )
        spec = EffectSpec(effect_namespace, effect_name, signature, redact_paths)
        _declared.add(spec.qualified_name)
        if inspect.iscoroutinefunction(function):
            return cast(Callable[P, R], _async_effect(spec, cast(Any, function)))
        return _sync_effect(spec, function)

    return decorate


def _sync_effect(spec: EffectSpec, function: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(function)
    def call_effect(*args: P.args, **kwargs: P.kwargs) -> R:
        session = session_var.get()
        if session is None or not session.observing:
            if session is None and offline_guard.active:
                raise offline_guard.refuse(spec.qualified_name)
            return function(*args, **kwargs)
        try:
            inputs = spec.bind(args, kwargs)
        except (TypeError, NonPortableValueError) as error:
            if not session.tolerates(spec.qualified_name, error):
                raise
            return function(*args, **kwargs)
        if isinstance(session, ReplaySession):
            answer = session.answer(spec.namespace, spec.name, inputs, spec.redact)
            if type(answer) is not PendingCall:
                return answer  # pyright: ignore[reportReturnType]  # not `cast`: a call per call
            with session.running_live(answer) as call:  # a fork's opt-in live call
                call.result = function(*args, **kwargs)
            return call.result
        assert isinstance(session, RecordSession)
        # The body runs here, not in a context manager: a generator-based one cost more
        # than the rest of recording a small call.
        call = session.begin(spec.namespace, spec.name, inputs, spec.redact)
        token = running_call_var.set(call)
        try:
            result = function(*args, **kwargs)
        except BaseException as error:
            running_call_var.reset(token)
            session.body_raised(call, error)
            raise
        running_call_var.reset(token)
        session.body_returned(call, result)
        return result

    return call_effect


def _async_effect(
    spec: EffectSpec, function: Callable[..., Awaitable[object]]
) -> Callable[..., Awaitable[object]]:
    @functools.wraps(function)
    async def call_effect(*args: Any, **kwargs: Any) -> object:
        session = session_var.get()
        if session is None or not session.observing:
            if session is None and offline_guard.active:
                raise offline_guard.refuse(spec.qualified_name)
            return await function(*args, **kwargs)
        try:
            inputs = spec.bind(args, kwargs)
        except (TypeError, NonPortableValueError) as error:
            if not session.tolerates(spec.qualified_name, error):
                raise
            return await function(*args, **kwargs)
        if isinstance(session, ReplaySession):
            # The body's coroutine is never created, so nothing can leak out of it,
            # unless a fork lets this call run live.
            answer = session.answer(spec.namespace, spec.name, inputs, spec.redact)
            if type(answer) is not PendingCall:
                return answer
            with session.running_live(answer) as call:
                call.result = await function(*args, **kwargs)
            return call.result
        assert isinstance(session, RecordSession)
        call = session.begin(spec.namespace, spec.name, inputs, spec.redact)
        token = running_call_var.set(call)
        try:
            result = await function(*args, **kwargs)
        except BaseException as error:
            running_call_var.reset(token)
            session.body_raised(call, error)
            raise
        running_call_var.reset(token)
        session.body_returned(call, result)
        return result

    return call_effect
