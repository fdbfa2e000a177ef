"""Editing a streamed answer: deltas, `*.done` events and the final response agree (issue 22).

A recorded stream is patched with `edit({path: value})` (a path into the final
response the SDK accumulates); in the fork the real SDK, sync and async, must
accumulate exactly the edited object: the text it builds from the deltas, the done
events and the final response (`get_final_response`, `get_final_completion`) all
hold the patched value.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import openai
import pytest

import toolreplay
from examples.local_openai import LocalOpenAI, refusing
from examples.local_openai.scripted import ScriptedModel, ToolCall
from tests.adapters.support import async_client, sync_client
from toolreplay import PatchError, PatchTargetError
from toolreplay.adapters.openai import edit, edited_output, final_response, instrument, reply
from toolreplay.adapters.openai.streams import apply_edits

ASK: Any = [{"role": "user", "content": "Refund order 8812?"}]
LOOKUP: Any = {
    "type": "object",
    "properties": {"order_id": {"type": "integer"}},
    "required": ["order_id"],
    "additionalProperties": False,
}
TOOLS: Any = [{"type": "function", "name": "lookup", "parameters": LOOKUP, "strict": True}]
# Strict: openai 2.x's chat.completions.stream parses only strict tools.
CHAT_TOOLS: Any = [
    {"type": "function", "function": {"name": "lookup", "parameters": LOOKUP, "strict": True}}
]
RECORDED_TEXT = "Approved: the refund of 1200 dollars is on its way today."
CHAT_TEXT = "Yes, we will refund the whole order right away."
NEW_TEXT = "Held for review: refunds above 1000 dollars need a second look."
NEW_CHAT = "No refund yet."


def sync_app(client: openai.OpenAI) -> dict[str, Any]:
    """Read a streamed Responses answer and a streamed Chat Completions answer."""
    with client.responses.stream(model="gpt-5-mini", input="Refund order 8812?") as stream:
        events = list(stream)
        response = stream.get_final_response()
    with client.chat.completions.stream(model="gpt-4o-mini", messages=ASK) as chat_stream:
        chunks = list(chat_stream)
        completion = chat_stream.get_final_completion()
    return _seen(events, response, chunks, completion)


async def async_app(client: openai.AsyncOpenAI) -> dict[str, Any]:
    async with client.responses.stream(model="gpt-5-mini", input="Refund order 8812?") as stream:
        events = [event async for event in stream]
        response = await stream.get_final_response()
    async with client.chat.completions.stream(model="gpt-4o-mini", messages=ASK) as chat_stream:
        chunks = [chunk async for chunk in chat_stream]
        completion = await chat_stream.get_final_completion()
    return _seen(events, response, chunks, completion)


def _seen(events: list[Any], response: Any, chunks: list[Any], completion: Any) -> dict[str, Any]:
    return {
        "deltas": "".join(e.delta for e in events if e.type == "response.output_text.delta"),
        "done": [e.text for e in events if e.type == "response.output_text.done"],
        "parts": [e.part.text for e in events if e.type == "response.content_part.done"],
        "items": [e.item.content[0].text for e in events if e.type == "response.output_item.done"],
        "output_text": response.output_text,
        "response": response.to_dict(),
        "chat_deltas": "".join(e.delta for e in chunks if e.type == "content.delta"),
        "chat_done": [e.content for e in chunks if e.type == "content.done"],
        "content": completion.choices[0].message.content,
        "completion": completion.to_dict(),
    }


def same_as(accumulated: Any, edited: Any) -> bool:
    """The SDK's object holds every value of `edited`; what it adds are its own empty fields."""
    if isinstance(edited, dict) and isinstance(accumulated, dict):
        extra = accumulated.keys() - edited.keys()
        return all(accumulated[k] is None or k == "parsed" for k in extra) and all(
            k in accumulated and same_as(accumulated[k], v) for k, v in edited.items()
        )
    if isinstance(edited, list) and isinstance(accumulated, list):
        return len(edited) == len(accumulated) and all(
            same_as(a, e) for a, e in zip(accumulated, edited, strict=True)
        )
    return accumulated == edited


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source.trp"
    api = LocalOpenAI(RECORDED_TEXT, deltas=7, chat_texts=(CHAT_TEXT,))
    with toolreplay.record(path):
        recorded = sync_app(instrument(sync_client(api)))
    assert recorded["deltas"] == RECORDED_TEXT
    assert recorded["content"] == CHAT_TEXT
    return path


EDITS = {
    0: {"$.output[0].content[0].text": NEW_TEXT},
    1: {"$.choices[0].message.content": NEW_CHAT},
}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_edited_stream_accumulates_to_the_edited_answer(
    mode: str, source: Path, tmp_path: Path
) -> None:
    patches = [toolreplay.replace_output(at=n, value=edit(e)) for n, e in EDITS.items()]
    branch = tmp_path / "branch.trp"
    sent: list[Any] = []
    with toolreplay.fork(source, branch, patches=patches):
        if mode == "sync":
            seen = sync_app(instrument(sync_client(refusing(sent))))
        else:
            seen = asyncio.run(async_app(instrument(async_client(refusing(sent)))))
    assert sent == []
    # Every view the SDK gives of the Responses stream holds the new text...
    assert seen["deltas"] == NEW_TEXT
    assert seen["done"] == seen["parts"] == seen["items"] == [NEW_TEXT]
    assert seen["output_text"] == NEW_TEXT
    # ...and so does every view of the Chat Completions stream.
    assert seen["chat_deltas"] == NEW_CHAT
    assert seen["chat_done"] == [NEW_CHAT]
    assert seen["content"] == NEW_CHAT
    # The accumulated final objects are the recorded ones with the edit applied.
    operations = toolreplay.read_trace(source).operations
    for number, accumulated in ((0, seen["response"]), (1, seen["completion"])):
        recorded = operations[number].outcome
        assert isinstance(recorded, toolreplay.Returned)
        recorded_final = final_response(recorded.value)  # type: ignore[arg-type]  # an adapter output
        assert recorded_final is not None
        assert same_as(accumulated, apply_edits(recorded_final, EDITS[number]))

    # The diff shows the changed deltas, credited to the patches.
    report = toolreplay.diff(source, branch)
    assert [(d.type, d.patch_id) for d in report.differences] == [
        ("output_changed", patches[0].patch_id),
        ("output_changed", patches[1].patch_id),
    ]


def test_unchanged_text_keeps_its_deltas_and_a_new_text_gets_one(
    source: Path, tmp_path: Path
) -> None:
    recorded = toolreplay.read_trace(source).operations[0].outcome
    assert isinstance(recorded, toolreplay.Returned)
    output: Any = recorded.value
    ending = RECORDED_TEXT.replace("today.", "today!")
    edited = edited_output(output, {"$.output[0].content[0].text": ending})
    deltas = lambda o: [  # noqa: E731
        e["data"]["delta"] for e in o["events"] if e["event"] == "response.output_text.delta"
    ]
    before, after = deltas(output), deltas(edited)
    assert len(before) == len(after) == 7
    assert after[:-1] == before[:-1]  # only the end changed: only the last delta differs
    assert "".join(after) == ending
    assert output == recorded.value  # the recorded output is not changed

    # An answer that streamed no text (a function call only) gets a delta for new text.
    branch = tmp_path / "silent.trp"
    silent = toolreplay.supply_output(
        effect="openai.responses.create",
        value=reply(text="", tool_calls=[("lookup", {"order_id": 1})]),
    )
    with toolreplay.fork(source, branch, patches=[silent], unobserved="allow"):
        with instrument(sync_client(refusing())).responses.stream(
            model="gpt-5-mini", input="other", tools=TOOLS
        ) as stream:
            list(stream)
    patch = toolreplay.replace_output(at=0, value=edit({"$.output[0].content[0].text": "Looking."}))
    with toolreplay.fork(branch, tmp_path / "spoken.trp", patches=[patch]):
        with instrument(sync_client(refusing())).responses.stream(
            model="gpt-5-mini", input="other", tools=TOOLS
        ) as stream:
            events = list(stream)
            final = stream.get_final_response()
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == ["Looking."]
    assert final.output_text == "Looking."
    numbers = [e.sequence_number for e in events]
    assert numbers == list(range(len(events)))  # renumbered around the inserted delta


def _arguments(response: Any) -> str:
    """The arguments of a response's one function call."""
    (call,) = [item for item in response.output if item.type == "function_call"]
    return call.arguments


def scripted() -> ScriptedModel:
    return ScriptedModel(
        turns=[[ToolCall("lookup", {"order_id": 8812})]], final_text=lambda outputs: "done"
    )


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_edited_tool_call_arguments_stream_consistently(mode: str, tmp_path: Path) -> None:
    source = tmp_path / "calls.trp"

    def sync_calls(client: openai.OpenAI) -> tuple[Any, ...]:
        with client.responses.stream(model="gpt-5-mini", input="Look up", tools=TOOLS) as s:
            args = "".join(e.delta for e in s if e.type == "response.function_call_arguments.delta")
            response = s.get_final_response()
        with client.chat.completions.stream(
            model="gpt-4o-mini", messages=ASK, tools=CHAT_TOOLS
        ) as c:
            chat_args = "".join(
                e.arguments_delta for e in c if e.type == "tool_calls.function.arguments.delta"
            )
            completion = c.get_final_completion()
        return args, _arguments(response), chat_args, completion

    async def async_calls(client: openai.AsyncOpenAI) -> tuple[Any, ...]:
        async with client.responses.stream(model="gpt-5-mini", input="Look up", tools=TOOLS) as s:
            args = "".join(
                [e.delta async for e in s if e.type == "response.function_call_arguments.delta"]
            )
            response = await s.get_final_response()
        async with client.chat.completions.stream(
            model="gpt-4o-mini", messages=ASK, tools=CHAT_TOOLS
        ) as c:
            chat_args = "".join(
                [
                    e.arguments_delta
                    async for e in c
                    if e.type == "tool_calls.function.arguments.delta"
                ]
            )
            completion = await c.get_final_completion()
        return args, _arguments(response), chat_args, completion

    with toolreplay.record(source):
        sync_calls(instrument(sync_client(scripted())))
    new_arguments = json.dumps({"order_id": 9999, "reason": "customer asked twice"})
    patches = [
        toolreplay.replace_output(at=0, value=edit({"$.output[0].arguments": new_arguments})),
        toolreplay.replace_output(
            at=1,
            value=edit(
                {
                    "$.choices[0].message.tool_calls[0].function.arguments": new_arguments,
                    "$.choices[0].message.content": "Checking the order.",
                }
            ),
        ),
    ]
    with toolreplay.fork(source, tmp_path / "branch.trp", patches=patches):
        if mode == "sync":
            seen = sync_calls(instrument(sync_client(refusing())))
        else:
            seen = asyncio.run(async_calls(instrument(async_client(refusing()))))
    args, final_args, chat_args, completion = seen
    assert args == final_args == chat_args == new_arguments
    message = completion.choices[0].message
    assert message.tool_calls[0].function.arguments == new_arguments
    assert message.content == "Checking the order."  # a chunk was added for it


def test_edits_the_events_cannot_carry_are_refused_precisely(source: Path, tmp_path: Path) -> None:
    output: Any = toolreplay.read_trace(source).operations[0].outcome.value  # type: ignore[union-attr]  # a recorded answer
    chat: Any = toolreplay.read_trace(source).operations[1].outcome.value  # type: ignore[union-attr]

    def refused(recorded: Any, edits: dict[str, Any]) -> str:
        with pytest.raises(PatchError) as caught:
            edited_output(recorded, edits)
        return str(caught.value)

    message = refused(output, {"$.output[1].content[0].text": "x"})
    assert "edit path $.output[1].content[0].text selects nothing in the recorded answer" in message
    assert "This answer's texts are at $.output[0].content[0].text" in message
    assert "cannot add or remove output items" in refused(output, {"$.output": []})
    assert "an output item's id cannot change" in refused(output, {"$.output[0].id": "msg_x"})
    assert "the response id ties its events together" in refused(output, {"$.id": "resp_x"})
    assert "only the text of this part is streamed" in refused(
        output, {"$.output[0].content[0].annotations": [{"type": "x"}]}
    )
    assert "this stream carried no usage" in refused(chat, {"$.usage": {"total_tokens": 1}})
    assert "edit path 'output', at character 1: a path starts with '$'" in refused(
        output, {"output": 1}
    )
    # A top-level field is set wherever the stream states it.
    renamed: Any = edited_output(output, {"$.model": "gpt-5"})
    models = [e["data"]["response"]["model"] for e in renamed["events"] if "response" in e["data"]]
    assert models == ["gpt-5", "gpt-5", "gpt-5"]

    with pytest.raises(PatchError, match=r"edit\(\.\.\.\) changes a recorded output"):
        toolreplay.supply_output(effect="openai.responses.create", value=edit({"$.x": 1}))
    with pytest.raises(PatchError, match="a non-empty mapping of JSON paths"):
        edit({})
    bad = toolreplay.replace_output(at=0, value=edit({"$.output[3].content[0].text": "x"}))
    with pytest.raises(PatchTargetError, match="selects nothing"):  # before the app runs
        with toolreplay.fork(source, tmp_path / "bad.trp", patches=[bad]):
            pytest.fail("the application must not run")
