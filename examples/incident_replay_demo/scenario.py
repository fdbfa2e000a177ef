"""The demo's state machine: each step calls the real Tool Replay API on a private folder.

Steps run in order (replay, correct, compare, promote); `reset` records the
incident again and starts over. The correction forks the incident with the
model's answer changed. The corrected run then makes calls the recording never
made (the review queue, a new notice to the customer), so the fork stops and
asks for each one's answer; `supply` gives it (a `supply_output` patch) and
forks again, until the fork completes. Results are plain JSON for the page:
decisions, counts, effect names, inputs and JSON paths, never a file path, a
key or an HTTP object.
"""

from __future__ import annotations

import contextlib
import copy
import shutil
import threading
from pathlib import Path
from typing import Any, cast

import toolreplay
from examples.incident_replay_demo import refund_app
from toolreplay import JsonValue, Patch

__all__ = ["STEPS", "DemoError", "DemoScenario"]

STEPS = ("replay", "correct", "compare", "promote")
ACTIONS = (*STEPS, "supply")
CASE_NAME = "refund_over_limit_needs_review"
MODEL_EFFECT = "openai.responses.create"


class DemoError(Exception):
    """A request the demo refuses; `status` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _corrected_answer(recorded: JsonValue) -> JsonValue:
    """The model's recorded output with its one word changed to `manual_review`."""
    corrected = copy.deepcopy(recorded)
    body = cast(dict[str, Any], corrected)["body"]
    message = next(item for item in body["output"] if item["type"] == "message")
    message["content"][0]["text"] = "manual_review"
    return corrected


class DemoScenario:
    """One incident in its own folder, walked through step by step (thread-safe)."""

    def __init__(self, folder: Path, *, incident: Path | None = None) -> None:
        """`incident`: a trace of the refund application to start from (copied, never
        changed) instead of recording one, such as a trace someone sent you."""
        self._folder = folder
        self._source = incident
        self._lock = threading.Lock()
        self._completed: list[str] = []
        self._results: dict[str, dict[str, JsonValue]] = {}
        self._supplies: list[Patch] = []
        self._asking: toolreplay.ReplayMiss | None = None
        self._corrected: dict[str, JsonValue] | None = None
        with contextlib.suppress(DemoError):  # the page says so; Reset demo shows why
            self.reset()

    @property
    def _incident(self) -> Path:
        return self._folder / "incident.trp"

    @property
    def _branch(self) -> Path:
        return self._folder / "corrected.trp"

    def scrub(self, message: str) -> str:
        """`message` without the scenario folder: the page must not show local paths."""
        for shown in {str(self._folder.resolve()), str(self._folder)}:
            message = message.replace(shown, "<scenario>")
        return message

    def _failure(self, error: Exception) -> DemoError:
        return DemoError(500, self.scrub(f"{type(error).__name__}: {error}"))

    def reset(self) -> dict[str, Any]:
        """Forget everything and record the incident again (with the local transport), or
        copy the given one again and replay it for its decision."""
        with self._lock:
            self._completed, self._results = [], {}
            self._supplies, self._asking, self._corrected = [], None, None
            try:
                shutil.rmtree(self._folder, ignore_errors=True)
                self._folder.mkdir(parents=True)
                calls: int | None = None
                if self._source is None:
                    transport = refund_app.CountingTransport(answering=True)
                    with toolreplay.record(self._incident, metadata={"runner": refund_app.RUNNER}):
                        outcome = refund_app.decide_refund(refund_app.client_for(transport))
                    calls = transport.calls
                else:
                    shutil.copyfile(self._source, self._incident)
                    transport = refund_app.CountingTransport()
                    with toolreplay.replay(self._incident):
                        outcome = refund_app.decide_refund(refund_app.client_for(transport))
                trace = toolreplay.read_trace(self._incident)
            except Exception as error:
                raise self._failure(error) from error
            self._results = {
                "incident": {
                    "decision": outcome["decision"],
                    "amount": outcome["amount"],
                    "operations": len(trace),
                    "effects": [op.effect for op in trace.operations],
                    "provider_calls": calls,  # null: loaded from a file, not captured here
                }
            }
            return self._state()

    def state(self) -> dict[str, Any]:
        with self._lock:
            return self._state()

    def _state(self) -> dict[str, Any]:
        pending = [step for step in STEPS if step not in self._completed]
        asking = self._asking
        return {
            "steps": list(STEPS),
            "completed": list(self._completed),
            "next": pending[0] if pending else None,
            "asking": None if asking is None else _asked(asking),
            "results": copy.deepcopy(self._results),
        }

    def run(self, action: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run `action` if it is the next one (`supply`: while the fork asks); the new state."""
        if action not in ACTIONS:
            raise DemoError(404, f"unknown action {action!r}; the actions are {', '.join(ACTIONS)}")
        with self._lock:
            expected = next((s for s in STEPS if s not in self._completed), None)
            if action == "supply" and self._asking is None:
                raise DemoError(
                    409, "supply cannot run now: the fork is not waiting for a call's answer"
                )
            if action != "supply" and action != expected:
                done = "all steps are done" if expected is None else f"the next step is {expected}"
                raise DemoError(
                    409, f"{action} cannot run now: {done}; use Reset demo to start over"
                )
            step = "correct" if action == "supply" else action
            # A failed action leaves the state as it was, so it can be tried again.
            supplies, asking = list(self._supplies), self._asking
            try:
                if action == "supply":
                    self._supply(body or {})
                elif action == "correct":
                    self._supplies = []
                self._results[step] = getattr(self, f"_{step}")()
            except Exception as error:
                self._supplies, self._asking = supplies, asking
                if isinstance(error, DemoError):
                    raise DemoError(error.status, self.scrub(error.message)) from error
                raise self._failure(error) from error  # messages name trace files: scrubbed
            if self._asking is None:
                self._completed.append(step)
            return self._state()

    # --- the steps ------------------------------------------------------------------------

    def _replay(self) -> dict[str, JsonValue]:
        transport = refund_app.CountingTransport()
        with toolreplay.replay(self._incident) as session:
            outcome = refund_app.decide_refund(refund_app.client_for(transport))
        return {
            "decision": outcome["decision"],
            "operations_replayed": session.consumed_count,
            "provider_calls": transport.calls,
        }

    def _supply(self, body: dict[str, Any]) -> None:
        """Answer the call the fork stopped at with `body["value"]`."""
        if body.keys() != {"value"}:
            raise DemoError(400, 'supply takes a JSON object with exactly one key, "value"')
        asked = self._asking
        assert asked is not None
        try:
            patch = toolreplay.supply_output(
                effect=asked.effect,
                inputs=asked.inputs,
                occurrence=asked.occurrence,
                value=body["value"],
            )
        except toolreplay.NonPortableValueError as error:
            raise DemoError(400, f"the supplied value is refused: {error}") from None
        self._supplies.append(patch)

    def _correct(self) -> dict[str, JsonValue]:
        """Fork with the model's answer changed and every answer supplied so far."""
        model_call = next(
            op
            for op in toolreplay.read_trace(self._incident).operations
            if op.effect == MODEL_EFFECT
        )
        assert isinstance(model_call.outcome, toolreplay.Returned)
        patch = toolreplay.replace_output(
            effect=MODEL_EFFECT,
            inputs=model_call.inputs,
            value=_corrected_answer(model_call.outcome.value),
        )
        transport = refund_app.CountingTransport()
        supplied: list[JsonValue] = [p.effect for p in self._supplies]
        self._asking = None
        try:
            with toolreplay.fork(
                self._incident, self._branch, patches=[patch, *self._supplies], unobserved="allow"
            ) as session:
                outcome = refund_app.decide_refund(refund_app.client_for(transport))
        except toolreplay.ReplayMiss as miss:
            # The corrected run made a call the recording never made: ask for its answer.
            self._branch.unlink()
            self._asking = miss
            return {"stopped_at": miss.effect, "supplied": supplied}
        except BaseException:
            # A failed fork keeps its partial branch; remove it so the step can run again.
            self._branch.unlink(missing_ok=True)
            raise
        footer = toolreplay.read_trace(self._branch).footer
        assert footer is not None
        self._corrected = outcome
        return {
            "decision": outcome["decision"],
            "patched_effect": MODEL_EFFECT,
            "patched_operations": session.patched_count,
            "supplied": supplied,
            "not_called": [item.identity.effect for item in footer.unobserved],
            "provider_calls": transport.calls,
        }

    def _compare(self) -> dict[str, JsonValue]:
        report = toolreplay.diff(self._incident, self._branch)
        first = report.first_divergence
        if first is None:
            raise DemoError(500, "the two executions did not diverge")
        field = first.fields[0]
        return {
            "type": first.type,
            "effect": first.effect,
            "occurrence": first.occurrence,
            "path": field.path,
            "source": field.source,
            "target": field.target,
            "from_patch": first.patch_id is not None,
            "differences": len(report.differences),
            "missing": [d.effect for d in report.differences if d.type == "operation_missing"],
            "added": [
                {"effect": d.effect, "origin": d.target.origin if d.target else "attempted"}
                for d in report.differences
                if d.type == "operation_added"
            ],
            # A new call standing where a recorded one stood: the same call, asked differently.
            "asked_differently": [
                {
                    "effect": d.effect,
                    "origin": d.target.origin if d.target else "attempted",
                    "paths": [f.path for f in d.fields],
                }
                for d in report.differences
                if d.type == "input_changed"
            ],
        }

    def _promote(self) -> dict[str, JsonValue]:
        assert self._corrected is not None
        case = toolreplay.promote(
            self._branch,
            self._folder / "cases" / CASE_NAME,
            name=CASE_NAME,
            runner=refund_app.RUNNER,
            expected=self._corrected,
        )
        verified = toolreplay.verify_case(case.directory)
        return {
            "case": case.name,
            "files": len(list(case.directory.iterdir())),
            "trace_sha256": case.trace_sha256,
            "verified": True,
            "returned": verified.returned,
            "operations_replayed": verified.operations_replayed,
        }


def _asked(miss: toolreplay.ReplayMiss) -> dict[str, JsonValue]:
    """The call the fork stopped at, and where the answer's editor starts: the nearest
    recorded output of the same effect, or null when the recording never called it."""
    suggestion: JsonValue = None
    for candidate in miss.candidates:
        if isinstance(candidate.outcome, toolreplay.Returned):
            suggestion = candidate.outcome.value
            break
    return {
        "effect": miss.effect,
        "occurrence": miss.occurrence,
        "inputs": cast(JsonValue, miss.inputs),  # a call's inputs are portable JSON
        "suggestion": suggestion,
    }
