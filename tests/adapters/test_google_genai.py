"""The Google Gen AI adapter: `toolreplay.adapters.google_genai.instrument(client)`
(RFC 0006 Part V).

Real `genai.Client`s (sync, and async under `.aio`, with aiohttp installed) against a
local fake of the Gemini API served over loopback (`examples/local_gemini`):
`generate_content` with a system instruction, function declarations, a function call and
its response, thought summaries; `generate_content_stream` as SSE chunks; chats
(`send_message`, `send_message_stream`); `count_tokens`; `embed_content`; models (list,
get); a file upload; errors of every status; a retry; a stream the server cuts. Replay
points the clients at a server that counts connections, with the network guard open, so
a request that leaked would be counted. Also: forks (`reply`, `edit`), the version check,
`show`/`find` without the SDK, credential canaries, aiohttp installed and absent.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from google import genai
from google.genai import errors, types
from google.oauth2.credentials import Credentials

import toolreplay
from examples.local_gemini import (
    API_KEY,
    AUTH_TOKEN,
    MODEL,
    MODEL_VERSION,
    PROJECT_HEADER,
    LocalGemini,
)
from tests.adapters.http_api import Dropped, served
from tests.support.counting_server import CountingServer
from toolreplay.adapters.google_genai import (
    edit,
    final_response,
    instrument,
    reply,
    response_chunks,
)
from toolreplay.errors import AdapterOptionError, PatchError

ROOT = Path(__file__).resolve().parents[2]
REFUND = types.FunctionDeclaration(
    name="issue_refund",
    description="Refund an order in full.",
    parameters_json_schema={
        "type": "object",
        "properties": {"order_id": {"type": "integer"}, "reason": {"type": "string"}},
    },
)
CONFIG = types.GenerateContentConfig(
    system_instruction="You are the refunds agent of an online shop.",
    tools=[types.Tool(function_declarations=[REFUND])],
    thinking_config=types.ThinkingConfig(include_thoughts=True),
)
ASK = "Refund order 8812, it was lost."


def _answered(first: Any) -> list[Any]:
    """The conversation after the function ran: the model's turn, then its response."""
    call = first.function_calls[0]
    return [
        types.Content(role="user", parts=[types.Part(text=ASK)]),
        first.candidates[0].content,
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(name=call.name, response={"status": "refunded"})
            ],
        ),
    ]


def _dump(response: Any) -> dict[str, Any]:
    return response.model_dump(mode="json", exclude={"sdk_http_response"}, exclude_none=True)


def sync_app(client: Any) -> dict[str, Any]:
    """An application on the Gemini SDK using each kind of call."""
    seen: dict[str, Any] = {}
    models = client.models
    first = models.generate_content(model=MODEL, contents=ASK, config=CONFIG)
    second = models.generate_content(model=MODEL, contents=_answered(first), config=CONFIG)
    seen["generate"] = [_dump(first), _dump(second), first.function_calls[0].args, second.text]
    chunks = list(models.generate_content_stream(model=MODEL, contents=ASK, config=CONFIG))
    seen["stream"] = [_dump(chunk) for chunk in chunks]
    chat = client.chats.create(model=MODEL)
    seen["chat"] = [chat.send_message("Is order 8812 refunded?").text]
    seen["chat"] += [chunk.text for chunk in chat.send_message_stream("Thanks!")]
    seen["chat"].append(len(chat.get_history()))
    seen["count"] = models.count_tokens(model=MODEL, contents=ASK).total_tokens
    embedded = models.embed_content(model="gemini-embedding-001", contents=["a", "b"])
    seen["embed"] = [embedding.values for embedding in embedded.embeddings]
    seen["models"] = [[m.name for m in models.list()], models.get(model=MODEL).display_name]
    return seen


async def async_app(client: Any) -> dict[str, Any]:
    """The same application under `client.aio`."""
    seen: dict[str, Any] = {}
    models = client.aio.models
    first = await models.generate_content(model=MODEL, contents=ASK, config=CONFIG)
    second = await models.generate_content(model=MODEL, contents=_answered(first), config=CONFIG)
    seen["generate"] = [_dump(first), _dump(second), first.function_calls[0].args, second.text]
    stream = await models.generate_content_stream(model=MODEL, contents=ASK, config=CONFIG)
    seen["stream"] = [_dump(chunk) async for chunk in stream]
    chat = client.aio.chats.create(model=MODEL)
    seen["chat"] = [(await chat.send_message("Is order 8812 refunded?")).text]
    seen["chat"] += [chunk.text async for chunk in await chat.send_message_stream("Thanks!")]
    seen["chat"].append(len(chat.get_history()))
    seen["count"] = (await models.count_tokens(model=MODEL, contents=ASK)).total_tokens
    embedded = await models.embed_content(model="gemini-embedding-001", contents=["a", "b"])
    seen["embed"] = [embedding.values for embedding in embedded.embeddings]
    listed = [m.name async for m in await models.list()]
    seen["models"] = [listed, (await models.get(model=MODEL)).display_name]
    return seen


def client_for(base_url: str, **options: Any) -> Any:
    """An instrumented client of `base_url` (`served`'s URL: the SDK adds the version)."""
    http = types.HttpOptions(base_url=base_url.removesuffix("/v1"), api_version="v1beta", **options)
    return instrument(genai.Client(api_key=API_KEY, http_options=http))


def run(mode: str, base_url: str) -> dict[str, Any]:
    client = client_for(base_url)
    if mode == "sync":
        return sync_app(client)
    return asyncio.run(async_app(client))


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


EFFECTS = [
    "google_genai.models.generate_content",
    "google_genai.models.generate_content",
    "google_genai.models.stream_generate_content",
    "google_genai.models.generate_content",  # the chat's turns
    "google_genai.models.stream_generate_content",
    "google_genai.models.count_tokens",
    "google_genai.models.batch_embed_contents",
    "google_genai.models.list",
    "google_genai.models.get",
]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_every_call_records_and_replays_with_the_sdks_objects(mode: str, tmp_path: Path) -> None:
    path = tmp_path / "gemini.trp"
    api = LocalGemini()
    with served(api) as url, toolreplay.record(path):
        recorded = run(mode, url)
    first, second, args, text = recorded["generate"]
    parts = first["candidates"][0]["content"]["parts"]
    assert [part.get("thought", False) for part in parts] == [True, False, False]
    assert parts[2]["function_call"]["name"] == "issue_refund"
    assert args == {"order_id": 8812, "reason": "lost in transit"}
    assert text == "Order 8812 was refunded in full. Anything else?"
    assert second["model_version"] == MODEL_VERSION
    assert len(recorded["stream"]) > 10  # the thought and the text in pieces, the call whole
    # Two turns, each asked and answered (the SDK keeps a streamed answer chunk by chunk).
    assert recorded["chat"][-1] > 4
    assert recorded["count"] == 42
    assert recorded["models"] == [[f"models/{MODEL}"], "Gemini 2.5 Flash"]

    operations = toolreplay.read_trace(path).operations
    assert [op.effect for op in operations] == EFFECTS
    assert len(api.requests) == len(operations)
    sent = cast(Any, operations[1].inputs)
    assert sent["path"] == f"/v1beta/models/{MODEL}:generateContent"
    body = sent["body"]
    assert body["systemInstruction"]["parts"][0]["text"].startswith("You are the refunds")
    function_response = body["contents"][2]["parts"][0]["functionResponse"]
    assert function_response == {"name": "issue_refund", "response": {"status": "refunded"}}
    streamed = cast(Any, operations[2])
    assert streamed.inputs["query"] == {"alt": "sse"}
    events = streamed.outcome.value["events"]
    assert len(events) == len(recorded["stream"])
    assert all(set(event) == {"data"} for event in events)  # unnamed events, as sent
    # The chunks add up to what the same request answers unstreamed (its own response id).
    added_up = final_response(streamed.outcome.value)
    assert added_up is not None
    whole = cast(Any, operations[0].outcome).value["body"]
    assert {**added_up, "responseId": whole["responseId"]} == whole
    assert cast(Any, operations[0].outcome).value["headers"] == {"content-type": "application/json"}
    content = path.read_bytes()
    for secret in (API_KEY, PROJECT_HEADER, "x-goog-api-key", "x-goog-project-number"):
        assert secret.encode() not in content, secret

    replayed = replay_offline(path, lambda url: run(mode, url))
    assert replayed == recorded


def test_a_stream_cut_by_the_server_replays_its_chunks_then_the_same_error(
    tmp_path: Path,
) -> None:
    api = LocalGemini()

    def cut(request: Any) -> Any:
        return Dropped(api(request), events=3)

    def app(base_url: str) -> tuple[list[str], str]:
        client = client_for(base_url)
        seen: list[str] = []
        with pytest.raises(Exception) as error:  # the HTTP library's own error
            for chunk in client.models.generate_content_stream(model=MODEL, contents=ASK):
                seen.append(chunk.text)
        return seen, type(error.value).__name__

    path = tmp_path / "cut.trp"
    with served(cut) as url, toolreplay.record(path):
        recorded = app(url)
    assert recorded[0] == ["Order 881", "2 was ref", "unded in "]
    (operation,) = toolreplay.read_trace(path).operations
    assert cast(Any, operation.outcome).error_type == f"httpx.{recorded[1]}"
    assert replay_offline(path, app) == recorded


def test_a_file_upload_replays_its_resumable_protocol(tmp_path: Path) -> None:
    def app(base_url: str) -> list[Any]:
        client = client_for(base_url)
        config = {"mime_type": "text/plain", "display_name": "notes"}
        uploaded = client.files.upload(file=io.BytesIO(b"hello"), config=config)

        async def again() -> Any:
            return await client.aio.files.upload(file=io.BytesIO(b"hello!"), config=config)

        return [_dump(uploaded), _dump(asyncio.run(again()))]

    path = tmp_path / "upload.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        recorded = app(url)
    assert recorded[0]["name"] == "files/k3x9q2m1z8ab"
    assert recorded[1]["size_bytes"] == 6
    operations = toolreplay.read_trace(path).operations
    assert [op.effect for op in operations] == ["google_genai.files.upload"] * 4
    start, chunk = (cast(Any, op) for op in operations[:2])
    assert start.inputs["headers"]["x-goog-upload-command"] == "start"
    assert chunk.inputs["headers"]["x-goog-upload-command"] == "upload, finalize"
    assert chunk.inputs["query"] == {"upload_id": "ADPycdu3Zqf1oSvC"}
    assert chunk.inputs["body_digest"]["size"] == 5  # the bytes themselves are not recorded
    assert start.outcome.value["headers"]["x-goog-upload-status"] == "active"
    assert "x-goog-upload-url" in start.outcome.value["headers"]
    assert replay_offline(path, app) == recorded


def test_a_trace_recorded_sync_replays_async_and_back(tmp_path: Path) -> None:
    path = tmp_path / "sync.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        recorded = run("sync", url)
    assert replay_offline(path, lambda url: run("async", url)) == recorded


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_errors_of_every_status_replay_as_the_sdks_own_exceptions(
    mode: str, tmp_path: Path
) -> None:
    statuses = [400, 401, 403, 404, 429, 500, 503, 504]

    def app(base_url: str) -> list[Any]:
        client = client_for(base_url)

        async def each_async() -> list[Any]:
            raised: list[Any] = []
            for number in range(len(statuses)):
                with pytest.raises(errors.APIError) as error:
                    if number % 2:
                        stream = await client.aio.models.generate_content_stream(
                            model=MODEL, contents=ASK
                        )
                        [chunk async for chunk in stream]
                    else:
                        await client.aio.models.generate_content(model=MODEL, contents=ASK)
                raised.append(error.value)
            return raised

        if mode == "sync":
            raised: list[Any] = []
            for number in range(len(statuses)):
                with pytest.raises(errors.APIError) as error:
                    if number % 2:
                        list(client.models.generate_content_stream(model=MODEL, contents=ASK))
                    else:
                        client.models.generate_content(model=MODEL, contents=ASK)
                raised.append(error.value)
        else:
            raised = asyncio.run(each_async())
        return [(type(e), e.code, e.status, e.message, e.details) for e in raised]

    path = tmp_path / "errors.trp"
    api = LocalGemini()
    api.fail = list(statuses)
    with served(api) as url, toolreplay.record(path):
        recorded = app(url)
    # The SDK's own classes, as the plain client raises them from these bodies.
    assert [kind for kind, *_ in recorded] == [errors.ClientError] * 5 + [errors.ServerError] * 3
    assert [(code, status) for _, code, status, *_ in recorded] == [
        (400, "INVALID_ARGUMENT"),
        (401, "UNAUTHENTICATED"),
        (403, "PERMISSION_DENIED"),
        (404, "NOT_FOUND"),
        (429, "RESOURCE_EXHAUSTED"),
        (500, "INTERNAL"),
        (503, "UNAVAILABLE"),
        (504, "DEADLINE_EXCEEDED"),
    ]
    assert recorded[0][4]["error"]["details"][0]["reason"] == "API_KEY_INVALID"
    assert replay_offline(path, app) == recorded


def test_a_retried_request_is_a_request_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "retry.trp"
    api = LocalGemini()
    api.fail = [503, 429]
    retry = types.HttpRetryOptions(attempts=3, initial_delay=0.01, max_delay=0.02, jitter=0.01)

    def app(base_url: str) -> str:
        client = client_for(base_url, retry_options=retry)
        return client.models.generate_content(model=MODEL, contents=ASK).text

    with served(api) as url, toolreplay.record(path):
        recorded = app(url)
    operations = toolreplay.read_trace(path).operations
    assert [
        (op.identity.occurrence, cast(Any, op.outcome).value["status"]) for op in operations
    ] == [(0, 503), (1, 429), (2, 200)]
    assert (
        replay_offline(path, app) == recorded == "Order 8812 was refunded in full. Anything else?"
    )


def _stream_app(client: Any, contents: Any = ASK) -> dict[str, Any]:
    chunks = list(
        client.models.generate_content_stream(model=MODEL, contents=contents, config=CONFIG)
    )
    thought = "".join(p.text for c in chunks for p in c.candidates[0].content.parts if p.thought)
    text = "".join(
        p.text for c in chunks for p in c.candidates[0].content.parts if p.text and not p.thought
    )
    calls = [call.args for chunk in chunks for call in chunk.function_calls or []]
    return {
        "thought": thought,
        "text": text,
        "calls": calls,
        "finish": chunks[-1].candidates[0].finish_reason,
        "usage": chunks[-1].usage_metadata.candidates_token_count,
        "model": chunks[0].model_version,
        "count": len(chunks),
    }


def test_a_fork_edits_a_stream_consistently_and_replies_to_a_new_call(tmp_path: Path) -> None:
    path = tmp_path / "source.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        recorded = _stream_app(client_for(url))
    recorded_output = cast(Any, toolreplay.read_trace(path).operations[0].outcome).value
    final = final_response(recorded_output)
    assert final is not None
    assert final_response({"events": response_chunks(final)}) == final

    patches = [
        toolreplay.replace_output(
            at=0,
            value=edit(
                {
                    "$.candidates[0].content.parts[1].text": "I will hold this refund for review.",
                    "$.candidates[0].content.parts[2].functionCall.args.order_id": 1,
                    "$.usageMetadata.candidatesTokenCount": 99,
                }
            ),
        ),
        toolreplay.supply_output(
            effect="google_genai.models.stream_generate_content",
            value=reply(
                thought="Already refunded.",
                text="Done.",
                function_calls=[("issue_refund", {"order_id": 2})],
            ),
        ),
    ]
    # Through a patch file, as the command line takes them.
    patches = toolreplay.read_patches(toolreplay.write_patches(tmp_path / "patches.json", patches))

    def app(base_url: str) -> tuple[dict[str, Any], dict[str, Any]]:
        client = client_for(base_url)
        return _stream_app(client), _stream_app(client, "Refund order 8813.")

    branch = tmp_path / "branch.trp"
    with toolreplay.fork(path, branch, patches=patches):
        forked, new = app("http://127.0.0.1:9")
    # The edited stream: the chunks the SDK hands out add up to the edit.
    assert forked["text"] == "I will hold this refund for review."
    assert forked["calls"] == [{"order_id": 1, "reason": "lost in transit"}]
    assert forked["thought"] == recorded["thought"]  # an unchanged part streams as recorded
    assert forked["usage"] == 99
    assert forked["count"] == recorded["count"]  # the text cut over the recorded pieces
    # The reply, streamed as the API streams, parsed by the SDK as its own.
    assert new["thought"] == "Already refunded."
    assert new["text"] == "Done."
    assert new["calls"] == [{"order_id": 2}]
    assert new["model"] == MODEL_VERSION  # the recorded answer's model version
    assert new["finish"] == types.FinishReason.STOP

    report = toolreplay.diff(path, branch)
    assert report.differences[0].patch_id == patches[0].patch_id
    # The branch replays as any recording does.
    assert replay_offline(branch, app) == (forked, new)


def test_a_reply_answers_a_call_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "source.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        client = client_for(url)  # kept: google-genai 1.x closes a collected client's pool
        client.models.generate_content(model=MODEL, contents=ASK, config=CONFIG)
    patch = toolreplay.replace_output(
        at=0, value=reply(function_calls=[("issue_refund", {"order_id": 7})], input_tokens=5)
    )
    with toolreplay.fork(path, tmp_path / "b.trp", patches=[patch]):
        client = client_for("http://127.0.0.1:9")
        answer = client.models.generate_content(model=MODEL, contents=ASK, config=CONFIG)
    assert [(call.name, call.args) for call in answer.function_calls] == [
        ("issue_refund", {"order_id": 7})
    ]
    assert answer.usage_metadata.prompt_token_count == 5
    assert answer.candidates[0].finish_reason == types.FinishReason.STOP


def test_a_reply_must_fit_the_request(tmp_path: Path) -> None:
    path = tmp_path / "source.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        client = client_for(url)  # kept: google-genai 1.x closes a collected client's pool
        client.models.generate_content(model=MODEL, contents=ASK)
    cases = [
        (reply(function_calls=[("delete_account", {})]), "does not declare.*its functions: none"),
        (reply(thought="hm", text="x"), "does not ask for thoughts"),
    ]
    for recipe, message in cases:
        with pytest.raises(PatchError, match=message):
            with toolreplay.fork(
                path, tmp_path / "b.trp", patches=[toolreplay.replace_output(at=0, value=recipe)]
            ):
                client = client_for("http://127.0.0.1:9")
                client.models.generate_content(model=MODEL, contents=ASK)
        (tmp_path / "b.trp").unlink(missing_ok=True)
    with pytest.raises(PatchError, match="finish_reason is one of"):
        reply(text="x", finish_reason="stop")
    with pytest.raises(
        PatchError,
        match=r"function_calls\[0\]'s args must be a JSON object \(a mapping\), got '8812'",
    ):
        reply(function_calls=[("issue_refund", "8812")])  # type: ignore[list-item]  # a wrong input on purpose
    with pytest.raises(PatchError, match=r"answers google_genai\.models\.generate_content"):
        with toolreplay.fork(
            path,
            tmp_path / "c.trp",
            patches=[
                toolreplay.supply_output(effect="google_genai.models.list", value=reply(text="x"))
            ],
        ):
            pass


def test_an_edit_that_changes_the_answers_structure_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "source.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        _stream_app(client_for(url))
    output = cast(Any, toolreplay.read_trace(path).operations[0].outcome).value
    from toolreplay.adapters.google_genai import edited_output

    with pytest.raises(PatchError, match="cannot add or remove parts"):
        edited_output(output, {"$.candidates[0].content.parts": []})
    with pytest.raises(PatchError, match="kind cannot change"):
        edited_output(output, {"$.candidates[0].content.parts[1]": {"functionCall": {}}})
    with pytest.raises(PatchError, match="selects nothing"):
        edited_output(output, {"$.candidates[0].content.parts[9].text": "x"})
    edited: Any = edited_output(output, {"$.candidates[0].finishReason": "MAX_TOKENS"})
    assert edited["events"][-1]["data"]["candidates"][0]["finishReason"] == "MAX_TOKENS"
    assert output["events"][-1]["data"]["candidates"][0]["finishReason"] == "STOP"  # unchanged


def test_the_adapter_refuses_what_it_cannot_capture() -> None:
    plain = genai.Client(api_key=API_KEY)
    client = instrument(plain)
    assert client.original_client is plain
    assert type(client.models).__module__ == "google.genai.models"  # the SDK's own resources
    with pytest.raises(TypeError, match="already instrumented"):
        instrument(client)
    with pytest.raises(TypeError, match=r"not its \.aio"):
        instrument(cast(Any, plain.aio))
    with pytest.raises(TypeError, match=r"takes a google\.genai\.Client"):
        instrument(cast(Any, object()))
    debug = genai.client.DebugConfig(client_mode="replay", replays_directory="/nonexistent")
    with pytest.raises(TypeError, match="record/replay client"):
        instrument(genai.Client(api_key=API_KEY, debug_config=debug))


def test_the_live_api_is_refused_inside_a_session(tmp_path: Path) -> None:
    path = tmp_path / "empty.trp"
    with toolreplay.record(path):
        pass
    client = client_for("http://127.0.0.1:9")

    async def connect() -> None:
        async with client.aio.live.connect(model=MODEL, config={"response_modalities": ["TEXT"]}):
            pass

    with pytest.raises(toolreplay.ToolReplayError, match="WebSocket connections"):
        with toolreplay.replay(path):
            asyncio.run(connect())


def test_a_missing_sdk_is_named_with_its_supported_range() -> None:
    code = (
        "import sys; sys.modules['google.genai'] = None\n"
        "try:\n"
        "    import toolreplay.adapters.google_genai\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.stdout.startswith("GoogleGenAIAdapterDependencyError"), result.stderr
    assert ">=1.47.0,<4" in result.stdout
    assert "uv sync --extra google-genai" in result.stdout
    # A release outside the range (the installed SDK, reporting an older version).
    old = (
        "from google.genai import version; version.__version__ = '1.46.0'\n"
        + code.split("\n", 1)[1]
    )
    result = subprocess.run(
        [sys.executable, "-c", old], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.stdout.startswith("GoogleGenAIAdapterDependencyError"), result.stderr
    assert "supports google-genai >=1.47.0,<4, but google-genai 1.46.0 is installed" in (
        result.stdout
    )


def test_show_and_find_read_gemini_turns_without_the_sdk(tmp_path: Path) -> None:
    path = tmp_path / "turns.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        client = client_for(url)
        first = client.models.generate_content(model=MODEL, contents=ASK, config=CONFIG)
        client.models.generate_content(model=MODEL, contents=_answered(first), config=CONFIG)
        _stream_app(client)
        client.models.count_tokens(model=MODEL, contents=ASK)
    # The command line reads the trace where the SDK cannot be imported.
    blocked = "import sys; sys.modules['google.genai'] = None\nfrom toolreplay.cli import main\n"

    def command(*arguments: str) -> str:
        code = blocked + f"raise SystemExit(main({list(arguments)!r}))"
        result = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    rows = [row for row in command("show", str(path)).splitlines() if "google_genai." in row]
    assert len(rows) == 4
    # Asked, then answered: the text and the function call (the thought left out).
    assert "user: Refund order 8812, it was lost." in rows[0]
    assert 'Let me refund that order., issue_refund({"order_id": 8812' in rows[0]
    assert 'function issue_refund: {"status": "refunded"}' in rows[1]
    assert "Order 8812 was refunded in full." in rows[1]
    # The stream, read back from its chunks.
    assert 'Let me refund that order., issue_refund({"order_id": 8812' in rows[2]
    assert "google_genai.models.count_tokens" in rows[3]
    found = command("find", str(tmp_path), "--effect", "google_genai.models.generate_content")
    assert "turns.trp" in found


def test_one_client_records_in_two_event_loops(tmp_path: Path) -> None:
    """google-genai keeps an async connection pool per event loop; the instrumented client
    sends through the running loop's, so a client used by two `asyncio.run`s records both."""
    original = genai.Client(api_key=API_KEY)._api_client._async_httpx_client
    if not hasattr(original, "_client_for_running_loop"):
        pytest.skip(
            "this google-genai release keeps one async pool for every loop (the plain client "
            "cannot be used from a second loop either)"
        )
    path = tmp_path / "loops.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        client = client_for(url)
        answers = [
            asyncio.run(client.aio.models.generate_content(model=MODEL, contents=ASK)).text
            for _ in range(2)
        ]
    assert answers == ["Order 8812 was refunded in full. Anything else?"] * 2
    assert [op.identity.occurrence for op in toolreplay.read_trace(path).operations] == [0, 1]


ABSENT_AIOHTTP = """
import sys
sys.modules["aiohttp"] = None  # `import aiohttp` now raises ImportError, as when not installed
import json
from pathlib import Path

from google.genai import _api_client

import toolreplay
from examples.local_gemini import LocalGemini
from tests.adapters.http_api import served
from tests.adapters.test_google_genai import replay_offline, run

path = Path(sys.argv[1])
with served(LocalGemini()) as url, toolreplay.record(path):
    recorded = run("async", url)
replayed = replay_offline(path, lambda url: run("async", url))
effects = [op.effect for op in toolreplay.read_trace(path).operations]
print(json.dumps({"aiohttp": _api_client.has_aiohttp, "same": replayed == recorded,
                  "effects": effects, "loaded": "aiohttp" in sys.modules and
                  sys.modules["aiohttp"] is not None}))
"""


def test_the_async_path_is_captured_with_aiohttp_installed_and_absent(tmp_path: Path) -> None:
    # Installed (this process): the plain client sends async requests with aiohttp, the
    # instrumented one through its capturing httpx client (the SDK's own switch).
    from google.genai import _api_client

    plain = genai.Client(api_key=API_KEY)
    assert _api_client.has_aiohttp
    assert cast(Any, plain)._api_client._use_aiohttp()
    assert not cast(Any, instrument(plain))._api_client._use_aiohttp()
    # Absent: a real child process in which `import aiohttp` fails before google.genai is
    # first imported. The SDK decides once, at its import, by `try: import aiohttp /
    # except ImportError`, so this is the path it takes where aiohttp is not installed.
    result = subprocess.run(
        [sys.executable, "-c", ABSENT_AIOHTTP, str(tmp_path / "absent.trp")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen == {"aiohttp": False, "same": True, "effects": EFFECTS, "loaded": False}


CANARIES = {
    "bearer": "CANARY-gemini-bearer-81c2",
    "oauth": "CANARY-gemini-oauth-token-40aa",
    "header": "CANARY-gemini-header-5e07",
    "plain": "CANARY-gemini-plain-header-9d3b",
    "cookie": "CANARY-gemini-cookie-2b9f",
    "query": "CANARY-gemini-query-77d1",
}


def canary_app(base_url: str) -> list[Any]:
    """Gemini calls carrying a credential in every place a client can put one: the key
    (`x-goog-api-key`), an `Authorization: Bearer` header, a credential header and a plain
    header of the application's, a cookie, a `key=` query parameter in every URL; and a
    Vertex AI client whose OAuth credentials send their token as a bearer. Sync, async and
    streamed. Also the promoted case's runner (`case_runner`)."""
    base = base_url.removesuffix("/v1")
    query = {"params": {"key": CANARIES["query"]}}
    http = types.HttpOptions(
        base_url=base,
        api_version="v1beta",
        headers={
            "Authorization": f"Bearer {CANARIES['bearer']}",
            "X-Tenant-Api-Key": CANARIES["header"],
            "X-Tenant": CANARIES["plain"],
            "Cookie": f"session={CANARIES['cookie']}",
        },
        client_args=query,
        async_client_args=query,
    )
    client = instrument(genai.Client(api_key=API_KEY, http_options=http))
    vertex = instrument(
        genai.Client(
            vertexai=True,
            project="refund-prod",
            location="us-central1",
            credentials=Credentials(token=CANARIES["oauth"]),
            http_options=types.HttpOptions(base_url=base, api_version="v1beta1"),
        )
    )
    answers: list[Any] = [client.models.generate_content(model=MODEL, contents=ASK).text]
    answers += [c.text for c in client.models.generate_content_stream(model=MODEL, contents=ASK)]
    answers.append(
        asyncio.run(client.aio.models.generate_content(model=MODEL, contents=ASK + "?")).text
    )
    answers.append(vertex.models.generate_content(model=MODEL, contents=ASK).text)
    return answers


def case_runner() -> list[Any]:
    """The promoted case's runner: the calls, against an address nothing listens on."""
    return canary_app("http://127.0.0.1:9")


def test_no_credential_reaches_a_trace_a_branch_a_case_or_the_output(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "canaries.trp"
    api = LocalGemini()
    with served(api) as url, toolreplay.record(path):
        answers = canary_app(url)
    sent = b"".join(
        b"".join(name + b": " + value for name, value in request.headers.raw)
        + str(request.url).encode()
        for request in api.requests
    )
    for secret in (API_KEY, *CANARIES.values()):  # each was really sent
        assert secret.encode() in sent, secret
    operations = toolreplay.read_trace(path).operations
    assert cast(Any, operations[-1].inputs)["path"] == (
        f"/v1beta1/projects/refund-prod/locations/us-central1/publishers/google/models/"
        f"{MODEL}:generateContent"
    )
    assert operations[-1].effect == "google_genai.models.generate_content"
    assert cast(Any, operations[0].inputs)["query"] == {"key": "<redacted>"}

    branch = tmp_path / "branch.trp"
    patch = edit({"$.candidates[0].content.parts[0].text": "Held."})
    with toolreplay.fork(path, branch, patches=[toolreplay.replace_output(at=0, value=patch)]):
        assert case_runner()[0] == "Held."
    case = toolreplay.promote(
        path,
        tmp_path / "cases" / "gemini",
        name="gemini",
        runner="tests.adapters.test_google_genai:case_runner",
        expected=answers,
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
    for header in (b"x-goog-api-key", b"x-tenant", b"authorization", b"cookie"):
        assert header not in path.read_bytes().lower()


@pytest.mark.filterwarnings("ignore:The SDK's token creation")
def test_an_ephemeral_token_is_recorded_and_replayed_as_a_placeholder(tmp_path: Path) -> None:
    """`auth_tokens.create` answers a credential (the token's name): the application gets
    it live, the trace never holds it, and a replay hands back the placeholder."""
    path = tmp_path / "token.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        # Held: google-genai 1.x closes its HTTP client when the `Client` is collected,
        # so a temporary client's resource fails (the plain SDK's too).
        client = client_for(url)
        live = client.auth_tokens.create(config={"uses": 1})
    assert live.name == AUTH_TOKEN
    assert AUTH_TOKEN.encode() not in path.read_bytes()
    assert b"<redacted>" in path.read_bytes()  # the trace is readable: the check can fail
    (operation,) = toolreplay.read_trace(path).operations
    assert operation.effect == "google_genai.auth_tokens.create"
    assert cast(Any, operation.outcome).value["body"] == {"name": "<redacted>"}

    def create_token(base_url: str) -> types.AuthToken:
        client = client_for(base_url)
        return client.auth_tokens.create(config={"uses": 1})

    replayed = replay_offline(path, create_token)
    assert isinstance(replayed, types.AuthToken)
    assert replayed.name == "<redacted>"


def test_a_profiles_credential_path_must_parse() -> None:
    from toolreplay.adapters.google_genai.profile import GOOGLE_GENAI

    with pytest.raises(AdapterOptionError, match=r"google_genai\.auth_tokens\.create.*'\$'"):
        dataclasses.replace(GOOGLE_GENAI, credential_outputs={"auth_tokens.create": ("name",)})
