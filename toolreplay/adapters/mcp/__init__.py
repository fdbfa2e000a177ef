"""Record and replay what an MCP client asks its servers: `instrument(transport, server=...)`.

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from toolreplay.adapters.mcp import instrument

    transport = instrument(stdio_client(StdioServerParameters(command="weather-server")),
                           server="weather")
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("forecast", {"city": "Oslo"})

Every request the client sends (`initialize`, `tools/list`, `tools/call`,
`resources/read`, `prompts/get`, `completion/complete`, `ping`, ...) is one
effect, `mcp.<server>.<method>` (`mcp.weather.tools.call`), captured at the
stream pair the SDK's `ClientSession` speaks through, so stdio, streamable HTTP
and SSE are one capture point. Under replay, fork and case verification the
server is neither started nor reached. `instrument` also takes the Agents SDK's
MCP servers (`MCPServerStdio`, `MCPServerStreamableHttp`, `MCPServerSse`),
pydantic-ai's `MCPToolset`, and a FastMCP `Client` or client transport.
Supported SDK versions: mcp 2.0.0 and later, up to (not including) 3
(`uv sync --extra mcp`). RFC 0009 is the contract.
"""

from __future__ import annotations

from toolreplay.adapters.sdk_versions import require_sdk
from toolreplay.errors import MCPAdapterDependencyError

SUPPORTED_SDK_VERSIONS = ">=2.0.0,<3"
"""The mcp releases the adapter supports (a PEP 440 specifier)."""

require_sdk(
    "mcp",
    distribution="mcp",
    adapter="MCP",
    supported=SUPPORTED_SDK_VERSIONS,
    minimum=(2, 0, 0),
    below=(3,),
    extra="mcp",
    error=MCPAdapterDependencyError,
)

from toolreplay.adapters.mcp.connection import (  # noqa: E402  # only after the version check
    InstrumentedTransport,
)
from toolreplay.adapters.mcp.entry import instrument  # noqa: E402
from toolreplay.adapters.mcp.messages import (  # noqa: E402
    EFFECT_NAMESPACE,
    EXCLUDED_META_KEYS,
    effect_name,
    tool_result,
)

__all__ = [
    "EFFECT_NAMESPACE",
    "EXCLUDED_META_KEYS",
    "SUPPORTED_SDK_VERSIONS",
    "InstrumentedTransport",
    "effect_name",
    "instrument",
    "tool_result",
]
