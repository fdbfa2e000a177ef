"""An unmodified pydantic-ai agent, recorded, and forked with its tool's answer changed.

The agent (tests/adapters/agent_apps.py) asks the model, looks the order up, then asks
the model again with the lookup's output in the request. The fork says the order was
lost; the model call that follows is one the recording never made, answered by a
supply patch whose inputs are taken from the `ReplayMiss` of a first, strict fork (as
a user copies them) and whose value is the recorded answer with other text.
"""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import toolreplay
from toolreplay import JsonValue, Operation, ReplayMiss, Returned

LOST_ANSWER = "Order 8812 was lost: refund it in full."
TOOL_OUTPUT_PATH = {
    "responses": "$.inputs.body.input[2].output",
    "chat": "$.inputs.body.messages[3].content",
}
"""Where the lookup's output sits inside the second model request, per API."""


@dataclass(frozen=True)
class AgentFork:
    source: Path
    branch: Path
    lost: toolreplay.OutputPatch
    answered: toolreplay.OutputPatch
    model_effect: str
    lookup_effect: str


@toolreplay.effect("shop.orders.get")
def get_order(order_id: int) -> dict[str, JsonValue]:
    return {"order_id": order_id, "total": 1200.0, "status": "delivered"}


def record_sync_agent(path: Path) -> Path:
    """Record the same agent loop written by hand with a sync client, as the SDK's docs
    show it: ask, run the tool it calls, send its output back, read the answer. One
    thread, so the trace has one lane and no timeline (pictures stay the same)."""
    import json

    import openai

    from examples.local_openai import HTTP
    from tests.adapters.agent_apps import QUESTION, pydantic_ai_api
    from toolreplay.adapters.openai import instrument

    transport = HTTP.MockTransport(pydantic_ai_api())
    client = instrument(
        openai.OpenAI(api_key="sk-test", http_client=HTTP.Client(transport=transport))
    )
    tools: Any = [
        {
            "type": "function",
            "name": "lookup_order",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "integer"}},
                "required": ["order_id"],
            },
        }
    ]
    with toolreplay.record(path):
        conversation: list[Any] = [{"role": "user", "content": QUESTION}]
        asked = client.responses.create(model="gpt-5-mini", input=conversation, tools=tools)
        (call,) = [item for item in asked.output if item.type == "function_call"]
        order = get_order(**json.loads(call.arguments))  # type: ignore[union-attr]
        conversation += [
            call.model_dump(exclude_none=True),
            {"type": "function_call_output", "call_id": call.call_id, "output": json.dumps(order)},  # type: ignore[union-attr]
        ]
        client.responses.create(model="gpt-5-mini", input=conversation, tools=tools)
    return path


def _run(api: str, model: Any) -> JsonValue:
    from tests.adapters.agent_apps import run_pydantic_ai
    from tests.adapters.support import async_client

    return asyncio.run(run_pydantic_ai(async_client(model), api=api, streamed=False))


def _with_text(operation: Operation, api: str, text: str) -> JsonValue:
    """The recorded adapter outcome of `operation`, its answer text replaced."""
    outcome = operation.outcome
    assert isinstance(outcome, Returned)
    envelope: Any = copy.deepcopy(outcome.value)
    if api == "responses":
        envelope["body"]["output"][0]["content"][0]["text"] = text
    else:
        envelope["body"]["choices"][0]["message"]["content"] = text
    return envelope


def record_and_fork(folder: Path, api: str = "responses") -> AgentFork:
    """Record the agent in `folder/refund.trp` and fork it to `folder/lost.trp`."""
    from examples.local_openai import refusing
    from tests.adapters.agent_apps import ORDER_ID, pydantic_ai_api

    source, stopped, branch = (folder / n for n in ("refund.trp", "stop.trp", "lost.trp"))
    with toolreplay.record(source):
        _run(api, pydantic_ai_api())
    operations = toolreplay.read_trace(source).operations
    model_effect, lookup_effect = operations[0].effect, operations[1].effect
    lost = toolreplay.replace_output(
        effect=lookup_effect,
        inputs={"order_id": ORDER_ID},
        value={"order_id": ORDER_ID, "total": 300.0, "status": "lost"},
    )
    refused: list[Any] = []
    try:  # the strict fork stops at the new model request
        with toolreplay.fork(source, stopped, patches=[lost]):
            _run(api, refusing(refused))
    except Exception as error:  # the framework may wrap the miss
        chain = [error, error.__cause__, error.__context__]
        (miss,) = [e for e in chain if isinstance(e, ReplayMiss)]
    else:
        raise AssertionError("the strict fork did not stop at the new model request")
    answered = toolreplay.supply_output(
        effect=model_effect,
        inputs=dict(miss.inputs),
        value=_with_text(operations[2], api, LOST_ANSWER),
    )
    # The recorded second request is never made again: the branch leaves it unobserved.
    with toolreplay.fork(source, branch, patches=[lost, answered], unobserved="allow"):
        assert _run(api, refusing(refused)) == LOST_ANSWER
    assert refused == [], "no request reached the network"
    return AgentFork(source, branch, lost, answered, model_effect, lookup_effect)
