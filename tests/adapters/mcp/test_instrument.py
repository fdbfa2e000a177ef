"""`instrument()` at the frameworks' boundary: copies that share no connection state with the
original, and a framework release without what a copy needs is a precise error."""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from pathlib import Path

import pytest

import toolreplay
from tests.adapters.mcp.support import stdio_params
from toolreplay.adapters.mcp import instrument


def agents_stdio(marker: Path) -> object:
    from agents.mcp import MCPServerStdio

    params = stdio_params(marker)
    return MCPServerStdio(
        {"command": params.command, "args": params.args, "env": params.env or {}},
        name="weather",
        cache_tools_list=True,
    )


def test_an_agents_server_copy_has_connection_state_of_its_own(tmp_path: Path) -> None:
    from agents.mcp import MCPServerStdio

    original = agents_stdio(tmp_path / "starts")
    assert isinstance(original, MCPServerStdio)
    twin = instrument(original)
    assert type(original) is MCPServerStdio  # the original is not changed
    assert isinstance(twin, MCPServerStdio)
    assert twin.name == original.name
    assert twin.params is original.params  # configuration is shared
    assert twin.exit_stack is not original.exit_stack
    assert vars(twin)["_cleanup_lock"] is not vars(original)["_cleanup_lock"]
    assert vars(twin)["_request_lock"] is not vars(original)["_request_lock"]
    with pytest.raises(TypeError, match="already instrumented"):
        instrument(twin)


def test_an_agents_sdk_without_what_a_copy_needs_is_named_with_its_version(
    tmp_path: Path,
) -> None:
    """A release of the Agents SDK that dropped a lock the copy must not share (simulated on
    the object: the attribute is gone) is refused before anything is copied."""
    original = agents_stdio(tmp_path / "starts")
    del original._request_lock  # type: ignore[attr-defined]  # what a newer release might do
    with pytest.raises(toolreplay.MCPAdapterDependencyError) as raised:
        instrument(original)
    message = str(raised.value)
    assert "'_request_lock'" in message
    assert f"openai-agents {version('openai-agents')} does not have" in message
    assert "tested with openai-agents 0.24.0" in message
    assert 'pip install "openai-agents==0.24.0"' in message


def test_a_toolset_copy_builds_a_client_of_its_own(tmp_path: Path) -> None:
    pytest.importorskip("fastmcp.client", reason="FastMCP's client needs mcp 2.3 or later")
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    from toolreplay.adapters.mcp.fastmcp_transport import InstrumentedClientTransport

    params = stdio_params(tmp_path / "starts")
    transport = StdioTransport(command=params.command, args=params.args, env=params.env)
    original = MCPToolset(transport, id="weather", max_retries=2)
    twin = instrument(original)
    assert original.client.transport is transport  # the original is not changed
    assert twin.client is not original.client
    assert isinstance(twin.client.transport, InstrumentedClientTransport)
    assert twin.client.transport.original is transport
    assert (twin.id, twin.max_retries) == ("weather", 2)
    with pytest.raises(TypeError, match="needs the server's name"):
        instrument(MCPToolset(transport))


def test_a_copy_of_a_server_used_before_lists_its_tools_again(tmp_path: Path) -> None:
    """The original's cached tool list is not the copy's: its recording lists them."""
    marker = tmp_path / "starts"
    original = agents_stdio(marker)

    async def list_tools(server: object) -> list[str]:
        from agents.mcp import MCPServerStdio

        assert isinstance(server, MCPServerStdio)
        async with server:
            return [tool.name for tool in await server.list_tools()]

    assert asyncio.run(list_tools(original)) == ["forecast", "outage", "slow"]
    trace = tmp_path / "tools.trp"
    with toolreplay.record(trace):
        assert asyncio.run(list_tools(instrument(original))) == ["forecast", "outage", "slow"]
    effects = [op.effect for op in toolreplay.read_trace(trace).operations]
    assert effects[-1] == "mcp.weather.tools.list"  # after the handshake
