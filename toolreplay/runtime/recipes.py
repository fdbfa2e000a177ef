"""Resolving output recipes: how an adapter builds the output a patch's recipe describes.

A patch may hold an `OutputRecipe` (`reply(...)`, `edit(...)`) instead of an
output value: what the output is depends on the call it answers (the endpoint,
whether the request streams, the recorded answer it replaces, the recording's
ids and model). The core never imports an adapter to find out. Each adapter
registers a `RecipeResolver` for its effect namespace, as it registers a
failure codec (`runtime/failures.py`); a fork asks the resolver of the
answered call's namespace, and writes the output it returns to the branch, so
a promoted case replays that output byte for byte.

A namespace with a resolver is also one whose effects the adapter names per
request (`openai.responses.create`, ...): a supply patch for such an effect is
accepted though no `@effect` declares it and the source never recorded it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from toolreplay.patches import OutputRecipe
from toolreplay.portable import JsonValue
from toolreplay.trace.model import Operation, OperationIdentity, Raised, Returned

__all__ = [
    "RecipeCall",
    "RecipeResolver",
    "RecipeSource",
    "recipe_resolver",
    "register_recipe_resolver",
]


class RecipeSource(Protocol):
    """What a resolver reads of the source trace: its operations of one effect, in
    recorded order (`toolreplay.Trace` has it; so does the terminal debugger's
    trace file, which previews a reply before a fork resolves it)."""

    def operations_of(self, namespace: str, name: str) -> Sequence[Operation]: ...


@dataclass(frozen=True, slots=True)
class RecipeCall:
    """The call a recipe is resolved for.

    `identity` and `inputs` are the call's (redacted as the branch holds them);
    `replaced` is the recorded outcome a `replace_output` patch changes (None for a
    supply patch); `source` is the source trace (its operations by effect), whose
    recorded answers serve as templates; `near` is the number of the source
    operation the call stands at (a replaced operation's own, else the last source
    operation the fork served; None before any), so "the nearest recorded answer" is
    well defined. `patch_id` seeds whatever identifiers the adapter makes up, so the
    same patch on the same call always resolves to the same output.
    """

    recipe: OutputRecipe
    patch_id: str
    identity: OperationIdentity
    inputs: dict[str, JsonValue]
    replaced: Returned | Raised | None
    source: RecipeSource
    near: int | None


class RecipeResolver(Protocol):
    """Builds the outputs of an adapter's recipes (registered per effect namespace)."""

    def check(self, recipe: OutputRecipe, effect: str) -> None:
        """Raise `PatchError` if `recipe` cannot answer calls of `effect` (before any
        application code runs): a malformed spec, an endpoint it cannot answer."""
        ...

    def resolve(self, call: RecipeCall) -> JsonValue:
        """The output `call.recipe` gives this call; `PatchError` (naming what does not
        fit) when it cannot answer it."""
        ...


_RESOLVERS: dict[str, RecipeResolver] = {}
_LOCK = threading.Lock()


def register_recipe_resolver(namespace: str, resolver: RecipeResolver) -> None:
    """Let `resolver` build the recipes of patches on `namespace.*` effects."""
    with _LOCK:
        _RESOLVERS[namespace] = resolver


def recipe_resolver(namespace: str) -> RecipeResolver | None:
    """The resolver registered for `namespace`, or None (its adapter is not imported)."""
    return _RESOLVERS.get(namespace)
