"""A refund triage application on the OpenAI SDK, for the debugger's model-call tests.

The tests copy this file into a temporary folder as `tuiopenai.py` and record it
there in a child process; the debugger then forks it in child processes. It makes
two model calls through instrumented clients served by the local scripted model: the
first answers with a function call (`route_refund` with a decision), the second
writes the customer's message. The application acts on both; neither request depends
on the other's answer, so a fork may patch either.
"""

from __future__ import annotations

import json
from typing import Any

import openai

from examples.local_openai import HTTP
from examples.local_openai.scripted import ScriptedModel, ToolCall
from toolreplay import JsonValue
from toolreplay.adapters.openai import instrument

ROUTE_TOOL = {
    "type": "function",
    "name": "route_refund",
    "description": "Route a refund: approve it, or send it to manual review.",
    "parameters": {
        "type": "object",
        "properties": {
            "order_id": {"type": "integer"},
            "decision": {"type": "string", "enum": ["approve", "manual_review"]},
        },
        "required": ["order_id", "decision"],
        "additionalProperties": False,
    },
    "strict": True,
}


def client_of(handler: Any) -> openai.OpenAI:
    """An OpenAI client served in process by `handler`."""
    http_client = HTTP.Client(transport=HTTP.MockTransport(handler))
    return openai.OpenAI(api_key="sk-tui-test", http_client=http_client, max_retries=0)


def main() -> dict[str, JsonValue]:
    triage = ScriptedModel(
        turns=[[ToolCall("route_refund", {"order_id": 8812, "decision": "approve"})]],
        final_text=lambda outputs: "",
    )
    writer = ScriptedModel(
        turns=[], final_text=lambda outputs: "Dear customer, your refund is approved."
    )
    routed = instrument(client_of(triage)).responses.create(
        model="gpt-5-mini",
        instructions="Route refunds. Above $1,000, send them to manual review.",
        input="Customer 42 asks for a refund of $1,200 for order 8812.",
        tools=[ROUTE_TOOL],  # type: ignore[list-item]  # a plain dict, as applications send it
    )
    call = next(item for item in routed.output if item.type == "function_call")
    arguments = json.loads(call.arguments)  # type: ignore[union-attr]  # a function call
    letter = instrument(client_of(writer)).responses.create(
        model="gpt-5-mini", input="Write one sentence to customer 42 about order 8812."
    )
    return {
        "order": arguments["order_id"],
        "outcome": "refunded" if arguments["decision"] == "approve" else "manual_review",
        "letter": letter.output_text,
    }
