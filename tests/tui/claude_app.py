"""A refund agent on Claude (the Anthropic SDK), for the debugger's transcript tests.

The tests copy this file into a temporary folder as `tuiclaude.py` and record it there
in a child process. It talks to the local Anthropic API (examples/local_anthropic) in
process through an instrumented client: a turn with a system prompt, a tool and extended
thinking, answered by thinking, text and a tool use; the tool runs; the next turn sends
the tool's result back and gets Claude's answer; then the same first question streamed.
"""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2

import toolreplay
from examples.local_anthropic import API_KEY, MODEL, LocalAnthropic
from toolreplay import JsonValue
from toolreplay.adapters.anthropic import instrument

SYSTEM = "You settle refunds for a shop. Look orders up before you answer."
QUESTION = "Where is order 8812? It never arrived."
TOOLS: Any = [
    {
        "name": "lookup_order",
        "description": "Look an order up by its id.",
        "input_schema": {"type": "object", "properties": {"order_id": {"type": "integer"}}},
    }
]
THINKING: Any = {"type": "enabled", "budget_tokens": 1024}
ADMIN_KEY = "sk-ant-admin01-CANARY-tui-5d20"  # a credential header the application adds


@toolreplay.effect("shop.order.lookup")
def lookup_order(order_id: int) -> dict[str, JsonValue]:
    return {"order_id": order_id, "status": "lost in transit"}


def main() -> dict[str, JsonValue]:
    api = LocalAnthropic(
        tool_input={"order_id": 8812},
        final_text=lambda results: f"The carrier lost it: {results[-1]}. I will refund it.",
    )
    http = httpx2.Client(transport=httpx2.MockTransport(api))
    client = instrument(
        anthropic.Anthropic(
            api_key=API_KEY,
            http_client=http,
            max_retries=0,
            default_headers={"anthropic-admin-api-key": ADMIN_KEY},
        )
    )
    asked: Any = [{"role": "user", "content": QUESTION}]
    first = client.messages.create(
        model=MODEL, max_tokens=2048, system=SYSTEM, messages=asked, tools=TOOLS, thinking=THINKING
    )
    use = next(block for block in first.content if block.type == "tool_use")
    result = lookup_order(int(use.input["order_id"]))  # type: ignore[index]  # the tool's input
    answered: Any = [
        *asked,
        {"role": "assistant", "content": [block.to_dict() for block in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": str(result)}],
        },
    ]
    second = client.messages.create(
        model=MODEL,
        max_tokens=2048,
        system=SYSTEM,
        messages=answered,
        tools=TOOLS,
        thinking=THINKING,
    )
    with client.messages.stream(
        model=MODEL, max_tokens=2048, system=SYSTEM, messages=asked, tools=TOOLS
    ) as stream:
        streamed = stream.get_final_message()
    return {
        "answer": "".join(block.text for block in second.content if block.type == "text"),
        "streamed": [block.type for block in streamed.content],
    }
