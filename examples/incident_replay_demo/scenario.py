"""The demo's state machine: each step calls the real Tool Replay API on a private folder.

Steps run in order (replay, correct, compare, promote); `reset` records the
incident again and starts over. Results are plain JSON for the page: decisions,
counts, effect names and JSON paths, never a file path, a key or an HTTP object.
"""

from __future__ import annotations

import copy
import shutil
import threading
from pathlib import Path
from typing import Any

import toolreplay
from examples.incident_replay_demo import refund_app
from toolreplay import JsonValue

__all__ = ["STEPS", "DemoError", "DemoScenario"]

STEPS = ("replay", "correct", "compare", "promote")
CASE_NAME = "refund_over_limit_needs_review"
RUNNER = "examples.incident_replay_demo.refund_app:run_case"


class DemoError(Exception):
    """A request the demo refuses; `status` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class DemoScenario:
    """One incident in its own folder, walked through step by step (thread-safe)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._lock = threading.Lock()
        self._completed: list[str] = []
        self._results: dict[str, dict[str, JsonValue]] = {}
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
        """Forget everything and record the incident again (with the local transport)."""
        with self._lock:
            self._completed = []
            self._results = {}
            try:
                shutil.rmtree(self._folder, ignore_errors=True)
                self._folder.mkdir(parents=True)
                transport = refund_app.CountingTransport(refund_app.incident_body("approve"))
                with toolreplay.record(self._incident, metadata={"runner": RUNNER}):
                    outcome = refund_app.decide_refund(refund_app.client_for(transport))
                operations = len(toolreplay.read_trace(self._incident))
            except Exception as error:
                raise self._failure(error) from error
            self._results = {
                "incident": {
                    "decision": outcome["decision"],
                    "amount": outcome["amount"],
                    "operations": operations,
                    "provider_calls": transport.calls,
                }
            }
            return self._state()

    def state(self) -> dict[str, Any]:
        with self._lock:
            return self._state()

    def _state(self) -> dict[str, Any]:
        pending = [step for step in STEPS if step not in self._completed]
        return {
            "steps": list(STEPS),
            "completed": list(self._completed),
            "next": pending[0] if pending else None,
            "results": copy.deepcopy(self._results),
        }

    def run(self, step: str) -> dict[str, Any]:
        """Run `step` if it is the next one; answer the new state."""
        if step not in STEPS:
            raise DemoError(404, f"unknown action {step!r}; the actions are {', '.join(STEPS)}")
        with self._lock:
            expected = next((s for s in STEPS if s not in self._completed), None)
            if step != expected:
                done = "all steps are done" if expected is None else f"the next step is {expected}"
                raise DemoError(409, f"{step} cannot run now: {done}; use Reset demo to start over")
            try:
                self._results[step] = getattr(self, f"_{step}")()
            except DemoError as error:
                raise DemoError(error.status, self.scrub(error.message)) from error
            except Exception as error:  # messages name trace files: scrub the folder
                raise self._failure(error) from error
            self._completed.append(step)
            return self._state()

    # --- the steps ------------------------------------------------------------------------

    def _replay(self) -> dict[str, JsonValue]:
        transport = refund_app.CountingTransport(None)
        with toolreplay.replay(self._incident) as session:
            outcome = refund_app.decide_refund(refund_app.client_for(transport))
        return {
            "decision": outcome["decision"],
            "operations_replayed": session.consumed_count,
            "provider_calls": transport.calls,
        }

    def _correct(self) -> dict[str, JsonValue]:
        model_call = next(
            op
            for op in toolreplay.read_trace(self._incident).operations
            if op.effect == "openai.responses.create"
        )
        assert isinstance(model_call.outcome, toolreplay.Returned)
        corrected = copy.deepcopy(model_call.outcome.value)
        assert isinstance(corrected, dict)
        corrected["body"] = refund_app.incident_body("manual_review")
        patch = toolreplay.replace_output(
            effect="openai.responses.create", inputs=model_call.inputs, value=corrected
        )
        transport = refund_app.CountingTransport(None)
        try:
            with toolreplay.fork(self._incident, self._branch, patches=[patch]) as session:
                outcome = refund_app.decide_refund(refund_app.client_for(transport))
        except BaseException:
            # A failed fork keeps its partial branch; remove it so the step can run again.
            self._branch.unlink(missing_ok=True)
            raise
        return {
            "decision": outcome["decision"],
            "patched_effect": "openai.responses.create",
            "patched_operations": session.patched_count,
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
        }

    def _promote(self) -> dict[str, JsonValue]:
        expected = self._results["correct"]["decision"]
        case = toolreplay.promote(
            self._branch,
            self._folder / "cases" / CASE_NAME,
            name=CASE_NAME,
            runner=RUNNER,
            expected={"order_id": refund_app.ORDER_ID, "amount": 1200.0, "decision": expected},
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
