"""Claude calls read back as transcripts, from values the Anthropic adapter records.

The debugger reads them without the SDK; a streamed answer through the adapter's own
`final_message`. The app-level tests (test_app_claude.py) read a recorded trace.
"""

from __future__ import annotations

import json
from typing import Any

from toolreplay_tui.model.jsonpaths import get_at
from toolreplay_tui.model.transcript import Transcript, transcript_of

from examples.local_anthropic import message, sse, stream_events
from toolreplay.portable import JsonValue

EFFECT = "anthropic.messages.create"
TOOLS = [
    {"name": "issue_refund", "input_schema": {"type": "object"}},
    {"type": "web_search_20250305", "name": "web_search"},
]
ASKED: list[Any] = [{"role": "user", "content": "Refund order 8812."}]


def inputs(body: dict[str, Any], path: str = "/v1/messages") -> JsonValue:
    return {"method": "POST", "path": path, "query": {}, "headers": {}, "body": body}


def rows(transcript: Transcript | None) -> list[tuple[str, str, str, str]]:
    assert transcript is not None
    return [(e.side, e.kind, e.who, e.text) for e in transcript.entries]


def events_of(final: dict[str, Any]) -> list[JsonValue]:
    """The events the local API streams for `final`, as the adapter records them."""
    text = sse(stream_events(final)).decode()
    return [
        {"event": block.split("\n")[0][7:], "data": json.loads(block.split("\n")[1][6:])}
        for block in text.split("\n\n")
        if block
    ]


def test_a_json_answer_with_thinking_and_a_tool_use_and_its_paths() -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
        "messages": ASKED,
        "tools": TOOLS,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    answer = message(body, 1)
    output: JsonValue = {"status": 200, "headers": {}, "body": answer, "end": "complete"}
    transcript = transcript_of(EFFECT, inputs(body), output)
    assert transcript is not None
    assert (transcript.api, transcript.model, transcript.streamed) == (
        "messages",
        "claude-sonnet-4-6",
        False,
    )
    assert transcript.tools_offered == ("issue_refund", "web_search")
    assert rows(transcript) == [
        ("request", "instructions", "system", "Be brief.\nBe kind."),
        ("request", "message", "user", "Refund order 8812."),
        ("response", "reasoning", "thinking", "The order number is given, so I can look it up."),
        ("response", "text", "assistant", "Let me check that order."),
        (
            "response",
            "tool_call",
            "issue_refund",
            '{\n  "order_id": 8812,\n  "reason": "lost in transit"\n}',
        ),
        ("response", "usage", "usage", "31 in (0 cache read, 0 cache write) · 17 out"),
    ]
    for entry in transcript.response:  # each path leads to the value shown
        if entry.kind in ("text", "reasoning"):
            assert entry.path is not None
            assert get_at(output, entry.path) == entry.text
    tool = transcript.response[2]
    assert tool.path == ("body", "content", 2, "input")


def test_a_stream_reads_as_the_message_its_events_add_up_to() -> None:
    body = {"model": "claude-sonnet-4-6", "messages": ASKED, "tools": TOOLS, "stream": True}
    events = events_of(message(body, 1))
    output: JsonValue = {"status": 200, "headers": {}, "events": events, "end": "complete"}
    transcript = transcript_of(EFFECT, inputs(body), output)
    assert transcript is not None
    assert (transcript.streamed, transcript.event_count) == (True, len(events))
    assert [row[1:3] for row in rows(transcript) if row[0] == "response"] == [
        ("text", "assistant"),
        ("tool_call", "issue_refund"),
        ("usage", "usage"),
    ]
    assert all(entry.path is None for entry in transcript.response)
    # Cut before message_stop: what is known is said, and that it ended early.
    cut: JsonValue = {"status": 200, "headers": {}, "events": events[:5], "end": "closed_early"}
    assert rows(transcript_of(EFFECT, inputs(body), cut))[-2:] == [
        ("response", "note", "stream", "ended before message_stop"),
        ("response", "note", "stream", "the application stopped reading early"),
    ]


def test_a_conversation_with_tool_results_errors_and_a_cloud_path() -> None:
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "messages": [
            *ASKED,
            {
                "role": "assistant",
                "content": [
                    {"type": "redacted_thinking", "data": "EmwKAhgB"},
                    {"type": "tool_use", "id": "toolu_1", "name": "issue_refund", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": '{"ok":false}'}],
                        "is_error": True,
                    },
                    {"type": "text", "text": "Why?"},
                    {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
                ],
            },
        ],
        "max_tokens": 64,
    }
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    output: JsonValue = {"status": 529, "headers": {}, "body": error, "end": "complete"}
    path = "/model/anthropic.claude-sonnet-4-6-v1:0/invoke"
    transcript = transcript_of(EFFECT, inputs(body, path), output)
    assert transcript is not None
    assert (transcript.model, transcript.status) == ("anthropic.claude-sonnet-4-6-v1:0", 529)
    vertex = "/projects/p/locations/us-east5/publishers/anthropic/models/claude-x@2026:rawPredict"
    on_vertex = transcript_of(EFFECT, inputs(body, vertex), output)
    assert on_vertex is not None
    assert on_vertex.model == "claude-x@2026"
    assert rows(transcript) == [
        ("request", "message", "user", "Refund order 8812."),
        ("request", "reasoning", "thinking", "(redacted)"),
        ("request", "tool_call", "issue_refund", "{}"),
        ("request", "tool_output", "issue_refund", '(error) {\n  "ok": false\n}'),
        ("request", "message", "user", "Why?\n[image]"),
        ("response", "error", "overloaded_error", "Overloaded"),
    ]


def test_other_endpoints_and_odd_shapes_give_none_or_a_transcript_never_an_error() -> None:
    assert transcript_of("anthropic.messages.count_tokens", inputs({"messages": ASKED}), {}) is None
    assert transcript_of(EFFECT, inputs({"model": "x"}), {}) is None  # no messages
    assert transcript_of(EFFECT, {"path": "/v1/messages"}, None) is None
    odd: list[JsonValue] = [
        None,
        [],
        "text",
        {"status": True, "body": {"content": [1, {"type": None}, {"type": "tool_use"}]}},
        {"events": [None, 3, {"data": {"type": "message_start"}}]},
        {"events": [{"data": {"type": "error", "error": "nope"}}], "text": 5},
    ]
    weird = {"system": 3, "messages": [None, {"role": 1, "content": [{"type": "tool_result"}]}]}
    for output in odd:
        transcript = transcript_of(EFFECT, inputs(weird), output)
        assert transcript is not None
