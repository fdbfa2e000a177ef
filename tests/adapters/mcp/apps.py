"""Applications using the weather server through real MCP clients, for the adapter's tests.

- `session_app`: the `mcp` SDK's own `ClientSession` over an instrumented transport,
  making every kind of request (tools, a failing tool, progress, a resource, a prompt);
- `agents_app`: an unmodified Agents SDK agent whose tools come from the server (the
  model asks for two forecasts in one turn: parallel tool calls), served by the
  scripted model of examples/local_openai through an instrumented OpenAI client;
- `pydantic_ai_app`: the same with pydantic-ai's `MCPToolset`.

The no-argument runners at the bottom are what promoted cases call: the server's
command there fails and the model refuses every request, which a replay never reaches.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import openai

from examples.local_openai import refusing
from examples.local_openai.scripted import ScriptedModel, ToolCall
from tests.adapters.mcp.support import CANARY, stdio_params
from tests.adapters.support import async_client
from toolreplay import JsonValue
from toolreplay.adapters import mcp as mcp_adapter
from toolreplay.adapters.openai import instrument as instrument_openai

QUESTION = "What will the weather be in Oslo and in Paris tomorrow?"


async def session_app(transport: Any) -> dict[str, JsonValue]:
    """Every kind of request over one `ClientSession`: what the application saw."""
    from mcp import ClientSession

    seen: dict[str, JsonValue] = {}
    reports: list[JsonValue] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append([progress, total, message])

    async with transport as (read, write, *_), ClientSession(read, write) as session:
        initialized = await session.initialize()
        seen["server"] = initialized.server_info.name
        seen["tools"] = [tool.name for tool in (await session.list_tools()).tools]
        forecast = await session.call_tool("forecast", {"city": "Oslo"})
        seen["forecast"] = forecast.structured_content
        outage = await session.call_tool("outage", {"region": "north"})
        seen["outage"] = [outage.is_error, outage.content[0].text]  # type: ignore[union-attr]
        slow = await session.call_tool("slow", {"steps": 3}, progress_callback=on_progress)
        seen["slow"] = slow.content[0].text  # type: ignore[union-attr]
        seen["progress"] = reports
        read_back = await session.read_resource("weather://stations")
        seen["stations"] = read_back.contents[0].text  # type: ignore[union-attr]
        prompt = await session.get_prompt("brief", {"city": "Oslo"})
        seen["prompt"] = prompt.messages[0].content.text  # type: ignore[union-attr]
    return seen


def weather_model() -> ScriptedModel:
    """The model: two forecasts in one turn (parallel tool calls), then a summary."""
    return ScriptedModel(
        turns=[[ToolCall("forecast", {"city": "Oslo"}), ToolCall("forecast", {"city": "Paris"})]],
        final_text=lambda outputs: " | ".join(outputs),
    )


async def agents_app(server: Any, client: openai.AsyncOpenAI) -> str:
    """An Agents SDK agent with the MCP server's tools: its final answer."""
    from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, set_tracing_disabled

    set_tracing_disabled(True)  # the SDK would export traces to OpenAI
    async with server:
        agent = Agent(
            name="weather",
            instructions="Answer with the forecasts.",
            mcp_servers=[server],
            model=OpenAIResponsesModel(model="gpt-5-mini", openai_client=instrument_openai(client)),
            # The first forecast is the answer: the run ends at the tools, so a fork that
            # changes a forecast needs no new model call.
            tool_use_behavior="stop_on_first_tool",
        )
        result = await Runner.run(agent, QUESTION, run_config=RunConfig(group_id="weather"))
    return str(result.final_output)


async def pydantic_ai_app(toolset: Any, client: openai.AsyncOpenAI) -> str:
    """A pydantic-ai agent with the MCP server's tools: its final answer."""
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(openai_client=instrument_openai(client))
    agent = Agent(
        OpenAIResponsesModel("gpt-5-mini", provider=provider),
        instructions="Answer with the forecasts.",
        toolsets=[toolset],
    )
    async with agent:
        result = await agent.run(QUESTION)
    return result.output


def agents_http_server(url: str) -> Any:
    """The weather server as the Agents SDK's `MCPServerStreamableHttp`, instrumented."""
    from agents.mcp import MCPServerStreamableHttp

    server = MCPServerStreamableHttp(
        {"url": url, "headers": {"Authorization": f"Bearer {CANARY}"}},
        name="weather",
        client_session_timeout_seconds=20,
    )
    return mcp_adapter.instrument(server)


def agents_server(marker: Path, *, command: str | None = None) -> Any:
    """The weather server as the Agents SDK's `MCPServerStdio`, instrumented."""
    from agents.mcp import MCPServerStdio

    params = stdio_params(marker, **({"command": command} if command else {}))
    server = MCPServerStdio(
        {
            "command": params.command,
            "args": params.args,
            "env": params.env or {},
            "cwd": params.cwd or ".",
        },
        name="weather",
        client_session_timeout_seconds=20,
    )
    return mcp_adapter.instrument(server)


def pydantic_ai_toolset(marker: Path, *, command: str | None = None) -> Any:
    """The weather server as pydantic-ai's `MCPToolset` over FastMCP's stdio transport."""
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    params = stdio_params(marker, **({"command": command} if command else {}))
    transport = StdioTransport(
        command=params.command, args=params.args, env=params.env, cwd=str(params.cwd)
    )
    return mcp_adapter.instrument(MCPToolset(transport, id="weather"))


def agents_weather() -> str:
    """The runner a promoted case calls: no server can start and the model refuses."""
    marker = Path("/nonexistent-toolreplay-marker")
    server = agents_server(marker, command="/nonexistent/weather-server")
    return asyncio.run(agents_app(server, async_client(refusing())))


def pydantic_ai_weather() -> str:
    """The runner a promoted case calls (pydantic-ai)."""
    marker = Path("/nonexistent-toolreplay-marker")
    toolset = pydantic_ai_toolset(marker, command="/nonexistent/weather-server")
    return asyncio.run(pydantic_ai_app(toolset, async_client(refusing())))


def session_weather() -> dict[str, JsonValue]:
    """The runner a promoted case calls (the SDK's ClientSession over stdio)."""
    from mcp.client.stdio import stdio_client

    params = stdio_params(Path("/nonexistent-toolreplay-marker"), command="/nonexistent/server")
    return asyncio.run(session_app(mcp_adapter.instrument(stdio_client(params), server="weather")))
