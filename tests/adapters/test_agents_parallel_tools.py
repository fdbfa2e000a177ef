"""An openai-agents agent whose model asks for two tools at once: recorded on two lanes,
replayed offline under other schedules, forked and diffed without spurious order changes.

The tools are `@toolreplay.effect` functions that sleep a random moment while
recording, so the two calls overlap and may complete in either order; replays
sleep randomly before each tool call instead.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import toolreplay
from examples.local_openai import refusing
from examples.local_openai.scripted import ScriptedModel, ToolCall
from tests.adapters.real_clients import needs_openai_3
from tests.adapters.support import async_client
from toolreplay import JsonValue
from toolreplay.adapters.openai import instrument

pytestmark = needs_openai_3

ORDER_ID = 4471
QUESTION = f"Can order {ORDER_ID} be refunded without review?"
JITTER = random.Random(0)


async def pause() -> None:
    await asyncio.sleep(JITTER.random() * 0.004)


@toolreplay.effect("shop.order.get")
async def get_order(order_id: int) -> dict[str, JsonValue]:
    """Look an order up by its id."""
    await pause()
    return {"order_id": order_id, "total": 640.0, "status": "delivered"}


@toolreplay.effect("risk.customer.score")
async def score_customer(order_id: int) -> dict[str, JsonValue]:
    """The fraud team's risk score for the customer behind an order."""
    await pause()
    return {"order_id": order_id, "risk": "low"}


def parallel_api() -> ScriptedModel:
    """One turn with both tool calls (parallel calls), then the answer."""
    return ScriptedModel(
        turns=[
            [
                ToolCall("get_order", {"order_id": ORDER_ID}),
                ToolCall("score_customer", {"order_id": ORDER_ID}),
            ]
        ],
        final_text=lambda outputs: "checked: " + " | ".join(outputs),
    )


async def run_agent(client: Any) -> str:
    from agents import (
        Agent,
        ModelSettings,
        OpenAIResponsesModel,
        RunConfig,
        Runner,
        function_tool,
        set_tracing_disabled,
    )

    set_tracing_disabled(True)  # the SDK would export traces to OpenAI's servers
    agent: Agent[Any] = Agent(
        name="refund-checks",
        instructions="Check the order and the customer's risk at the same time, then answer.",
        tools=[function_tool(get_order), function_tool(score_customer)],
        model=OpenAIResponsesModel(model="gpt-5-mini", openai_client=instrument(client)),
        model_settings=ModelSettings(parallel_tool_calls=True),
    )
    result = await Runner.run(agent, QUESTION, run_config=RunConfig(group_id="parallel-checks"))
    return str(result.final_output)


def test_parallel_tool_calls_record_on_two_lanes_and_replay_offline(tmp_path: Path) -> None:
    trace_path, branch = tmp_path / "parallel.trp", tmp_path / "branch.trp"
    api = parallel_api()
    with toolreplay.record(trace_path):
        recorded = asyncio.run(run_agent(async_client(api)))
    assert len(api.requests) == 2
    assert "risk" in recorded
    assert "delivered" in recorded
    trace = toolreplay.read_trace(trace_path)
    by_effect = {op.effect: op for op in trace.operations}
    assert sorted(by_effect) == [
        "openai.responses.create",
        "risk.customer.score",
        "shop.order.get",
    ]
    tools = [by_effect["shop.order.get"], by_effect["risk.customer.score"]]
    # The agent ran both tools concurrently, each in its own task.
    assert tools[0].lane != tools[1].lane
    assert not tools[0].precedes(tools[1])
    assert not tools[1].precedes(tools[0])

    refused: list[Any] = []
    for seed in range(10):
        JITTER.seed(seed)
        with toolreplay.replay(trace):
            assert asyncio.run(run_agent(async_client(refusing(refused)))) == recorded
    assert refused == []

    # A fork under another schedule observes the same calls; the branch's tool calls
    # may complete in the other order, which is not an order change.
    JITTER.seed(99)
    with toolreplay.fork(trace, branch):
        assert asyncio.run(run_agent(async_client(refusing(refused)))) == recorded
    assert refused == []
    assert toolreplay.diff(trace, branch).differences == ()
