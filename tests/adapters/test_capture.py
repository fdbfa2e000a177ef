"""Every request of an instrumented client is an effect, recorded and replayed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from examples.local_openai import LocalOpenAI, function_call_item, refusing, response_body
from tests.adapters.support import async_client, sync_client
from toolreplay.adapters.openai import InstrumentedAsyncOpenAI, InstrumentedOpenAI, instrument

TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "get_order",
        "description": "Look an order up.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
            "additionalProperties": False,
        },
        "strict": True,
    }
]
CALL = function_call_item("get_order", {"order_id": "ord_1042"})


def application(client: InstrumentedOpenAI) -> list[Any]:
    """Calls a real application makes: tools, list input, chat, embeddings, models."""
    first = client.responses.create(
        model="gpt-5-mini",
        instructions="You decide refunds.",
        input=[{"role": "user", "content": "Refund order ord_1042?"}],
        tools=TOOLS,
        tool_choice="auto",
        parallel_tool_calls=False,
        store=False,
        temperature=0.2,
        extra_body={"metadata": {"ticket": "T-7"}},
    )
    call = first.output[0]
    assert call.type == "function_call"
    second = client.responses.create(
        model="gpt-5-mini",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "{}"}],
        text={"format": {"type": "text"}},
    )
    chat = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], temperature=0
    )
    embeddings = client.embeddings.create(model="text-embedding-3-small", input=["a", "b"])
    models = client.models.list()
    return [first, second, chat, embeddings, [model.id for model in models]]


def test_record_then_replay_returns_what_the_sdk_parsed_and_sends_nothing(tmp_path: Path) -> None:
    trace = tmp_path / "app.trp"
    api = LocalOpenAI(response_body(output=[CALL]), "approve", chat_texts=("hello",))
    with toolreplay.record(trace):
        recorded = application(instrument(sync_client(api)))
    assert api.calls == 5

    effects = [op.effect for op in toolreplay.read_trace(trace).operations]
    assert effects == [
        "openai.responses.create",
        "openai.responses.create",
        "openai.chat.completions.create",
        "openai.embeddings.create",
        "openai.models.list",
    ]
    first = toolreplay.read_trace(trace).operations[0]
    assert first.inputs["method"] == "POST"
    assert first.inputs["path"] == "/responses"
    body = first.inputs["body"]
    assert isinstance(body, dict)
    assert body["tools"] == TOOLS  # any request field, as sent
    assert body["metadata"] == {"ticket": "T-7"}  # extra_body too

    sent: list[Any] = []
    with toolreplay.replay(trace):
        replayed = application(instrument(sync_client(refusing(sent))))
    assert sent == []
    assert replayed == recorded
    assert replayed[0].output[0].arguments == CALL["arguments"]


def test_async_replay_matches_a_sync_recording(tmp_path: Path) -> None:
    trace = tmp_path / "app.trp"
    with toolreplay.record(trace):
        recorded = instrument(sync_client(LocalOpenAI("approve"))).responses.create(
            model="gpt-5-mini", input="Refund?"
        )

    async def replay() -> Any:
        client: InstrumentedAsyncOpenAI = instrument(async_client(refusing(sent)))
        with toolreplay.replay(trace):
            return await client.responses.create(model="gpt-5-mini", input="Refund?")

    sent: list[Any] = []
    replayed = asyncio.run(replay())
    assert sent == []
    assert replayed == recorded
    assert replayed._request_id == recorded._request_id  # pyright: ignore[reportPrivateUsage]


def stream_events(client: InstrumentedOpenAI) -> list[Any]:
    events = list(client.responses.create(model="gpt-5-mini", input="Refund?", stream=True))
    chunks = list(
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    )
    with client.responses.stream(model="gpt-5-mini", input="Refund?") as stream:
        helper = [*stream]
        final = stream.get_final_response()
    return [events, chunks, helper, final]


@pytest.mark.parametrize("deltas", [1, 42])
def test_streams_replay_as_the_same_events(tmp_path: Path, deltas: int) -> None:
    trace = tmp_path / "stream.trp"
    api = LocalOpenAI("manual review needed", chat_texts=("manual review",), deltas=deltas)
    with toolreplay.record(trace):
        recorded = stream_events(instrument(sync_client(api)))
    operations = toolreplay.read_trace(trace).operations
    assert len(operations) == 3
    outcome = operations[0].outcome
    assert isinstance(outcome, toolreplay.Returned)
    assert isinstance(outcome.value, dict)
    assert isinstance(outcome.value["events"], list)
    assert len(outcome.value["events"]) == deltas + 8

    sent: list[Any] = []
    with toolreplay.replay(trace):
        replayed = stream_events(instrument(sync_client(refusing(sent))))
    assert sent == []
    assert replayed == recorded
    assert recorded[3].output_text == "manual review needed"


def test_async_streams_replay_as_the_same_events(tmp_path: Path) -> None:
    trace = tmp_path / "stream.trp"

    async def run(client: InstrumentedAsyncOpenAI) -> list[Any]:
        stream = await client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)
        events = [event async for event in stream]
        async with client.responses.stream(model="gpt-5-mini", input="Refund?") as helper:
            async for _ in helper:
                pass
            final = await helper.get_final_response()
        return [events, final]

    with toolreplay.record(trace):
        recorded = asyncio.run(run(instrument(async_client(LocalOpenAI("approve", deltas=5)))))
    sent: list[Any] = []
    with toolreplay.replay(trace):
        replayed = asyncio.run(run(instrument(async_client(refusing(sent)))))
    assert sent == []
    assert replayed == recorded
