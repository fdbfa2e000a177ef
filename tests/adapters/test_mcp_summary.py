"""MCP calls in lists: what was asked and what came back (RFC 0009 §6), through the public
summary hook, bounded, from any value a trace may hold, without the mcp SDK."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.adapters.mcp.support import ROOT
from toolreplay import CallSummary, JsonValue, Raised, Returned, summarize_call
from toolreplay.summaries import SUMMARY_LIMIT

CALL = "mcp.weather.tools.call"
OSLO: JsonValue = {"name": "forecast", "arguments": {"city": "Oslo", "days": 2}}
ASKED = 'weather · forecast(city="Oslo", days=2)'


def result(**fields: JsonValue) -> Returned:
    return Returned({"result": dict(fields)})


def summary(effect: str, inputs: JsonValue, outcome: Returned | Raised | None) -> CallSummary:
    found = summarize_call(effect, inputs, outcome)
    assert found is not None
    return found


def test_a_tool_call_shows_its_tool_arguments_and_first_text() -> None:
    answer = result(
        content=[
            {"type": "text", "text": "Snow, -4 C"},
            {"type": "text", "text": "Wind from the north"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        ],
        isError=False,
    )
    shown = summary(CALL, OSLO, answer)
    assert (shown.asked, shown.answered) == (ASKED, "Snow, -4 C, +1 text, 1 image")
    assert shown.line(100) == f"{ASKED} → Snow, -4 C, +1 text, 1 image"


def test_structured_content_is_the_answer_when_no_text_came() -> None:
    answer = result(content=[], structuredContent={"summary": "Snow", "high_c": -4})
    assert summary(CALL, OSLO, answer).answered == '{"summary":"Snow","high_c":-4}'
    assert summary(CALL, OSLO, result(content=[])).answered == "(empty)"
    assert summary(CALL, OSLO, None) == CallSummary(ASKED, "")


def test_a_failed_tool_and_a_json_rpc_error_show_the_error() -> None:
    failed = result(content=[{"type": "text", "text": "the feed is down"}], isError=True)
    assert summary(CALL, OSLO, failed).answered == "tool error: the feed is down"
    envelope: JsonValue = {
        "envelope": "mcp.failure",
        "version": 1,
        "code": -32603,
        "message": "backend down",
        "data": None,
        "messages": [],
    }
    error = Raised("mcp.JSONRPCError", "JSON-RPC error -32603: backend down", [envelope])
    assert summary(CALL, OSLO, error).answered == "JSON-RPC error -32603: backend down"
    closed = Raised("mcp.ConnectionClosed", "closed", [{"envelope": "mcp.failure"}])
    assert summary(CALL, OSLO, closed).answered == "connection closed"
    other = Raised("builtins.TimeoutError", "timed out", ["timed out"])
    assert summary(CALL, OSLO, other).answered == "TimeoutError: timed out"


def test_other_requests_say_what_they_asked_and_got() -> None:
    listed = result(tools=[{"name": "forecast"}, {"name": "outage"}, {"name": "slow"}])
    assert summary("mcp.weather.tools.list", {}, listed) == CallSummary(
        "weather · tools/list", "3 tools: forecast, outage, slow"
    )
    read = result(contents=[{"uri": "weather://stations", "text": "OSL, CDG"}])
    assert summary("mcp.weather.resources.read", {"uri": "weather://stations"}, read) == (
        CallSummary("weather · resources/read weather://stations", "OSL, CDG")
    )
    hello = result(protocolVersion="2025-11-25", serverInfo={"name": "weather"})
    assert summary("mcp.weather.initialize", {}, hello).answered == (
        "server weather (protocol 2025-11-25)"
    )
    assert summary("mcp.weather.ping", {}, result()) == CallSummary("weather · ping", "")


def test_a_long_call_is_bounded_on_one_line_escaped() -> None:
    arguments: JsonValue = {"query": "x" * 5000, "note": "line\nbreak\x1b[31m"}
    shown = summary(
        CALL,
        {"name": "search", "arguments": arguments},
        result(content=[{"type": "text", "text": "a\n" * 10_000}]),
    )
    assert shown.asked.startswith('weather · search(query="xxxx')
    assert 'note="line\\nbreak\\u001b[31m"' in shown.asked  # both arguments, escaped
    assert len(shown.asked) <= SUMMARY_LIMIT
    assert len(shown.answered) <= SUMMARY_LIMIT
    assert shown.answered.endswith("…")
    assert "\n" not in shown.answered
    assert len(shown.line(40)) <= 40


def test_only_mcp_effects_are_summarized_here() -> None:
    assert summarize_call("mcp.weather", {}, None) is None
    assert summarize_call("mcpx.weather.tools.call", {}, None) is None


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
def test_any_value_gives_a_bounded_summary(
    method: str, inputs: JsonValue, output: JsonValue, failed: bool
) -> None:
    outcome = Raised("mcp.JSONRPCError", "m", [output]) if failed else Returned(output)
    shown = summary(f"mcp.s.{method}", inputs, outcome)
    for part in (shown.asked, shown.answered):
        assert len(part) <= SUMMARY_LIMIT
        assert part == "" or part.isprintable()


def test_it_needs_no_mcp_sdk() -> None:
    """`show` and the debugger read traces where mcp is not installed."""
    probe = (
        "import sys; sys.modules['mcp'] = None\n"  # importing mcp now fails
        "from toolreplay import Returned, summarize_call\n"
        "print(summarize_call('mcp.w.ping', {}, Returned({'result': {}})).asked)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "w · ping"
