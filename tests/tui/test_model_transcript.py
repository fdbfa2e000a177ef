"""Model calls read back as transcripts, from what the OpenAI adapter records."""

from __future__ import annotations

import json
from typing import Any

import pytest
from toolreplay_tui.model.jsonpaths import get_at
from toolreplay_tui.model.transcript import Transcript, transcript_of

from toolreplay.portable import JsonValue

TOOLS = [
    {"type": "function", "name": "lookup_order", "parameters": {"type": "object"}},
    {"type": "function", "name": "issue_refund", "parameters": {"type": "object"}},
    {"type": "web_search"},
]


def responses_call(
    body: dict[str, Any], output: dict[str, Any]
) -> tuple[str, JsonValue, JsonValue]:
    inputs = {"method": "POST", "path": "/responses", "query": {}, "body": body}
    return "openai.responses.create", inputs, output


def rows(transcript: Transcript) -> list[tuple[str, str, str, str]]:
    return [(e.side, e.kind, e.who, e.text) for e in transcript.entries]


def check_paths(transcript: Transcript, output: JsonValue) -> None:
    """Every received value's path leads to that value in the recorded output."""
    for entry in transcript.response:
        if entry.path is not None and entry.kind in ("text", "refusal", "reasoning"):
            assert get_at(output, entry.path) == entry.text


def test_a_responses_turn_with_tools_reads_as_a_conversation() -> None:
    request = {
        "model": "gpt-5-mini",
        "instructions": "You settle refunds.",
        "input": [
            {"role": "user", "content": "Refund order 8812?"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "lookup_order",
                "arguments": '{"order_id":8812}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": '{"total":1200.0}'},
        ],
        "tools": TOOLS,
    }
    output = {
        "status": 200,
        "headers": {"content-type": "application/json"},
        "body": {
            "object": "response",
            "output": [
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [{"type": "summary_text", "text": "Above the limit."}],
                },
                {
                    "type": "web_search_call",
                    "id": "ws_1",
                    "status": "completed",
                    "action": {"type": "search", "query": "refund policy"},
                },
                {
                    "type": "function_call",
                    "id": "fc_2",
                    "call_id": "call_2",
                    "name": "issue_refund",
                    "arguments": '{"order_id":8812,"amount":1200.0}',
                    "status": "completed",
                },
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {"type": "output_text", "text": "Refund issued.", "annotations": []}
                    ],
                },
            ],
            "usage": {
                "input_tokens": 120,
                "input_tokens_details": {"cached_tokens": 64},
                "output_tokens": 18,
                "output_tokens_details": {"reasoning_tokens": 7},
                "total_tokens": 138,
            },
        },
        "end": "complete",
    }
    transcript = transcript_of(*responses_call(request, output))
    assert transcript is not None
    assert (transcript.api, transcript.model, transcript.status) == ("responses", "gpt-5-mini", 200)
    assert transcript.tools_offered == ("lookup_order", "issue_refund", "web_search")
    assert not transcript.streamed
    assert rows(transcript) == [
        ("request", "instructions", "instructions", "You settle refunds."),
        ("request", "message", "user", "Refund order 8812?"),
        ("request", "tool_call", "lookup_order", json.dumps({"order_id": 8812}, indent=2)),
        ("request", "tool_output", "call_1", json.dumps({"total": 1200.0}, indent=2)),
        ("response", "reasoning", "reasoning", "Above the limit."),
        ("response", "hosted_tool", "web_search_call", "query: refund policy"),
        (
            "response",
            "tool_call",
            "issue_refund",
            json.dumps({"order_id": 8812, "amount": 1200.0}, indent=2),
        ),
        ("response", "text", "assistant", "Refund issued."),
        ("response", "usage", "usage", "120 in (64 cached) · 18 out (7 reasoning) · 138 total"),
    ]
    call = next(e for e in transcript.response if e.kind == "tool_call")
    assert call.path == ("body", "output", 2, "arguments")
    assert get_at(output, ("body", "output", 2, "arguments")) == '{"order_id":8812,"amount":1200.0}'
    check_paths(transcript, output)


def sse(*payloads: dict[str, Any]) -> list[JsonValue]:
    return [{"event": p["type"], "data": p} if "type" in p else {"data": p} for p in payloads]


def test_a_request_naming_a_stored_prompt_shows_it_and_its_variables() -> None:
    request = {"prompt": {"id": "pmpt_123", "version": "2", "variables": {"city": "Paris"}}}
    output = {
        "status": 200,
        "body": {
            "object": "response",
            "model": "gpt-5-mini",
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Sunny."}],
                }
            ],
        },
    }
    transcript = transcript_of(*responses_call(request, output))
    assert transcript is not None
    assert transcript.api == "responses"
    assert rows(transcript)[0] == (
        "request",
        "instructions",
        "stored prompt",
        'pmpt_123 (version 2)\n{\n  "city": "Paris"\n}',
    )
    assert ("response", "text", "assistant", "Sunny.") in rows(transcript)


def test_a_streamed_response_reads_from_its_final_event() -> None:
    final = {
        "object": "response",
        "output": [
            {
                "type": "message",
                "id": "m",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello there", "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7},
    }
    events = sse(
        {"type": "response.created", "response": {**final, "output": []}},
        {"type": "response.output_text.delta", "delta": "Hello"},
        {"type": "response.output_text.delta", "delta": " there"},
        {"type": "response.completed", "response": final},
    )
    output = {"status": 200, "headers": {}, "events": events, "end": "complete"}
    transcript = transcript_of(
        *responses_call({"model": "m", "input": "hi", "stream": True}, output)
    )
    assert transcript is not None
    assert transcript.streamed
    assert transcript.event_count == 4
    text = next(e for e in transcript.response if e.kind == "text")
    assert text.text == "Hello there"
    assert text.path == ("events", 3, "data", "response", "output", 0, "content", 0, "text")
    check_paths(transcript, output)


def test_a_stream_cut_before_completion_shows_the_items_that_finished() -> None:
    item = {"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": "{}"}
    events = sse({"type": "response.output_item.done", "output_index": 0, "item": item})
    output = {"status": 200, "headers": {}, "events": events, "tail": "data: {", "end": "complete"}
    transcript = transcript_of(
        *responses_call({"model": "m", "input": "x", "stream": True}, output)
    )
    assert transcript is not None
    assert [(e.kind, e.who) for e in transcript.response] == [
        ("tool_call", "f"),
        ("note", "stream"),
    ]
    assert transcript.response[0].path == ("events", 0, "data", "item", "arguments")


def chat_call(body: dict[str, Any], output: dict[str, Any]) -> tuple[str, JsonValue, JsonValue]:
    inputs = {"method": "POST", "path": "/chat/completions", "query": {}, "body": body}
    return "openai.chat.completions.create", inputs, output


def test_a_chat_completion_with_tool_calls() -> None:
    request = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
        ],
        "tools": [{"type": "function", "function": {"name": "weather", "parameters": {}}}],
    }
    output = {
        "status": 200,
        "headers": {},
        "body": {
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "Sunny in Paris."},
                }
            ],
            "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35},
        },
    }
    transcript = transcript_of(*chat_call(request, output))
    assert transcript is not None
    assert transcript.tools_offered == ("weather",)
    assert rows(transcript) == [
        ("request", "instructions", "system", "Be brief."),
        ("request", "message", "user", "Weather?"),
        ("request", "tool_call", "weather", json.dumps({"city": "Paris"}, indent=2)),
        ("request", "tool_output", "call_a", "sunny"),
        ("response", "text", "assistant", "Sunny in Paris."),
        ("response", "usage", "usage", "30 in · 5 out · 35 total"),
    ]
    assert transcript.response[0].path == ("body", "choices", 0, "message", "content")


def test_a_streamed_chat_completion_is_put_back_together() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    events: list[JsonValue] = [
        {"data": chunk({"role": "assistant"})},
        {
            "data": chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "c", "function": {"name": "f", "arguments": ""}}
                    ]
                }
            )
        },
        {"data": chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"a":'}}]})},
        {"data": chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]})},
        {"data": chunk({}, "tool_calls")},
        {
            "data": {
                "choices": [],
                "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
            }
        },
        {"data_text": "[DONE]"},
    ]
    output = {"status": 200, "headers": {}, "events": events}
    request = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": True}
    transcript = transcript_of(*chat_call(request, output))
    assert transcript is not None
    assert rows(transcript)[1:] == [
        ("response", "tool_call", "f", json.dumps({"a": 1}, indent=2)),
        ("response", "note", "finish", "tool_calls"),
        ("response", "usage", "usage", "3 in · 4 out · 7 total"),
    ]


def test_a_provider_error_and_a_trace_of_the_first_adapter() -> None:
    error = {"status": 400, "headers": {}, "body": {"error": {"message": "Bad tool schema"}}}
    transcript = transcript_of(*responses_call({"model": "m", "input": "x"}, error))
    assert transcript is not None
    assert ("response", "error", "error", "Bad tool schema") in rows(transcript)
    # The first adapter recorded the request fields as inputs and {body: ...} as output.
    legacy_inputs = {"model": "gpt-5-mini", "input": "Approve?", "max_output_tokens": 256}
    legacy_output: dict[str, Any] = {
        "body": {
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "approve"}],
                }
            ]
        }
    }
    legacy = transcript_of("openai.responses.create", legacy_inputs, legacy_output)
    assert legacy is not None
    assert rows(legacy) == [
        ("request", "message", "user", "Approve?"),
        ("response", "text", "assistant", "approve"),
    ]
    check_paths(legacy, legacy_output)


@pytest.mark.parametrize(
    ("effect", "inputs"),
    [
        ("crm.customer.get", {"customer_id": 42}),
        (
            "openai.embeddings.create",
            {"method": "POST", "path": "/embeddings", "body": {"input": "x"}},
        ),
        ("openai.responses.create", ["not", "an", "object"]),
        (
            "openai.chat.completions.create",
            {"method": "POST", "path": "/chat/completions", "body": {}},
        ),
    ],
)
def test_anything_else_has_no_transcript(effect: str, inputs: JsonValue) -> None:
    assert transcript_of(effect, inputs, {"status": 200, "body": {}}) is None
