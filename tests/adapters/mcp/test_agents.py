"""Unmodified agents whose tools come from the weather server: the Agents SDK's MCP servers
and pydantic-ai's MCPToolset, served by the scripted model through an instrumented client.

Recorded with the real server process; replayed, forked, diffed and promoted with a
command that fails (counted) and a model client that refuses every request. The model
asks for two forecasts in one turn, which the frameworks run in parallel: the replay
answers each by its identity, whatever order the tasks reach the session in.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from examples.local_openai import refusing
from tests.adapters.mcp.apps import (
    agents_app,
    agents_http_server,
    agents_server,
    pydantic_ai_app,
    pydantic_ai_toolset,
    weather_model,
)
from tests.adapters.mcp.support import (
    failing_command,
    http_server,
    inner,
    listening,
    starts,
)
from tests.adapters.real_clients import needs_openai_3, pytest_on_case
from tests.adapters.support import async_client
from toolreplay.adapters.mcp import tool_result

pytestmark = needs_openai_3

OSLO = {"name": "forecast", "arguments": {"city": "Oslo"}}
PARIS = {"name": "forecast", "arguments": {"city": "Paris"}}
HEATWAVE = {"city": "Oslo", "summary": "Heatwave", "high_c": 31}


def _lanes(trace: Path) -> set[str | None]:
    calls = toolreplay.read_trace(trace).operations_of("mcp", "weather.tools.call")
    return {op.lane for op in calls}


def test_an_agents_sdk_agent_over_stdio_records_replays_forks_and_promotes(tmp_path: Path) -> None:
    trace, branch, marker = tmp_path / "weather.trp", tmp_path / "heat.trp", tmp_path / "starts"
    model = weather_model()
    with toolreplay.record(trace):
        recorded = asyncio.run(agents_app(agents_server(marker), async_client(model)))
    assert "Snow" in recorded
    assert starts(marker) == 1
    assert len(model.requests) == 1
    effects = [op.effect for op in toolreplay.read_trace(trace).operations]
    assert effects.count("mcp.weather.tools.call") == 2
    assert len(_lanes(trace)) == 2  # the two forecasts ran in parallel, each on its lane

    command = failing_command(tmp_path, marker)
    refused: list[Any] = []
    for _ in range(3):  # the parallel calls replay the same however they are scheduled
        with toolreplay.replay(trace):
            replayed = asyncio.run(
                agents_app(agents_server(marker, command=command), async_client(refusing(refused)))
            )
        assert replayed == recorded
    assert starts(marker) == 1
    assert refused == []

    heat = toolreplay.replace_output(
        effect="mcp.weather.tools.call",
        inputs=OSLO,
        value=tool_result(
            '{"city": "Oslo", "summary": "Heatwave", "high_c": 31}', structured=HEATWAVE
        ),
    )
    with toolreplay.fork(trace, branch, patches=[heat]):
        forked = asyncio.run(
            agents_app(agents_server(marker, command=command), async_client(refusing(refused)))
        )
    assert "Heatwave" in forked
    assert starts(marker) == 1
    assert refused == []

    report = toolreplay.diff(trace, branch)
    first = report.first_divergence
    assert first is not None
    assert (first.effect, first.type) == ("mcp.weather.tools.call", "output_changed")
    assert "$.output.result.structuredContent.summary" in report.render_text()

    case = toolreplay.promote(
        branch,
        tmp_path / "cases" / "heatwave",
        name="heatwave",
        runner="tests.adapters.mcp.apps:agents_weather",
        expected=forked,
    )
    result = pytest_on_case(case.directory)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_an_agents_sdk_agent_over_streamable_http_replays_without_a_connection(
    tmp_path: Path,
) -> None:
    trace, marker = tmp_path / "weather.trp", tmp_path / "starts"
    with http_server(marker) as url, toolreplay.record(trace):
        recorded = asyncio.run(agents_app(agents_http_server(url), async_client(weather_model())))
    assert "Snow" in recorded
    with listening(url) as listener, toolreplay.replay(trace):
        replayed = asyncio.run(agents_app(agents_http_server(url), async_client(refusing())))
    assert replayed == recorded
    assert listener.connections == 0


def _fastmcp_importable() -> bool:
    try:
        import fastmcp.client  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(
    not _fastmcp_importable(),
    reason="pydantic-ai's MCPToolset runs on FastMCP's client, which the installed mcp is too "
    "old for",
)
def test_a_pydantic_ai_agent_records_and_replays_with_no_server(tmp_path: Path) -> None:
    """The short check the README runs at the low end of the mcp and FastMCP ranges."""
    trace, marker = tmp_path / "weather.trp", tmp_path / "starts"
    with toolreplay.record(trace):
        recorded = asyncio.run(
            pydantic_ai_app(pydantic_ai_toolset(marker), async_client(weather_model()))
        )
    assert "Snow" in recorded
    command = failing_command(tmp_path, marker)
    refused: list[Any] = []
    with toolreplay.replay(trace):
        toolset = pydantic_ai_toolset(marker, command=command)
        assert asyncio.run(pydantic_ai_app(toolset, async_client(refusing(refused)))) == recorded
    assert starts(marker) == 1
    assert refused == []


@pytest.mark.skipif(
    not _fastmcp_importable(),
    reason="pydantic-ai's MCPToolset runs on FastMCP's client, which the installed mcp is too "
    "old for (the README's check at the low end of the mcp range)",
)
def test_a_pydantic_ai_agent_records_replays_forks_with_a_supplied_answer_and_promotes(
    tmp_path: Path,
) -> None:
    trace, marker = tmp_path / "weather.trp", tmp_path / "starts"
    model = weather_model()
    with toolreplay.record(trace):
        recorded = asyncio.run(pydantic_ai_app(pydantic_ai_toolset(marker), async_client(model)))
    assert "Snow" in recorded
    assert "Sunny" in recorded
    assert starts(marker) == 1
    assert len(model.requests) == 2
    assert len(_lanes(trace)) == 2

    command = failing_command(tmp_path, marker)
    refused: list[Any] = []

    def run() -> str:
        toolset = pydantic_ai_toolset(marker, command=command)
        return asyncio.run(pydantic_ai_app(toolset, async_client(refusing(refused))))

    with toolreplay.replay(trace):
        assert run() == recorded
    assert starts(marker) == 1
    assert refused == []

    # The model sees the changed forecast: its next request is one the recording never
    # made, so the strict fork stops there, and the miss shows the patched value in it.
    heat = toolreplay.replace_output(
        effect="mcp.weather.tools.call",
        inputs=OSLO,
        value=tool_result('{"city":"Oslo","summary":"Heatwave","high_c":31}', structured=HEATWAVE),
    )
    with pytest.raises(BaseException) as raised:
        with toolreplay.fork(trace, tmp_path / "stopped.trp", patches=[heat]):
            run()
    miss = inner(raised.value, toolreplay.ReplayMiss)
    assert miss.identity.effect == "openai.responses.create"
    assert "Heatwave" in str(miss.inputs)

    # Answer that model call with the recorded final answer: the fork completes.
    final = next(
        op
        for op in reversed(toolreplay.read_trace(trace).operations)
        if op.effect == "openai.responses.create"
    )
    answered = toolreplay.supply_output(
        effect="openai.responses.create",
        inputs=miss.inputs,
        value=final.outcome.value,  # type: ignore[union-attr]
    )
    branch = tmp_path / "heat.trp"
    with toolreplay.fork(trace, branch, patches=[heat, answered], unobserved="allow"):
        forked = run()
    assert forked == recorded  # the recorded final text, given to a model that saw the heat
    assert starts(marker) == 1
    assert refused == []

    report = toolreplay.diff(trace, branch)
    first = report.first_divergence
    assert first is not None
    assert first.effect == "mcp.weather.tools.call"
    assert "Heatwave" in report.render_text()

    case = toolreplay.promote(
        branch,
        tmp_path / "cases" / "heatwave",
        name="heatwave",
        runner="tests.adapters.mcp.apps:pydantic_ai_weather",
        expected=forked,
    )
    result = pytest_on_case(case.directory)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
