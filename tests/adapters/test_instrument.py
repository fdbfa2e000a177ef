"""`instrument()`: a non-mutating copy of any OpenAI client, whose requests sessions decide."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import openai
import pytest

import toolreplay
from examples.local_openai import HTTP, LocalOpenAI, refusing
from tests.adapters.support import async_client, sync_client
from toolreplay.adapters.openai import (
    InstrumentedAsyncOpenAI,
    InstrumentedAzureOpenAI,
    InstrumentedOpenAI,
    effect_name,
    instrument,
)
from toolreplay.adapters.openai.exchange import PER_RUN_CACHE_KEY, request_inputs

ROOT = Path(__file__).resolve().parents[2]


def test_instrument_copies_without_changing_the_client() -> None:
    client = sync_client(LocalOpenAI())
    http_client = client._client  # pyright: ignore[reportPrivateUsage]  # the SDK's HTTP client
    responses = client.responses
    instrumented = instrument(client)
    assert isinstance(instrumented, InstrumentedOpenAI)
    assert isinstance(instrumented, openai.OpenAI)
    assert instrumented.original_client is client
    assert client._client is http_client  # pyright: ignore[reportPrivateUsage]
    assert client.responses is responses
    assert instrumented.api_key == client.api_key
    assert isinstance(instrument(async_client(LocalOpenAI())), InstrumentedAsyncOpenAI)
    with pytest.raises(TypeError, match="already instrumented"):
        instrument(instrumented)

    class Custom(openai.OpenAI):
        pass

    with pytest.raises(TypeError, match="subclass"):
        instrument(Custom(api_key="k"))
    with pytest.raises(TypeError, match=r"takes an openai\.OpenAI"):
        instrument(object())  # pyright: ignore[reportCallIssue, reportArgumentType]  # refused at run time


def test_outside_sessions_requests_go_live_unrecorded(tmp_path: Path) -> None:
    api = LocalOpenAI("approve")
    client = instrument(sync_client(api))
    assert client.responses.create(model="m", input="x").output_text == "approve"
    assert api.calls == 1


def test_with_options_keeps_capturing(tmp_path: Path) -> None:
    trace = tmp_path / "t.trp"
    api = LocalOpenAI("approve")
    client = instrument(sync_client(api)).with_options(timeout=5.0, max_retries=1)
    assert isinstance(client, InstrumentedOpenAI)
    with toolreplay.record(trace):
        client.models.list()
    assert [op.effect for op in toolreplay.read_trace(trace).operations] == ["openai.models.list"]
    sent: list[Any] = []
    with toolreplay.replay(trace):
        instrument(sync_client(refusing(sent))).with_options(timeout=1.0).models.list()
    assert sent == []


def test_a_request_outside_any_session_while_a_replay_is_open_is_refused(tmp_path: Path) -> None:
    trace = tmp_path / "empty.trp"
    with toolreplay.record(trace):
        pass
    sent: list[Any] = []
    client = instrument(sync_client(refusing(sent)))
    errors: list[BaseException] = []

    def elsewhere() -> None:  # a plain thread does not see the replay's context
        try:
            client.models.list()
        except BaseException as error:
            errors.append(error)

    with pytest.raises(toolreplay.SessionError), toolreplay.replay(trace):
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    assert sent == []
    assert [type(error) for error in errors] == [toolreplay.SessionContextError]


def test_azure_clients_are_instrumented_and_named_without_the_deployment(tmp_path: Path) -> None:
    settings: dict[str, Any] = {
        "api_key": "azure-key",
        "api_version": "2025-04-01-preview",
        "azure_endpoint": "https://example.openai.azure.com",
        "max_retries": 0,
    }
    api = LocalOpenAI(chat_texts=("hi",))
    live = openai.AzureOpenAI(
        http_client=HTTP.Client(transport=HTTP.MockTransport(api)), **settings
    )
    client = instrument(live)
    assert isinstance(client, InstrumentedAzureOpenAI)
    trace = tmp_path / "azure.trp"
    messages: list[Any] = [{"role": "user", "content": "hi"}]
    with toolreplay.record(trace):
        recorded = client.chat.completions.create(model="refunds", messages=messages)
    (operation,) = toolreplay.read_trace(trace).operations
    assert operation.effect == "openai.chat.completions.create"
    assert operation.inputs["path"] == "/deployments/refunds/chat/completions"
    assert operation.inputs["query"] == {"api-version": "2025-04-01-preview"}
    sent: list[Any] = []
    replaying = openai.AzureOpenAI(
        http_client=HTTP.Client(transport=HTTP.MockTransport(refusing(sent))), **settings
    )
    with toolreplay.replay(trace):
        assert (
            instrument(replaying).chat.completions.create(model="refunds", messages=messages)
            == recorded
        )
    assert sent == []


@pytest.mark.parametrize(
    ("method", "path", "name"),
    [
        ("POST", "/responses", "responses.create"),
        ("GET", "/responses/resp_68c1f0a9", "responses.retrieve"),
        ("DELETE", "/responses/resp_68c1f0a9", "responses.delete"),
        ("GET", "/responses/resp_1/input_items", "responses.input_items.list"),
        ("POST", "/chat/completions", "chat.completions.create"),
        ("POST", "/chat/completions/chatcmpl-1", "chat.completions.update"),
        ("GET", "/models/gpt-4o", "models.retrieve"),
        ("GET", "/models", "models.list"),
        ("POST", "/deployments/gpt-4o/embeddings", "embeddings.create"),
        ("POST", "/fine_tuning/jobs/ftjob-1/cancel", "fine_tuning.jobs.cancel.create"),
        ("GET", "/", "root.list"),
    ],
)
def test_effect_names_follow_the_endpoint(method: str, path: str, name: str) -> None:
    assert effect_name(method, path) == name


def test_with_raw_and_streaming_response_replay_the_same(tmp_path: Path) -> None:
    trace = tmp_path / "raw.trp"

    def calls(client: Any) -> list[Any]:
        raw = client.responses.with_raw_response.create(model="m", input="x")
        with client.responses.with_streaming_response.create(model="m", input="x") as streamed:
            body = streamed.parse()
            request_id = streamed.request_id
        return [raw.parse(), raw.request_id, raw.headers.get("content-type"), body, request_id]

    with toolreplay.record(trace):
        recorded = calls(instrument(sync_client(LocalOpenAI("approve"))))
    sent: list[Any] = []
    with toolreplay.replay(trace):
        assert calls(instrument(sync_client(refusing(sent)))) == recorded
    assert sent == []


def test_a_stream_the_application_stops_reading_is_recorded_as_received(tmp_path: Path) -> None:
    trace = tmp_path / "early.trp"

    def first_events(client: Any, count: int) -> list[Any]:
        events: list[Any] = []
        with client.responses.stream(model="m", input="x") as stream:
            for event in stream:
                events.append(event)
                if len(events) == count:
                    break
        return events

    with toolreplay.record(trace):
        recorded = first_events(instrument(sync_client(LocalOpenAI("a b c d", deltas=4))), 3)
    outcome = toolreplay.read_trace(trace).operations[0].outcome
    assert isinstance(outcome, toolreplay.Returned)
    assert isinstance(outcome.value, dict)
    assert outcome.value["end"] == "closed_early"
    with toolreplay.replay(trace):
        assert first_events(instrument(sync_client(refusing())), 3) == recorded


def run_python(code: str, *, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )


def test_an_sdk_outside_the_range_is_refused_naming_the_range(tmp_path: Path) -> None:
    fake = tmp_path / "openai"
    fake.mkdir()
    (fake / "__init__.py").write_text('__version__ = "1.109.1"\n')
    result = run_python("import toolreplay.adapters.openai", path=tmp_path)
    assert "OpenAIAdapterDependencyError" in result.stderr
    assert "openai >=2.20.0,<4" in result.stderr
    assert "1.109.1 is installed" in result.stderr
    missing = run_python(
        "import sys; sys.modules['openai'] = None; import toolreplay.adapters.openai"
    )
    assert "needs the openai package" in missing.stderr
    assert "uv sync --extra openai" in missing.stderr


def test_the_agents_sdks_per_run_cache_key_is_recorded_as_a_placeholder() -> None:
    def body_of(key: str) -> object:
        content = json.dumps({"model": "m", "prompt_cache_key": key}).encode()
        return request_inputs("POST", "/v1/responses", "/v1/", [], "application/json", content)[
            "body"
        ]

    generated = "agents-sdk:run:" + "0123456789abcdef" * 2
    assert body_of(generated) == {"model": "m", "prompt_cache_key": PER_RUN_CACHE_KEY}
    chosen = "agents-sdk:group:" + "0123456789abcdef" * 2  # stable across runs: kept
    assert body_of(chosen) == {"model": "m", "prompt_cache_key": chosen}


def gzipped(api: LocalOpenAI) -> Any:
    """`api`'s answers compressed as a server compresses them: gzip, streamed raw."""

    def handle(request: Any) -> Any:
        plain = api(request)
        headers = [(k, v) for k, v in plain.headers.multi_items() if k != "content-length"]
        return HTTP.Response(
            plain.status_code,
            headers=[*headers, ("content-encoding", "gzip")],
            stream=HTTP.ByteStream(gzip.compress(plain.read())),
        )

    return handle


def test_a_compressed_response_is_recorded_decoded_and_replays_the_same(tmp_path: Path) -> None:
    trace = tmp_path / "gzip.trp"

    def calls(client: Any) -> list[Any]:
        created = client.responses.create(model="m", input="x")
        streamed = list(client.responses.create(model="m", input="y", stream=True))
        return [created, streamed]

    bare = calls(sync_client(gzipped(LocalOpenAI("approve", deltas=3))))
    with toolreplay.record(trace):
        recorded = calls(instrument(sync_client(gzipped(LocalOpenAI("approve", deltas=3)))))
    assert recorded == bare
    outputs: list[Any] = []
    for operation in toolreplay.read_trace(trace).operations:
        assert isinstance(operation.outcome, toolreplay.Returned)
        outputs.append(operation.outcome.value)
    assert outputs[0]["body"]["object"] == "response"
    assert len(outputs[1]["events"]) == len(bare[1])
    assert all("content-encoding" not in output["headers"] for output in outputs)
    sent: list[Any] = []
    with toolreplay.replay(trace):
        assert calls(instrument(sync_client(refusing(sent)))) == bare
    assert sent == []


def test_the_original_http_clients_auth_and_hooks_apply(tmp_path: Path) -> None:
    trace = tmp_path / "hooks.trp"
    seen: list[str] = []
    api = LocalOpenAI("approve")

    def original_http(handler: Any) -> Any:
        def authorize(request: Any) -> Any:
            request.headers["x-gateway-key"] = "gateway-canary"
            return request

        return HTTP.Client(
            transport=HTTP.MockTransport(handler),
            auth=authorize,
            event_hooks={"request": [lambda request: seen.append(request.url.path)]},
        )

    def call(handler: Any) -> str:
        client = openai.OpenAI(api_key="k", max_retries=0, http_client=original_http(handler))
        return instrument(client).responses.create(model="m", input="x").output_text

    with toolreplay.record(trace):
        assert call(api) == "approve"
    assert api.requests[0].headers["x-gateway-key"] == "gateway-canary"
    assert b"gateway-canary" not in trace.read_bytes()
    with toolreplay.replay(trace):
        assert call(refusing()) == "approve"
    # The instrumented client sends as the original does, in every mode.
    assert seen == ["/v1/responses", "/v1/responses"]


def test_a_followed_redirect_is_two_requests_and_replays_followed(tmp_path: Path) -> None:
    trace = tmp_path / "redirect.trp"
    api = LocalOpenAI("approve")

    def redirecting(to: str) -> Any:
        def handle(request: Any) -> Any:
            if not request.url.params:
                return HTTP.Response(307, headers={"location": to})
            return api(request)

        return handle

    def call(handler: Any) -> str:
        http_client = HTTP.Client(transport=HTTP.MockTransport(handler), follow_redirects=True)
        client = openai.OpenAI(api_key="k", max_retries=0, http_client=http_client)
        return instrument(client).responses.create(model="m", input="x").output_text

    with toolreplay.record(trace):
        assert call(redirecting("/v1/responses?region=eu")) == "approve"
    operations = toolreplay.read_trace(trace).operations
    assert [op.inputs["query"] for op in operations] == [{}, {"region": "eu"}]
    first = operations[0].outcome
    assert isinstance(first, toolreplay.Returned)
    assert isinstance(first.value, dict)
    assert first.value["status"] == 307
    assert first.value["headers"] == {"location": "/v1/responses?region=eu"}
    with toolreplay.replay(trace):
        assert call(refusing()) == "approve"

    # A target on another host, or one whose query may hold a credential, is followed
    # live but not written: the recorded redirect has no location.
    for elsewhere in ("https://other.example/v1/responses?x=1", "/v1/responses?sig=s3cret"):
        path = tmp_path / f"elsewhere-{len(elsewhere)}.trp"
        with toolreplay.record(path):
            assert call(redirecting(elsewhere)) == "approve"
        assert b"s3cret" not in path.read_bytes()
        assert b"other.example" not in path.read_bytes()
        redirect = toolreplay.read_trace(path).operations[0].outcome
        assert isinstance(redirect, toolreplay.Returned)
        assert isinstance(redirect.value, dict)
        assert redirect.value["headers"] == {}
