"""FastMCP's client over its stdio and streamable HTTP transports: recorded, replayed with nothing
started, and forked with `live=["mcp.*"]`, which starts the real server only for a call the
recording never made."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from tests.adapters.mcp.support import (
    CANARY,
    ROOT,
    SERVER_MODULE,
    failing_command,
    http_server,
    listening,
    starts,
)
from toolreplay.adapters.mcp import instrument

pytest.importorskip(
    "fastmcp.client",
    reason="FastMCP's client needs mcp 2.3 or later (the README's check at the low end of the "
    "mcp range runs without it)",
)

LIMA = {"name": "forecast", "arguments": {"city": "Lima"}}


def stdio_transport(marker: Path, *, command: str = sys.executable) -> Any:
    from fastmcp.client.transports import StdioTransport

    return StdioTransport(
        command=command,
        args=["-m", SERVER_MODULE, "stdio"],
        env={"WEATHER_SERVER_MARKER": str(marker), "WEATHER_API_TOKEN": CANARY},
        cwd=str(ROOT),
    )


def http_transport(url: str) -> Any:
    from fastmcp.client.transports import StreamableHttpTransport

    return StreamableHttpTransport(url, headers={"Authorization": f"Bearer {CANARY}"})


async def forecasts(transport: Any, *cities: str) -> list[Any]:
    """What a FastMCP client sees of each city's forecast."""
    from fastmcp import Client

    async with instrument(Client(transport), server="weather") as client:
        return [
            (await client.call_tool("forecast", {"city": city})).structured_content
            for city in cities
        ]


def live_calls(branch: Path) -> list[Any]:
    return [op.inputs for op in toolreplay.read_trace(branch).operations if op.origin == "live"]


def test_stdio_forks_start_the_server_only_for_a_live_call(tmp_path: Path) -> None:
    trace, marker = tmp_path / "weather.trp", tmp_path / "starts"
    with toolreplay.record(trace):
        recorded = asyncio.run(forecasts(stdio_transport(marker), "Oslo"))
    assert recorded == [{"city": "Oslo", "summary": "Snow", "high_c": -4}]
    assert starts(marker) == 1

    never = failing_command(tmp_path, marker)  # counts a start in the marker, then fails
    with toolreplay.replay(trace):
        assert asyncio.run(forecasts(stdio_transport(marker, command=never), "Oslo")) == recorded
    with toolreplay.fork(trace, tmp_path / "quiet.trp", live=["mcp.*"]):
        assert asyncio.run(forecasts(stdio_transport(marker), "Oslo")) == recorded
    assert starts(marker) == 1  # everything was recorded: nothing started

    branch = tmp_path / "lima.trp"
    with toolreplay.fork(trace, branch, live=["mcp.*"], unobserved="allow"):
        seen = asyncio.run(forecasts(stdio_transport(marker), "Oslo", "Lima"))
    assert seen == [*recorded, {"city": "Lima", "summary": "Fog", "high_c": 17}]
    assert starts(marker) == 2  # once, lazily, for the call the recording never made
    assert live_calls(branch) == [LIMA]


def test_streamable_http_forks_reach_the_server_only_for_a_live_call(tmp_path: Path) -> None:
    trace, marker = tmp_path / "weather.trp", tmp_path / "starts"
    with http_server(marker) as url, toolreplay.record(trace):
        recorded = asyncio.run(forecasts(http_transport(url), "Oslo"))
    assert recorded == [{"city": "Oslo", "summary": "Snow", "high_c": -4}]

    with listening(url) as listener:
        with toolreplay.replay(trace):
            assert asyncio.run(forecasts(http_transport(url), "Oslo")) == recorded
        with toolreplay.fork(trace, tmp_path / "quiet.trp", live=["mcp.*"]):
            assert asyncio.run(forecasts(http_transport(url), "Oslo")) == recorded
    assert listener.connections == 0

    branch = tmp_path / "lima.trp"
    with http_server(marker) as url:
        with toolreplay.fork(trace, branch, live=["mcp.*"], unobserved="allow"):
            seen = asyncio.run(forecasts(http_transport(url), "Oslo", "Lima"))
    # Lima's forecast is in no recording: it came from the server, over the live connection.
    assert seen == [*recorded, {"city": "Lima", "summary": "Fog", "high_c": 17}]
    assert live_calls(branch) == [LIMA]
    written = trace.read_bytes() + branch.read_bytes()
    assert CANARY.encode() not in written  # the header reached the server, not the traces
