"""A patch file (RFC 0004 §2), as a pydantic model: versions 1, 2 and 3, every form.

    {"format": "toolreplay.patches", "format_version": 3, "patches": [
      {"kind": "replace_output", "effect": "crm.customer.get",
       "inputs": {"customer_id": 42}, "occurrence": 0, "value": {...}},     # a call
      {"kind": "replace_error", "at": 3, "error": {...}},                    # operation 3
      {"kind": "supply_output", "effect": "review.queue.add", "value": ...}, # the next call
      {"kind": "replace_output", "at": 5, "edit": {"$.output[0]...": "..."}} # a recipe
    ]}

A patch names its target one way: `effect`, `inputs` and `occurrence` (an exact
call), `at` with an optional `effect` as a check (a source operation), or `effect`
alone (the next call a supply patch answers). An output patch sets one of `value`,
`reply` and `edit`. Version 1 holds `replace_output` patches on exact calls, version
2 the four kinds on exact calls; `toolreplay.patches.read_patches` passes the version
as the validation context. What needs more than the file (an `edit` only replacing a
recorded output, `at` only on `replace_*`, the `patch_id` of the content) is checked
when the patch is built.
"""

from __future__ import annotations

from typing import Annotated, Literal, cast

from pydantic import Field, JsonValue, ValidationInfo, model_validator

from toolreplay.documents import shown
from toolreplay.documents.validation import (
    DocumentModel,
    DocumentProblem,
    EffectName,
    NonNegative,
    NotNull,
    absent,
)

__all__ = ["ErrorEntry", "FailureModel", "OutputEntry", "PatchEntry", "PatchFileModel"]

_OUTPUT_CHANGES = ("value", "reply", "edit")


class FailureModel(DocumentModel):
    """The failure an error patch makes the call raise."""

    type: str
    """The exception's qualified type name (`builtins.TimeoutError`)."""
    message: str
    args: list[JsonValue] | None
    """The exception's arguments, for a type rebuilt as itself; else null."""


class _Entry(DocumentModel):
    """What every patch has: its target, and optionally its id."""

    effect: Annotated[EffectName | None, NotNull] = absent()
    """The patched effect (with `at`, a check of the operation's effect)."""
    inputs: Annotated[dict[str, JsonValue] | None, NotNull] = absent()
    """The call's inputs as the trace records them (with `occurrence`)."""
    occurrence: Annotated[NonNegative | None, NotNull] = absent()
    """Which call with these inputs, from 0."""
    at: Annotated[NonNegative | None, NotNull] = absent()
    """The number of a source operation, as `toolreplay show` prints it (version 3)."""
    patch_id: str | None = None
    """The id of the patch's content; checked when given."""

    @model_validator(mode="after")
    def _one_target(self, info: ValidationInfo) -> _Entry:
        version = _version(info)
        given = self.model_fields_set
        if version < 3:
            for key in ("at", "reply", "edit"):
                if key in given:
                    raise DocumentProblem(
                        f"no {key} in format version {version} (it is new in version 3)",
                        found=shown(getattr(self, key)),
                        key=key,
                    )
        if "at" in given:
            for key in ("inputs", "occurrence"):
                if key in given:
                    raise DocumentProblem(
                        "either at or inputs and occurrence, not both",
                        found=shown(getattr(self, key)),
                        key=key,
                    )
            return self
        exact = version < 3 or bool(given & {"inputs", "occurrence"})
        for key in ("effect", "inputs", "occurrence") if exact else ("effect",):
            if key not in given:
                wanted = (
                    "effect, inputs and occurrence together (an exact call)"
                    if exact
                    else "an effect (or at, a source operation)"
                )
                raise DocumentProblem(wanted, found="nothing (no such key)", key=key)
        return self


class OutputEntry(_Entry):
    """A patch that makes a call return: a `value`, or a `reply` or `edit` recipe."""

    kind: Literal["replace_output", "supply_output"]
    value: JsonValue = None
    """The output itself."""
    reply: JsonValue = None
    """An adapter's `reply(...)` recipe (version 3)."""
    edit: JsonValue = None
    """An adapter's `edit(...)` recipe of the recorded output (version 3)."""

    @model_validator(mode="after")
    def _one_change(self, info: ValidationInfo) -> OutputEntry:
        if _version(info) == 1 and self.kind != "replace_output":
            raise DocumentProblem(
                '"replace_output" (format version 1)', found=shown(self.kind), key="kind"
            )
        changes = [key for key in _OUTPUT_CHANGES if key in self.model_fields_set]
        if len(changes) > 1:
            raise DocumentProblem(
                "one of value, reply and edit", found=" and ".join(changes), key=changes[1]
            )
        if not changes:
            raise DocumentProblem("the output value", found="nothing (no such key)", key="value")
        return self

    @property
    def recipe(self) -> Literal["reply", "edit"] | None:
        """The recipe the entry sets (`reply` or `edit`), None for a value."""
        if "reply" in self.model_fields_set:
            return "reply"
        return "edit" if "edit" in self.model_fields_set else None


class ErrorEntry(_Entry):
    """A patch that makes a call raise `error`."""

    kind: Literal["replace_error", "supply_error"]
    error: FailureModel

    @model_validator(mode="after")
    def _known_kind(self, info: ValidationInfo) -> ErrorEntry:
        if _version(info) == 1:
            raise DocumentProblem(
                '"replace_output" (format version 1)', found=shown(self.kind), key="kind"
            )
        return self


PatchEntry = Annotated[OutputEntry | ErrorEntry, Field(discriminator="kind")]


class PatchFileModel(DocumentModel):
    """A patch file (format `toolreplay.patches`, versions 1 to 3)."""

    format: Literal["toolreplay.patches"]
    format_version: Literal[1, 2, 3]
    patches: list[PatchEntry]


def _version(info: ValidationInfo) -> int:
    """The file's format version, which its reader passes as the context (else 3)."""
    context = cast(object, info.context)
    version = cast(dict[str, object], context).get("version") if isinstance(context, dict) else 3
    return version if isinstance(version, int) else 3
