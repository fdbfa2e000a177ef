"""`reply(...)`: a model answer written in one line, served to the real SDK in a fork (issue 22).

A source is recorded from the local fake API; the fork's application then makes calls
the source never saw (another input, streaming, structured output, tools), each
answered by a supply patch that names no inputs and holds a `reply(...)`. The real
SDK, sync and async, must parse every resolved answer into the objects an application
uses: `output_text`, function calls with parsed arguments, `responses.parse`,
`responses.stream` and `chat.completions.stream` final objects, refusals. Zero
requests are sent: the client's transport refuses and counts them.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pydantic
import pytest

import toolreplay
from examples.local_openai import LocalOpenAI, refusing
from tests.adapters.support import async_client, sync_client
from toolreplay import PatchApplicationError, PatchError, PatchTargetError
from toolreplay.adapters.openai import instrument, reply

ROOT = Path(__file__).resolve().parents[2]
RESPONSES = "openai.responses.create"
CHAT = "openai.chat.completions.create"


class Decision(pydantic.BaseModel):
    decision: str
    reason: str


class Lookup(pydantic.BaseModel):
    order_id: int


LOOKUP_SCHEMA = {
    "type": "object",
    "properties": {"order_id": {"type": "integer"}},
    "required": ["order_id"],
    "additionalProperties": False,
}
RESPONSES_TOOLS: Any = [
    {"type": "function", "name": "lookup", "parameters": LOOKUP_SCHEMA, "strict": True}
]
CHAT_TOOLS: Any = [openai.pydantic_function_tool(Lookup, name="lookup")]
ASK: Any = [{"role": "user", "content": "What about order 8812?"}]
RECORDED_ASK: Any = [{"role": "user", "content": "A recorded question"}]
HELD = {"decision": "hold", "reason": "above the limit"}

# What each call of the application is answered with, in call order per endpoint.
RESPONSES_REPLIES = [
    reply(text="Held for review: the amount is above the limit."),
    reply(text="Streamed: held for review.", reasoning="The amount exceeds 1000."),
    reply(text=json.dumps(HELD)),
    reply(tool_calls=[("lookup", {"order_id": 8812}), ("lookup", {"order_id": 8813})]),
    reply(text="Looking it up.", tool_calls=[("lookup", {"order_id": 7})]),
    reply(refusal="I can't help with that."),
]
CHAT_REPLIES = [
    reply(text="Held for review."),
    reply(text="Streamed chat: held for review."),
    reply(text=json.dumps(HELD)),
    reply(tool_calls=[("lookup", {"order_id": 8812})]),
    reply(tool_calls=[{"name": "lookup", "arguments": '{"order_id": 9}'}]),
    reply(refusal="I won't."),
]
EXPECTED = {
    "responses.create": {
        "text": "Held for review: the amount is above the limit.",
        "model": "gpt-5-mini-2025-08-07",
        "items": ["message"],
    },
    "responses.create(stream=True)": {
        "types": [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ],
        "deltas": "Streamed: held for review.",
        "summary": "The amount exceeds 1000.",
        "final": "Streamed: held for review.",
    },
    "responses.stream(text_format)": {"parsed": HELD, "deltas": json.dumps(HELD)},
    "responses.parse(tools)": {
        "calls": [["lookup", {"order_id": 8812}], ["lookup", {"order_id": 8813}]]
    },
    "responses.stream(tools)": {
        "text": "Looking it up.",
        "calls": [["lookup", {"order_id": 7}]],
        "arguments": ['{"order_id":7}'],
    },
    "responses refusal": {"refusal": "I can't help with that."},
    "chat.completions.create": {"content": "Held for review.", "model": "gpt-4o-mini-2024-07-18"},
    "chat.completions.create(stream=True)": {
        "content": "Streamed chat: held for review.",
        "finish": "stop",
        "usage_chunks": 1,
    },
    "chat.completions.stream(response_format)": {"parsed": HELD},
    "chat.completions.parse(tools)": {
        "calls": [["lookup", {"order_id": 8812}]],
        "finish": "tool_calls",
    },
    "chat.completions.stream(tools)": {"calls": [["lookup", {"order_id": 9}]]},
    "chat refusal": {"refusal": "I won't."},
}


def sync_app(client: openai.OpenAI) -> dict[str, Any]:
    """Every way an application reads a model's answer, with the sync client."""
    seen: dict[str, Any] = {}
    r = client.responses.create(model="gpt-5-mini", input="Approve order 8812?")
    seen["responses.create"] = {
        "text": r.output_text,
        "model": r.model,
        "items": [item.type for item in r.output],
    }
    stream = client.responses.create(model="gpt-5-mini", input="And stream it?", stream=True)
    events = list(stream)
    seen["responses.create(stream=True)"] = _raw_response_events(events)
    with client.responses.stream(
        model="gpt-5-mini", input="Decide.", text_format=Decision
    ) as helper:
        deltas = "".join(e.delta for e in helper if e.type == "response.output_text.delta")
        parsed = helper.get_final_response().output_parsed
    assert parsed is not None
    seen["responses.stream(text_format)"] = {"parsed": parsed.model_dump(), "deltas": deltas}
    p = client.responses.parse(model="gpt-5-mini", input="Look both up.", tools=RESPONSES_TOOLS)
    seen["responses.parse(tools)"] = {"calls": _response_calls(p)}
    with client.responses.stream(
        model="gpt-5-mini", input="Look 7 up.", tools=RESPONSES_TOOLS
    ) as helper:
        arguments = [
            e.arguments for e in helper if e.type == "response.function_call_arguments.done"
        ]
        final = helper.get_final_response()
    seen["responses.stream(tools)"] = {
        "text": final.output_text,
        "calls": _response_calls(final),
        "arguments": arguments,
    }
    refused = client.responses.create(model="gpt-5-mini", input="Something bad.")
    seen["responses refusal"] = {"refusal": _refusal(refused)}

    c = client.chat.completions.create(model="gpt-4o-mini", messages=ASK)
    seen["chat.completions.create"] = {"content": c.choices[0].message.content, "model": c.model}
    chunks = list(
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=ASK,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    seen["chat.completions.create(stream=True)"] = _raw_chunks(chunks)
    with client.chat.completions.stream(
        model="gpt-4o-mini", messages=ASK, response_format=Decision
    ) as chat_stream:
        for _event in chat_stream:
            pass
        message = chat_stream.get_final_completion().choices[0].message
    assert message.parsed is not None
    seen["chat.completions.stream(response_format)"] = {"parsed": message.parsed.model_dump()}
    parsed_chat = client.chat.completions.parse(model="gpt-4o-mini", messages=ASK, tools=CHAT_TOOLS)
    seen["chat.completions.parse(tools)"] = {
        "calls": _chat_calls(parsed_chat),
        "finish": parsed_chat.choices[0].finish_reason,
    }
    with client.chat.completions.stream(model="gpt-4o-mini", messages=ASK, tools=CHAT_TOOLS) as s:
        for _event in s:
            pass
        seen["chat.completions.stream(tools)"] = {"calls": _chat_calls(s.get_final_completion())}
    chat_refused = client.chat.completions.create(model="gpt-4o-mini", messages=ASK)
    seen["chat refusal"] = {"refusal": chat_refused.choices[0].message.refusal}
    return seen


async def async_app(client: openai.AsyncOpenAI) -> dict[str, Any]:
    """`sync_app` with the async client."""
    seen: dict[str, Any] = {}
    r = await client.responses.create(model="gpt-5-mini", input="Approve order 8812?")
    seen["responses.create"] = {
        "text": r.output_text,
        "model": r.model,
        "items": [item.type for item in r.output],
    }
    stream = await client.responses.create(model="gpt-5-mini", input="And stream it?", stream=True)
    events = [event async for event in stream]
    seen["responses.create(stream=True)"] = _raw_response_events(events)
    async with client.responses.stream(
        model="gpt-5-mini", input="Decide.", text_format=Decision
    ) as helper:
        deltas = "".join([e.delta async for e in helper if e.type == "response.output_text.delta"])
        parsed = (await helper.get_final_response()).output_parsed
    assert parsed is not None
    seen["responses.stream(text_format)"] = {"parsed": parsed.model_dump(), "deltas": deltas}
    p = await client.responses.parse(
        model="gpt-5-mini", input="Look both up.", tools=RESPONSES_TOOLS
    )
    seen["responses.parse(tools)"] = {"calls": _response_calls(p)}
    async with client.responses.stream(
        model="gpt-5-mini", input="Look 7 up.", tools=RESPONSES_TOOLS
    ) as helper:
        arguments = [
            e.arguments async for e in helper if e.type == "response.function_call_arguments.done"
        ]
        final = await helper.get_final_response()
    seen["responses.stream(tools)"] = {
        "text": final.output_text,
        "calls": _response_calls(final),
        "arguments": arguments,
    }
    refused = await client.responses.create(model="gpt-5-mini", input="Something bad.")
    seen["responses refusal"] = {"refusal": _refusal(refused)}

    c = await client.chat.completions.create(model="gpt-4o-mini", messages=ASK)
    seen["chat.completions.create"] = {"content": c.choices[0].message.content, "model": c.model}
    raw = await client.chat.completions.create(
        model="gpt-4o-mini", messages=ASK, stream=True, stream_options={"include_usage": True}
    )
    seen["chat.completions.create(stream=True)"] = _raw_chunks([chunk async for chunk in raw])
    async with client.chat.completions.stream(
        model="gpt-4o-mini", messages=ASK, response_format=Decision
    ) as chat_stream:
        async for _event in chat_stream:
            pass
        message = (await chat_stream.get_final_completion()).choices[0].message
    assert message.parsed is not None
    seen["chat.completions.stream(response_format)"] = {"parsed": message.parsed.model_dump()}
    parsed_chat = await client.chat.completions.parse(
        model="gpt-4o-mini", messages=ASK, tools=CHAT_TOOLS
    )
    seen["chat.completions.parse(tools)"] = {
        "calls": _chat_calls(parsed_chat),
        "finish": parsed_chat.choices[0].finish_reason,
    }
    async with client.chat.completions.stream(
        model="gpt-4o-mini", messages=ASK, tools=CHAT_TOOLS
    ) as s:
        async for _event in s:
            pass
        seen["chat.completions.stream(tools)"] = {
            "calls": _chat_calls(await s.get_final_completion())
        }
    chat_refused = await client.chat.completions.create(model="gpt-4o-mini", messages=ASK)
    seen["chat refusal"] = {"refusal": chat_refused.choices[0].message.refusal}
    return seen


def _raw_response_events(events: list[Any]) -> dict[str, Any]:
    completed = events[-1]
    assert completed.type == "response.completed"
    types = [event.type for event in events]
    return {
        # The event kinds in stream order, a run of deltas shown once.
        "types": [kind for n, kind in enumerate(types) if n == 0 or types[n - 1] != kind],
        "deltas": "".join(e.delta for e in events if e.type == "response.output_text.delta"),
        "summary": "".join(
            e.delta for e in events if e.type == "response.reasoning_summary_text.delta"
        ),
        "final": completed.response.output_text,
    }


def _response_calls(response: Any) -> list[Any]:
    return [
        [item.name, item.parsed_arguments]
        for item in response.output
        if item.type == "function_call"
    ]


def _refusal(response: Any) -> str:
    (message,) = response.output
    (part,) = message.content
    assert part.type == "refusal"
    return part.refusal


def _raw_chunks(chunks: list[Any]) -> dict[str, Any]:
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finish = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    return {
        "content": content,
        "finish": finish[0],
        "usage_chunks": sum(1 for c in chunks if c.usage is not None),
    }


def _chat_calls(completion: Any) -> list[Any]:
    calls = completion.choices[0].message.tool_calls or []
    return [
        [
            call.function.name,
            call.function.parsed_arguments.model_dump()
            if isinstance(call.function.parsed_arguments, pydantic.BaseModel)
            else json.loads(call.function.arguments),
        ]
        for call in calls
    ]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A recording with one answer of each endpoint: the templates for ids, model, usage."""
    path = tmp_path / "source.trp"
    with toolreplay.record(path):
        client = instrument(sync_client(LocalOpenAI("approve")))
        client.responses.create(model="gpt-5-mini", input="A recorded question")
        client.chat.completions.create(model="gpt-4o-mini", messages=RECORDED_ASK)
    return path


def patches() -> list[toolreplay.Patch]:
    return [
        *(toolreplay.supply_output(effect=RESPONSES, value=answer) for answer in RESPONSES_REPLIES),
        *(toolreplay.supply_output(effect=CHAT, value=answer) for answer in CHAT_REPLIES),
    ]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_sdk_parses_every_reply_into_what_the_application_reads(
    mode: str, source: Path, tmp_path: Path
) -> None:
    sent: list[Any] = []
    branch = tmp_path / "branch.trp"
    # Every call is one the source never saw: each takes the next reply of its endpoint.
    with toolreplay.fork(source, branch, patches=patches(), unobserved="allow") as session:
        if mode == "sync":
            seen = sync_app(instrument(sync_client(refusing(sent))))
        else:
            seen = asyncio.run(async_app(instrument(async_client(refusing(sent)))))
    assert sent == []
    assert session.patched_count == 12
    assert seen == EXPECTED

    # The branch keeps each resolved answer; replaying it gives the application the same.
    with toolreplay.replay(branch):
        if mode == "sync":
            again = sync_app(instrument(sync_client(refusing(sent))))
        else:
            again = asyncio.run(async_app(instrument(async_client(refusing(sent)))))
    assert again == EXPECTED
    assert sent == []


def test_a_reply_takes_ids_model_and_usage_from_the_nearest_recorded_answer(
    source: Path, tmp_path: Path
) -> None:
    answer = toolreplay.supply_output(effect=RESPONSES, value=RESPONSES_REPLIES[0])
    outputs = []
    for attempt in range(2):
        branch = tmp_path / f"branch-{attempt}.trp"
        with toolreplay.fork(source, branch, patches=[answer], unobserved="allow"):
            client = instrument(sync_client(refusing()))
            response = client.responses.create(model="gpt-5-mini", input="Another question")
        (operation,) = toolreplay.read_trace(branch).operations
        outputs.append(operation.outcome)
        assert response.output_text == "Held for review: the amount is above the limit."
        assert response.model == "gpt-5-mini-2025-08-07"  # the recorded answer's
        assert response.id.startswith("resp_")
        assert len(response.id) == len("resp_") + 48
        assert response.id != "resp_0c4e6b1f2a9d7e3b0068a1f3c2d4e5f6"
        assert response.usage is not None
        assert response.usage.input_tokens == 58  # the recorded answer's input
        assert response.usage.output_tokens == 12  # 47 characters, ~4 per token
        assert response.usage.total_tokens == 70
        assert response.created_at == 1767225600
        assert response._request_id is not None  # pyright: ignore[reportPrivateUsage]  # what the SDK exposes
    assert outputs[0] == outputs[1]  # the same patch on the same call: the same answer

    # A source with no answer of the endpoint: the requested model and plain defaults.
    chat_only = tmp_path / "chat-only.trp"
    with toolreplay.record(chat_only):
        instrument(sync_client(LocalOpenAI())).chat.completions.create(
            model="gpt-4o-mini", messages=ASK
        )
    exact = reply(text="ok")
    given = reply(text="ok", input_tokens=5, output_tokens=1, model="my-model")
    with toolreplay.fork(
        chat_only,
        tmp_path / "defaults.trp",
        patches=[
            toolreplay.supply_output(effect=RESPONSES, value=exact),
            toolreplay.supply_output(effect=RESPONSES, value=given),
        ],
        unobserved="allow",
    ):
        client = instrument(sync_client(refusing()))
        plain = client.responses.create(model="gpt-5-mini", input="x", instructions="Be brief.")
        chosen = client.responses.create(model="gpt-5-mini", input="y")
    assert (plain.model, plain.created_at, plain.instructions) == ("gpt-5-mini", 0, "Be brief.")
    assert plain.output_text == "ok"
    assert chosen.model == "my-model"
    assert chosen.usage is not None
    assert (chosen.usage.input_tokens, chosen.usage.output_tokens) == (5, 1)


def test_replies_that_do_not_fit_are_refused_precisely(source: Path, tmp_path: Path) -> None:
    with pytest.raises(PatchError, match=r"give the answer: text=, tool_calls= or refusal="):
        reply()
    with pytest.raises(PatchError, match="a refusal is the whole answer"):
        reply(text="yes", refusal="no")
    with pytest.raises(PatchError, match=r"arguments of lookup must be a JSON object"):
        reply(tool_calls=[("lookup", "[1, 2]")])
    with pytest.raises(PatchError, match=r"arguments of lookup are not JSON"):
        reply(tool_calls=[("lookup", "{order_id: 1}")])
    with pytest.raises(PatchError, match=r"tool_calls\[0\] is \(name, arguments\)"):
        reply(tool_calls=["lookup"])  # pyright: ignore[reportArgumentType]  # refused at run time
    with pytest.raises(PatchError, match="input_tokens must be a non-negative int"):
        reply(text="x", input_tokens=-1)

    # Not a model endpoint: refused when the fork opens, before the application runs.
    embedding = toolreplay.supply_output(effect="openai.embeddings.create", value=reply(text="x"))
    with pytest.raises(PatchTargetError) as caught:
        with toolreplay.fork(source, tmp_path / "refused.trp", patches=[embedding]):
            pytest.fail("the application must not run")
    assert "reply(...) answers openai.responses.create and openai.chat.completions.create" in str(
        caught.value
    )
    assert "openai.embeddings.create is another endpoint" in str(caught.value)
    assert not (tmp_path / "refused.trp").exists()

    # A hand-written patch file entry is checked by the adapter too.
    patch_file = tmp_path / "bad.json"
    patch_file.write_text(
        json.dumps(
            {
                "format": "toolreplay.patches",
                "format_version": 3,
                "patches": [{"kind": "supply_output", "effect": RESPONSES, "reply": {"txt": "hi"}}],
            }
        )
    )
    with pytest.raises(PatchTargetError, match=r"unknown keys txt \(a reply has text, refusal"):
        with toolreplay.fork(
            source, tmp_path / "bad.trp", patches=toolreplay.read_patches(patch_file)
        ):
            pytest.fail("the application must not run")

    # What depends on the request is refused when the call comes, naming what does not fit.
    def refused(answer: toolreplay.OutputRecipe, effect: str, call: Any) -> str:
        patch = toolreplay.supply_output(effect=effect, value=answer)
        with (
            pytest.raises(PatchApplicationError) as caught,
            toolreplay.fork(source, tmp_path / "late.trp", patches=[patch], unobserved="allow"),
        ):
            call(instrument(sync_client(refusing())))
        (tmp_path / "late.trp").unlink()
        return str(caught.value)

    message = refused(
        reply(tool_calls=[("refund", {"order_id": 1})]),
        RESPONSES,
        lambda c: c.responses.create(model="gpt-5-mini", input="x", tools=RESPONSES_TOOLS),
    )
    assert (
        "calls the tool 'refund', which this request does not offer (its tools: lookup)" in message
    )
    message = refused(
        reply(text="not json"),
        RESPONSES,
        lambda c: c.responses.parse(model="gpt-5-mini", input="x", text_format=Decision),
    )
    assert "asks for a JSON answer (structured output), and the reply's text is not JSON" in message
    message = refused(
        reply(text="x", reasoning="because"),
        CHAT,
        lambda c: c.chat.completions.create(model="gpt-4o-mini", messages=ASK),
    )
    assert "reasoning summaries are a Responses API output" in message
    message = refused(
        reply(text="x"),
        CHAT,
        lambda c: c.chat.completions.create(model="gpt-4o-mini", messages=ASK, n=2),
    )
    assert "asks for n=2 choices; a reply writes one answer" in message


def test_a_reply_is_scanned_for_secrets_like_a_recording(source: Path, tmp_path: Path) -> None:
    leaked = reply(text="Use the key sk-proj-" + "A1b2C3d4E5f6G7h8J9k0L1m2N3")
    patch = toolreplay.supply_output(effect=RESPONSES, value=leaked)
    branch = tmp_path / "branch.trp"
    with (
        pytest.raises(
            toolreplay.SecretInTraceError,
            match=r"output at \$\.body\.output\[0\]\.content\[0\]\.text: openai-api-key",
        ),
        toolreplay.fork(source, branch, patches=[patch], unobserved="allow"),
    ):
        instrument(sync_client(refusing())).responses.create(model="gpt-5-mini", input="x")
    assert "sk-proj-" not in branch.read_text()


def test_the_command_line_forks_with_a_reply_from_a_patch_file(tmp_path: Path) -> None:
    (tmp_path / "asker.py").write_text(
        "from pathlib import Path\n"
        "import openai\n"
        "from examples.local_openai import HTTP, LocalOpenAI\n"
        "from toolreplay.adapters.openai import instrument\n"
        "def main():\n"
        "    api = LocalOpenAI('approve')  # reached only while recording\n"
        "    http = HTTP.Client(transport=HTTP.MockTransport(api))\n"
        "    client = instrument(openai.OpenAI(api_key='sk-local', http_client=http))\n"
        "    question = Path('question.txt').read_text()\n"
        "    return client.responses.create(model='gpt-5-mini', input=question).output_text\n"
    )
    (tmp_path / "question.txt").write_text("Refund order 8812?")
    recorded = run_cli("record", "-r", "asker:main", "-o", "asked.trp", "-f", "json", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert json.loads(recorded.stdout)["return_value"] == "approve"

    (tmp_path / "question.txt").write_text("Refund order 8812, which was lost?")
    answer = toolreplay.supply_output(effect=RESPONSES, value=reply(text="Yes: it was lost."))
    patch_file = toolreplay.write_patches(tmp_path / "reply.json", [answer])
    entry = json.loads(patch_file.read_text())["patches"][0]
    assert entry == {
        "kind": "supply_output",
        "effect": RESPONSES,
        "reply": {"text": "Yes: it was lost."},
        "patch_id": answer.patch_id,
    }
    forked = run_cli(
        "fork", "asked.trp", "-p", "reply.json", "-o", "lost.trp", "--allow-unobserved",
        "-f", "json", cwd=tmp_path,
    )  # fmt: skip
    assert forked.returncode == 0, forked.stdout + forked.stderr
    assert json.loads(forked.stdout)["return_value"] == "Yes: it was lost."
    (operation,) = toolreplay.read_trace(tmp_path / "lost.trp").operations
    assert (operation.origin, operation.patch_id) == ("supplied", answer.patch_id)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    environment["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
