"""The application under investigation: the bundled incident's (`examples/incident/app.py`).

Order ord_1042 asks for a $1,200.00 refund. Refunds above $1,000.00 need manual
review, but the application does whatever the model answers: on the day of the
incident the model said `approve`, so the refund was issued
(`billing.refund.create`) and the customer told so (`notify.customer`). Had it
said `manual_review`, the order would have gone to the review queue
(`review.queue.add`) and the customer been told that instead.

This module adds what the demo shows around it: a local transport that counts
provider requests (one at capture time, none after), serving the model's answer
on the day of the incident or refusing every request.
"""

from __future__ import annotations

from typing import Any

from examples.incident import app
from examples.incident.record import incident_body
from examples.local_openai import HTTP
from toolreplay.adapters.openai import InstrumentedOpenAI

__all__ = ["AMOUNT", "ORDER_ID", "RUNNER", "CountingTransport", "client_for", "decide_refund"]

ORDER_ID = app.ORDER_ID
AMOUNT = app.AMOUNT
RUNNER = app.RUNNER
"""The promoted case's runner: the application with a provider it cannot reach."""
decide_refund = app.decide_refund


class CountingTransport(HTTP.MockTransport):
    """A local transport that counts requests; without `answering`, it refuses every one."""

    def __init__(self, *, answering: bool = False) -> None:
        self.calls = 0
        answer: dict[str, Any] | None = incident_body() if answering else None

        def handle(request: Any) -> Any:
            self.calls += 1
            if answer is None:
                raise RuntimeError("the provider was contacted during an offline step")
            return HTTP.Response(200, json=answer, headers={"x-request-id": "req_demo"})

        super().__init__(handle)


def client_for(transport: CountingTransport) -> InstrumentedOpenAI:
    """The incident's instrumented client, sending through `transport`."""
    return app.openai_client(transport)
