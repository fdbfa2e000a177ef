"""MCP requests read back as what they are, from what the MCP adapter records (RFC 0009)."""

from __future__ import annotations

import base64
import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st
from toolreplay_tui.model.jsonpaths import get_at
from toolreplay_tui.model.mcp_transcript import McpCall, mcp_call_of

from toolreplay.portable import JsonValue

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
CALL = "mcp.weather.tools.call"
OSLO: JsonValue = {"name": "forecast", "arguments": {"city": "Oslo", "days": 2}}


def rows(call: McpCall) -> list[tuple[str, str, str, str]]:
    return [(e.side, e.kind, e.who, e.text) for e in call.entries]


def check_paths(call: McpCall, shown: JsonValue) -> None:
    """Every received text's path leads to that very value in the output shown."""
    for entry in call.response:
        if entry.kind in ("text", "tool_error") and entry.path is not None:
            value = get_at(shown, entry.path)
            assert entry.text == (value if isinstance(value, str) else "the tool failed")


def test_a_tool_call_shows_its_tool_arguments_and_every_kind_of_content() -> None:
    output: JsonValue = {
        "result": {
            "content": [
                {"type": "text", "text": "Snow, -4 C"},
                {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
                {"type": "audio", "data": "not base64!", "mimeType": "audio/wav"},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "weather://stations/osl",
                        "mimeType": "text/plain",
                        "text": "Calm night.",
                    },
                },
                {
                    "type": "resource",
                    "resource": {"uri": "weather://map", "blob": base64.b64encode(b"map").decode()},
                },
                {"type": "resource_link", "uri": "weather://archive", "name": "archive"},
            ],
            "structuredContent": {"summary": "Snow"},
            "isError": False,
        },
        "messages": [
            {
                "notification": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1, "total": 2, "message": "half"},
            },
            {"notification": "notifications/message", "params": {"level": "info", "data": "ok"}},
        ],
    }
    call = mcp_call_of(CALL, OSLO, output)
    assert call is not None
    assert (call.server, call.method, call.tool, call.answer) == (
        "weather",
        "tools/call",
        "forecast",
        "result",
    )
    digest = hashlib.sha256(PNG).hexdigest()[:16]
    assert rows(call) == [
        ("request", "tool", "tool", "forecast"),
        ("request", "argument", "city", "Oslo"),
        ("request", "argument", "days", "2"),
        ("response", "text", "text", "Snow, -4 C"),
        ("response", "media", "image", f"image/png · 48 bytes · sha256 {digest}…"),
        ("response", "media", "audio", "audio/wav · 11 characters that are not base64"),
        ("response", "resource", "resource", "weather://stations/osl  text/plain"),
        ("response", "text", "text", "Calm night."),
        ("response", "resource", "resource", "weather://map"),
        (
            "response",
            "media",
            "blob",
            "no mimeType · 3 bytes · sha256 " + hashlib.sha256(b"map").hexdigest()[:16] + "…",
        ),
        ("response", "resource", "link", "weather://archive  (archive)"),
        ("response", "structured", "structured", '{\n  "summary": "Snow"\n}'),
        ("response", "notification", "notifications/progress", "1/2  half"),
        ("response", "notification", "notifications/message", 'info: "ok"'),
    ]
    assert [e.path for e in call.response][:2] == [
        ("result", "content", 0, "text"),
        ("result", "content", 1, "data"),
    ]
    check_paths(call, output)
    assert not any(base64.b64encode(PNG).decode() in entry.text for entry in call.entries)


def test_a_tool_that_failed_and_a_json_rpc_error_say_so() -> None:
    failed: JsonValue = {
        "result": {"content": [{"type": "text", "text": "feed down"}], "isError": True}
    }
    call = mcp_call_of(CALL, OSLO, failed)
    assert call is not None
    assert call.answer == "tool error"
    assert rows(call)[3:] == [
        ("response", "tool_error", "isError", "the tool failed"),
        ("response", "text", "text", "feed down"),
    ]
    check_paths(call, failed)

    envelope: JsonValue = {
        "envelope": "mcp.failure",
        "version": 1,
        "code": -32603,
        "message": "backend down",
        "data": {"retry": True},
        "messages": [{"notification": "notifications/progress", "params": {"progress": 1}}],
    }
    shown: JsonValue = {"type": "mcp.JSONRPCError", "message": "m", "args": [envelope]}
    error = mcp_call_of(CALL, OSLO, shown, failed=True)
    assert error is not None
    assert error.answer == "JSON-RPC error -32603"
    assert rows(error)[3:] == [
        ("response", "error", "error -32603", "backend down"),
        ("response", "error", "data", '{\n  "retry": true\n}'),
        ("response", "notification", "notifications/progress", "1"),
    ]
    assert error.response[0].path == ("args", 0, "message")
    assert get_at(shown, ("args", 0, "message")) == "backend down"

    closed: JsonValue = {"type": "mcp.ConnectionClosed", "message": "", "args": [envelope]}
    ended = mcp_call_of(CALL, OSLO, closed, failed=True)
    assert ended is not None
    assert ended.answer == "no answer"
    assert "the connection closed" in ended.response[0].text


def test_other_requests_show_their_params_and_results_by_key() -> None:
    listed = mcp_call_of(
        "mcp.weather.tools.list",
        {},
        {"result": {"tools": [{"name": "forecast", "description": "Tomorrow's\nweather."}]}},
    )
    assert listed is not None
    assert rows(listed) == [
        ("request", "note", "params", "(none)"),
        ("response", "value", "forecast", "Tomorrow's weather."),
    ]
    read = mcp_call_of(
        "mcp.weather.resources.read",
        {"uri": "weather://stations"},
        {"result": {"contents": [{"uri": "weather://stations", "text": "OSL, CDG"}]}},
    )
    assert read is not None
    assert rows(read) == [
        ("request", "param", "uri", "weather://stations"),
        ("response", "resource", "resource", "weather://stations"),
        ("response", "text", "text", "OSL, CDG"),
    ]
    prompt = mcp_call_of(
        "mcp.weather.prompts.get",
        {"name": "brief", "arguments": {"city": "Oslo"}},
        {"result": {"messages": [{"role": "user", "content": {"type": "text", "text": "Brief"}}]}},
    )
    assert prompt is not None
    assert rows(prompt)[-1] == ("response", "text", "user", "Brief")
    hello = mcp_call_of("mcp.weather.initialize", {}, {"result": {"protocolVersion": "2025-11-25"}})
    assert hello is not None
    assert rows(hello)[-1] == ("response", "value", "protocolVersion", "2025-11-25")
    assert hello.response[-1].path == ("result", "protocolVersion")


def test_only_mcp_effects_read_as_mcp_calls() -> None:
    assert mcp_call_of("openai.responses.create", {}, {}) is None
    assert mcp_call_of("mcp.weather", {}, {}) is None


def test_a_long_text_is_cut_with_the_rest_below() -> None:
    output: JsonValue = {"result": {"content": [{"type": "text", "text": "x" * 10_000}]}}
    call = mcp_call_of(CALL, OSLO, output)
    assert call is not None
    assert call.response[0].text.endswith("… (10,000 characters; all of it below)")
    assert len(call.response[0].text) < 4_100


portable = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=25,
)
blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "audio", "resource", "resource_link", "x"])},
    optional={"text": portable, "data": portable, "resource": portable, "uri": portable},
)


@settings(max_examples=150, deadline=None)
@given(
    method=st.sampled_from(["tools.call", "tools.list", "resources.read", "prompts.get", "ping"]),
    inputs=portable,
    content=st.lists(blocks, max_size=4),
    other=portable,
    failed=st.booleans(),
)
def test_any_value_reads_without_an_error(
    method: str, inputs: JsonValue, content: list[JsonValue], other: JsonValue, failed: bool
) -> None:
    output: JsonValue = {"result": {"content": content, "contents": other, "messages": other}}
    shown: JsonValue = {"type": other, "args": [other]} if failed else output
    call = mcp_call_of(f"mcp.s.{method}", inputs, shown, failed=failed)
    assert call is not None
    for entry in call.response:
        if entry.path is not None:
            get_at(shown, entry.path)  # every path leads somewhere in what is shown
