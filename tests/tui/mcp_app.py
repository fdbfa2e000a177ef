"""An application whose tools come from an MCP server, for the debugger's tests.

The server is a real FastMCP server (the `mcp` SDK's `MCPServer`) in this same file,
run as a child process over stdio (`python tuimcp.py serve`) while recording; a
replay or fork starts nothing. Its tools answer with what an MCP result can hold:
`forecast` text and structured content, `radar` an image, audio, an embedded
resource and a resource link, `outage` a tool error.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

RADAR_PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))  # the bytes are never drawn
RADAR_WAV = b"RIFF" + bytes(32)


class Forecast(BaseModel):
    city: str
    summary: str
    high_c: int


def serve() -> None:
    from mcp.server.mcpserver import Audio, Image, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import EmbeddedResource, ResourceLink, TextResourceContents

    server = MCPServer("weather", log_level="CRITICAL")

    @server.tool()
    def forecast(city: str) -> Forecast:
        """Tomorrow's weather for a city."""
        return Forecast(city=city, summary="Snow", high_c=-4)

    @server.tool(structured_output=False)  # content blocks only
    def radar(city: str) -> list[Any]:
        """The radar picture, its sound, the station's notes and a link to the archive."""
        notes = TextResourceContents(
            uri=f"weather://stations/{city.lower()}", mime_type="text/plain", text="Calm night."
        )
        return [
            Image(data=RADAR_PNG, format="png"),
            Audio(data=RADAR_WAV, format="wav"),
            EmbeddedResource(type="resource", resource=notes),
            ResourceLink(type="resource_link", uri="weather://archive", name="archive"),
        ]

    @server.tool()
    def outage(region: str) -> str:
        """Report an outage (always fails: the feed is down)."""
        raise ToolError(f"the outage feed for {region} is down")

    server.run("stdio")


def main() -> dict[str, Any]:
    """Ask the server for a forecast, the radar and an outage: what the application saw."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from toolreplay.adapters.mcp import instrument

    params = StdioServerParameters(command=sys.executable, args=[str(Path(__file__)), "serve"])

    async def run() -> dict[str, Any]:
        transport = instrument(stdio_client(params), server="weather")
        async with transport as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            forecast = await session.call_tool("forecast", {"city": "Oslo"})
            radar = await session.call_tool("radar", {"city": "Oslo"})
            outage = await session.call_tool("outage", {"region": "north"})
        return {
            "forecast": forecast.structured_content,
            "radar": [block.type for block in radar.content],
            "outage": outage.is_error,
        }

    return asyncio.run(run())


if __name__ == "__main__" and sys.argv[1:] == ["serve"]:
    serve()
