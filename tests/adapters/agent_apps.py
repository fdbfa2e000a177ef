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
  the Responses API or Chat Completions, over Claude (`AnthropicModel` on an instrumented
  `AsyncAnthropic`, served by examples/local_anthropic), or on Gemini (`GoogleModel` over an
  instrumented `genai.Client`, served by the fake Gemini API of examples/local_gemini), run
  with `agent.run` or `agent.run_stream`.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import anthropic
import httpx2
import openai

from examples.local_anthropic import API_KEY as ANTHROPIC_KEY
from examples.local_anthropic import MODEL as CLAUDE
from examples.local_anthropic import LocalAnthropic, refusing
from examples.local_gemini import AgentScript, LocalGemini
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
from toolreplay.adapters.anthropic import instrument as instrument_anthropic
from toolreplay.adapters.openai import instrument

if TYPE_CHECKING:
    from google import genai
    from pydantic_ai.models import Model

INSTRUCTIONS = "You settle refund requests. Look the order up, then refund it in full."


def pydantic_ai_api() -> ScriptedModel:
    """The model the pydantic-ai app talks to: look up, then answer."""
    return ScriptedModel(
        turns=[[ToolCall("lookup_order", {"order_id": ORDER_ID})]],
        final_text=lambda outputs: f"Order {ORDER_ID} is on file: {outputs[-1]}",
    )


def pydantic_ai_gemini_api() -> LocalGemini:
    """The Gemini API the pydantic-ai app talks to: look up, then answer as the OpenAI
    model does (with the lookup's output)."""

    def answer(responses: list[dict[str, Any]]) -> str:
        output = json.dumps(responses[-1]["response"], separators=(",", ":"))
        return f"Order {ORDER_ID} is on file: {output}"

    return LocalGemini(AgentScript(args={"order_id": ORDER_ID}, answer=answer))


def gemini_client(*, base_url: str | None = None, handler: Any = None) -> genai.Client:
    """A plain `genai.Client` of the API at `base_url` (`served`'s URL), or whose only
    transport is `handler`."""
    import httpx
    from google import genai
    from google.genai import types

    from examples.local_gemini import API_KEY

    if handler is not None:
        transport = httpx.MockTransport(handler)
        options = types.HttpOptions(
            httpx_client=httpx.Client(transport=transport),
            httpx_async_client=httpx.AsyncClient(transport=transport),
        )
    else:
        assert base_url is not None, "give the API's base_url or a transport handler"
        options = types.HttpOptions(base_url=base_url.removesuffix("/v1"), api_version="v1beta")
    return genai.Client(api_key=API_KEY, http_options=options)


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
    from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=instrument(client))
    model = (
        OpenAIResponsesModel("gpt-5-mini", provider=provider)
        if api == "responses"
        else OpenAIChatModel("gpt-5-mini", provider=provider)
    )
    return await _run_refund_agent(model, streamed=streamed)


async def run_pydantic_ai_gemini(client: genai.Client, *, streamed: bool) -> JsonValue:
    """The pydantic-ai app on Gemini (`GoogleModel` over `client`, instrumented): its
    final answer."""
    from pydantic_ai.models.google import GoogleModel
    from pydantic_ai.providers.google import GoogleProvider

    from examples.local_gemini import MODEL
    from toolreplay.adapters.google_genai import instrument as instrument_gemini

    provider = GoogleProvider(client=instrument_gemini(client))
    return await _run_refund_agent(GoogleModel(MODEL, provider=provider), streamed=streamed)


async def _run_refund_agent(model: Model, *, streamed: bool) -> JsonValue:
    """The pydantic-ai refund agent on `model`: its final answer, run or run streamed."""
    from pydantic_ai import Agent

    agent = Agent(model, instructions=INSTRUCTIONS, tools=[lookup_order])
    if streamed:
        async with agent.run_stream(QUESTION) as run:
            return await run.get_output()
    result = await agent.run(QUESTION)
    return result.output


def claude_api() -> LocalAnthropic:
    """The Claude the pydantic-ai app talks to: a tool use looking the order up (with no
    text before it, so a streamed run's first text is the answer), then an answer."""
    return LocalAnthropic(
        tool_input={"order_id": ORDER_ID},
        final_text=lambda results: f"Order {ORDER_ID} is on file: {results[-1]}",
        preface=None,
    )


def claude_client(
    base_url: str | None = None, *, sent: list[Any] | None = None
) -> anthropic.AsyncAnthropic:
    """A plain `AsyncAnthropic` of the local API at `base_url` (its loopback URL, without
    `/v1`), or with no base URL, one whose transport refuses every request (appending it
    to `sent`)."""
    if base_url is not None:
        return anthropic.AsyncAnthropic(api_key=ANTHROPIC_KEY, base_url=base_url, max_retries=0)
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(refusing(sent)))
    return anthropic.AsyncAnthropic(api_key=ANTHROPIC_KEY, http_client=http, max_retries=0)


async def run_pydantic_ai_claude(client: anthropic.AsyncAnthropic, *, streamed: bool) -> str:
    """The pydantic-ai app on Claude (`AnthropicModel`): its final answer. `max_tokens` is
    small enough that pydantic-ai sends `agent.run`'s requests unstreamed."""
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    provider = AnthropicProvider(anthropic_client=instrument_anthropic(client))
    agent = Agent(
        AnthropicModel(CLAUDE, provider=provider),
        instructions=INSTRUCTIONS,
        tools=[lookup_order],
        model_settings={"max_tokens": 1024},
    )
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


def pydantic_ai_gemini_refund() -> JsonValue:
    client = gemini_client(handler=pydantic_ai_gemini_api())
    return asyncio.run(run_pydantic_ai_gemini(client, streamed=False))


def pydantic_ai_gemini_refund_streamed() -> JsonValue:
    client = gemini_client(handler=pydantic_ai_gemini_api())
    return asyncio.run(run_pydantic_ai_gemini(client, streamed=True))


def pydantic_ai_claude() -> JsonValue:
    return asyncio.run(run_pydantic_ai_claude(claude_client(), streamed=False))


def pydantic_ai_claude_streamed() -> JsonValue:
    return asyncio.run(run_pydantic_ai_claude(claude_client(), streamed=True))
