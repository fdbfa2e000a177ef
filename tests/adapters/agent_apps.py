"""Refund agents built with unmodified agent frameworks, for the real-client tests.

Each application gets its OpenAI client from outside (the recording uses the
scripted model of examples/local_openai, replays a client whose transport refuses
every request), wraps it with `instrument()`, and runs an agent whose tools are
`@toolreplay.effect` functions. The no-argument runners at the bottom are what
promoted cases call: they serve the agent with the scripted model, which a replay
never reaches.

- `openai-agents`: an agent with two function tools, `lookup_order` then
  `issue_refund`, whose receipt ends the run (it is the answer), run with
  `Runner.run` or `Runner.run_streamed`.
- `pydantic-ai`: an agent with one tool, `lookup_order`, then a final message, over
  the Responses API or Chat Completions.
"""

from __future__ import annotations

import asyncio
from typing import Any

import openai
from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

import toolreplay
from examples.local_openai.scripted import ScriptedModel, ToolCall
from tests.adapters.support import async_client
from toolreplay import JsonValue
from toolreplay.adapters.openai import instrument

ORDER_ID = 8812
INSTRUCTIONS = "You settle refund requests. Look the order up, then refund it in full."
QUESTION = f"Please refund order {ORDER_ID}; it arrived broken."


class Order(TypedDict):
    """What the shop knows about an order."""

    order_id: int
    total: float
    status: str


@toolreplay.effect("shop.order.lookup")
async def lookup_order(order_id: int) -> Order:
    """Look an order up by its id."""
    return {"order_id": order_id, "total": 1200.0, "status": "delivered"}


class Receipt(TypedDict):
    """What billing answers to a refund."""

    refund_id: str
    status: str
    amount: float


@toolreplay.effect("billing.refund.issue")
async def issue_refund(order_id: int, amount: float) -> Receipt:
    """Refund an order, in full or in part."""
    return {"refund_id": f"rf_{order_id}", "status": "issued", "amount": amount}


def agents_api() -> ScriptedModel:
    """The model the Agents SDK app talks to: look up, refund (then it stops)."""
    return ScriptedModel(
        turns=[
            [ToolCall("lookup_order", {"order_id": ORDER_ID})],
            [ToolCall("issue_refund", {"order_id": ORDER_ID, "amount": 1200.0})],
        ],
        final_text=lambda outputs: f"Refunded: {outputs[-1]}",
    )


def pydantic_ai_api() -> ScriptedModel:
    """The model the pydantic-ai app talks to: look up, then answer."""
    return ScriptedModel(
        turns=[[ToolCall("lookup_order", {"order_id": ORDER_ID})]],
        final_text=lambda outputs: f"Order {ORDER_ID} is on file: {outputs[-1]}",
    )


async def run_agents_sdk(client: openai.AsyncOpenAI, *, streamed: bool) -> JsonValue:
    """The Agents SDK app: its final output (the refund receipt)."""
    from agents import (
        Agent,
        OpenAIResponsesModel,
        RunConfig,
        Runner,
        StopAtTools,
        function_tool,
        set_tracing_disabled,
    )

    set_tracing_disabled(True)  # the SDK would export traces to OpenAI's servers
    agent: Agent[Any] = Agent(
        name="refunds",
        instructions=INSTRUCTIONS,
        tools=[function_tool(lookup_order), function_tool(issue_refund)],
        model=OpenAIResponsesModel(model="gpt-5-mini", openai_client=instrument(client)),
        # Billing's receipt ends the run (no model turn after it) and is its typed output.
        tool_use_behavior=StopAtTools(stop_at_tool_names=["issue_refund"]),
        output_type=Receipt,
    )
    # Without a group the SDK sends a random `prompt_cache_key` per run, so no two runs
    # send the same request; grouped runs send one derived from the group.
    grouped = RunConfig(group_id=f"refund-{ORDER_ID}")
    if streamed:
        run = Runner.run_streamed(agent, QUESTION, run_config=grouped)
        async for _event in run.stream_events():
            pass
        return run.final_output
    result = await Runner.run(agent, QUESTION, run_config=grouped)
    return result.final_output


async def run_pydantic_ai(client: openai.AsyncOpenAI, *, api: str, streamed: bool) -> JsonValue:
    """The pydantic-ai app over `api` ("responses" or "chat"): its final answer."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=instrument(client))
    model = (
        OpenAIResponsesModel("gpt-5-mini", provider=provider)
        if api == "responses"
        else OpenAIChatModel("gpt-5-mini", provider=provider)
    )
    agent = Agent(model, instructions=INSTRUCTIONS, tools=[lookup_order])
    if streamed:
        async with agent.run_stream(QUESTION) as run:
            return await run.get_output()
    result = await agent.run(QUESTION)
    return result.output


# --- runners of promoted cases (no arguments; the scripted model is never reached) ---


def agents_refund() -> JsonValue:
    return asyncio.run(run_agents_sdk(async_client(agents_api()), streamed=False))


def agents_refund_streamed() -> JsonValue:
    return asyncio.run(run_agents_sdk(async_client(agents_api()), streamed=True))


def pydantic_ai_refund() -> JsonValue:
    return asyncio.run(
        run_pydantic_ai(async_client(pydantic_ai_api()), api="responses", streamed=False)
    )
