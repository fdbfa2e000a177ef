"""The call a fork stopped at because the recording never made it, and what to offer for it.

A fork answers only what the source trace recorded or a patch supplies. When the
application makes any other call, the fork stops with `ReplayMiss`, and the run
document names the call (effect, occurrence, inputs) and the nearest recorded
calls of the same effect with their outcomes (run protocol version 2). The
debugger turns that into an offer: supply this call's output (starting from the
nearest recorded output, or `null`), supply an error, or stop; at a model call,
more (`toolreplay_tui.model.new_call`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from toolreplay import OperationIdentity
from toolreplay.portable import JsonValue
from toolreplay_tui.model.jsontext import format_json
from toolreplay_tui.model.runs import RunResult

__all__ = ["RecordedAnswer", "UnrecordedCall", "unrecorded_call"]


@dataclass(frozen=True, slots=True)
class RecordedAnswer:
    """A recorded call of the same effect that returned: its operation number and output."""

    logical_id: int
    output: JsonValue


@dataclass(frozen=True, slots=True)
class UnrecordedCall:
    """A call a fork made that nothing answered: what a supply patch must name.

    `answers` are the recorded calls of the same effect that returned, nearest
    first (by inputs, as the `ReplayMiss` ranks them); the first is `nearest_*`.
    """

    effect: str
    occurrence: int
    inputs: dict[str, JsonValue]
    nearest_output: JsonValue
    nearest_id: int | None
    fingerprint: str = ""
    answers: tuple[RecordedAnswer, ...] = ()
    raised: str | None = None
    """The error the run ended on instead, when the application caught the `ReplayMiss`
    and then failed otherwise (`TypeError`); None when the miss ended it."""

    @property
    def identity(self) -> OperationIdentity:
        """The call's identity, as the fork gave it."""
        namespace, _, name = self.effect.partition(".")
        return OperationIdentity(namespace, name, self.fingerprint, self.occurrence)

    def editor_text(self) -> str:
        """Where the output editor starts: the nearest recorded output, or `null`."""
        return format_json(self.nearest_output)


def unrecorded_call(result: RunResult) -> UnrecordedCall | None:
    """The call a fork stopped at, or None when it did not stop at a missing call."""
    error = result.error
    if result.command != "fork" or error is None or error.identity is None:
        return None
    if error.operations or not isinstance(error.inputs, dict):
        return None  # an ambiguity names its copies, not a missing call
    answers = tuple(
        RecordedAnswer(candidate.logical_id, outcome.get("value"))
        for candidate in error.candidates
        for outcome in [candidate.outcome]
        if isinstance(outcome, dict) and outcome.get("status") == "ok"
    )
    nearest = answers[0] if answers else None
    return UnrecordedCall(
        effect=error.identity.effect,
        occurrence=error.identity.occurrence,
        inputs=cast(dict[str, JsonValue], error.inputs),
        nearest_output=None if nearest is None else nearest.output,
        nearest_id=None if nearest is None else nearest.logical_id,
        fingerprint=error.identity.fingerprint,
        answers=answers,
        raised=None if error.short_type == "ReplayMiss" else error.short_type,
    )
