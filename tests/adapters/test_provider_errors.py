"""Provider errors replay as the same SDK exception: HTTP statuses, timeouts, refused
connections, streams cut midway and retries, sync and async, under both SDK lines."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

import toolreplay
from examples.local_openai import (
    HTTP,
    REQUEST_ID,
    event_stream,
    refusing,
    response_body,
    response_events,
)
from tests.adapters.support import async_client, sdk_error_view, sync_client
from toolreplay.adapters.openai import instrument

STATUSES = [400, 401, 403, 404, 409, 422, 429, 500, 503, 418]


def error_body(status: int) -> dict[str, Any]:
    return {
        "error": {
            "message": f"status {status} from the API",
            "type": "invalid_request_error",
            "param": "input",
            "code": f"code_{status}",
        }
    }


def answering(status: int) -> Callable[[Any], Any]:
    def answer(request: Any) -> Any:
        return HTTP.Response(status, json=error_body(status), headers={"x-request-id": REQUEST_ID})

    return answer


def raising(kind: str) -> Callable[[Any], Any]:
    def fail(request: Any) -> Any:
        raise getattr(HTTP, kind)("the network failed", request=request)

    return fail


def create(client: Any) -> Any:
    return client.responses.create(model="gpt-5-mini", input="Refund?")


def recorded_then_replayed(handler: Callable[[Any], Any], tmp_path: Path) -> tuple[Any, Any]:
    trace = tmp_path / "errors.trp"
    with pytest.raises(openai.APIError) as live, toolreplay.record(trace):
        create(instrument(sync_client(handler)))
    sent: list[Any] = []
    with pytest.raises(openai.APIError) as replayed, toolreplay.replay(trace):
        create(instrument(sync_client(refusing(sent))))
    assert sent == []
    return live.value, replayed.value


@pytest.mark.parametrize("status", STATUSES)
def test_status_errors_replay_as_the_same_exception(status: int, tmp_path: Path) -> None:
    live, replayed = recorded_then_replayed(answering(status), tmp_path)
    assert isinstance(live, openai.APIStatusError)
    assert sdk_error_view(replayed) == sdk_error_view(live)
    assert replayed.request_id == REQUEST_ID
    assert replayed.code == f"code_{status}"


@pytest.mark.parametrize(
    ("kind", "sdk_error"),
    [
        ("ReadTimeout", openai.APITimeoutError),
        ("ConnectTimeout", openai.APITimeoutError),
        ("ConnectError", openai.APIConnectionError),
        ("RemoteProtocolError", openai.APIConnectionError),
    ],
)
def test_transport_errors_replay_as_the_same_exception(
    kind: str, sdk_error: type[Exception], tmp_path: Path
) -> None:
    live, replayed = recorded_then_replayed(raising(kind), tmp_path)
    assert type(live) is sdk_error
    assert sdk_error_view(replayed) == sdk_error_view(live)
    assert type(replayed.__cause__) is getattr(HTTP, kind)
    trace = toolreplay.read_trace(tmp_path / "errors.trp")
    outcome = trace.operations[0].outcome
    assert isinstance(outcome, toolreplay.Raised)
    assert outcome.error_type == f"httpx.{kind}"


def test_async_errors_replay_as_the_same_exception(tmp_path: Path) -> None:
    trace = tmp_path / "errors.trp"

    async def call(handler: Callable[[Any], Any]) -> BaseException:
        try:
            await create(instrument(async_client(handler)))
        except openai.APIError as error:
            return error
        raise AssertionError("no error")

    with toolreplay.record(trace):
        live = [asyncio.run(call(answering(429))), asyncio.run(call(raising("ReadTimeout")))]
    with toolreplay.replay(trace):
        replayed = [asyncio.run(call(refusing())), asyncio.run(call(refusing()))]
    assert [sdk_error_view(error) for error in replayed] == [
        sdk_error_view(error) for error in live
    ]


def test_retries_are_several_requests_and_replay_the_same(tmp_path: Path) -> None:
    statuses = iter([500, 429, 200])

    def flaky(request: Any) -> Any:
        status = next(statuses)
        headers = {"x-request-id": f"req_{status}", "retry-after-ms": "1"}
        if status == 200:
            return HTTP.Response(200, json=response_body("approve"), headers=headers)
        return HTTP.Response(status, json=error_body(status), headers=headers)

    trace = tmp_path / "retries.trp"
    with toolreplay.record(trace):
        live = create(instrument(sync_client(flaky, max_retries=2)))
    operations = toolreplay.read_trace(trace).operations
    assert [op.effect for op in operations] == ["openai.responses.create"] * 3
    assert [op.identity.occurrence for op in operations] == [0, 1, 2]
    sent: list[Any] = []
    with toolreplay.replay(trace):
        replayed = create(instrument(sync_client(refusing(sent), max_retries=2)))
    assert sent == []
    assert replayed == live
    assert replayed._request_id == "req_200"  # pyright: ignore[reportPrivateUsage]


class _CutStream(HTTP.SyncByteStream):
    """A response body that sends some events and then loses the connection."""

    def __init__(self, content: bytes) -> None:
        self._content = content

    def __iter__(self) -> Iterator[bytes]:
        yield self._content
        raise HTTP.RemoteProtocolError("peer closed connection without sending complete body")


class _AsyncCutStream(HTTP.AsyncByteStream):
    def __init__(self, content: bytes) -> None:
        self._content = content

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._content
        raise HTTP.RemoteProtocolError("peer closed connection without sending complete body")


def cut_stream_bytes() -> bytes:
    whole = event_stream(list(response_events("approve", deltas=4)))
    return whole[: len(whole) // 2]  # the server dies in the middle of an event


def cut(request: Any) -> Any:
    return HTTP.Response(
        200,
        stream=_CutStream(cut_stream_bytes()),
        headers={"content-type": "text/event-stream", "x-request-id": REQUEST_ID},
    )


def async_cut(request: Any) -> Any:
    return HTTP.Response(
        200,
        stream=_AsyncCutStream(cut_stream_bytes()),
        headers={"content-type": "text/event-stream", "x-request-id": REQUEST_ID},
    )


def read_stream(client: Any) -> tuple[list[Any], BaseException]:
    events: list[Any] = []
    try:
        for event in client.responses.create(model="gpt-5-mini", input="Refund?", stream=True):
            events.append(event)
    except Exception as error:
        return events, error
    raise AssertionError("the stream did not fail")


def test_a_stream_cut_midway_replays_its_events_then_the_same_error(tmp_path: Path) -> None:
    trace = tmp_path / "cut.trp"
    with toolreplay.record(trace):
        live_events, live_error = read_stream(instrument(sync_client(cut)))
    assert live_events  # some events arrived before the cut
    outcome = toolreplay.read_trace(trace).operations[0].outcome
    assert isinstance(outcome, toolreplay.Raised)
    assert outcome.error_type == "httpx.RemoteProtocolError"
    sent: list[Any] = []
    with toolreplay.replay(trace):
        events, error = read_stream(instrument(sync_client(refusing(sent))))
    assert sent == []
    assert events == live_events
    assert type(error) is type(live_error)
    assert str(error) == str(live_error)


def test_an_async_stream_cut_midway_replays_the_same(tmp_path: Path) -> None:
    trace = tmp_path / "cut.trp"

    async def read(client: Any) -> tuple[list[Any], str]:
        events: list[Any] = []
        try:
            stream = await client.responses.create(model="gpt-5-mini", input="Hi", stream=True)
            async for event in stream:
                events.append(event)
        except Exception as error:
            return events, f"{type(error).__name__}: {error}"
        raise AssertionError("the stream did not fail")

    with toolreplay.record(trace):
        live = asyncio.run(read(instrument(async_client(async_cut))))
    with toolreplay.replay(trace):
        replayed = asyncio.run(read(instrument(async_client(refusing()))))
    assert replayed == live
    assert live[0]
