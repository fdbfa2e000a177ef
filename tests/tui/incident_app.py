"""The application the debugger's tests fork, promote and time out.

The tests copy this file into a temporary folder as `tuiapp.py` and run it there
in child processes (`python -m toolreplay ... --runner tuiapp:main`), exactly as a
user's application is run; the test process never imports it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import toolreplay
from toolreplay import JsonValue


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, JsonValue]:
    return {"id": customer_id, "name": "Ada", "tier": "gold"}


@toolreplay.effect("policy.refund.get")
def refund_policy(region: str) -> dict[str, JsonValue]:
    return {"region": region, "manual_review_over": 1000.0}


@toolreplay.effect("llm.refund.decide")
def decide(amount: float, tier: str) -> dict[str, JsonValue]:
    # Stands in for the model call; the bug under investigation: it approves.
    return {"decision": "approve", "reason": f"{tier} customer", "confidence": 0.93}


@toolreplay.effect("billing.refund.escalate")
def escalate(customer_id: int) -> str:
    return f"ticket for {customer_id}"


def main() -> dict[str, JsonValue]:
    customer = get_customer(42)
    policy = refund_policy("eu")
    verdict = decide(1200.0, str(customer["tier"]))
    print("deciding the refund", file=sys.stderr)
    if verdict["decision"] == "escalate":  # a call the recording never saw
        escalate(42)
    limit = policy["manual_review_over"]
    assert isinstance(limit, float)
    outcome = "approved" if verdict["decision"] == "approve" else "manual_review"
    return {"customer": customer["name"], "amount": 1200.0, "outcome": outcome}


def sleepy() -> None:
    print("sleeping in the runner", file=sys.stderr, flush=True)
    # support.sleepy_started: the line above was printed, by this process
    Path(f"sleepy.started.{os.getpid()}").touch()
    time.sleep(120)  # a runner that hangs: the tests cancel it or let the timeout kill it


def crashes() -> None:
    get_customer(42)
    raise RuntimeError("refund pipeline exploded")
