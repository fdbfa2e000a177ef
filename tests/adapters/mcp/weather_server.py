"""A real MCP server for the adapter's tests: the `mcp` SDK's FastMCP (`MCPServer` in mcp 2).

    python -m tests.adapters.mcp.weather_server stdio
    python -m tests.adapters.mcp.weather_server http PORT

Three tools: `forecast` answers with structured content, `outage` fails as a tool
(the model sees the error), `slow` takes a while and reports progress. A resource
and a prompt besides. Each start appends a line to the file named by
`WEATHER_SERVER_MARKER`, so a test counts the server processes that ran.
"""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer(
    "weather",
    instructions="Weather for any city.",
    log_level="CRITICAL",  # quiet on stderr
)


class Forecast(BaseModel):
    city: str
    summary: str
    high_c: int


@server.tool()
def forecast(city: str) -> Forecast:
    """Tomorrow's weather for a city."""
    table = {"Oslo": ("Snow", -4), "Paris": ("Sunny", 21), "Lima": ("Fog", 17)}
    summary, high = table.get(city, ("Clouds", 12))
    return Forecast(city=city, summary=summary, high_c=high)


@server.tool()
def outage(region: str) -> str:
    """Report an outage (always fails: the feed is down)."""
    raise ToolError(f"the outage feed for {region} is down")


@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Count to `steps`, slowly, reporting progress."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
        await asyncio.sleep(0.05)
    return f"counted to {steps}"


@server.resource("weather://stations")
def stations() -> str:
    """The stations the forecasts come from."""
    return "OSL, CDG, LIM"


@server.prompt()
def brief(city: str) -> str:
    """A prompt asking for a weather brief."""
    return f"Write a short weather brief for {city}."


def main() -> None:
    marker = os.environ.get("WEATHER_SERVER_MARKER")
    if marker:
        with open(marker, "a", encoding="utf-8") as file:
            file.write(f"{os.getpid()}\n")
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
