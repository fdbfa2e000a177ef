"""A small application with effects, shared by the runtime tests.

`BODY_CALLS` counts how often each effect body really ran, so tests can prove
that replay runs none.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import toolreplay
from toolreplay import JsonValue

BODY_CALLS: Counter[str] = Counter()
CUSTOMERS: dict[int, dict[str, JsonValue]] = {
    42: {"id": 42, "name": "Ada", "active": True, "tier": "gold"},
    7: {"id": 7, "name": "Bo", "active": False, "tier": "basic"},
}


class CrmUnavailable(Exception):
    """An application-specific failure (not on the rebuild allowlist)."""


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int, include_history: bool = False) -> dict[str, JsonValue]:
    BODY_CALLS["crm.customer.get"] += 1
    customer = dict(CUSTOMERS[customer_id])
    if include_history:
        customer["history"] = []
    return customer


@toolreplay.effect("billing.refund.create")
def create_refund(customer_id: int, amount: float) -> dict[str, JsonValue]:
    BODY_CALLS["billing.refund.create"] += 1
    if amount > 1000:
        raise TimeoutError("billing service timed out after 30s")
    return {"refund_id": f"r-{customer_id}-{amount}", "amount": amount}


@toolreplay.effect("crm.notes.add")
def add_note(customer_id: int, text: str) -> None:
    BODY_CALLS["crm.notes.add"] += 1
    if text == "down":
        raise CrmUnavailable("CRM is down for maintenance")


@toolreplay.effect(namespace="llm", name="decide")
async def decide(prompt: str, *, effort: str = "low") -> str:
    BODY_CALLS["llm.decide"] += 1
    await asyncio.sleep(0)
    return "approve" if "refund" in prompt else "reject"


def handle_refund(customer_id: int, amount: float) -> dict[str, JsonValue]:
    """The application's entry point: look up, try to refund, note the result."""
    customer = get_customer(customer_id)
    try:
        refund = create_refund(customer_id, amount)
        status = "refunded"
    except TimeoutError as error:
        refund = None
        status = f"retry later: {error}"
    add_note(customer_id, status)
    return {"customer": customer["name"], "status": status, "refund": refund}


async def handle_refund_async(customer_id: int) -> dict[str, JsonValue]:
    customer = get_customer(customer_id)
    decision = await decide(f"refund for {customer['name']}?")
    second = await decide("anything else?", effort="high")
    return {"decision": decision, "second": second}
