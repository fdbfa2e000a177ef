"""`@effect`: the one place where application code meets record and replay."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar, cast

from toolreplay.errors import EffectDefinitionError, SessionError
from toolreplay.portable import JsonValue, ensure_portable
from toolreplay.runtime.session import (
    RecordSession,
    ReplaySession,
    offline_guard,
    session_var,
)

__all__ = ["EffectSpec", "effect"]

P = ParamSpec("P")
R = TypeVar("R")

_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*")


class EffectSpec:
    """An effect's name and how to turn a call's arguments into its inputs.

    Inputs are the bound arguments by parameter name, defaults applied; `*args`
    become a list and `**kwargs` a dict, so every input is a JSON object.
    """

    __slots__ = ("_parameters", "_positional", "name", "namespace", "qualified_name", "signature")

    def __init__(self, namespace: str, name: str, signature: inspect.Signature) -> None:
        self.namespace = namespace
        self.name = name
        self.qualified_name = f"{namespace}.{name}"
        self.signature = signature
        self._parameters = signature.parameters
        plain = all(
            p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in self._parameters.values()
        )
        # Fast path for the common call shape: every parameter passed positionally.
        self._positional: tuple[str, ...] | None = tuple(self._parameters) if plain else None

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, JsonValue]:
        """The call's inputs, checked to be portable JSON."""
        names = self._positional
        if names is not None and not kwargs and len(args) == len(names):
            inputs: dict[str, object] = dict(zip(names, args, strict=True))
        else:
            try:
                bound = self.signature.bind(*args, **kwargs)
            except TypeError as error:
                raise TypeError(f"{self.qualified_name}(): {error}") from None
            bound.apply_defaults()
            inputs = {}
            for key, value in bound.arguments.items():
                kind = self._parameters[key].kind
                if kind is inspect.Parameter.VAR_POSITIONAL:
                    value = list(cast(tuple[object, ...], value))
                inputs[key] = value
        return cast(
            dict[str, JsonValue], ensure_portable(inputs, what=f"inputs of {self.qualified_name}")
        )


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
        raise EffectDefinitionError(
            f"effect name {qualified_name!r} needs a namespace and a name: write "
            "@effect('crm.customer.get') (namespace 'crm', name 'customer.get') or "
            "@effect(namespace='crm', name='customer.get')"
        )
    if not _NAMESPACE.fullmatch(namespace) or not _NAME.fullmatch(name):
        raise EffectDefinitionError(
            f"effect name {namespace}.{name!s} is not valid: use letters, digits, '_' and '-', "
            "with dots between the parts of the name (crm.customer.get)"
        )
    return namespace, name


def effect(
    qualified_name: str | None = None,
    /,
    *,
    namespace: str | None = None,
    name: str | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Declare a function (sync or async) as an effect that sessions record and replay.

    The name is dotted: `namespace.name`, where the namespace is the text before
    the first dot (`@effect("crm.customer.get")`), or given by keyword
    (`@effect(namespace="crm", name="customer.get")`). Arguments and the return
    value must be portable JSON. Outside any session the function runs as if
    undecorated; under `record()` it runs and is recorded; under `replay()` it
    never runs (an async one is not even called) and the recorded outcome is
    returned or raised. The decorated function keeps its signature and type.
    """
    if callable(qualified_name):
        raise EffectDefinitionError(
            f"@effect needs the effect's name: write @effect('crm.customer.get') above "
            f"{getattr(qualified_name, '__qualname__', qualified_name)!s}, not a bare @effect"
        )
    effect_namespace, effect_name = _parse_name(qualified_name, namespace, name)

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
        spec = EffectSpec(effect_namespace, effect_name, signature)
        if inspect.iscoroutinefunction(function):
            return cast(Callable[P, R], _async_effect(spec, cast(Any, function)))
        return _sync_effect(spec, function)

    return decorate


def _sync_effect(spec: EffectSpec, function: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(function)
    def call_effect(*args: P.args, **kwargs: P.kwargs) -> R:
        session = session_var.get()
        if session is None:
            if offline_guard.active:
                raise offline_guard.refuse(spec.qualified_name)
            return function(*args, **kwargs)
        inputs = spec.bind(args, kwargs)
        if isinstance(session, ReplaySession):
            return cast(R, session.answer(spec.namespace, spec.name, inputs))
        assert isinstance(session, RecordSession)
        call = session.begin(spec.namespace, spec.name, inputs)
        try:
            result = function(*args, **kwargs)
        except SessionError:
            session.abort(call)  # Tool Replay's own refusal (a nested effect), not the body's
            raise
        except Exception as error:
            session.fail(call, error)
            raise
        except BaseException:
            session.abort(call)
            raise
        session.complete(call, result)
        return result

    return call_effect


def _async_effect(
    spec: EffectSpec, function: Callable[..., Awaitable[object]]
) -> Callable[..., Awaitable[object]]:
    @functools.wraps(function)
    async def call_effect(*args: Any, **kwargs: Any) -> object:
        session = session_var.get()
        if session is None:
            if offline_guard.active:
                raise offline_guard.refuse(spec.qualified_name)
            return await function(*args, **kwargs)
        inputs = spec.bind(args, kwargs)
        if isinstance(session, ReplaySession):
            # The body's coroutine is never created, so nothing can leak out of it.
            return session.answer(spec.namespace, spec.name, inputs)
        assert isinstance(session, RecordSession)
        call = session.begin(spec.namespace, spec.name, inputs)
        try:
            result = await function(*args, **kwargs)
        except SessionError:
            session.abort(call)  # Tool Replay's own refusal (a nested effect), not the body's
            raise
        except Exception as error:
            session.fail(call, error)
            raise
        except BaseException:
            session.abort(call)
            raise
        session.complete(call, result)
        return result

    return call_effect
