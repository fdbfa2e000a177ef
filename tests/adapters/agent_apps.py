"""Refund agents built with unmodified agent frameworks, for the real-client tests.

Each application gets its OpenAI client from outside (the recording uses the
scripted model of examples/local_openai, replays a client whose transport refuses
every request), wraps it with `instrument()`, and runs an agent whose tools are
`@toolreplay.effect` functions. The no-argument runners at the bottom are what
promoted cases call: they serve the agent with the scripted model, which a replay
never reaches.

- `openai-agents`: the agent of examples/openai_agents_refund.py, two function tools,
  `lookup_order` then `issue_refund`, whose receipt ends the run (it is the answer),
  run with `Runner.run` or `Runner.run_streamed`.
- `pydantic-ai`: an agent with the example's `lookup_order` tool, then a final message, over
  the Responses API or Chat Completions.
"""

from __future__ import annotations

import asyncio

import openai

from examples.local_openai.scripted import ScriptedModel, ToolCall
from examples.openai_agents_refund import (
    ORDER_ID,
    QUESTION,
    grouped_run,
    lookup_order,
    refund_agent,
)
from examples.openai_agents_refund import provider as agents_api
from tests.adapters.support import async_client
from toolreplay import JsonValue
from toolreplay.adapters.openai import instrument

INSTRUCTIONS = "You settle refund requests. Look the order up, then refund it in full."


def pydantic_ai_api() -> ScriptedModel:
    """The model the pydantic-ai app talks to: look up, then answer."""
    return ScriptedModel(
        turns=[[ToolCall("lookup_order", {"order_id": ORDER_ID})]],
        final_text=lambda outputs: f"Order {ORDER_ID} is on file: {outputs[-1]}",
    )


async def run_agents_sdk(client: openai.AsyncOpenAI, *, streamed: bool) -> JsonValue:
    """The example's Agents SDK app: its final output (the refund receipt)."""
    from agents import Runner

    agent = refund_agent(client)
    if streamed:
        run = Runner.run_streamed(agent, QUESTION, run_config=grouped_run())
        async for _event in run.stream_events():
            pass
        return run.final_output
    result = await Runner.run(agent, QUESTION, run_config=grouped_run())
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


def pydantic_ai_refund_streamed() -> JsonValue:
    return asyncio.run(
        run_pydantic_ai(async_client(pydantic_ai_api()), api="responses", streamed=True)
    )


def pydantic_ai_refund_chat() -> JsonValue:
    return asyncio.run(run_pydantic_ai(async_client(pydantic_ai_api()), api="chat", streamed=False))
