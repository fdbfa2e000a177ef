"""The Anthropic adapter: `toolreplay.adapters.anthropic.instrument(client)` (RFC 0006 Part IV).

Real `Anthropic` and `AsyncAnthropic` clients against a local fake of the API served
over loopback (`examples/local_anthropic`): Messages with tool use and extended
thinking, `messages.stream` with its named events, a raw event stream, token counting,
message batches and their JSON-lines results, models, a beta resource, errors of every
status, a retry. Replay points the clients at a server that counts connections, with the
network guard open, so a request that leaked would be counted.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import anthropic
import httpx2
import pytest

import toolreplay
from examples.local_anthropic import (
    API_KEY,
    BATCH_ID,
    DATED_MODEL,
    MODEL,
    ORGANIZATION,
    LocalAnthropic,
    sse,
)
from tests.adapters.http_api import served
from tests.support.counting_server import CountingServer
from toolreplay.adapters.anthropic import edit, final_message, instrument, reply
from toolreplay.errors import PatchError

ROOT = Path(__file__).resolve().parents[2]
TOOLS: Any = [
    {
        "name": "issue_refund",
        "description": "Refund an order.",
        "input_schema": {
            "type": "object",
            "properties": {"order_id": {"type": "integer"}, "reason": {"type": "string"}},
        },
    }
]
ASK: Any = [{"role": "user", "content": "Refund order 8812, it was lost."}]
THINKING: Any = {"type": "enabled", "budget_tokens": 1024}
BETA = "token-efficient-tools-2025-02-19"


def _answered(tool_use: Any) -> Any:
    """The conversation after the tool ran: the assistant's turn, then the tool's result."""
    return [
        *ASK,
        {"role": "assistant", "content": [tool_use]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": tool_use["id"], "content": "refunded"}
            ],
        },
    ]


def _stream_seen(events: list[Any], final: Any) -> dict[str, Any]:
    return {
        "events": [event.type for event in events],
        "text": "".join(event.text for event in events if event.type == "text"),
        "thinking": "".join(event.thinking for event in events if event.type == "thinking"),
        "signature": [event.signature for event in events if event.type == "signature"],
        "input_json": [event.snapshot for event in events if event.type == "input_json"][-1],
        "final": final.to_dict(),
    }


def sync_app(client: Any) -> dict[str, Any]:
    """An application on the Anthropic SDK using every kind of endpoint."""
    seen: dict[str, Any] = {}
    first = client.messages.create(
        model=MODEL, max_tokens=2048, messages=ASK, tools=TOOLS, thinking=THINKING
    )
    tool_use = first.content[-1].to_dict()
    second = client.messages.create(
        model=MODEL, max_tokens=512, messages=_answered(tool_use), tools=TOOLS
    )
    seen["create"] = [first.to_dict(), second.to_dict(), first._request_id]
    with client.messages.stream(
        model=MODEL, max_tokens=2048, messages=ASK, tools=TOOLS, thinking=THINKING
    ) as stream:
        events = list(stream)
        seen["stream"] = _stream_seen(events, stream.get_final_message())
    raw = client.messages.create(model=MODEL, max_tokens=64, messages=ASK, stream=True)
    seen["raw"] = [event.to_dict() for event in raw]
    seen["count"] = client.messages.count_tokens(model=MODEL, messages=ASK).input_tokens
    batches = client.messages.batches
    created = batches.create(
        requests=[
            {
                "custom_id": "order-8812",
                "params": {"model": MODEL, "max_tokens": 64, "messages": ASK},
            }
        ]
    )
    seen["batches"] = [
        created.processing_status,
        batches.retrieve(BATCH_ID).processing_status,
        [batch.id for batch in batches.list().data],
        batches.cancel(BATCH_ID).processing_status,
        [line.to_dict() for line in batches.results(BATCH_ID)],
    ]
    seen["models"] = [
        [m.id for m in client.models.list().data],
        client.models.retrieve(DATED_MODEL).display_name,
    ]
    beta = client.beta.messages.create(model=MODEL, max_tokens=64, messages=ASK, betas=[BETA])
    seen["beta"] = beta.to_dict()
    return seen


async def async_app(client: Any) -> dict[str, Any]:
    """The same application on `AsyncAnthropic`."""
    seen: dict[str, Any] = {}
    first = await client.messages.create(
        model=MODEL, max_tokens=2048, messages=ASK, tools=TOOLS, thinking=THINKING
    )
    tool_use = first.content[-1].to_dict()
    second = await client.messages.create(
        model=MODEL, max_tokens=512, messages=_answered(tool_use), tools=TOOLS
    )
    seen["create"] = [first.to_dict(), second.to_dict(), first._request_id]
    async with client.messages.stream(
        model=MODEL, max_tokens=2048, messages=ASK, tools=TOOLS, thinking=THINKING
    ) as stream:
        events = [event async for event in stream]
        seen["stream"] = _stream_seen(events, await stream.get_final_message())
    raw = await client.messages.create(model=MODEL, max_tokens=64, messages=ASK, stream=True)
    seen["raw"] = [event.to_dict() async for event in raw]
    seen["count"] = (await client.messages.count_tokens(model=MODEL, messages=ASK)).input_tokens
    batches = client.messages.batches
    created = await batches.create(
        requests=[
            {
                "custom_id": "order-8812",
                "params": {"model": MODEL, "max_tokens": 64, "messages": ASK},
            }
        ]
    )
    seen["batches"] = [
        created.processing_status,
        (await batches.retrieve(BATCH_ID)).processing_status,
        [batch.id for batch in (await batches.list()).data],
        (await batches.cancel(BATCH_ID)).processing_status,
        [line.to_dict() async for line in await batches.results(BATCH_ID)],
    ]
    models = (await client.models.list()).data
    seen["models"] = [
        [m.id for m in models],
        (await client.models.retrieve(DATED_MODEL)).display_name,
    ]
    beta = await client.beta.messages.create(model=MODEL, max_tokens=64, messages=ASK, betas=[BETA])
    seen["beta"] = beta.to_dict()
    return seen


def client_for(mode: str, base_url: str, **options: Any) -> Any:
    """An instrumented client of `base_url` (`served`'s URL: the SDK adds `/v1` itself)."""
    kind = anthropic.Anthropic if mode == "sync" else anthropic.AsyncAnthropic
    url = base_url.removesuffix("/v1")
    return instrument(kind(api_key=API_KEY, base_url=url, **options))


def run(mode: str, base_url: str) -> dict[str, Any]:
    if mode == "sync":
        return sync_app(client_for(mode, base_url))
    return asyncio.run(async_app(client_for(mode, base_url)))


def replay_offline(path: Path, app: Any) -> Any:
    """`app(base_url)` under replay of `path`, pointed at a server that counts connections
    (the network guard open): returns what it returned, having connected nowhere."""
    server = CountingServer()
    try:
        with toolreplay.replay(path, network="allow"):
            seen = app(server.url.removesuffix("/"))
    finally:
        server.close()
    assert server.accepted == 0
    return seen


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_every_endpoint_records_and_replays_with_the_sdks_objects(
    mode: str, tmp_path: Path
) -> None:
    path = tmp_path / "anthropic.trp"
    api = LocalAnthropic()
    with served(api) as url, toolreplay.record(path):
        recorded = run(mode, url)
    stream = recorded["stream"]
    assert stream["text"] == "Let me check that order."
    assert stream["thinking"] == "The order number is given, so I can look it up."
    assert stream["signature"] == ["EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxPaW5nIHNpZ25hdHVyZQ=="]
    assert stream["input_json"] == {"order_id": 8812, "reason": "lost in transit"}
    assert {"thinking", "signature", "text", "input_json", "message_stop"} <= set(stream["events"])
    assert [block["type"] for block in stream["final"]["content"]] == [
        "thinking",
        "text",
        "tool_use",
    ]
    assert recorded["create"][1]["content"][0]["text"] == "Order 8812 was refunded in full."
    assert recorded["count"] == 42
    assert recorded["batches"][4][0]["custom_id"] == "order-8812"
    assert recorded["models"] == [[DATED_MODEL], "Claude Sonnet 4.6"]

    operations = toolreplay.read_trace(path).operations
    assert [op.effect for op in operations] == [
        "anthropic.messages.create",
        "anthropic.messages.create",
        "anthropic.messages.create",
        "anthropic.messages.create",
        "anthropic.messages.count_tokens",
        "anthropic.messages.batches.create",
        "anthropic.messages.batches.retrieve",
        "anthropic.messages.batches.list",
        "anthropic.messages.batches.cancel",
        "anthropic.messages.batches.retrieve",  # results() reads the batch's results_url first
        "anthropic.messages.batches.results",
        "anthropic.models.list",
        "anthropic.models.retrieve",
        "anthropic.messages.create",  # the beta resource: the same endpoint, its betas a header
    ]
    assert len(api.requests) == len(operations)
    first, beta = operations[0].inputs, operations[-1].inputs
    sent_version = api.requests[0].headers["anthropic-version"]
    assert cast(Any, first["headers"]) == {"anthropic-version": sent_version}
    assert cast(Any, beta["headers"])["anthropic-beta"] == BETA
    streamed = cast(Any, operations[2].outcome).value
    assert [e["event"] for e in streamed["events"]][:3] == [
        "message_start",
        "ping",
        "content_block_start",
    ]
    assert cast(Any, operations[0].outcome).value["headers"] == {
        "content-type": "application/json",
        "request-id": "req_011CT0001",
        "anthropic-ratelimit-requests-remaining": "49",
    }
    content = path.read_bytes()
    for secret in (API_KEY, ORGANIZATION, "x-api-key", "anthropic-organization-id"):
        assert secret.encode() not in content, secret

    replayed = replay_offline(path, lambda url: run(mode, url))
    assert replayed == recorded


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_errors_of_every_status_replay_as_the_sdks_own_exceptions(
    mode: str, tmp_path: Path
) -> None:
    statuses = [400, 401, 403, 404, 413, 429, 500, 529]

    def app(base_url: str) -> list[Any]:
        client = client_for(mode, base_url, max_retries=0)

        async def each_async() -> list[Any]:
            raised: list[Any] = []
            for _ in statuses:
                with pytest.raises(anthropic.APIStatusError) as error:
                    await client.messages.create(model=MODEL, max_tokens=8, messages=ASK)
                raised.append(error.value)
            return raised

        if mode == "sync":
            raised: list[Any] = []
            for _ in statuses:
                with pytest.raises(anthropic.APIStatusError) as error:
                    client.messages.create(model=MODEL, max_tokens=8, messages=ASK)
                raised.append(error.value)
        else:
            raised = asyncio.run(each_async())
        return [(type(e), e.status_code, e.body, e.request_id) for e in raised]

    path = tmp_path / "errors.trp"
    api = LocalAnthropic()
    api.fail = list(statuses)
    with served(api) as url, toolreplay.record(path):
        recorded = app(url)
    # The SDK's own classes, as the plain client raises them from these bodies.
    assert [kind for kind, *_ in recorded] == [
        anthropic.BadRequestError,
        anthropic.AuthenticationError,
        anthropic.PermissionDeniedError,
        anthropic.NotFoundError,
        anthropic.RequestTooLargeError,
        anthropic.RateLimitError,
        anthropic.InternalServerError,
        anthropic.OverloadedError,
    ]
    assert replay_offline(path, app) == recorded


def test_a_retried_request_is_a_request_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "retry.trp"
    api = LocalAnthropic()
    api.fail = [529, 429]

    def app(base_url: str) -> str:
        client = client_for("sync", base_url, max_retries=2)
        return client.messages.create(model=MODEL, max_tokens=8, messages=ASK).content[0].text

    with served(api) as url, toolreplay.record(path):
        recorded = app(url)
    operations = toolreplay.read_trace(path).operations
    assert [
        (op.identity.occurrence, cast(Any, op.outcome).value["status"]) for op in operations
    ] == [
        (0, 529),
        (1, 429),
        (2, 200),
    ]
    assert replay_offline(path, app) == recorded == "Order 8812 was refunded in full."


def _stream_app(client: Any) -> dict[str, Any]:
    with client.messages.stream(
        model=MODEL, max_tokens=2048, messages=ASK, tools=TOOLS, thinking=THINKING
    ) as stream:
        events = list(stream)
        return _stream_seen(events, stream.get_final_message())


def test_a_fork_edits_a_stream_consistently_and_replies_to_a_new_call(tmp_path: Path) -> None:
    path = tmp_path / "source.trp"
    with served(LocalAnthropic()) as url, toolreplay.record(path):
        recorded = _stream_app(client_for("sync", url))
    recorded_output = cast(Any, toolreplay.read_trace(path).operations[0].outcome).value
    assert final_message(recorded_output) == recorded["final"]

    patches = [
        toolreplay.replace_output(
            at=0,
            value=edit(
                {
                    "$.content[1].text": "I will hold this refund for review.",
                    "$.content[2].input.order_id": 1,
                    "$.usage.output_tokens": 99,
                }
            ),
        ),
        toolreplay.supply_output(
            effect="anthropic.messages.create",
            value=reply(
                thinking="Already refunded.",
                text="Done.",
                tool_calls=[("issue_refund", {"order_id": 2})],
            ),
        ),
    ]
    # Through a patch file, as the command line takes them.
    patches = toolreplay.read_patches(toolreplay.write_patches(tmp_path / "patches.json", patches))
    asked = [*ASK, {"role": "assistant", "content": "?"}, {"role": "user", "content": "Again"}]

    def app(base_url: str) -> tuple[dict[str, Any], dict[str, Any]]:
        client = client_for("sync", base_url)
        edited = _stream_app(client)
        with client.messages.stream(
            model=MODEL, max_tokens=2048, messages=asked, tools=TOOLS, thinking=THINKING
        ) as stream:
            events = list(stream)
            return edited, _stream_seen(events, stream.get_final_message())

    branch = tmp_path / "branch.trp"
    with toolreplay.fork(path, branch, patches=patches):
        forked, new = app("http://127.0.0.1:9")
    # The edited stream: the deltas the SDK hands out, its events and its final message agree.
    assert forked["text"] == "I will hold this refund for review."
    assert forked["input_json"] == {"order_id": 1, "reason": "lost in transit"}
    assert forked["thinking"] == recorded["thinking"]  # an unchanged block streams as recorded
    final = forked["final"]
    assert final["content"][1]["text"] == "I will hold this refund for review."
    assert final["content"][2]["input"] == {"order_id": 1, "reason": "lost in transit"}
    assert final["usage"]["output_tokens"] == 99
    assert {k: v for k, v in final.items() if k not in ("content", "usage")} == {
        k: v for k, v in recorded["final"].items() if k not in ("content", "usage")
    }
    # The reply, streamed as the API streams, parsed by the SDK as its own.
    assert new["thinking"] == "Already refunded."
    assert new["text"] == "Done."
    assert new["input_json"] == {"order_id": 2}
    assert new["final"]["model"] == DATED_MODEL  # the recorded answer's dated model
    assert new["final"]["stop_reason"] == "tool_use"
    assert new["final"]["usage"]["input_tokens"] == 31

    report = toolreplay.diff(path, branch)
    assert report.differences[0].patch_id == patches[0].patch_id
    # The branch replays as any recording does.
    assert replay_offline(branch, app) == (forked, new)


def test_a_compacted_beta_stream_adds_up_as_the_sdk_adds_it(tmp_path: Path) -> None:
    """Found by the real-traffic corpus: a beta stream's compaction block is stated by a
    `compaction_delta`, and its `message_delta` carries `context_management` beside the
    delta; `final_message` (what edits' paths run through) takes both, as the SDK does."""
    summary = "The user pasted a long log and asked for a greeting."
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_compacted",
                "type": "message",
                "role": "assistant",
                "model": DATED_MODEL,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 90, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "compaction", "content": None},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "compaction_delta", "content": summary},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 5},
            "context_management": {"applied_edits": []},
        },
        {"type": "message_stop"},
    ]
    body = sse(events)
    answer = httpx2.MockTransport(
        lambda request: httpx2.Response(
            200, content=body, headers={"content-type": "text/event-stream"}
        )
    )
    client = anthropic.Anthropic(api_key=API_KEY, http_client=httpx2.Client(transport=answer))
    path = tmp_path / "compacted.trp"
    with toolreplay.record(path):
        with instrument(client).beta.messages.stream(
            model=MODEL, max_tokens=64, messages=ASK, betas=["compact-2026-01-12"]
        ) as stream:
            message = stream.get_final_message()
    (operation,) = toolreplay.read_trace(path).operations
    final = final_message(cast(Any, operation.outcome).value)
    assert final is not None
    compacted: Any = message.content[0]
    assert final["content"] == [
        {"type": "compaction", "content": summary, "encrypted_content": None},
        {"type": "text", "text": "Hi"},
    ]
    assert compacted.type == "compaction"
    assert compacted.content == summary
    assert final["context_management"] == {"applied_edits": []}
    assert message.context_management is not None
    assert message.context_management.to_dict() == final["context_management"]


def test_a_reply_must_fit_the_request(tmp_path: Path) -> None:
    path = tmp_path / "source.trp"
    with served(LocalAnthropic()) as url, toolreplay.record(path):
        client_for("sync", url).messages.create(model=MODEL, max_tokens=8, messages=ASK)
    cases = [
        (reply(tool_calls=[("delete_account", {})]), "does not offer.*its tools: none"),
        (reply(thinking="hm", text="x"), "does not enable extended thinking"),
    ]
    for recipe, message in cases:
        with pytest.raises(PatchError, match=message):
            with toolreplay.fork(
                path, tmp_path / "b.trp", patches=[toolreplay.replace_output(at=0, value=recipe)]
            ):
                client_for("sync", "http://127.0.0.1:9").messages.create(
                    model=MODEL, max_tokens=8, messages=ASK
                )
        (tmp_path / "b.trp").unlink(missing_ok=True)
    with pytest.raises(PatchError, match="stop_reason is one of"):
        reply(text="x", stop_reason="finished")
    with pytest.raises(
        PatchError, match=r"tool_calls\[0\]'s input must be a JSON object \(a mapping\), got '8812'"
    ):
        reply(tool_calls=[("issue_refund", "8812")])  # type: ignore[list-item]  # a wrong input on purpose


def test_the_adapter_refuses_what_it_cannot_capture() -> None:
    client = instrument(anthropic.Anthropic(api_key=API_KEY))
    with pytest.raises(TypeError, match="already instrumented"):
        instrument(client)
    with pytest.raises(TypeError, match=r"anthropic\.Anthropic, AnthropicBedrock or Anthrop"):
        instrument(cast(Any, object()))
    # The SDK's other platform clients: named, with why.
    foundry = anthropic.AnthropicFoundry(api_key=API_KEY, resource="example-resource")
    with pytest.raises(TypeError, match=r"does not capture anthropic\.AnthropicFoundry"):
        instrument(cast(Any, foundry))
    copied = client.with_options(timeout=5)
    assert type(copied).__name__ == "InstrumentedAnthropic"
    assert copied.original_client is client.original_client


def test_a_missing_sdk_is_named_with_its_supported_range() -> None:
    code = (
        "import sys; sys.modules['anthropic'] = None\n"
        "try:\n"
        "    import toolreplay.adapters.anthropic\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.stdout.startswith("AnthropicAdapterDependencyError"), result.stderr
    assert ">=2.10.0,<3" in result.stdout


def test_show_and_find_read_claude_turns_without_the_sdk(tmp_path: Path) -> None:
    path = tmp_path / "turns.trp"
    with served(LocalAnthropic()) as url, toolreplay.record(path):
        client = client_for("sync", url)
        first = client.messages.create(
            model=MODEL, max_tokens=2048, messages=ASK, tools=TOOLS, thinking=THINKING
        )
        client.messages.create(
            model=MODEL,
            max_tokens=512,
            messages=_answered(first.content[-1].to_dict()),
            tools=TOOLS,
        )
        _stream_app(client)
        client.messages.count_tokens(model=MODEL, messages=ASK)
    # The command line reads the trace where the SDK cannot be imported.
    blocked = "import sys; sys.modules['anthropic'] = None\nfrom toolreplay.cli import main\n"

    def command(*arguments: str) -> str:
        code = blocked + f"raise SystemExit(main({list(arguments)!r}))"
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    rows = [row for row in command("show", str(path)).splitlines() if "anthropic." in row]
    assert len(rows) == 4
    # Asked, then answered: the text and the tool use (the thinking block left out).
    assert "user: Refund order 8812, it was lost." in rows[0]
    assert 'Let me check that order., issue_refund({"order_id": 8812' in rows[0]
    assert "tool issue_refund: refunded" in rows[1]
    assert "Order 8812 was refunded in full." in rows[1]
    # The stream, read back from its events.
    assert 'Let me check that order., issue_refund({"order_id": 8812' in rows[2]
    assert "anthropic.messages.count_tokens" in rows[3]
    found = command("find", str(tmp_path), "--effect", "anthropic.messages.create")
    assert "turns.trp" in found


CANARIES = {
    "header": "CANARY-anthropic-header-81c2",
    "cookie": "CANARY-anthropic-cookie-5e07",
    "query": "CANARY-anthropic-query-2b9f",
}


def canary_app(base_url: str) -> str:
    """A Claude call carrying a credential in every place a client can put one: the key,
    an `Authorization` and an `anthropic-*` credential header of its own, a cookie, and a
    query parameter named like a key. Also the promoted case's runner (`case_runner`)."""
    client = client_for(
        "sync",
        base_url,
        default_headers={
            "anthropic-admin-api-key": CANARIES["header"],
            "cookie": f"session={CANARIES['cookie']}",
        },
        default_query={"api_key": CANARIES["query"]},
    )
    message = client.messages.create(model=MODEL, max_tokens=64, messages=ASK)
    return message.content[0].text


def case_runner() -> str:
    """The promoted case's runner: the call, against an address nothing listens on."""
    return canary_app("http://127.0.0.1:9")


def test_no_credential_reaches_a_trace_a_branch_a_case_or_the_output(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "canaries.trp"
    api = LocalAnthropic()
    with served(api) as url, toolreplay.record(path):
        answer = canary_app(url)
    sent = b"".join(
        b"".join(name + b": " + value for name, value in request.headers.raw)
        + str(request.url).encode()
        for request in api.requests
    )
    for secret in (API_KEY, *CANARIES.values()):  # each was really sent
        assert secret.encode() in sent, secret

    branch = tmp_path / "branch.trp"
    with toolreplay.fork(
        path,
        branch,
        patches=[toolreplay.replace_output(at=0, value=edit({"$.content[0].text": "Held."}))],
    ):
        assert case_runner() == "Held."
    case = toolreplay.promote(
        path,
        tmp_path / "cases" / "claude",
        name="claude",
        runner="tests.adapters.test_anthropic:case_runner",
        expected=answer,
    )
    toolreplay.verify_case(case.directory)
    for arguments in (["show", str(path), "--format", "json"], ["show", str(branch)]):
        shown = subprocess.run(
            [sys.executable, "-m", "toolreplay", *arguments],
            capture_output=True,
            cwd=ROOT,
            check=True,
        )
        sys.stdout.buffer.write(shown.stdout)
        sys.stderr.buffer.write(shown.stderr)
    captured = capfdbinary.readouterr()
    written = {"stdout": captured.out, "stderr": captured.err}
    written.update({str(p): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()})
    assert len(written) >= 5
    for where, content in written.items():
        for secret in (API_KEY, *CANARIES.values()):
            assert secret.encode() not in content, (where, secret)
    assert b"anthropic-admin-api-key" not in path.read_bytes()
