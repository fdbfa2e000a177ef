"""The OpenAI Responses adapter against the real SDK (openai==2.20.0) over local transports."""

from __future__ import annotations

import asyncio
import gc
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.responses import Response

import toolreplay
from tests.support.openai_fakes import (
    CUSTOM_HEADER_VALUE,
    FAKE_KEY,
    REQUEST,
    Transport,
    async_client,
    exploding,
    response_body,
    serving,
    sync_client,
)
from toolreplay import UnsupportedRequestError, UnsupportedResponseError
from toolreplay.adapters.openai import instrument
from toolreplay.adapters.openai.compat import sdk_response_body
from toolreplay.adapters.openai.responses import validation_path


def record_one(path: Path, transport: Transport, **request: Any) -> Response:
    client = instrument(sync_client(transport))
    with toolreplay.record(path):
        return client.responses.create(**(request or REQUEST))


# --- dependency -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prelude", "message"),
    [
        ("sys.modules['openai'] = None", "needs the openai package, version 2.20.0"),
        ("import openai; openai.__version__ = '2.19.0'", "openai 2.19.0 is installed"),
    ],
)
def test_a_missing_or_different_sdk_is_a_dependency_error(prelude: str, message: str) -> None:
    probe = (
        f"import sys\n{prelude}\n"
        "try:\n    import toolreplay.adapters.openai\n"
        "except Exception as error:\n    print(type(error).__name__, '|', error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    name, _, text = result.stdout.partition(" | ")
    assert name == "OpenAIAdapterDependencyError"
    assert message in text
    assert "uv sync --extra openai" in text


# --- the wrapper ------------------------------------------------------------------------


def test_instrument_wraps_without_mutating_and_passes_everything_else_through() -> None:
    client = sync_client(exploding())
    responses_before = client.responses
    create_before = client.responses.create
    wrapped = instrument(client)
    assert wrapped.original_client is client
    assert client.responses is responses_before
    assert client.responses.create == create_before
    assert wrapped.api_key == FAKE_KEY
    assert wrapped.models is client.models
    assert wrapped.responses.retrieve == client.responses.retrieve
    async_wrapped = instrument(async_client(exploding()))
    assert isinstance(async_wrapped.original_client, openai.AsyncOpenAI)
    azure = openai.AzureOpenAI(api_key="k", api_version="2024-10-21", azure_endpoint="https://x")
    with pytest.raises(TypeError, match="Azure OpenAI clients are not supported"):
        instrument(azure)
    with pytest.raises(TypeError, match=r"takes an openai\.OpenAI or openai\.AsyncOpenAI"):
        instrument(object())  # type: ignore[call-overload]  # the mistake under test


# --- the closed request surface --------------------------------------------------------

REFUSED: dict[str, tuple[dict[str, Any], str]] = {
    "stream": ({**REQUEST, "stream": True}, "stream=...): streaming (True)"),
    "stream zero": ({**REQUEST, "stream": 0}, "stream=...): streaming (0)"),
    "tools": ({**REQUEST, "tools": []}, "tools=...): this field is not supported"),
    "instructions": ({**REQUEST, "instructions": "be nice"}, "instructions=..."),
    "temperature": ({**REQUEST, "temperature": 0.2}, "temperature=..."),
    "extra_headers": ({**REQUEST, "extra_headers": {"Authorization": "x"}}, "extra_headers=..."),
    "extra_body": ({**REQUEST, "extra_body": {"a": 1}}, "extra_body=..."),
    "extra_query": ({**REQUEST, "extra_query": {"a": "1"}}, "extra_query=..."),
    "timeout": ({**REQUEST, "timeout": 5}, "timeout=..."),
    "list input": ({**REQUEST, "input": [{"role": "user", "content": "x"}]}, "input must be a str"),
    "missing input": ({"model": "m"}, "input must be a str, not NoneType"),
    "surrogate input": ({**REQUEST, "input": "bad \ud800"}, "lone surrogate"),
    "missing model": ({"input": "x"}, "model=...): a non-empty model name"),
    "empty model": ({**REQUEST, "model": ""}, "model=...): a non-empty model name"),
    "reasoning keys": (
        {**REQUEST, "reasoning": {"effort": "low", "summary": "auto"}},
        'reasoning must be exactly {"effort": ...}',
    ),
    "effort": ({**REQUEST, "reasoning": {"effort": "max"}}, "effort 'max' is not one of"),
    "zero tokens": ({**REQUEST, "max_output_tokens": 0}, "must be a positive int, not 0"),
    "bool tokens": ({**REQUEST, "max_output_tokens": True}, "must be a positive int, not True"),
    "str tokens": ({**REQUEST, "max_output_tokens": "5"}, "must be a positive int, not '5'"),
}


@pytest.mark.parametrize("mode", ["live", "record", "replay"])
@pytest.mark.parametrize("case", REFUSED)
def test_every_field_outside_the_surface_is_refused_before_any_transport(
    tmp_path: Path, case: str, mode: str
) -> None:
    request, message = REFUSED[case]
    transport = exploding()
    client = instrument(sync_client(transport))
    empty = tmp_path / "empty.trp"
    with toolreplay.record(empty):
        pass
    session = {
        "live": None,
        "record": toolreplay.record(tmp_path / "refused.trp"),
        "replay": toolreplay.replay(empty),
    }[mode]
    if session is None:
        with pytest.raises(UnsupportedRequestError) as caught:
            client.responses.create(**request)
    else:
        with session, pytest.raises(UnsupportedRequestError) as caught:
            client.responses.create(**request)
    assert message in str(caught.value)
    assert transport.requests == []


def test_positional_arguments_are_refused() -> None:
    client = instrument(sync_client(exploding()))
    with pytest.raises(UnsupportedRequestError, match="keyword arguments only"):
        client.responses.create("gpt-5-mini")


def test_the_four_fields_are_the_inputs_and_credentials_never_reach_the_trace(
    tmp_path: Path,
) -> None:
    transport = serving()
    path = tmp_path / "recorded.trp"
    record_one(path, transport)
    sent = transport.requests[0]
    assert sent.headers["authorization"] == f"Bearer {FAKE_KEY}"  # the transport saw them...
    data = path.read_bytes()
    assert FAKE_KEY.encode() not in data  # ...the trace never does
    assert b"RECOGNISABLE" not in data
    assert CUSTOM_HEADER_VALUE.encode() not in data
    assert b"authorization" not in data.lower()
    assert b"api.openai.com" not in data
    operation = toolreplay.read_trace(path).operations[0]
    assert operation.effect == "openai.responses.create"
    assert operation.inputs == {
        "model": REQUEST["model"],
        "input": REQUEST["input"],
        "reasoning": {"effort": "minimal"},
        "max_output_tokens": 256,
    }
    assert json.loads(sent.content) == REQUEST


@pytest.mark.parametrize("stream", [False, None, openai.omit])
def test_omitted_optional_fields_are_recorded_as_null_and_not_sent(
    tmp_path: Path, stream: object
) -> None:
    transport = serving()
    record_one(tmp_path / "t.trp", transport, model="m", input="x", stream=stream)
    assert json.loads(transport.requests[0].content) == {"model": "m", "input": "x"}
    inputs = toolreplay.read_trace(tmp_path / "t.trp").operations[0].inputs
    assert inputs == {"model": "m", "input": "x", "reasoning": None, "max_output_tokens": None}


# --- responses --------------------------------------------------------------------------


def live_response(body: dict[str, Any]) -> Response:
    return sync_client(serving(body)).responses.create(**REQUEST)


def test_the_envelope_keeps_the_body_as_received(tmp_path: Path) -> None:
    body = response_body()
    path = tmp_path / "t.trp"
    record_one(path, serving(body))
    envelope = toolreplay.read_trace(path).operations[0].outcome
    assert isinstance(envelope, toolreplay.Returned)
    assert isinstance(envelope.value, dict)
    assert envelope.value["body"] == body
    recorded_body = envelope.value["body"]
    assert isinstance(recorded_body, dict)
    assert type(recorded_body["created_at"]) is int  # the SDK would make it a float
    assert envelope.value["request_id"] == "req_recorded_42"
    # Lossless against the SDK's own public serialisation: nothing it holds is missing.
    public = live_response(body).to_dict(mode="json")
    assert set(public) <= set(recorded_body)
    for key, value in public.items():
        if key != "prompt_cache_retention":
            assert value == recorded_body[key], key


def test_replay_rebuilds_the_public_response(tmp_path: Path) -> None:
    body = response_body()
    path = tmp_path / "t.trp"
    recorded = record_one(path, serving(body))
    live = live_response(body)
    client = instrument(sync_client(transport := exploding()))
    with toolreplay.replay(path):
        replayed = client.responses.create(**REQUEST)
    assert transport.requests == []
    assert isinstance(replayed, Response)
    assert replayed == recorded
    assert replayed.output_text == live.output_text == "approve"
    assert replayed.created_at == live.created_at == 1741476777.0
    assert replayed._request_id == live._request_id == "req_recorded_42"  # pyright: ignore[reportPrivateUsage]
    assert replayed.to_dict(mode="json")["billing"] == {"payer": "developer"}  # unknown kept
    # The one documented difference: the SDK 2.20.0 spelling of prompt_cache_retention.
    live_retention: object = live.prompt_cache_retention  # what the API sent, off the SDK's type
    assert live_retention == "in_memory"
    assert replayed.prompt_cache_retention == "in-memory"
    difference = {
        key
        for key, value in live.to_dict(mode="json").items()
        if replayed.to_dict(mode="json")[key] != value
    }
    assert difference == {"prompt_cache_retention"}


def test_the_prompt_cache_retention_shim_is_needed_and_narrow() -> None:
    body = response_body()
    with pytest.raises(Exception, match="in-memory"):
        Response.model_validate(body)
    assert sdk_response_body(body)["prompt_cache_retention"] == "in-memory"
    assert sdk_response_body(response_body(prompt_cache_retention="24h")) == response_body(
        prompt_cache_retention="24h"
    )
    unchanged = response_body(prompt_cache_retention=None)
    assert sdk_response_body(unchanged) is unchanged


@pytest.mark.parametrize(
    ("output", "path"),
    [
        (
            [{"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": "{}"}],
            '$.output[0].type: "function_call"',
        ),
        (
            [
                {
                    "type": "message",
                    "id": "m",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_audio", "data": "x"}],
                }
            ],
            '$.output[0].content[0].type: "output_audio"',
        ),
    ],
)
def test_unsupported_discriminators_fail_when_recording(
    tmp_path: Path, output: list[Any], path: str
) -> None:
    with pytest.raises(UnsupportedResponseError, match=re.escape(path)):
        record_one(tmp_path / "t.trp", serving(response_body(output=output)))
    # The call happened and is recorded; replay refuses it the same way, same type.
    client = instrument(sync_client(exploding()))
    with toolreplay.replay(tmp_path / "t.trp"):
        with pytest.raises(UnsupportedResponseError, match=re.escape(path)):
            client.responses.create(**REQUEST)


def test_a_hand_edited_envelope_fails_when_replaying(tmp_path: Path) -> None:
    path = tmp_path / "t.trp"
    record_one(path, serving())
    lines = path.read_text().splitlines()
    operation = json.loads(lines[1])
    operation["outcome"]["value"]["body"]["output"][1]["content"][0]["type"] = "output_image"
    edited = tmp_path / "edited.trp"
    edited.write_text("\n".join([lines[0], json.dumps(operation)]) + "\n")  # no footer now
    client = instrument(sync_client(exploding()))
    with toolreplay.replay(edited), pytest.raises(UnsupportedResponseError, match="output_image"):
        client.responses.create(**REQUEST)
    operation["outcome"]["value"]["body"]["output"][1]["content"][0]["type"] = "output_text"
    operation["outcome"]["value"]["body"]["created_at"] = "yesterday"
    edited.write_text("\n".join([lines[0], json.dumps(operation)]) + "\n")
    with toolreplay.replay(edited), pytest.raises(UnsupportedResponseError, match="created_at"):
        client.responses.create(**REQUEST)
    operation["outcome"]["value"]["body"]["created_at"] = 1741476777
    operation["outcome"]["value"]["body"]["output"][1]["content"][0]["text"] = 5
    edited.write_text("\n".join([lines[0], json.dumps(operation)]) + "\n")
    with toolreplay.replay(edited), pytest.raises(UnsupportedResponseError) as caught:
        client.responses.create(**REQUEST)
    assert str(caught.value) == (
        "the recorded body is not a valid openai 2.20.0 Response: "
        "$.output[1].content[0].text: Input should be a valid string. Re-record the call, "
        "or fix the envelope to match openai 2.20.0's Response"
    )


@pytest.mark.parametrize(
    ("location", "path"),
    [
        (("created_at",), "$.created_at"),
        (
            ("output", 1, "ResponseOutputMessage", "content", 0, "ResponseOutputText", "text"),
            "$.output[1].content[0].text",
        ),
        (("text", "format", "ResponseFormatTextJSONSchemaConfig", "name"), "$.text.format.name"),
        (("tool_choice", "literal['none','auto','required']"), "$.tool_choice"),
        (("metadata", "a key"), '$.metadata["a key"]'),
    ],
)
def test_validation_locations_are_json_paths(location: tuple[str | int, ...], path: str) -> None:
    assert validation_path(location) == path


# --- provider errors --------------------------------------------------------------------


STATUS_CLASSES = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
    500: openai.InternalServerError,
    503: openai.InternalServerError,
    418: openai.APIStatusError,
}


@pytest.mark.parametrize("status", STATUS_CLASSES)
def test_status_errors_replay_as_the_same_sdk_exception(tmp_path: Path, status: int) -> None:
    error_body = {"error": {"message": f"failed with {status}", "type": "x", "code": f"c{status}"}}
    path = tmp_path / "err.trp"
    client = instrument(sync_client(serving(error_body, status=status)))
    with toolreplay.record(path), pytest.raises(openai.APIStatusError) as live:
        client.responses.create(**REQUEST)
    dead = instrument(sync_client(transport := exploding()))
    with toolreplay.replay(path), pytest.raises(openai.APIStatusError) as replayed:
        dead.responses.create(**REQUEST)
    assert transport.requests == []
    assert type(replayed.value) is STATUS_CLASSES[status] is type(live.value)
    assert replayed.value.status_code == status
    assert replayed.value.body == live.value.body
    assert replayed.value.code == live.value.code == f"c{status}"
    assert replayed.value.request_id == live.value.request_id == "req_recorded_42"
    assert replayed.value.message == live.value.message
    raised = toolreplay.read_trace(path).operations[0].outcome
    assert isinstance(raised, toolreplay.Raised)
    assert raised.error_type == f"openai.{STATUS_CLASSES[status].__name__}"
    assert FAKE_KEY not in path.read_text()


def test_an_edited_error_envelope_is_refused(tmp_path: Path) -> None:
    error_body = {"error": {"message": "slow down", "type": "x", "code": "rate"}}
    path = tmp_path / "err.trp"
    with toolreplay.record(path), pytest.raises(openai.RateLimitError):
        instrument(sync_client(serving(error_body, status=429))).responses.create(**REQUEST)
    lines = path.read_text().splitlines()
    operation = json.loads(lines[1])
    operation["outcome"]["error"]["args"][0]["status_code"] = 500
    edited = tmp_path / "edited.trp"
    edited.write_text("\n".join([lines[0], json.dumps(operation)]) + "\n")
    with toolreplay.replay(edited), pytest.raises(UnsupportedResponseError, match="status 500"):
        instrument(sync_client(exploding())).responses.create(**REQUEST)


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        (httpx.ReadTimeout("slow"), openai.APITimeoutError),
        (httpx.ConnectError("refused"), openai.APIConnectionError),
    ],
)
def test_timeouts_and_connection_errors_replay(
    tmp_path: Path, failure: Exception, kind: type[Exception]
) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise failure

    path = tmp_path / "err.trp"
    with toolreplay.record(path), pytest.raises(kind) as live:
        instrument(sync_client(Transport(fail))).responses.create(**REQUEST)
    with toolreplay.replay(path), pytest.raises(kind) as replayed:
        instrument(sync_client(exploding())).responses.create(**REQUEST)
    assert type(replayed.value) is type(live.value)
    assert str(replayed.value) == str(live.value)


# --- zero transport in every offline mode -----------------------------------------------


def test_fork_and_case_verification_make_no_provider_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "source.trp"
    record_one(source, serving())
    operation = toolreplay.read_trace(source).operations[0]
    assert isinstance(operation.outcome, toolreplay.Returned)
    envelope = operation.outcome.value
    assert isinstance(envelope, dict)
    corrected = json.loads(json.dumps(envelope))
    corrected["body"]["output"][1]["content"][0]["text"] = "manual_review"
    patch = toolreplay.replace_output(
        effect="openai.responses.create", inputs=operation.inputs, value=corrected
    )
    transport = exploding()
    client = instrument(sync_client(transport))
    with toolreplay.fork(source, tmp_path / "branch.trp", patches=[patch]):
        assert client.responses.create(**REQUEST).output_text == "manual_review"
    report = toolreplay.diff(source, tmp_path / "branch.trp")
    first = report.first_divergence
    assert first is not None
    assert first.effect == "openai.responses.create"
    assert [f.path for f in first.fields] == ["$.output.body.output[1].content[0].text"]
    assert transport.requests == []

    module = tmp_path / "openai_case_app.py"
    module.write_text(
        "from tests.support.openai_fakes import REQUEST, exploding, sync_client\n"
        "from toolreplay.adapters.openai import instrument\n"
        "TRANSPORT = exploding()\n"
        "def run() -> str:\n"
        "    client = instrument(sync_client(TRANSPORT))\n"
        "    return client.responses.create(**REQUEST).output_text\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    case = toolreplay.promote(
        tmp_path / "branch.trp",
        tmp_path / "case",
        name="openai_case",
        runner="openai_case_app:run",
        expected="manual_review",
    )
    assert toolreplay.verify_case(case.directory).returned == "manual_review"
    import openai_case_app  # type: ignore[import-not-found]  # written above

    assert openai_case_app.TRANSPORT.requests == []


def test_async_replay_creates_no_provider_coroutine(tmp_path: Path) -> None:
    path = tmp_path / "async.trp"
    live_transport = serving()

    async def record() -> str:
        client = instrument(async_client(live_transport))
        with toolreplay.record(path):
            return (await client.responses.create(**REQUEST)).output_text

    assert asyncio.run(record()) == "approve"
    assert len(live_transport.requests) == 1
    transport = exploding()

    async def replay() -> Response:
        client = instrument(async_client(transport))
        with toolreplay.replay(path):
            return await client.responses.create(**REQUEST)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        replayed = asyncio.run(replay())
        gc.collect()
    assert replayed.output_text == "approve"
    assert transport.requests == []
    assert not [w for w in caught if "never awaited" in str(w.message)]
