"""The application under investigation: a refund decision that trusts the model too much.

Refunds above $1,000 require manual review, but `decide_refund` approves whatever
the model approves. The model is called through the Tool Replay OpenAI adapter;
the order lookup is a plain effect. The transports are local: one serves the
answer the model gave on the day of the incident, the other refuses every
request, so any provider call after the capture would fail loudly.
"""

from __future__ import annotations

from typing import Any

import openai

import toolreplay
from examples.local_openai import HTTP, message_item, response_body
from toolreplay import JsonValue
from toolreplay.adapters.openai import InstrumentedOpenAI, instrument

ORDER_ID = 7
REVIEW_THRESHOLD = 1000.0
MODEL = "gpt-5-mini"
DEMO_KEY = "sk-demo-offline-not-a-real-key"


@toolreplay.effect("orders.get")
def get_order(order_id: int) -> dict[str, JsonValue]:
    return {"order_id": order_id, "customer": "Ada", "amount": 1200.0, "reason": "damaged"}


def decide_refund(client: InstrumentedOpenAI, order_id: int = ORDER_ID) -> dict[str, JsonValue]:
    order = get_order(order_id)
    response = client.responses.create(
        model=MODEL,
        input=(
            f"A customer asks for a refund of ${order['amount']:.2f} because the item arrived "
            f"{order['reason']}. Answer approve or manual_review."
        ),
        reasoning={"effort": "minimal"},
        max_output_tokens=64,
    )
    verdict = response.output_text.strip()
    # The bug: the policy threshold is never checked, the model's word is final.
    decision = "approved" if verdict == "approve" else "manual_review"
    return {"order_id": order_id, "amount": order["amount"], "decision": decision}


def incident_body(text: str = "approve") -> dict[str, Any]:
    """The Responses API body the model sent on the day of the incident."""
    return response_body(
        text,
        output=[
            {"type": "reasoning", "id": "rs_demo", "summary": []},
            message_item(text, item_id="msg_demo"),
        ],
        id="resp_demo_incident",
        created_at=1764400000,
    )


class CountingTransport(HTTP.MockTransport):
    """A local transport that counts requests; `answer=None` refuses every one."""

    def __init__(self, answer: dict[str, Any] | None) -> None:
        self.calls = 0

        def handle(request: Any) -> Any:
            self.calls += 1
            if answer is None:
                raise RuntimeError("the provider was contacted during an offline step")
            return HTTP.Response(200, json=answer, headers={"x-request-id": "req_demo"})

        super().__init__(handle)


def client_for(transport: CountingTransport) -> InstrumentedOpenAI:
    return instrument(
        openai.OpenAI(api_key=DEMO_KEY, http_client=HTTP.Client(transport=transport), max_retries=0)
    )


def run_case() -> dict[str, JsonValue]:
    """The promoted case's runner: the application with a transport that refuses everything."""
    return decide_refund(client_for(CountingTransport(None)))
