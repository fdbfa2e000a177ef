"""MCP adapter benchmark: replay of recorded `tools/call` requests against the SDK's own cost.

Run with `uv run python -m benchmarks.mcp_replay` (see benchmarks/README.md). For each N,
side by side in one run, N distinct `tools/call` requests through the SDK's own
`ClientSession`, per call (CPU time, best of the repeats):

- sdk: the session over an in-memory server that answers each request with its response
  parsed from the JSON line a server would send (the SDK's own message parsing and
  request machinery, no network);
- effect: a plain async `@effect` of the same inputs and output, replayed (the existing
  effect overhead);
- floor: sdk + effect;
- replay: the session over `instrument(...)` under `toolreplay.replay()` of the trace
  recorded against the in-memory server.

Target: replay at most the floor (ratio at most 1.0x, within noise), flat in N. Informational:
exits 0 whether it is met or not.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.shared.message import SessionMessage

import toolreplay
from toolreplay.adapters.mcp import instrument
from toolreplay.adapters.mcp.messages import incoming

try:
    from mcp_types import jsonrpc_message_adapter as _messages
except ImportError:  # pragma: no cover - older layouts
    from mcp.types import jsonrpc_message_adapter as _messages  # type: ignore[attr-defined, no-redef]

RESULT = (
    '{{"content":[{{"type":"text","text":"{{\\"city\\": \\"{city}\\", \\"summary\\": \\"Snow\\"'
    ', \\"high_c\\": -4}}"}}],"isError":false,"structuredContent":{{"city":"{city}",'
    '"summary":"Snow","high_c":-4}}}}'
)
INIT = (
    '{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{"listChanged":false}}}},'
    '"serverInfo":{{"name":"bench","version":"1"}}}}'
)


@asynccontextmanager
async def memory_server() -> AsyncIterator[tuple[Any, Any]]:
    """A server in process: each request is answered from the JSON line a server would send."""
    to_client, client_reads = anyio.create_memory_object_stream[Any](math.inf)
    to_server, server_reads = anyio.create_memory_object_stream[Any](math.inf)

    async def serve() -> None:
        async for item in server_reads:
            message = incoming(item)
            if message.kind != "request":
                continue
            if message.method == "initialize":
                result = INIT.format()
            elif message.method == "tools/list":  # the session lists tools to check results
                result = '{"tools":[]}'
            else:
                result = RESULT.format(city=(message.params or {})["arguments"]["city"])
            line = f'{{"jsonrpc":"2.0","id":{message.id},"result":{result}}}'
            await to_client.send(SessionMessage(_messages.validate_json(line)))

    async with anyio.create_task_group() as group:
        group.start_soon(serve)
        yield client_reads, to_server
        group.cancel_scope.cancel()


async def calls(transport: Any, n: int) -> float:
    """Initialize, then N distinct tool calls: the CPU seconds per call."""
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        start = time.process_time()
        for index in range(n):
            await session.call_tool("forecast", {"city": f"city-{index}"})
        return (time.process_time() - start) / n


@toolreplay.effect("bench.forecast")
async def forecast(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("replayed, never run")


async def effect_calls(n: int) -> float:
    """N replayed calls of a plain effect with the same inputs and outputs: CPU s per call."""
    start = time.process_time()
    for index in range(n):
        await forecast("forecast", {"city": f"city-{index}"})
    return (time.process_time() - start) / n


_OUTPUTS: dict[str, Any] = {}


@toolreplay.effect("bench.forecast")
async def _recording(name: str, arguments: dict[str, Any]) -> Any:
    return _OUTPUTS[arguments["city"]]


async def _recorded(name: str, arguments: dict[str, Any], outputs: dict[str, Any]) -> Any:
    _OUTPUTS.update(outputs)
    return await _recording(name, arguments)


def measure(n: int, folder: Path, repeats: int) -> tuple[float, float, float]:
    trace = folder / f"mcp-{n}.trp"
    with toolreplay.record(trace):
        asyncio.run(calls(instrument(memory_server(), server="bench"), n))
    loaded = toolreplay.read_trace(trace)
    sdk = replay = effect = math.inf
    with tempfile.TemporaryDirectory() as scratch:
        effect_trace = Path(scratch) / "effects.trp"
        outputs: dict[str, Any] = {
            op.inputs["arguments"]["city"]: op.outcome.value  # type: ignore[index, union-attr]
            for op in loaded.operations
            if op.effect == "mcp.bench.tools.call"
        }

        async def record_effects() -> None:
            for index in range(n):
                await _recorded("forecast", {"city": f"city-{index}"}, outputs)

        with toolreplay.record(effect_trace):  # the same inputs and outputs, as plain effects
            asyncio.run(record_effects())
        effect_loaded = toolreplay.read_trace(effect_trace)
        for _ in range(repeats):
            sdk = min(sdk, asyncio.run(calls(memory_server(), n)))
            with toolreplay.replay(effect_loaded):
                effect = min(effect, asyncio.run(effect_calls(n)))
            with toolreplay.replay(loaded):
                replay = min(
                    replay, asyncio.run(calls(instrument(memory_server(), server="bench"), n))
                )
    return sdk, effect, replay


def main() -> int:
    import logging

    logging.getLogger("client").setLevel(logging.ERROR)  # the SDK warns per unlisted tool
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    print(f"MCP replay of tools/call, CPU µs per call (best of {options.repeats})")
    print(f"{'N':>7} | {'sdk':>8} | {'effect':>8} | {'floor':>8} | {'replay':>8} | {'ratio':>6}")
    with tempfile.TemporaryDirectory() as folder:
        for n in options.sizes:
            repeats = options.repeats if n < 10_000 else 1
            sdk, effect, replay = measure(n, Path(folder), repeats)
            floor = sdk + effect
            print(
                f"{n:>7} | {sdk * 1e6:>8.1f} | {effect * 1e6:>8.1f} | {floor * 1e6:>8.1f} | "
                f"{replay * 1e6:>8.1f} | {replay / floor:>5.2f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
