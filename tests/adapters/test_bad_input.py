"""Bad input gets a precise error naming the operation; nothing is dropped, nothing goes live."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from examples.local_openai import LocalOpenAI, refusing
from tests.adapters.support import sync_client
from toolreplay.adapters.openai import instrument
from toolreplay.adapters.openai.exchange import request_inputs


def recorded(tmp_path: Path, **create: Any) -> tuple[Path, toolreplay.Operation]:
    trace = tmp_path / "source.trp"
    with toolreplay.record(trace):
        result = instrument(sync_client(LocalOpenAI("approve", deltas=3))).responses.create(
            model="gpt-5-mini", input="Refund?", **create
        )
        if create.get("stream"):
            list(result)
    return trace, toolreplay.read_trace(trace).operations[0]


def forked(
    trace: Path, operation: toolreplay.Operation, output: Any, tmp_path: Path, **create: Any
) -> Any:
    patch = toolreplay.replace_output(
        effect=operation.effect, inputs=operation.inputs, value=output
    )
    sent: list[Any] = []
    branch = tmp_path / f"branch-{len(list(tmp_path.glob('branch-*')))}.trp"
    try:
        with toolreplay.fork(trace, branch, patches=[patch]):
            result = instrument(sync_client(refusing(sent))).responses.create(
                model="gpt-5-mini", input="Refund?", **create
            )
            return list(result) if create.get("stream") else result
    finally:
        assert sent == []


def output_of(operation: toolreplay.Operation) -> Any:
    assert isinstance(operation.outcome, toolreplay.Returned)
    return copy.deepcopy(operation.outcome.value)


def test_a_recorded_body_the_sdk_cannot_parse_names_the_operation(tmp_path: Path) -> None:
    trace, operation = recorded(tmp_path)
    output = output_of(operation)
    del output["body"]
    output["text"] = '{"id": "resp_1", "output": ['  # JSON cut short
    with pytest.raises(toolreplay.UnsupportedResponseError) as raised:
        forked(trace, operation, output, tmp_path)
    message = str(raised.value)
    assert "openai.responses.create (POST /responses)" in message
    assert "cannot parse the recorded response" in message
    assert "re-record" in message


def test_an_output_without_status_or_body_names_what_is_missing(tmp_path: Path) -> None:
    trace, operation = recorded(tmp_path)
    output = output_of(operation)
    with pytest.raises(toolreplay.UnsupportedResponseError, match=r"\$\.output\.status"):
        forked(trace, operation, {**output, "status": "200"}, tmp_path)
    del output["body"]
    with pytest.raises(toolreplay.UnsupportedResponseError, match="has no body"):
        forked(trace, operation, output, tmp_path)


def test_a_damaged_stream_event_names_its_path(tmp_path: Path) -> None:
    trace, operation = recorded(tmp_path, stream=True)
    output = output_of(operation)
    output["events"][3] = {"event": "response.output_text.delta", "data": {}, "colour": "red"}
    with pytest.raises(
        toolreplay.UnsupportedResponseError, match=r"\$\.output\.events\[3\]\.colour"
    ):
        forked(trace, operation, output, tmp_path, stream=True)


def test_a_stream_cut_mid_event_replays_what_was_received_then_refuses_to_go_on(
    tmp_path: Path,
) -> None:
    trace, operation = recorded(tmp_path, stream=True)
    output = output_of(operation)
    # As if the application had closed the stream with half an event received.
    output["events"] = output["events"][:4]
    output["tail"] = 'event: response.output_text.delta\ndata: {"type": "response.out'
    output["end"] = "closed_early"
    with pytest.raises(toolreplay.StreamReplayError, match="read past the end of the recording"):
        forked(trace, operation, output, tmp_path, stream=True)


def test_a_file_upload_is_recorded_as_a_digest_never_the_bytes(tmp_path: Path) -> None:
    trace = tmp_path / "upload.trp"
    secret_bytes = b"the contents of a private document " * 10

    def upload(client: Any) -> Any:
        try:
            return client.files.create(file=("doc.txt", secret_bytes), purpose="assistants")
        except Exception as error:  # the local API has no /files: a 404, recorded as such
            return type(error).__name__

    with toolreplay.record(trace):
        live = upload(instrument(sync_client(LocalOpenAI())))
    assert b"private document" not in trace.read_bytes()
    inputs = toolreplay.read_trace(trace).operations[0].inputs
    assert "body" not in inputs
    digest = inputs["body_digest"]
    assert isinstance(digest, dict)
    assert digest["content_type"] == "multipart/form-data"
    assert isinstance(digest["size"], int)
    assert digest["size"] > len(secret_bytes)
    assert "never the bytes" in str(digest["note"])
    sent: list[Any] = []
    with toolreplay.replay(trace):  # the random multipart boundary does not change the digest
        assert upload(instrument(sync_client(refusing(sent)))) == live
    assert sent == []
    with pytest.raises(toolreplay.ReplayMiss), toolreplay.replay(trace):
        instrument(sync_client(refusing(sent))).files.create(
            file=("doc.txt", secret_bytes + b"!"), purpose="assistants"
        )
    assert sent == []


def test_a_body_that_claims_json_and_is_not_is_refused() -> None:
    with pytest.raises(toolreplay.UnsupportedRequestError, match="does not parse as JSON"):
        request_inputs("POST", "/v1/responses", "/v1/", [], "application/json", b"{nope")


def test_a_request_outside_the_base_url_is_refused_in_a_session(tmp_path: Path) -> None:
    sent: list[Any] = []
    client = instrument(sync_client(refusing(sent)))
    empty = tmp_path / "empty.trp"
    with toolreplay.record(empty):
        with pytest.raises(toolreplay.UnsupportedRequestError, match="not below the client's base"):
            client.get("https://elsewhere.example/tokens", cast_to=object)
    assert sent == []
    assert len(toolreplay.read_trace(empty)) == 0


def test_a_request_to_another_host_is_refused_though_its_path_is_below_the_base_url(
    tmp_path: Path,
) -> None:
    # Anthropic's base URL path is `/`: every path is below it, so the host decides.
    import anthropic
    import httpx2

    from examples.local_anthropic import refusing as refusing_claude
    from toolreplay.adapters.anthropic import instrument as instrument_claude

    sent: list[Any] = []
    http = httpx2.Client(transport=httpx2.MockTransport(refusing_claude(sent)))
    client = instrument_claude(anthropic.Anthropic(api_key="sk-ant-x", http_client=http))
    trace = tmp_path / "claude.trp"
    with toolreplay.record(trace):
        with pytest.raises(toolreplay.UnsupportedRequestError, match="another host"):
            client.get("https://elsewhere.example/v1/models", cast_to=object)
    assert sent == []
    assert len(toolreplay.read_trace(trace)) == 0
