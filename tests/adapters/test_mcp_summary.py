"""The one-line preview of an MCP call: what was asked and what came back, bounded, from any
value a trace may hold, without the mcp SDK."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.adapters.mcp.support import ROOT
from toolreplay import JsonValue, Raised, Returned
from toolreplay.adapters.mcp_summary import SUMMARY_LIMIT, summarize_operation

CALL = "mcp.weather.tools.call"
OSLO: JsonValue = {"name": "forecast", "arguments": {"city": "Oslo", "days": 2}}


def result(**fields: JsonValue) -> Returned:
    return Returned({"result": dict(fields)})


def test_a_tool_call_shows_its_tool_arguments_and_first_text() -> None:
    answer = result(
        content=[
            {"type": "text", "text": "Snow, -4 C"},
            {"type": "text", "text": "Wind from the north"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        ],
        isError=False,
    )
    assert summarize_operation(CALL, OSLO, answer) == (
        'weather · forecast(city="Oslo", days=2) → Snow, -4 C, +1 text, 1 image'
    )


def test_structured_content_is_the_answer_when_no_text_came() -> None:
    answer = result(content=[], structuredContent={"summary": "Snow", "high_c": -4})
    assert summarize_operation(CALL, OSLO, answer) == (
        'weather · forecast(city="Oslo", days=2) → {"summary":"Snow","high_c":-4}'
    )
    assert summarize_operation(CALL, OSLO, result(content=[])) == (
        'weather · forecast(city="Oslo", days=2) → (empty)'
    )


def test_a_failed_tool_and_a_json_rpc_error_show_the_error() -> None:
    failed = result(content=[{"type": "text", "text": "the feed is down"}], isError=True)
    assert summarize_operation(CALL, OSLO, failed) == (
        'weather · forecast(city="Oslo", days=2) → tool error: the feed is down'
    )
    envelope: JsonValue = {
        "envelope": "mcp.failure",
        "version": 1,
        "code": -32603,
        "message": "backend down",
        "data": None,
        "messages": [],
    }
    error = Raised("mcp.JSONRPCError", "JSON-RPC error -32603: backend down", [envelope])
    assert summarize_operation(CALL, OSLO, error) == (
        'weather · forecast(city="Oslo", days=2) → JSON-RPC error -32603: backend down'
    )
    closed = Raised("mcp.ConnectionClosed", "closed", [{"envelope": "mcp.failure"}])
    assert summarize_operation(CALL, OSLO, closed) == (
        'weather · forecast(city="Oslo", days=2) → connection closed'
    )
    other = Raised("builtins.TimeoutError", "timed out", ["timed out"])
    assert summarize_operation(CALL, OSLO, other) == (
        'weather · forecast(city="Oslo", days=2) → builtins.TimeoutError: timed out'
    )


def test_other_requests_say_what_they_asked_and_got() -> None:
    listed = result(tools=[{"name": "forecast"}, {"name": "outage"}, {"name": "slow"}])
    assert summarize_operation("mcp.weather.tools.list", {}, listed) == (
        "weather · tools/list → 3 tools: forecast, outage, slow"
    )
    read = result(contents=[{"uri": "weather://stations", "text": "OSL, CDG"}])
    assert summarize_operation(
        "mcp.weather.resources.read", {"uri": "weather://stations"}, read
    ) == ("weather · resources/read weather://stations → OSL, CDG")
    hello = result(protocolVersion="2025-11-25", serverInfo={"name": "weather"})
    assert summarize_operation("mcp.weather.initialize", {}, hello) == (
        "weather · initialize → server weather (protocol 2025-11-25)"
    )
    assert summarize_operation("mcp.weather.ping", {}, None) == "weather · ping"


def test_a_long_call_is_cut_to_the_limit_on_one_line() -> None:
    arguments: JsonValue = {"query": "x" * 5000, "note": "line\nbreak\x1b[31m"}
    text = "a\n" * 10_000
    line = summarize_operation(
        CALL,
        {"name": "search", "arguments": arguments},
        result(content=[{"type": "text", "text": text}]),
    )
    assert line is not None
    assert len(line) <= SUMMARY_LIMIT
    assert line.startswith('weather · search(query="xxxx')
    assert line.endswith("…")
    assert "\n" not in line
    assert "\x1b" not in line
    short = summarize_operation(CALL, OSLO, None, limit=20)
    assert short == "weather · forecast(…"


def test_only_mcp_effects_are_summarized() -> None:
    assert summarize_operation("openai.responses.create", {}, None) is None
    assert summarize_operation("mcp.weather", {}, None) is None
    assert summarize_operation("mcpx.weather.tools.call", {}, None) is None


portable = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(
    method=st.sampled_from(
        ["tools.call", "tools.list", "resources.read", "prompts.get", "initialize", "x"]
    ),
    inputs=portable,
    output=portable,
    failed=st.booleans(),
)
def test_any_value_gives_a_bounded_line(
    method: str, inputs: JsonValue, output: JsonValue, failed: bool
) -> None:
    outcome = Raised("mcp.JSONRPCError", "m", [output]) if failed else Returned(output)
    line = summarize_operation(f"mcp.s.{method}", inputs, outcome)
    assert line is not None
    assert len(line) <= SUMMARY_LIMIT
    assert line.isprintable()


def test_it_needs_no_mcp_sdk() -> None:
    """`show` and the debugger read traces where mcp is not installed."""
    probe = (
        "import sys; sys.modules['mcp'] = None\n"  # importing mcp now fails
        "from toolreplay import Returned\n"
        "from toolreplay.adapters.mcp_summary import summarize_operation\n"
        "print(summarize_operation('mcp.w.ping', {}, Returned({'result': {}})))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "w · ping"
