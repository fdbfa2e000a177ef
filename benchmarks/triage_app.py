"""The application behind the case benchmark's realistic cases: one support ticket, triaged.

Shaped like the bundled incident (`examples/incident/app.py`), only longer: a
runner module whose effects are CRM, policy, knowledge-base, fraud, billing,
notes, e-mail and helpdesk calls, with three model calls through the Tool
Replay OpenAI adapter between them, 14 operations in all. `run_triage` is the
runner a promoted case names: its client's transport refuses every request, so
it can only replay. `record_triage` records one run into a trace from a local
stand-in for the Responses API (no key, no network).
"""

from __future__ import annotations

from pathlib import Path

import openai

import toolreplay
from examples.local_openai import HTTP, LocalOpenAI, refusing
from toolreplay import JsonValue
from toolreplay.adapters.openai import InstrumentedOpenAI, instrument

__all__ = ["OPERATIONS", "RUNNER", "record_triage", "run_triage", "triage"]

RUNNER = "benchmarks.triage_app:run_triage"
OPERATIONS = 14
"""Operations in the trace of one triage: 11 effect calls and 3 model calls."""
MODEL = "gpt-5-mini"
TICKET_ID = "T-88213"
MODEL_ANSWERS = (
    "refund_request",
    "approve",
    "Hello Grace, we are sorry the kettle arrived broken. A refund of $89.90 is on its way "
    "to your card and should appear within five business days.",
)
"""What the local stand-in answers to the three model calls, in order."""


@toolreplay.effect("helpdesk.ticket.get")
def get_ticket(ticket_id: str) -> dict[str, JsonValue]:
    return {
        "id": ticket_id,
        "customer_id": 40917,
        "order_id": "ord_5521",
        "subject": "Kettle arrived broken",
        "body": "The lid hinge snapped on first use and the base is cracked. I want my money "
        "back, not a replacement.",
        "channel": "email",
        "created_at": "2026-11-30T16:02:11Z",
    }


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, JsonValue]:
    return {
        "id": customer_id,
        "name": "Grace Hopper",
        "email": "grace@example.com",
        "tier": "silver",
        "since": "2019-04-02",
        "refunds_last_90_days": 1,
    }


@toolreplay.effect("crm.orders.list")
def list_orders(customer_id: int) -> list[JsonValue]:
    return [
        {"id": "ord_5521", "total": 89.9, "items": ["kettle-1l-steel"], "status": "delivered"},
        {"id": "ord_5107", "total": 24.5, "items": ["descaler-x3"], "status": "delivered"},
        {"id": "ord_4890", "total": 310.0, "items": ["espresso-m2"], "status": "returned"},
    ]


@toolreplay.effect("policy.refund.get")
def get_refund_policy(region: str) -> dict[str, JsonValue]:
    return {"region": region, "currency": "USD", "manual_review_above": 1000.0, "window_days": 30}


@toolreplay.effect("kb.search")
def search_knowledge_base(query: str) -> list[JsonValue]:
    return [
        {"id": f"kb-{len(query)}", "title": f"About: {query}", "score": 0.82},
        {"id": f"kb-{len(query) + 1}", "title": "Damaged on arrival", "score": 0.77},
    ]


@toolreplay.effect("fraud.score")
def fraud_score(customer_id: int, amount: float) -> dict[str, JsonValue]:
    return {"customer_id": customer_id, "amount": amount, "score": 0.04, "model": "fr-2026-10"}


@toolreplay.effect("billing.refund.create")
def create_refund(order_id: str, amount: float) -> dict[str, JsonValue]:
    return {"refund_id": f"re_{order_id}", "order_id": order_id, "amount": amount}


@toolreplay.effect("helpdesk.escalate")
def escalate(ticket_id: str, reason: str) -> dict[str, JsonValue]:
    return {"ticket_id": ticket_id, "queue": "refunds-review", "reason": reason}


@toolreplay.effect("crm.notes.add")
def add_note(customer_id: int, text: str) -> dict[str, JsonValue]:
    return {"customer_id": customer_id, "note_id": 99120, "text": text}


@toolreplay.effect("email.send")
def send_email(to: str, body: str) -> dict[str, JsonValue]:
    return {"to": to, "message_id": "msg-77f1", "bytes": len(body)}


@toolreplay.effect("helpdesk.ticket.update")
def update_ticket(ticket_id: str, status: str) -> dict[str, JsonValue]:
    return {"id": ticket_id, "status": status}


def _ask(client: InstrumentedOpenAI, prompt: str) -> str:
    response = client.responses.create(
        model=MODEL, input=prompt, reasoning={"effort": "minimal"}, max_output_tokens=256
    )
    return response.output_text.strip()


def triage(client: InstrumentedOpenAI) -> dict[str, JsonValue]:
    """Triage ticket `TICKET_ID`: classify it, decide, act, answer the customer."""
    ticket = get_ticket(TICKET_ID)
    customer = get_customer(int(str(ticket["customer_id"])))
    orders = list_orders(int(str(customer["id"])))
    order = next(o for o in orders if isinstance(o, dict) and o["id"] == ticket["order_id"])
    assert isinstance(order, dict)
    amount = float(str(order["total"]))
    policy = get_refund_policy("us")
    category = _ask(
        client,
        f"Classify this support ticket in one word.\nSubject: {ticket['subject']}\n"
        f"{ticket['body']}",
    )
    articles = search_knowledge_base(category) + search_knowledge_base(str(ticket["subject"]))
    risk = fraud_score(int(str(customer["id"])), amount)
    verdict = _ask(
        client,
        f"Customer {customer['name']} ({customer['tier']}) asks for a refund of ${amount:.2f} "
        f"on {order['id']}. Policy: manual review above ${policy['manual_review_above']}. "
        f"Fraud score {risk['score']}. Relevant articles: "
        f"{', '.join(str(a['title']) for a in articles if isinstance(a, dict))}. "
        "Answer approve or manual_review.",
    )
    if verdict == "approve":
        action = create_refund(str(order["id"]), amount)
    else:
        action = escalate(TICKET_ID, f"model said {verdict}")
    add_note(int(str(customer["id"])), f"{category}: {verdict} ({action})")
    reply = _ask(client, f"Write a short reply to {customer['name']}: the refund is {verdict}.")
    sent = send_email(str(customer["email"]), reply)
    update_ticket(TICKET_ID, "solved" if verdict == "approve" else "pending")
    return {
        "ticket": TICKET_ID,
        "category": category,
        "decision": verdict,
        "action": action,
        "reply_bytes": sent["bytes"],
    }


def _client(handler: object) -> InstrumentedOpenAI:
    return instrument(
        openai.OpenAI(
            api_key="sk-bench-offline-not-a-real-key",
            http_client=HTTP.Client(transport=HTTP.MockTransport(handler)),
            max_retries=0,
        )
    )


def run_triage() -> dict[str, JsonValue]:
    """The runner of the promoted cases: the application, with a provider it cannot reach."""
    return triage(_client(refusing()))


def record_triage(path: Path) -> dict[str, JsonValue]:
    """Record one triage into a new trace at `path`, answered by a local stand-in."""
    with toolreplay.record(path):
        return triage(_client(LocalOpenAI(*MODEL_ANSWERS)))
