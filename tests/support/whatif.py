"""The two-branch application of the what-if forks (issue 12).

On `approve` it issues the refund (`billing.refund.create`) then tells the
customer; otherwise it queues the order for review (`review.queue.add`) then
tells the customer. A CRM timeout takes the error path. `BODY_CALLS` counts
the bodies that really ran, so tests can prove which calls ran live.
"""

from __future__ import annotations

from collections import Counter

import toolreplay
from toolreplay import JsonValue

BODY_CALLS: Counter[str] = Counter()
ORDER_ID = "o-7"
CUSTOMER_ID = 42
AMOUNT = 1200.0
RUNNER = "tests.support.whatif:handle_order"


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, JsonValue]:
    BODY_CALLS["crm.customer.get"] += 1
    return {"id": customer_id, "name": "Ada", "tier": "gold"}


@toolreplay.effect("llm.refund.decide")
def decide(order_id: str, amount: float, tier: str) -> dict[str, JsonValue]:
    BODY_CALLS["llm.refund.decide"] += 1
    return {"decision": "approve"}


@toolreplay.effect("billing.refund.create")
def create_refund(order_id: str, amount: float) -> dict[str, JsonValue]:
    BODY_CALLS["billing.refund.create"] += 1
    return {"refund_id": f"rf-{order_id}", "amount": amount}


@toolreplay.effect("review.queue.add")
def add_to_review(order_id: str, reason: str) -> dict[str, JsonValue]:
    BODY_CALLS["review.queue.add"] += 1
    return {"ticket": f"RV-{order_id}", "position": 3}


@toolreplay.effect("notify.customer")
def notify_customer(customer_id: int, message: str) -> dict[str, JsonValue]:
    BODY_CALLS["notify.customer"] += 1
    return {"sent": True}


def handle_order() -> dict[str, JsonValue]:
    """Decide a refund, act on the decision, and tell the customer."""
    try:
        customer = get_customer(CUSTOMER_ID)
    except TimeoutError:
        notify_customer(CUSTOMER_ID, "We could not check your account yet; we will write again.")
        return {"order_id": ORDER_ID, "decision": "deferred"}
    verdict = decide(ORDER_ID, AMOUNT, str(customer["tier"]))["decision"]
    if verdict == "approve":
        refund = create_refund(ORDER_ID, AMOUNT)
        notify_customer(CUSTOMER_ID, f"Your refund {refund['refund_id']} is on its way.")
        return {"order_id": ORDER_ID, "decision": "approved", "refund_id": refund["refund_id"]}
    ticket = add_to_review(ORDER_ID, "the model asked for a review")
    notify_customer(CUSTOMER_ID, f"Your request is being reviewed (ticket {ticket['ticket']}).")
    return {"order_id": ORDER_ID, "decision": "manual_review", "ticket": ticket["ticket"]}
