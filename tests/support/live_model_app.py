"""An application that asks a model about a fact, for the command line's live forks.

`LIVE_MODEL_API` is the base URL of the API it asks (the tests' local fake API on
loopback); its client is an ordinary SDK client, instrumented.
"""

from __future__ import annotations

import os

import openai

import toolreplay
from toolreplay.adapters.openai import instrument


@toolreplay.effect("shop.status")
def order_status(order_id: int) -> str:
    return "delivered"


def main() -> str:
    client = openai.OpenAI(
        api_key="sk-test-cli-0123456789", base_url=os.environ["LIVE_MODEL_API"], max_retries=0
    )
    question = f"Order 8812 is {order_status(8812)}. Refund it?"
    return instrument(client).responses.create(model="gpt-5-mini", input=question).output_text
