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

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

from toolreplay.adapters.sdk_versions import release
from toolreplay.errors import MCPAdapterDependencyError

SUPPORTED_SDK_VERSIONS = ">=2.0.0,<3"
"""The `mcp` releases the adapter supports (a PEP 440 specifier)."""
_MINIMUM = (2, 0, 0)
_BELOW = (3,)
_INSTALL = 'uv sync --extra mcp (or: pip install "toolreplay[mcp]")'

try:
    import_module("mcp")  # installed and importable, not only its metadata
    _found = version("mcp")
except (ImportError, PackageNotFoundError) as error:
    raise MCPAdapterDependencyError(
        f"the Tool Replay MCP adapter needs the mcp package ({SUPPORTED_SDK_VERSIONS}), which is "
        f"not installed. Install it with: {_INSTALL}"
    ) from error


if not (_MINIMUM <= release(_found) < _BELOW):
    raise MCPAdapterDependencyError(
        f"the Tool Replay MCP adapter supports mcp {SUPPORTED_SDK_VERSIONS}, but mcp {_found} is "
        f"installed. Install a supported version with: {_INSTALL}"
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
