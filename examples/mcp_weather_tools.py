"""An MCP client whose tool calls are recorded, replayed without the server, and forked.

Run it with `uv run python examples/mcp_weather_tools.py`. Offline: the MCP server
is this very file run with `--serve`, a real FastMCP server (`MCPServer` in mcp 2)
that the `mcp` SDK's `stdio_client` starts as a subprocess while recording. The
replay and the fork give it a command that does not exist: nothing is started,
and every answer comes from the trace. Everything is written to a temporary folder.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root holds `toolreplay`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import BaseModel

import toolreplay  # after the path is set


class Forecast(BaseModel):
    """What the weather tool answers (its structured content)."""

    city: str
    summary: str
    high_c: int


def serve() -> None:
    """The MCP server: one tool, with structured content."""
    from mcp.server.mcpserver import MCPServer

    marker = os.environ.get("WEATHER_EXAMPLE_MARKER")
    if marker:  # note the start, so the example can count server processes
        with open(marker, "a", encoding="utf-8") as file:
            file.write("started\n")
    server = MCPServer("weather", log_level="CRITICAL")

    @server.tool()
    def forecast(city: str) -> Forecast:
        """Tomorrow's weather for a city."""
        return Forecast(city=city, summary="Snow" if city == "Oslo" else "Sun", high_c=-4)

    server.run("stdio")


async def pack_for(city: str, command: str, marker: Path) -> str:
    """The application: ask the weather server, then decide what to pack."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from toolreplay.adapters.mcp import instrument

    params = StdioServerParameters(
        command=command,
        args=[str(Path(__file__).resolve()), "--serve"],
        env={"WEATHER_EXAMPLE_MARKER": str(marker), "WEATHER_API_TOKEN": "never-recorded"},
    )
    transport = instrument(stdio_client(params), server="weather")
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("forecast", {"city": city})
    weather = result.structured_content or {}
    return "a warm coat" if weather.get("summary") == "Snow" else "sunglasses"


def main() -> int:
    from toolreplay.adapters.mcp import tool_result

    with tempfile.TemporaryDirectory() as folder:
        trace, branch = Path(folder) / "trip.trp", Path(folder) / "sunny.trp"
        marker = Path(folder) / "server-starts"

        with toolreplay.record(trace):
            packed = asyncio.run(pack_for("Oslo", sys.executable, marker))
        starts = len(marker.read_text().splitlines())
        print(f"recorded:  pack {packed}  (server started {starts} time)")
        for operation in toolreplay.read_trace(trace).operations:
            print(f"  #{operation.logical_id} {operation.effect} {operation.inputs}")

        with toolreplay.replay(trace):
            replayed = asyncio.run(pack_for("Oslo", "/no/such/weather-server", marker))
        starts = len(marker.read_text().splitlines())
        print(f"replayed:  pack {replayed}  (server started {starts} time in all)")

        sunny = toolreplay.replace_output(
            effect="mcp.weather.tools.call",
            inputs={"name": "forecast", "arguments": {"city": "Oslo"}},
            value=tool_result(structured={"city": "Oslo", "summary": "Sun", "high_c": 25}),
        )
        with toolreplay.fork(trace, branch, patches=[sunny]):
            forked = asyncio.run(pack_for("Oslo", "/no/such/weather-server", marker))
        print(f"forked:    pack {forked}  (the forecast said sun)")

        first = toolreplay.diff(trace, branch).first_divergence
        assert first is not None
        print(f"diff:      {first.describe()}")
        if (replayed, forked) != (packed, "sunglasses") or starts != 1:
            return 1
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        sys.exit(main())
