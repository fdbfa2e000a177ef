"""Forks (replace, error, supply, live), bad input, and credentials that never reach a trace."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

import toolreplay
from tests.adapters.mcp.support import CANARY, ROOT, failing_command, inner, starts, stdio_params
from toolreplay.adapters.mcp import instrument, tool_result

OSLO = {"name": "forecast", "arguments": {"city": "Oslo"}}
HAIL = {"city": "Oslo", "summary": "Hail", "high_c": 2}  # the tool's output schema holds
LIMA = {"name": "forecast", "arguments": {"city": "Lima"}}


async def two_forecasts(transport: Any, *, second: str = "Oslo") -> list[Any]:
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        seen: list[Any] = []
        for city in ("Oslo", second):
            try:
                result = await session.call_tool("forecast", {"city": city})
                seen.append([result.is_error, result.structured_content])
            except MCPError as error:
                seen.append(["error", error.error.code, error.error.message])
        return seen


def record(tmp_path: Path) -> tuple[Path, Path]:
    trace, marker = tmp_path / "weather.trp", tmp_path / "starts"
    with toolreplay.record(trace):
        asyncio.run(two_forecasts(instrument(stdio_client(stdio_params(marker)), server="weather")))
    return trace, marker


def test_a_fork_replaces_a_result_an_error_and_supplies_a_call(tmp_path: Path) -> None:
    trace, marker = record(tmp_path)
    no_server = stdio_params(marker, command=failing_command(tmp_path, marker))
    patches = [
        toolreplay.replace_output(
            effect="mcp.weather.tools.call", inputs=OSLO, value=tool_result("Hail", structured=HAIL)
        ),
        toolreplay.replace_error(
            effect="mcp.weather.tools.call",
            inputs=OSLO,
            occurrence=1,
            error=MCPError(code=-32603, message="forecast backend down"),
        ),
    ]
    with toolreplay.fork(trace, tmp_path / "b1.trp", patches=patches):
        seen = asyncio.run(two_forecasts(instrument(stdio_client(no_server), server="weather")))
    assert seen == [[False, HAIL], ["error", -32603, "forecast backend down"]]

    supplied = toolreplay.supply_output(
        effect="mcp.weather.tools.call",
        inputs=LIMA,
        value=tool_result("Fog", structured={"city": "Lima", "summary": "Fog", "high_c": 17}),
    )
    with toolreplay.fork(trace, tmp_path / "b2.trp", patches=[supplied], unobserved="allow"):
        seen = asyncio.run(
            two_forecasts(instrument(stdio_client(no_server), server="weather"), second="Lima")
        )
    assert seen[1] == [False, {"city": "Lima", "summary": "Fog", "high_c": 17}]
    branch = toolreplay.read_trace(tmp_path / "b2.trp").operations
    assert [(op.origin, op.inputs) for op in branch if op.origin != "recorded"] == [
        ("supplied", LIMA)
    ]
    assert starts(marker) == 1


def test_a_fork_answers_the_next_new_calls_and_patches_a_call_by_its_number(
    tmp_path: Path,
) -> None:
    """`supply_output` without inputs answers the next tool calls the recording never made, in
    order; `at=N` names a recorded call by its operation number, as `toolreplay show` does."""
    trace, marker = record(tmp_path)
    no_server = stdio_params(marker, command=failing_command(tmp_path, marker))
    lima = {"city": "Lima", "summary": "Fog", "high_c": 17}
    paris = {"city": "Paris", "summary": "Sunny", "high_c": 21}
    supplies = [
        toolreplay.supply_output(
            effect="mcp.weather.tools.call", value=tool_result(structured=answer)
        )
        for answer in (lima, paris)
    ]

    async def three(transport: Any) -> list[Any]:
        async with transport as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [
                (await session.call_tool("forecast", {"city": city})).structured_content
                for city in ("Oslo", "Lima", "Paris")
            ]

    branch = tmp_path / "supplied.trp"
    with toolreplay.fork(trace, branch, patches=supplies, unobserved="allow"):
        seen = asyncio.run(three(instrument(stdio_client(no_server), server="weather")))
    assert seen[1:] == [lima, paris]
    supplied = [op.inputs for op in toolreplay.read_trace(branch).operations if op.patch_id]
    assert supplied == [LIMA, {"name": "forecast", "arguments": {"city": "Paris"}}]

    calls = toolreplay.read_trace(trace).operations_of("mcp", "weather.tools.call")
    second = calls[1].logical_id  # the second Oslo forecast, by its number
    patches = [
        toolreplay.replace_output(at=calls[0].logical_id, value=tool_result(structured=HAIL)),
        toolreplay.replace_error(at=second, error=MCPError(code=-32001, message="rate limited")),
    ]
    with toolreplay.fork(trace, tmp_path / "numbered.trp", patches=patches):
        seen = asyncio.run(two_forecasts(instrument(stdio_client(no_server), server="weather")))
    assert seen == [[False, HAIL], ["error", -32001, "rate limited"]]
    assert starts(marker) == 1


def test_a_fork_starts_the_server_only_for_a_live_call(tmp_path: Path) -> None:
    trace, marker = record(tmp_path)
    branch = tmp_path / "live.trp"
    with toolreplay.fork(trace, tmp_path / "quiet.trp", live=["mcp.*"]):
        asyncio.run(two_forecasts(instrument(stdio_client(stdio_params(marker)), server="weather")))
    assert starts(marker) == 1  # everything was recorded: nothing started
    with toolreplay.fork(trace, branch, live=["mcp.*"], unobserved="allow"):
        seen = asyncio.run(
            two_forecasts(
                instrument(stdio_client(stdio_params(marker)), server="weather"), second="Lima"
            )
        )
    assert seen[1] == [False, {"city": "Lima", "summary": "Fog", "high_c": 17}]
    assert starts(marker) == 2  # started once, lazily, for the live call
    live = [op for op in toolreplay.read_trace(branch).operations if op.origin == "live"]
    assert [op.inputs for op in live] == [LIMA]


def test_a_result_the_sdk_cannot_parse_is_a_precise_error(tmp_path: Path) -> None:
    trace, marker = record(tmp_path)
    source = toolreplay.read_trace(trace)
    patched = toolreplay.replace_output(
        effect="mcp.weather.tools.call",
        inputs=OSLO,
        occurrence=1,
        value={"result": {"content": "not a list of blocks", "isError": False}},
    )
    with pytest.raises(BaseException) as raised:
        with toolreplay.fork(source, tmp_path / "bad.trp", patches=[patched]):
            asyncio.run(
                two_forecasts(instrument(stdio_client(stdio_params(marker)), server="weather"))
            )
    error = inner(raised.value, toolreplay.UnsupportedResponseError)
    assert "mcp.weather.tools.call" in str(error)
    assert "cannot parse the recorded result" in str(error)
    assert "content" in str(error)
    assert starts(marker) == 1


def test_per_request_meta_is_left_out_of_a_calls_identity(tmp_path: Path) -> None:
    """Progress tokens, trace context and the protocol's own stamps differ on every run; the
    rest of `_meta` is asked of the server like any argument."""
    trace, marker = tmp_path / "weather.trp", tmp_path / "starts"

    async def with_meta(transport: Any, tenant: str) -> Any:
        run = uuid.uuid4().hex  # made afresh on every run, as a client makes them
        meta: Any = {
            "progressToken": run,
            "traceparent": f"00-{run}-{run[:16]}-01",
            "tracestate": f"vendor={run}",
            "baggage": f"run={run}",
            "io.modelcontextprotocol/clientRun": run,
            "tenant": tenant,
        }
        async with transport as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("forecast", {"city": "Oslo"}, meta=meta)
            return result.structured_content

    def transport() -> Any:
        return instrument(stdio_client(stdio_params(marker)), server="weather")

    with toolreplay.record(trace):
        recorded = asyncio.run(with_meta(transport(), "acme"))
    (call,) = toolreplay.read_trace(trace).operations_of("mcp", "weather.tools.call")
    assert call.inputs == {**OSLO, "_meta": {"tenant": "acme"}}
    with toolreplay.replay(trace):
        assert asyncio.run(with_meta(transport(), "acme")) == recorded
    with pytest.raises(BaseException) as raised, toolreplay.replay(trace):
        asyncio.run(with_meta(transport(), "globex"))
    assert "$._meta.tenant" in str(inner(raised.value, toolreplay.ReplayMiss))
    assert starts(marker) == 1


def test_a_result_the_negotiated_protocol_refuses_is_a_precise_error(tmp_path: Path) -> None:
    """The SDK's `Client` negotiates the 2026 protocol (`server/discover`), whose tool results
    need `resultType`: a patched result without it is refused by name before the SDK sees it,
    while the same result with it (as `tool_result` builds) is served."""
    from mcp import Client

    trace, marker = tmp_path / "weather.trp", tmp_path / "starts"

    async def forecast() -> Any:
        transport = instrument(stdio_client(stdio_params(marker)), server="weather")
        async with Client(transport) as client:
            return (await client.call_tool("forecast", {"city": "Oslo"})).structured_content

    with toolreplay.record(trace):
        asyncio.run(forecast())
    effects = [op.effect for op in toolreplay.read_trace(trace).operations]
    assert effects[0] == "mcp.weather.server.discover"
    served = tool_result(structured=HAIL)
    with toolreplay.fork(
        trace,
        tmp_path / "served.trp",
        patches=[
            toolreplay.replace_output(effect="mcp.weather.tools.call", inputs=OSLO, value=served)
        ],
    ):
        assert asyncio.run(forecast()) == HAIL
    legacy_shape = {"result": {"content": [], "structuredContent": HAIL, "isError": False}}
    refused = toolreplay.replace_output(
        effect="mcp.weather.tools.call", inputs=OSLO, value=legacy_shape
    )
    with pytest.raises(BaseException) as raised:
        with toolreplay.fork(trace, tmp_path / "refused.trp", patches=[refused]):
            asyncio.run(forecast())
    error = str(inner(raised.value, toolreplay.UnsupportedResponseError))
    assert "mcp.weather.tools.call" in error
    assert "(protocol 2026-07-28)" in error
    assert "resultType" in error
    assert starts(marker) == 1


def test_a_connection_that_closed_mid_call_replays_as_it_closed(tmp_path: Path) -> None:
    """The server dies during a call: the client got the SDK's connection-closed error, and
    a replay gives it the same, with nothing started."""
    trace, _marker = tmp_path / "closed.trp", tmp_path / "starts"
    script = tmp_path / "dies.py"
    script.write_text(
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    if msg.get('method') == 'initialize':\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': {\n"
        "            'protocolVersion': msg['params']['protocolVersion'], 'capabilities': {},\n"
        "            'serverInfo': {'name': 'dies', 'version': '1'}}}), flush=True)\n"
        "    elif msg.get('method') == 'tools/call':\n"
        "        sys.exit(1)\n",
        encoding="utf-8",
    )

    async def call(command: str) -> list[Any]:
        from mcp import StdioServerParameters

        params = StdioServerParameters(command=command, args=[str(script)])
        return await two_forecasts(instrument(stdio_client(params), server="dies"))

    with toolreplay.record(trace):
        recorded = asyncio.run(call(sys.executable))
    assert recorded[0][0] == "error"
    assert "closed" in recorded[0][2].lower()
    with toolreplay.replay(trace):
        replayed = asyncio.run(call("/nonexistent/server"))
    assert replayed == recorded


def test_credentials_given_to_servers_never_reach_traces_cases_or_output(tmp_path: Path) -> None:
    """The canary is in the server's environment, its command line and HTTP headers."""
    run = subprocess.run(
        [sys.executable, "-c", CANARY_RUN, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "recorded and replayed" in run.stdout
    assert CANARY not in run.stdout + run.stderr
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.suffix == ".trp" for path in written)
    for path in written:
        assert CANARY.encode() not in path.read_bytes(), path


CANARY_RUN = """
import asyncio, sys
from pathlib import Path
import toolreplay
from mcp.client.stdio import stdio_client
from tests.adapters.mcp.apps import session_app
from tests.adapters.mcp.support import stdio_params, http_server
from tests.adapters.mcp.test_sdk import http_transport
from toolreplay.adapters.mcp import instrument
folder = Path(sys.argv[1])
marker = folder / "starts"
with toolreplay.record(folder / "stdio.trp"):
    asyncio.run(session_app(instrument(stdio_client(stdio_params(marker)), server="weather")))
with http_server(marker) as url, toolreplay.record(folder / "http.trp"):
    asyncio.run(session_app(instrument(http_transport(url), server="weather")))
with toolreplay.fork(folder / "stdio.trp", folder / "branch.trp"):
    seen = asyncio.run(session_app(
        instrument(stdio_client(stdio_params(marker)), server="weather")))
toolreplay.promote(folder / "branch.trp", folder / "case", name="weather",
                   runner="tests.adapters.mcp.apps:session_weather", expected=seen)
print("recorded and replayed")
"""


SECRET = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"  # the shape of an OpenAI key
KEY = "test-redaction-key-0123456789abcdef"


async def forecast_for(transport: Any, city: str) -> Any:
    async with transport as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("forecast", {"city": city})
        return result.structured_content


def test_the_secret_scan_and_redaction_cover_arguments_and_results(tmp_path: Path) -> None:
    """A key in a tool's arguments (which the forecast echoes in its result): refused by
    the secret scan, or kept as placeholders under a redaction policy, and replayed."""
    from toolreplay.redaction import RedactionPolicy

    marker = tmp_path / "starts"
    refused = tmp_path / "refused.trp"
    with pytest.raises(BaseException) as raised:  # the SDK's task group wraps it
        with toolreplay.record(refused):
            transport = instrument(stdio_client(stdio_params(marker)), server="weather")
            asyncio.run(forecast_for(transport, SECRET))
    secret = inner(raised.value, toolreplay.SecretInTraceError)
    assert {finding.part for finding in secret.findings} == {"inputs"}  # refused before sent
    assert not refused.exists() or SECRET.encode() not in refused.read_bytes()

    policy = RedactionPolicy(redact_secrets=True, key=KEY)
    trace = tmp_path / "redacted.trp"
    with toolreplay.record(trace, redaction=policy):
        seen = asyncio.run(
            forecast_for(instrument(stdio_client(stdio_params(marker)), server="weather"), SECRET)
        )
    assert seen["city"] == SECRET  # the application saw what the server sent
    assert SECRET.encode() not in trace.read_bytes()
    call = next(
        op for op in toolreplay.read_trace(trace).operations if op.effect.endswith("tools.call")
    )
    assert "<redacted:" in str(call.inputs)
    assert "<redacted:" in str(call.outcome)

    no_server = stdio_params(marker, command=failing_command(tmp_path, marker))
    with toolreplay.replay(trace, redaction=policy):
        again = asyncio.run(
            forecast_for(instrument(stdio_client(no_server), server="weather"), SECRET)
        )
    assert again == {"city": call_city(call), "summary": "Clouds", "high_c": 12}
    assert starts(marker) == 2  # the two recordings; the replay started nothing


def call_city(call: toolreplay.Operation) -> object:
    """The city the recorded result holds (a placeholder, as written)."""
    outcome = call.outcome
    assert isinstance(outcome, toolreplay.Returned)
    value = outcome.value
    assert isinstance(value, dict)
    result = value["result"]
    assert isinstance(result, dict)
    structured = result["structuredContent"]
    assert isinstance(structured, dict)
    return structured["city"]
