"""The `mcp` SDK's own ClientSession over stdio and streamable HTTP: recorded, then replayed
with nothing started and nothing reached.

The server is a real FastMCP server in a child process. Replays give it a command that
notes each start in a marker file and fails, and stand a counting listener on the port
the HTTP server used: both must see nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

import toolreplay
from tests.adapters.mcp.apps import session_app
from tests.adapters.mcp.support import (
    CANARY,
    failing_command,
    http_server,
    inner,
    listening,
    starts,
    stdio_params,
)
from toolreplay.adapters.mcp import instrument

SEEN = {
    "server": "weather",
    "tools": ["forecast", "outage", "slow"],
    "forecast": {"city": "Oslo", "summary": "Snow", "high_c": -4},
    "outage": [True, "Error executing tool outage: the outage feed for north is down"],
    "slow": "counted to 3",
    "progress": [[1.0, 3.0, "step 1"], [2.0, 3.0, "step 2"], [3.0, 3.0, "step 3"]],
    "stations": "OSL, CDG, LIM",
    "prompt": "Write a short weather brief for Oslo.",
}
EFFECTS = [
    "mcp.weather.initialize",
    "mcp.weather.tools.list",
    "mcp.weather.tools.call",
    "mcp.weather.tools.call",
    "mcp.weather.tools.call",
    "mcp.weather.resources.read",
    "mcp.weather.prompts.get",
]


def http_transport(url: str) -> Any:
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {CANARY}"})
    return streamable_http_client(url, http_client=client)


def test_stdio_is_recorded_then_replayed_without_starting_the_server(tmp_path: Path) -> None:
    trace, marker = tmp_path / "weather.trp", tmp_path / "starts.txt"
    with toolreplay.record(trace):
        recorded = asyncio.run(
            session_app(instrument(stdio_client(stdio_params(marker)), server="weather"))
        )
    assert recorded == SEEN
    assert starts(marker) == 1
    operations = toolreplay.read_trace(trace).operations
    assert [op.effect for op in operations] == EFFECTS
    call = operations[2]
    assert call.inputs == {"name": "forecast", "arguments": {"city": "Oslo"}}
    slow = operations[4].outcome.value  # type: ignore[union-attr]
    progress = [m["params"]["message"] for m in slow["messages"]]  # type: ignore[index]
    assert progress == ["step 1", "step 2", "step 3"]  # notifications, in order, with their call

    command = failing_command(tmp_path, marker)  # notes a start in the marker, then fails
    with toolreplay.replay(trace):
        replayed = asyncio.run(
            session_app(
                instrument(stdio_client(stdio_params(marker, command=command)), server="weather")
            )
        )
    assert replayed == SEEN
    assert starts(marker) == 1  # the recording's; the replay started nothing


def test_streamable_http_is_recorded_then_replayed_without_a_connection(tmp_path: Path) -> None:
    trace, marker = tmp_path / "weather.trp", tmp_path / "starts.txt"
    with http_server(marker) as url, toolreplay.record(trace):
        recorded = asyncio.run(session_app(instrument(http_transport(url), server="weather")))
    assert recorded == SEEN
    assert [op.effect for op in toolreplay.read_trace(trace).operations] == EFFECTS

    with listening(url) as listener, toolreplay.replay(trace):
        replayed = asyncio.run(session_app(instrument(http_transport(url), server="weather")))
    assert replayed == SEEN
    assert listener.connections == 0
    assert starts(marker) == 1


def test_a_replayed_connection_answers_only_what_was_recorded(tmp_path: Path) -> None:
    """A new request under replay is a miss; the application sees the ReplayMiss itself."""
    from mcp import ClientSession

    trace, marker = tmp_path / "weather.trp", tmp_path / "starts.txt"
    with toolreplay.record(trace):
        asyncio.run(session_app(instrument(stdio_client(stdio_params(marker)), server="weather")))

    async def asks_for_lima() -> None:
        transport = instrument(stdio_client(stdio_params(marker)), server="weather")
        async with transport as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.call_tool("forecast", {"city": "Lima"})

    with pytest.raises(BaseException) as raised, toolreplay.replay(trace):
        asyncio.run(asks_for_lima())
    # The SDK's ClientSession reports what its block raised in an exception group.
    miss = inner(raised.value, toolreplay.ReplayMiss)
    message = str(miss) + "\n".join(miss.__notes__)
    assert "mcp.weather.tools.call" in message
    assert "$.arguments.city" in message
    assert 'the tool "forecast"' in message
    assert "Recorded tools: forecast, outage, slow" in message
    assert starts(marker) == 1


def test_instrument_needs_a_server_name_and_a_fresh_transport(tmp_path: Path) -> None:
    transport = stdio_client(stdio_params(tmp_path / "m"))
    with pytest.raises(TypeError, match="needs the server's name"):
        instrument(transport)
    with pytest.raises(ValueError, match="not usable in an effect name"):
        instrument(transport, server="my server")
    instrumented = instrument(transport, server="weather")
    with pytest.raises(TypeError, match="already instrumented"):
        instrument(instrumented, server="weather")
    with pytest.raises(TypeError, match="MCP transport"):
        instrument(object(), server="weather")
