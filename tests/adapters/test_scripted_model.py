"""The scripted model answers like the API: the plain SDK, streaming helpers included, reads it."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from examples.local_openai.scripted import ScriptedModel, ToolCall
from tests.adapters.support import sync_client


def parallel_script() -> ScriptedModel:
    return ScriptedModel(
        turns=[
            [ToolCall("lookup_order", {"order_id": 8812})],
            [ToolCall("credit_check", {"customer": 42}), ToolCall("stock_check", {"sku": "A7"})],
        ],
        final_text=lambda outputs: "done: " + "; ".join(outputs),
    )


def outputs(*texts: str) -> Any:  # Responses input items, as plain dicts
    return [
        {"type": "function_call_output", "call_id": f"call_{n}", "output": text}
        for n, text in enumerate(texts)
    ]


def test_responses_turns_follow_the_tool_outputs_sent() -> None:
    model = parallel_script()
    client = sync_client(model)
    first = client.responses.create(model="m", input="Refund 8812?")
    assert [(item.type, getattr(item, "name", None)) for item in first.output] == [
        ("function_call", "lookup_order")
    ]
    call = first.output[0]
    assert call.type == "function_call"  # narrows the output item union
    assert json.loads(call.arguments) == {"order_id": 8812}
    with client.responses.stream(model="m", input=outputs("found")) as stream:
        events = [event.type for event in stream]
        parallel = stream.get_final_response()
    assert [getattr(item, "name", None) for item in parallel.output] == [
        "credit_check",
        "stock_check",
    ]
    assert events.count("response.function_call_arguments.done") == 2
    final = client.responses.create(model="m", input=outputs("found", "ok", "in stock"))
    assert final.output_text == "done: found; ok; in stock"
    assert len(model.requests) == 3


def test_chat_completions_stream_tool_calls_and_text() -> None:
    model = parallel_script()
    client = sync_client(model)
    messages: Any = [
        {"role": "user", "content": "Refund 8812?"},
        {"role": "tool", "tool_call_id": "call_0_0", "content": "found"},
    ]
    with client.chat.completions.stream(
        model="m", messages=messages, stream_options={"include_usage": True}
    ) as stream:
        for _event in stream:
            pass
        completion = stream.get_final_completion()
    calls = completion.choices[0].message.tool_calls or []
    # The SDK types tool_calls as function or custom calls; this script sends functions.
    functions = [call for call in calls if call.type == "function"]
    assert len(functions) == len(calls)
    assert [(call.function.name, call.function.arguments) for call in functions] == [
        ("credit_check", '{"customer": 42}'),
        ("stock_check", '{"sku": "A7"}'),
    ]
    assert completion.usage is not None
    messages += [{"role": "tool", "tool_call_id": "x", "content": "ok"}] * 2
    final = client.chat.completions.create(model="m", messages=messages)
    assert final.choices[0].message.content == "done: found; ok; ok"


def test_tool_outputs_that_match_no_turn_are_a_400_like_the_api() -> None:
    client = sync_client(parallel_script())
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="m", input=outputs("a", "b"))  # turn 1 wants 1 or 3
    assert refused.value.status_code == 400
    assert "2 tool outputs match no turn of the script" in str(refused.value)
