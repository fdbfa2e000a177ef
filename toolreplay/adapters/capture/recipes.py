"""What every profile's `reply(...)`/`edit(...)` resolution shares.

A profile's `recipes` (a `RecipeResolver`, `toolreplay.runtime.recipes`) builds the
output a fork serves for a patch's recipe; `register_profile` registers it for the
profile's namespace. What is the same for every HTTP API lives here: an edit is a
mapping of JSON paths (`toolreplay.jsonpath`) to values, made into a recipe by
`edit_recipe`, checked by `edit_problem`, and applied by `apply_edits`; it changes a
recorded answer, never a recorded failure (`replaced_output`); and a reply takes the
shape of the recorded answer of the same endpoint nearest the call (`nearest_recorded`),
answers a POST with a JSON body (`posted_body`), and makes its ids from the patch and
the call (`made_id`). `ModelRecipes` is the resolver every model API's profile shares:
what it checks and dispatches, with the reply and the edit left to the profile; a
reply's spec is read the same way for every API (`given_call`, `reply_keys_problem`),
and `ModelReply` is where each profile's reply starts from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from toolreplay.errors import PatchError
from toolreplay.jsonpath import parse_path
from toolreplay.patches import OutputRecipe
from toolreplay.portable import (
    JsonObject,
    JsonValue,
    copy_value,
    ensure_portable,
    json_object,
    preview,
)
from toolreplay.runtime.recipes import RecipeCall
from toolreplay.trace.model import Operation, Returned

__all__ = [
    "USAGE_KEYS",
    "ModelRecipes",
    "ModelReply",
    "apply_edits",
    "calls_problem",
    "edit_problem",
    "edit_recipe",
    "given_call",
    "made_id",
    "nearest_answer",
    "nearest_recorded",
    "object_call",
    "posted_body",
    "replaced_output",
    "reply_keys_problem",
    "reply_recipe",
    "served_answer",
    "usage_problem",
]

USAGE_KEYS = ("input_tokens", "output_tokens")
"""The usage a reply may state: the tokens read and written."""


_Found = TypeVar("_Found")


def replaced_output(call: RecipeCall) -> dict[str, JsonValue]:
    """The recorded output an `edit(...)` changes; `PatchError` for a recorded failure."""
    replaced = call.replaced
    if not isinstance(replaced, Returned) or not isinstance(replaced.value, dict):
        raise PatchError(
            "edit(...) changes a recorded answer, and this call's recording is a "
            "failure, not an answer; use reply(...) or replace_error"
        )
    return replaced.value


def nearest_recorded(
    call: RecipeCall, accept: Callable[[dict[str, JsonValue]], _Found | None]
) -> _Found | None:
    """What `accept` makes of the recorded output of the call's effect nearest the call
    in the source (the earlier on a tie; `near` None counts as 0), skipping outputs it
    gives None for (and failures); None when no recorded output is accepted."""
    identity = call.identity
    near = call.near or 0

    def distance(operation: Operation) -> tuple[int, int]:
        return abs(operation.logical_id - near), operation.logical_id

    for operation in sorted(
        call.source.operations_of(identity.namespace, identity.name), key=distance
    ):
        outcome = operation.outcome
        output = outcome.value if isinstance(outcome, Returned) else None
        if isinstance(output, dict):
            found = accept(output)
            if found is not None:
                return found
    return None


def edit_recipe(edits: Mapping[str, object], namespace: str, example: str) -> OutputRecipe:
    """An `edit` recipe of `namespace` from a non-empty mapping of JSON paths to values
    (`PatchError` otherwise; `example` is a path shown in that message)."""
    if not isinstance(edits, Mapping) or not edits:  # pyright: ignore[reportUnnecessaryIsInstance]  # user input
        raise PatchError(
            f"edit(...) takes a non-empty mapping of JSON paths to values, like {{{example!r}: "
            "'...'}"
        )
    spec = ensure_portable(dict(edits), what="edit(...)")
    problem = edit_problem(spec)
    if problem is not None:
        raise PatchError(f"edit(...): {problem}")
    return OutputRecipe("edit", namespace, spec)


def edit_problem(spec: JsonValue) -> str | None:
    """What is wrong with an edit's spec (as `edit_recipe` builds it, or a patch file
    holds it), or None."""
    if not isinstance(spec, dict) or not spec:
        return f"an edit maps JSON paths to values, got {preview(spec)}"
    for path in spec:
        try:
            parse_path(path, what="edit path", error=PatchError)
        except PatchError as error:
            return str(error)
    return None


def apply_edits(value: JsonValue, edits: Mapping[str, JsonValue], where: str) -> JsonValue:
    """`value` with each path of `edits` set to its value (a new value; `value` is kept).

    Paths use the project's JSON path grammar (`$.output[0].content[0].text`,
    `[*]` for every item). A path that selects nothing is a `PatchError`, whose
    message ends with `where` (what the paths run through, with examples).
    """
    for text, new in edits.items():
        path = parse_path(text, what="edit path", error=PatchError)
        hits = 0

        def put(_old: JsonValue, new: JsonValue = new) -> JsonValue:
            nonlocal hits
            hits += 1
            return copy_value(new)

        value = path.replace(value, put)
        if hits == 0:
            raise PatchError(f"edit path {text} selects nothing in the recorded answer. {where}")
    return value


def posted_body(call: RecipeCall) -> JsonObject:
    """The JSON body of the POST a `reply(...)` answers; `PatchError` for another call."""
    body = call.inputs.get("body")
    if call.inputs.get("method") != "POST" or not isinstance(body, dict):
        raise PatchError(
            f"reply(...) answers a POST with a JSON body; this call is "
            f"{call.inputs.get('method')} {call.inputs.get('path')}"
        )
    return body


def made_id(call: RecipeCall, prefix: str, purpose: str, size: int) -> str:
    """An identifier a reply makes up for `purpose`: from the patch and the call, so the
    same patch on the same call always gives the same one."""
    identity = call.identity
    seed = f"{call.patch_id}:{identity.fingerprint}:{identity.occurrence}:{purpose}"
    return f"{prefix}{hashlib.sha256(seed.encode()).hexdigest()[:size]}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRecipes:
    """The `reply(...)`/`edit(...)` resolver of a model API's profile.

    An edit applies to any recorded answer, and `edited(output, spec)` sets its paths;
    a reply applies to `reply_effects` (None: any endpoint; `answers` names them in
    the refusal for another), `reply_problem(spec)` says what is wrong with its spec
    (or None), and `reply_output(call, spec)` builds its output for a call.
    """

    reply_effects: frozenset[str] | None
    answers: str = ""
    reply_problem: Callable[[JsonValue], str | None]
    reply_output: Callable[[RecipeCall, JsonObject], JsonValue]
    edited: Callable[[JsonObject, JsonObject], JsonValue]

    def check(self, recipe: OutputRecipe, effect: str) -> None:
        if recipe.kind == "edit":
            problem = edit_problem(recipe.spec)
        else:
            problem = self.reply_problem(recipe.spec)
            effects = self.reply_effects
            if problem is None and effects is not None and effect not in effects:
                problem = (
                    f"reply(...) answers {self.answers}; {effect} is another endpoint, whose "
                    "output the patch must give itself (status, headers and body, as "
                    "`toolreplay show` prints a recorded one)"
                )
        if problem is not None:
            raise PatchError(problem)

    def resolve(self, call: RecipeCall) -> JsonValue:
        spec = cast(JsonObject, call.recipe.spec)
        if call.recipe.kind == "edit":
            return self.edited(replaced_output(call), spec)
        return self.reply_output(call, spec)


def nearest_answer(
    call: RecipeCall, final: Callable[[JsonObject], JsonObject | None]
) -> tuple[JsonObject, JsonObject] | None:
    """The final answer (`final` of a 200 output) and headers of the recorded answer of
    the call's endpoint nearest the call, or None: what a reply takes its shape from."""

    def accept(output: JsonObject) -> tuple[JsonObject, JsonObject] | None:
        answer = final(output) if output.get("status") == 200 else None
        if answer is None:
            return None
        return answer, json_object(output.get("headers")) or {}

    return nearest_recorded(call, accept)


def calls_problem(spec: JsonObject, field: str, argument: str) -> str | None:
    """What is wrong with a reply's calls (`spec[field]`: a non-empty list of
    `{name, <argument>}`, the argument a JSON object), or None when they are fine or absent."""
    calls = spec.get(field, [])
    if not isinstance(calls, list) or (not calls and field in spec):
        return f"{field} must be a non-empty list of {{name, {argument}}}"
    for position, call in enumerate(calls):
        if not isinstance(call, dict) or call.keys() != {"name", argument}:
            return f"{field}[{position}]: a call is {{name, {argument}}}, got {preview(call)}"
        if not isinstance(call["name"], str) or not call["name"]:
            return f"{field}[{position}]: the name must be a non-empty string"
        if not isinstance(call[argument], dict):
            return f"{field}[{position}]: the {argument} must be a JSON object"
    return None


def usage_problem(spec: JsonObject) -> str | None:
    """What is wrong with a reply's `usage` (`USAGE_KEYS`, each a non-negative int), or
    None when it is fine or absent."""
    if "usage" not in spec:
        return None
    usage = spec["usage"]
    if not isinstance(usage, dict) or not usage or usage.keys() - set(USAGE_KEYS):
        return f"usage holds input_tokens and/or output_tokens, got {preview(usage)}"
    for key, value in usage.items():
        if type(value) is not int or value < 0:
            return f"{key} must be a non-negative int, got {preview(value)}"
    return None


def reply_recipe(
    namespace: str,
    problem: Callable[[JsonValue], str | None],
    usage: tuple[int | None, int | None],
    fields: Mapping[str, JsonValue],
) -> OutputRecipe:
    """A `reply` recipe of `namespace`: `fields` given (None and empty lists left out, in
    their order), then the `usage` given (`USAGE_KEYS`); `PatchError` when `problem`
    finds the spec wrong."""
    spec: JsonObject = {
        key: value for key, value in fields.items() if value is not None and value != []
    }
    tokens: JsonObject = {
        key: value for key, value in zip(USAGE_KEYS, usage, strict=True) if value is not None
    }
    if tokens:
        spec["usage"] = tokens
    found = problem(spec)
    if found is not None:
        raise PatchError(f"reply(...): {found}")
    return OutputRecipe("reply", namespace, spec)


def given_call(call: object, position: int, field: str, argument: str) -> tuple[object, object]:
    """The name and the `argument` of `reply(...)`'s `field[position]`, given as a
    `(name, argument)` pair or a mapping of exactly those two keys; `PatchError` else."""
    if isinstance(call, Mapping):
        given = cast(Mapping[object, object], call)
        if set(given) != {"name", argument}:
            raise PatchError(
                f"reply(...): {field}[{position}] is a mapping with exactly name and "
                f"{argument}, got keys {sorted(given, key=repr)}"
            )
        return given["name"], given[argument]
    if isinstance(call, tuple) and len(cast(tuple[object, ...], call)) == 2:
        name, value = cast(tuple[object, object], call)
        return name, value
    raise PatchError(
        f"reply(...): {field}[{position}] is (name, {argument}) or "
        f'{{"name": ..., "{argument}": ...}}, got {call!r}'
    )


def object_call(call: object, position: int, field: str, argument: str) -> JsonObject:
    """`{name, <argument>}` for `reply(...)`'s `field[position]` (`given_call`), the
    argument a JSON object (a mapping, made portable); `PatchError` else."""
    name, given = given_call(call, position, field, argument)
    if not isinstance(given, Mapping):
        raise PatchError(
            f"reply(...): {field}[{position}]'s {argument} must be a JSON object (a "
            f"mapping), got {given!r}"
        )
    portable = ensure_portable(
        dict(cast(Mapping[str, object], given)), what=f"reply {field}[{position}] {argument}"
    )
    return {"name": cast(JsonValue, name), argument: portable}


def reply_keys_problem(
    spec: JsonValue, keys: Sequence[str], strings: Sequence[str], answers: Sequence[str]
) -> str | None:
    """What is wrong with a reply spec's keys, or None: it is an object of `keys` only,
    those of `strings` strings, and at least one of `answers` is given."""
    if not isinstance(spec, dict):
        return f"a reply is an object like {{'text': '...'}}, got {preview(spec)}"
    unknown = sorted(spec.keys() - set(keys))
    if unknown:
        return f"unknown keys {', '.join(unknown)} (a reply has {', '.join(keys)})"
    for key in strings:
        if key in spec and not isinstance(spec[key], str):
            return f"{key} must be a string, got {preview(spec[key])}"
    if not (set(answers) & spec.keys()):
        named = [f"{key}=" for key in answers]
        either = f"{', '.join(named[:-1])} or {named[-1]}" if len(named) > 1 else named[0]
        return f"give the answer: {either}"
    return None


def served_answer(headers: JsonObject, final: JsonObject, events: JsonValue | None) -> JsonObject:
    """The output a reply serves: a 200 with `headers`, and the stream's `events`, or
    `final` as the JSON body when the request did not ask for a stream (`events` None)."""
    output: JsonObject = {"status": 200, "headers": headers}
    if events is None:
        output["body"] = final
    else:
        output["events"] = events
    output["end"] = "complete"
    return output


class ModelReply:
    """Where a profile's reply for one call starts: the call and the reply's spec, the
    request's JSON body (`posted_body`), and the nearest recorded answer with its headers
    (`nearest_answer`; empty when the source has none), whose shape the reply takes."""

    def __init__(
        self,
        call: RecipeCall,
        spec: JsonObject,
        template: tuple[JsonObject, JsonObject] | None,
    ) -> None:
        self.call = call
        self.spec = spec
        self.request = posted_body(call)
        self.template: JsonObject = template[0] if template else {}
        self.template_headers: JsonObject = template[1] if template else {}

    def answer_model(self, requested: JsonValue, recorded: JsonValue) -> JsonValue:
        """The model the answer names: the spec's, else the recorded answer's when it is
        the requested one (an answer names the dated version behind the requested alias),
        else the requested one."""
        if "model" in self.spec:
            return self.spec["model"]
        if isinstance(recorded, str) and (
            not isinstance(requested, str) or recorded.startswith(requested)
        ):
            return recorded
        return requested

    def recorded_usage(self, field: str, counts: Sequence[str]) -> JsonObject:
        """A copy of the recorded answer's usage object (`field`; empty when there is
        none), every other integer in it than `counts` zeroed: it counted what that
        answer was made of (cached or thinking tokens, say), not this one."""
        found = json_object(self.template.get(field))
        usage = cast(JsonObject, copy_value(found)) if found is not None else {}
        for key, value in usage.items():
            if key not in counts and type(value) is int:
                usage[key] = 0
        return usage
