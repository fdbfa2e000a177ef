"""A refund application run through the command line by the CLI tests.

The tests copy this file into a temporary folder as `refund_app.py` and run
`toolreplay ... --runner refund_app:main` there, as a user would. Environment
variables bend its behaviour: REFUND_AMOUNT changes an input, REFUND_PRINT
makes it print to stdout, REFUND_EXIT makes it call sys.exit.
"""

from __future__ import annotations

import asyncio
import os
import sys

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
    return {"decision": "approve", "reason": f"{tier} customer"}


def main() -> dict[str, JsonValue]:
    amount = float(os.environ.get("REFUND_AMOUNT", "1200"))
    customer = get_customer(42)
    refund_policy("eu")
    verdict = decide(amount, str(customer["tier"]))
    if os.environ.get("REFUND_PRINT"):
        print("application chatter on stdout")
        os.system("echo child process chatter")
    if os.environ.get("REFUND_EXIT"):
        sys.exit(int(os.environ["REFUND_EXIT"]))
    outcome = "approved" if verdict["decision"] == "approve" else "manual_review"
    return {"customer": customer["name"], "amount": amount, "outcome": outcome}


async def main_async() -> dict[str, JsonValue]:
    await asyncio.sleep(0)
    return main()


def needs_arguments(customer_id: int) -> None:
    raise AssertionError("never called")


def crashes() -> None:
    get_customer(42)
    raise RuntimeError("refund pipeline exploded")


class Cases:
    @staticmethod
    def refund() -> dict[str, JsonValue]:
        return main()


NOT_CALLABLE = 42
