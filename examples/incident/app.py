"""The application of the bundled incident: a refund decision that trusts the model too much.

Order 1042 asks for a $1,200.00 refund. The refund policy says refunds above
$1,000.00 need manual review, and the prompt even says so, but the code never
checks the limit itself: whatever the model answers decides. On the day of the
incident the model answered "approve", the refund was issued
(`billing.refund.create`) and the customer told so (`notify.customer`). Had it
answered "manual_review", the order would have gone to the review queue
(`review.queue.add`) and the customer been told that instead: a path the
recording never took, which a fork can only follow with supplied answers.

The lookups, the refund, the review queue and the notification are plain
effects; the model is called through the Tool Replay OpenAI adapter.
`run_incident` is the runner stored in the trace header: its client's transport
refuses every request, so the incident can only ever be replayed or forked,
never sent to a provider.
"""

from __future__ import annotations

from typing import Any

import openai

import toolreplay
from examples.local_openai import HTTP
from toolreplay import JsonValue
from toolreplay.adapters.openai import InstrumentedOpenAI, instrument

__all__ = [
    "AMOUNT",
    "MODEL",
    "ORDER_ID",
    "RUNNER",
    "add_to_review_queue",
    "create_refund",
    "decide_refund",
    "get_customer",
    "get_refund_policy",
    "notify_customer",
    "openai_client",
    "run_incident",
]

ORDER_ID = "ord_1042"
CUSTOMER_ID = 5817
AMOUNT = 1200.0
REASON = "the blender arrived with a cracked jug"
MODEL = "gpt-5-mini"
RUNNER = "examples.incident.app:run_incident"
OFFLINE_KEY = "sk-incident-offline-not-a-real-key"


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, JsonValue]:
    """The CRM record (a fixed record here: the incident never runs it live)."""
    return {
        "id": customer_id,
        "name": "Ada Lovelace",
        "tier": "gold",
        "active": True,
        "refunds_last_90_days": 0,
    }


@toolreplay.effect("policy.refund.get")
def get_refund_policy(region: str) -> dict[str, JsonValue]:
    """The refund policy that applies to the customer's region."""
    return {
        "region": region,
        "currency": "USD",
        "manual_review_above": 1000.0,
        "window_days": 30,
    }


@toolreplay.effect("billing.refund.create")
def create_refund(order_id: str, amount: float) -> dict[str, JsonValue]:
    """Issue the refund (the incident's recording holds what billing answered)."""
    return {"refund_id": f"rf_{order_id}", "order_id": order_id, "amount": amount}


@toolreplay.effect("review.queue.add")
def add_to_review_queue(order_id: str, amount: float, reason: str) -> dict[str, JsonValue]:
    """Put the order in front of a person; never called on the day of the incident."""
    return {"ticket": f"rv_{order_id}", "queue": "refunds"}


@toolreplay.effect("notify.customer")
def notify_customer(customer_id: int, message: str) -> dict[str, JsonValue]:
    """Tell the customer what happens to their request."""
    return {"sent": True, "channel": "email"}


def decide_refund(client: InstrumentedOpenAI) -> dict[str, JsonValue]:
    """Decide the refund of order 1042 with the model's help (the buggy part)."""
    customer = get_customer(CUSTOMER_ID)
    policy = get_refund_policy("us")
    response = client.responses.create(
        model=MODEL,
        input=(
            f"Customer {customer['name']} ({customer['tier']} tier, "
            f"{customer['refunds_last_90_days']} refunds in the last 90 days) asks for a refund "
            f"of ${AMOUNT:,.2f} on order {ORDER_ID} because {REASON}. Policy: refunds above "
            f"${policy['manual_review_above']:,.2f} need manual review. "
            "Answer with one word: approve or manual_review."
        ),
        reasoning={"effort": "minimal"},
        max_output_tokens=64,
    )
    verdict = response.output_text.strip()
    # The bug: the policy limit is only in the prompt; the model's word is final.
    if verdict == "approve":
        refund = create_refund(ORDER_ID, AMOUNT)
        notify_customer(
            CUSTOMER_ID, f"Your refund of ${AMOUNT:,.2f} for order {ORDER_ID} has been issued."
        )
        return {
            "order_id": ORDER_ID,
            "amount": AMOUNT,
            "decision": "approved",
            "refund_id": refund["refund_id"],
        }
    ticket = add_to_review_queue(ORDER_ID, AMOUNT, "above the manual review limit")
    notify_customer(
        CUSTOMER_ID, f"Your refund request for order {ORDER_ID} is being reviewed by our team."
    )
    return {
        "order_id": ORDER_ID,
        "amount": AMOUNT,
        "decision": "manual_review",
        "review_ticket": ticket["ticket"],
    }


def _refuse(request: Any) -> Any:
    raise HTTP.ConnectError(
        "the incident only replays offline: no request may reach a provider", request=request
    )


def openai_client(transport: Any = None) -> InstrumentedOpenAI:
    """The instrumented client; without a transport, one that refuses every request."""
    return instrument(
        openai.OpenAI(
            api_key=OFFLINE_KEY,
            http_client=HTTP.Client(transport=transport or HTTP.MockTransport(_refuse)),
            max_retries=0,
        )
    )


def run_incident() -> dict[str, JsonValue]:
    """The runner in the trace header: the application, with a provider it cannot reach."""
    return decide_refund(openai_client())
