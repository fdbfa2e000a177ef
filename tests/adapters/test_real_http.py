"""The SDK's flows over real HTTP: recorded, then replayed after the server is gone.

Each test builds unmodified SDK clients as applications build them (only
`base_url`, or Azure's `azure_endpoint`, points at a local server; the SDK's own
HTTP client and connection pool carry the requests), runs a flow with a plain
client, records it with an instrumented one, shuts the server down and replays
it: what the application saw (values, events, exceptions) must be the same each
time. Over a real socket, bodies arrive gzipped or chunked, streams arrive event
by event, connections drop and reads time out: what an in-process transport hides.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pydantic
import pytest

import toolreplay
from examples.local_openai import HTTP, LocalOpenAI, response_events
from tests.adapters.http_api import Dropped, Stalled, served
from tests.adapters.support import API_KEY, aiohttp_http_client, sdk_error_view
from toolreplay.adapters.openai import instrument
from toolreplay.errors import StreamReplayError

MESSAGES: list[Any] = [{"role": "user", "content": "May I refund order 7?"}]
DECISION_TEXT = '{"action": "approve", "order": 7}'
AZURE_VERSION = "2024-10-21"


class Decision(pydantic.BaseModel):
    action: str
    order: int


# --- clients, as applications build them -------------------------------------------------


def _azure_endpoint(url: str) -> str:
    return url.removesuffix("/v1")


SyncMaker = Callable[..., openai.OpenAI]
AsyncMaker = Callable[..., openai.AsyncOpenAI]

SYNC: dict[str, SyncMaker] = {
    "OpenAI": lambda url, **options: openai.OpenAI(
        api_key=API_KEY, base_url=url, **{"max_retries": 0, **options}
    ),
    "AzureOpenAI": lambda url, **options: openai.AzureOpenAI(
        api_key=API_KEY,
        azure_endpoint=_azure_endpoint(url),
        api_version=AZURE_VERSION,
        **{"max_retries": 0, **options},
    ),
}
ASYNC: dict[str, AsyncMaker] = {
    "AsyncOpenAI": lambda url, **options: openai.AsyncOpenAI(
        api_key=API_KEY, base_url=url, **{"max_retries": 0, **options}
    ),
    "AsyncAzureOpenAI": lambda url, **options: openai.AsyncAzureOpenAI(
        api_key=API_KEY,
        azure_endpoint=_azure_endpoint(url),
        api_version=AZURE_VERSION,
        **{"max_retries": 0, **options},
    ),
    "DefaultAioHttpClient": lambda url, **options: openai.AsyncOpenAI(
        api_key=API_KEY,
        base_url=url,
        http_client=aiohttp_http_client(),
        **{"max_retries": 0, **options},
    ),
}


def described(error: BaseException) -> dict[str, Any]:
    """What an application can see of an exception.

    The cause of an SDK error is the HTTP library's error, and is compared; what an HTTP
    library's own error was raised from (httpcore's or aiohttp's exception, inside the
    transport: openai 2.x lets a stream's transport error through unwrapped) is not
    recorded (RFC 0006, limitations).
    """
    if not isinstance(error, openai.OpenAIError):
        return {"type": type(error), "message": str(error)}
    return sdk_error_view(error)


def outcome(run: Callable[[], Any]) -> Any:
    try:
        return ("returned", run())
    except Exception as error:
        return ("raised", described(error))


async def async_outcome(run: Callable[[], Awaitable[Any]]) -> Any:
    try:
        return ("returned", await run())
    except Exception as error:
        return ("raised", described(error))


def check_sync(
    tmp_path: Path,
    handler: Callable[[Any], Any],
    make: SyncMaker,
    flow: Callable[[Any], Any],
    *,
    raises: bool = False,
    **options: Any,
) -> toolreplay.Trace:
    """`flow` with a plain client, recorded, and replayed with the server gone: the same.

    `raises` says whether the plain run is expected to raise (else to return).
    """
    trace = tmp_path / "flow.trp"

    def run(client: Any) -> Any:
        try:
            return outcome(lambda: flow(client))
        finally:
            getattr(client, "original_client", client).close()

    with served(handler) as url:
        plain = run(make(url, **options))
        assert plain[0] == ("raised" if raises else "returned"), plain
        with toolreplay.record(trace):
            recorded = run(instrument(make(url, **options)))
    assert recorded == plain
    with toolreplay.replay(trace):  # the server is gone: any request would fail
        replayed = run(instrument(make(url, **options)))
    assert replayed == plain
    return toolreplay.read_trace(trace)


def check_async(
    tmp_path: Path,
    handler: Callable[[Any], Any],
    make: AsyncMaker,
    flow: Callable[[Any], Awaitable[Any]],
    *,
    raises: bool = False,
    **options: Any,
) -> toolreplay.Trace:
    """The async form of `check_sync`."""
    trace = tmp_path / "flow.trp"

    async def run(make_client: Callable[[], Any]) -> Any:
        client = make_client()
        try:
            return await async_outcome(lambda: flow(client))
        finally:
            await getattr(client, "original_client", client).close()

    with served(handler) as url:
        plain = asyncio.run(run(lambda: make(url, **options)))
        assert plain[0] == ("raised" if raises else "returned"), plain
        with toolreplay.record(trace):
            recorded = asyncio.run(run(lambda: instrument(make(url, **options))))
    assert recorded == plain
    with toolreplay.replay(trace):
        replayed = asyncio.run(run(lambda: instrument(make(url, **options))))
    assert replayed == plain
    return toolreplay.read_trace(trace)


def outputs(trace: toolreplay.Trace) -> list[Any]:
    values: list[Any] = []
    for operation in trace.operations:
        assert isinstance(operation.outcome, toolreplay.Returned), operation.effect
        values.append(operation.outcome.value)
    return values


# --- flows: what applications do with a client ---------------------------------------------


def raw_response(client: openai.OpenAI) -> Any:
    raw = client.responses.with_raw_response.create(model="gpt-5-mini", input="Refund?")
    streamed = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=MESSAGES, stream=True
    )
    chunks = list(streamed.parse())
    return raw.status_code, raw.headers.get("x-request-id"), raw.request_id, raw.parse(), chunks


async def async_raw_response(client: openai.AsyncOpenAI) -> Any:
    raw = await client.responses.with_raw_response.create(model="gpt-5-mini", input="Refund?")
    streamed = await client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=MESSAGES, stream=True
    )
    chunks = [chunk async for chunk in streamed.parse()]
    return raw.status_code, raw.headers.get("x-request-id"), raw.request_id, raw.parse(), chunks


def redirecting(request: Any) -> Any:
    """`GET .../models` answered by a redirect to `.../models/all`, which lists them."""
    path = request.url.path
    if path.endswith("/models"):
        return HTTP.Response(
            307, headers={"location": str(request.url.copy_with(path=f"{path}/all"))}
        )
    if path.endswith("/models/all"):
        return LocalOpenAI()(
            HTTP.Request("GET", request.url.copy_with(path=path.removesuffix("/all")))
        )
    return LocalOpenAI()(request)


def redirected(client: openai.OpenAI) -> Any:
    raw = client.models.with_raw_response.list()
    history = [response.status_code for response in raw.http_response.history]
    return [model.id for model in raw.parse()], raw.http_response.url.path, history


async def async_redirected(client: openai.AsyncOpenAI) -> Any:
    raw = await client.models.with_raw_response.list()
    history = [response.status_code for response in raw.http_response.history]
    return [model.id async for model in raw.parse()], raw.http_response.url.path, history


def streaming_response(client: openai.OpenAI) -> Any:
    with client.responses.with_streaming_response.create(
        model="gpt-5-mini", input="Refund?"
    ) as response:
        parsed = response.parse()
        status = response.status_code, response.headers.get("x-request-id")
    with client.chat.completions.with_streaming_response.create(
        model="gpt-4o-mini", messages=MESSAGES, stream=True
    ) as response:
        lines = [line for line in response.iter_lines() if line]
    return status, parsed, sse_data(lines)


async def async_streaming_response(client: openai.AsyncOpenAI) -> Any:
    async with client.responses.with_streaming_response.create(
        model="gpt-5-mini", input="Refund?"
    ) as response:
        parsed = await response.parse()
        status = response.status_code, response.headers.get("x-request-id")
    async with client.chat.completions.with_streaming_response.create(
        model="gpt-4o-mini", messages=MESSAGES, stream=True
    ) as response:
        lines = [line async for line in response.iter_lines() if line]
    return status, parsed, sse_data(lines)


def sse_data(lines: list[str]) -> list[Any]:
    """What the server-sent lines say (replay re-encodes JSON data compactly, RFC 0006 §4.3)."""
    said: list[Any] = []
    for line in lines:
        name, _, value = line.partition(": ")
        said.append((name, value if value == "[DONE]" or name != "data" else json.loads(value)))
    return said


def stream_helpers(client: openai.OpenAI) -> Any:
    with client.responses.stream(model="gpt-5-mini", input="Refund?") as stream:
        response_events = list(stream)
        final_response = stream.get_final_response()
    with client.chat.completions.stream(model="gpt-4o-mini", messages=MESSAGES) as stream:
        chat_events = list(stream)
        final_completion = stream.get_final_completion()
    return response_events, final_response, chat_events, final_completion


async def async_stream_helpers(client: openai.AsyncOpenAI) -> Any:
    async with client.responses.stream(model="gpt-5-mini", input="Refund?") as stream:
        response_events = [event async for event in stream]
        final_response = await stream.get_final_response()
    async with client.chat.completions.stream(model="gpt-4o-mini", messages=MESSAGES) as stream:
        chat_events = [event async for event in stream]
        final_completion = await stream.get_final_completion()
    return response_events, final_response, chat_events, final_completion


def parse(client: openai.OpenAI) -> Any:
    response = client.responses.parse(model="gpt-5-mini", input="Refund?", text_format=Decision)
    completion = client.chat.completions.parse(
        model="gpt-4o-mini", messages=MESSAGES, response_format=Decision
    )
    with client.responses.stream(
        model="gpt-5-mini", input="Refund?", text_format=Decision
    ) as stream:
        streamed = list(stream), stream.get_final_response()
    return response, response.output_parsed, completion, streamed


async def async_parse(client: openai.AsyncOpenAI) -> Any:
    response = await client.responses.parse(
        model="gpt-5-mini", input="Refund?", text_format=Decision
    )
    completion = await client.chat.completions.parse(
        model="gpt-4o-mini", messages=MESSAGES, response_format=Decision
    )
    async with client.responses.stream(
        model="gpt-5-mini", input="Refund?", text_format=Decision
    ) as stream:
        streamed = [event async for event in stream], await stream.get_final_response()
    return response, response.output_parsed, completion, streamed


def embeddings_and_models(client: openai.OpenAI) -> Any:
    embedded = client.embeddings.create(model="text-embedding-3-small", input=["a", "b"])
    return embedded, [model.id for model in client.models.list()]


async def async_embeddings_and_models(client: openai.AsyncOpenAI) -> Any:
    embedded = await client.embeddings.create(model="text-embedding-3-small", input=["a", "b"])
    return embedded, [model.id async for model in client.models.list()]


FLOWS: dict[
    str, tuple[Callable[[Any], Any], Callable[[Any], Awaitable[Any]], Callable[[], Any]]
] = {
    "with_raw_response": (raw_response, async_raw_response, LocalOpenAI),
    "with_streaming_response": (streaming_response, async_streaming_response, LocalOpenAI),
    "stream helpers": (
        stream_helpers,
        async_stream_helpers,
        lambda: LocalOpenAI("approve order 7", chat_texts=("approve order 7",), deltas=3),
    ),
    "parse": (
        parse,
        async_parse,
        lambda: LocalOpenAI(DECISION_TEXT, chat_texts=(DECISION_TEXT,), deltas=4),
    ),
    "embeddings and models": (embeddings_and_models, async_embeddings_and_models, LocalOpenAI),
    "a redirect": (redirected, async_redirected, lambda: redirecting),
}


@pytest.mark.parametrize("client", SYNC.keys())
@pytest.mark.parametrize("flow", FLOWS.keys())
def test_a_sync_flow_replays_as_it_ran(tmp_path: Path, flow: str, client: str) -> None:
    run, _, api = FLOWS[flow]
    trace = check_sync(tmp_path, api(), SYNC[client], run)
    for value in outputs(trace):
        assert value["end"] == "complete" or "events" in value


@pytest.mark.parametrize("client", ASYNC.keys())
@pytest.mark.parametrize("flow", FLOWS.keys())
def test_an_async_flow_replays_as_it_ran(tmp_path: Path, flow: str, client: str) -> None:
    _, run, api = FLOWS[flow]
    trace = check_async(tmp_path, api(), ASYNC[client], run)
    for value in outputs(trace):
        assert value["end"] == "complete" or "events" in value


# --- a stream the application stops reading ------------------------------------------------

EARLY = 3  # events the application reads before it stops
DELTAS = 40  # text deltas in the stream: 48 events


def stop_early(client: openai.OpenAI) -> Any:
    stream = client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)
    events: list[Any] = []
    for event in stream:
        events.append(event)
        if len(events) == EARLY:
            break
    stream.close()
    return events


async def async_stop_early(client: openai.AsyncOpenAI) -> Any:
    stream = await client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)
    events: list[Any] = []
    async for event in stream:
        events.append(event)
        if len(events) == EARLY:
            break
    await stream.close()
    return events


def read_on(client: openai.OpenAI) -> list[Any]:
    return list(client.responses.create(model="gpt-5-mini", input="Refund?", stream=True))


async def async_read_on(client: openai.AsyncOpenAI) -> list[Any]:
    stream = await client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)
    return [event async for event in stream]


def check_closed_early(trace: toolreplay.Trace) -> None:
    """Recorded as what was received: at least what the application read, not the rest."""
    (output,) = outputs(trace)
    assert output["end"] == "closed_early"
    assert EARLY <= len(output["events"]) < len(response_events(deltas=DELTAS))


@pytest.mark.parametrize("client", SYNC.keys())
def test_a_stream_the_application_stops_reading_replays_to_that_point(
    tmp_path: Path, client: str
) -> None:
    trace = check_sync(tmp_path, LocalOpenAI(deltas=DELTAS), SYNC[client], stop_early)
    check_closed_early(trace)
    with (
        pytest.raises(StreamReplayError, match="read past the end of the recording"),
        toolreplay.replay(tmp_path / "flow.trp"),
    ):
        read_on(instrument(SYNC[client]("http://127.0.0.1:9/v1")))


@pytest.mark.parametrize("client", ASYNC.keys())
def test_an_async_stream_the_application_stops_reading_replays_to_that_point(
    tmp_path: Path, client: str
) -> None:
    trace = check_async(tmp_path, LocalOpenAI(deltas=DELTAS), ASYNC[client], async_stop_early)
    check_closed_early(trace)

    async def replayed() -> None:
        instrumented = instrument(ASYNC[client]("http://127.0.0.1:9/v1"))
        try:
            await async_read_on(instrumented)
        finally:
            await instrumented.original_client.close()

    with (
        pytest.raises(StreamReplayError, match="read past the end of the recording"),
        toolreplay.replay(tmp_path / "flow.trp"),
    ):
        asyncio.run(replayed())


def test_a_stream_left_open_when_the_session_closes_is_recorded_as_far_as_it_got(
    tmp_path: Path,
) -> None:
    """`break` without closing the stream, inside the block: the stream is still open (the
    application holds it) when the session closes, and is recorded then, not lost."""
    trace = tmp_path / "open.trp"

    def stop(client: openai.OpenAI) -> tuple[list[Any], Any]:
        stream = client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)
        events: list[Any] = []
        for event in stream:
            events.append(event)
            if len(events) == EARLY:
                break
        return events, stream

    with served(LocalOpenAI(deltas=DELTAS)) as url:
        plain, _ = stop(SYNC["OpenAI"](url))
        with toolreplay.record(trace):
            recorded, stream = stop(instrument(SYNC["OpenAI"](url)))
        stream.close()  # after the session: nothing more is recorded
    assert recorded == plain
    check_closed_early(toolreplay.read_trace(trace))
    with toolreplay.replay(trace):
        replayed, stream = stop(instrument(SYNC["OpenAI"](url)))
        stream.close()
    assert replayed == plain


def test_a_stream_left_open_with_a_secret_is_refused_as_the_session_closes(
    tmp_path: Path,
) -> None:
    """Recorded at the close, the stream is scanned as any output: a secret in what it
    received fails the session (secret mode "error") and is never written."""
    trace = tmp_path / "open.trp"
    secret = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    api = LocalOpenAI(f"the key is {secret}")  # one delta: the whole text
    with served(api) as url:
        client = instrument(SYNC["OpenAI"](url))
        streams: list[Any] = []
        with pytest.raises(toolreplay.SecretInTraceError), toolreplay.record(trace):
            stream = client.responses.create(model="gpt-5-mini", input="Key?", stream=True)
            streams.append(stream)
            for event in stream:
                if event.type == "response.output_text.delta":
                    break  # the secret is in the first delta, already received
        streams[0].close()
    assert secret.encode() not in trace.read_bytes()


def test_a_capture_records_a_stream_its_request_left_open(tmp_path: Path) -> None:
    """A handler under `toolreplay.capture` that returns with a stream still open (RFC 0008):
    the request's trace holds the stream as far as it was received."""
    kept: list[Any] = []

    def handle(client: openai.OpenAI) -> list[str]:
        stream = client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)
        kept.append(stream)  # still open when the request ends
        return [event.type for event, _ in zip(stream, range(EARLY), strict=False)]

    with served(LocalOpenAI(deltas=DELTAS)) as url:
        client = instrument(SYNC["OpenAI"](url))
        captured = toolreplay.capture(tmp_path / "captured")(handle)(client)
        kept.pop().close()
        client.original_client.close()
    (trace,) = (tmp_path / "captured").glob("*.trp")
    check_closed_early(toolreplay.read_trace(trace))
    with toolreplay.replay(trace):
        assert handle(instrument(SYNC["OpenAI"]("http://127.0.0.1:9/v1"))) == captured
        kept.pop().close()


@pytest.mark.parametrize("client", ASYNC.keys())
def test_an_async_stream_left_open_when_the_session_closes_is_recorded(
    tmp_path: Path, client: str
) -> None:
    trace = tmp_path / "open.trp"

    async def stop(url: str, session: Callable[[], Any]) -> list[Any]:
        instrumented = instrument(ASYNC[client](url))
        with session():
            stream = await instrumented.responses.create(
                model="gpt-5-mini", input="Refund?", stream=True
            )
            events = [event async for event, _ in zip_count(stream, EARLY)]
        await stream.close()  # the session closed first, in this task
        await instrumented.original_client.close()
        return events

    with served(LocalOpenAI(deltas=DELTAS)) as url:
        recorded = asyncio.run(stop(url, lambda: toolreplay.record(trace)))
    assert len(recorded) == EARLY
    check_closed_early(toolreplay.read_trace(trace))
    assert asyncio.run(stop(url, lambda: toolreplay.replay(trace))) == recorded


async def zip_count(stream: AsyncIterator[Any], count: int) -> AsyncIterator[tuple[Any, int]]:
    """The first `count` items of `stream`, numbered, leaving the stream open."""
    number = 0
    async for item in stream:
        yield item, number
        number += 1
        if number == count:
            return


def test_identical_streams_read_in_the_other_order_replay_their_own_answers(
    tmp_path: Path,
) -> None:
    """Two identical requests, the second read first: each replays its own answer (the
    occurrence is the order the requests were sent, not the order their bodies ended)."""

    def flow(client: openai.OpenAI) -> tuple[list[str], list[str]]:
        first = client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)
        second = client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)
        read_second = [e.delta for e in second if e.type == "response.output_text.delta"]
        read_first = [e.delta for e in first if e.type == "response.output_text.delta"]
        return read_first, read_second

    sent: list[Any] = []

    def first_then_second(request: Any) -> Any:  # in every run
        sent.append(request)
        return LocalOpenAI("first" if len(sent) % 2 else "second")(request)

    trace = check_sync(tmp_path, first_then_second, SYNC["OpenAI"], flow)
    assert [operation.identity.occurrence for operation in trace.operations] == [1, 0]
    with toolreplay.replay(tmp_path / "flow.trp"):
        assert flow(instrument(SYNC["OpenAI"]("http://127.0.0.1:9/v1"))) == (["first"], ["second"])


# --- provider errors -----------------------------------------------------------------------


def error_body(status: int) -> dict[str, Any]:
    return {
        "error": {
            "message": f"status {status} from the API",
            "type": "invalid_request_error",
            "param": "input",
            "code": f"code_{status}",
        }
    }


class Answers:
    """Answers `statuses` in turn (then again from the first): an error body with a short
    `retry-after-ms` for an error status, `LocalOpenAI`'s answer for 200 (a stream when
    asked), each with its own request id."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = statuses
        self.sent = 0

    def __call__(self, request: Any) -> Any:
        turn = self.sent % len(self.statuses)
        status = self.statuses[turn]
        self.sent += 1
        request_id = f"req_{turn}_{status}"
        if status == 200:
            return LocalOpenAI(request_id=request_id)(request)
        headers = {"x-request-id": request_id, "retry-after-ms": "5"}
        return HTTP.Response(status, json=error_body(status), headers=headers)


def create(client: openai.OpenAI) -> Any:
    return client.responses.create(model="gpt-5-mini", input="Refund?")


async def async_create(client: openai.AsyncOpenAI) -> Any:
    return await client.responses.create(model="gpt-5-mini", input="Refund?")


STATUS_ERRORS = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    404: openai.NotFoundError,
    422: openai.UnprocessableEntityError,
}


@pytest.mark.parametrize("status", STATUS_ERRORS.keys())
def test_an_error_status_replays_as_the_same_sdk_exception(tmp_path: Path, status: int) -> None:
    seen: list[BaseException] = []  # what each run raised (check_sync compares them)

    def flow(client: openai.OpenAI) -> Any:
        try:
            return create(client)
        except openai.APIStatusError as error:
            seen.append(error)
            raise

    trace = check_sync(tmp_path, Answers(status), SYNC["OpenAI"], flow, raises=True)
    assert [output["status"] for output in outputs(trace)] == [status]
    assert len(seen) == 3  # plain, recorded, replayed
    for error in seen:
        assert type(error) is STATUS_ERRORS[status]
        assert isinstance(error, openai.APIStatusError)
        assert (error.status_code, error.request_id, error.code) == (
            status,
            f"req_0_{status}",
            f"code_{status}",
        )
        assert error.body == error_body(status)["error"]


@pytest.mark.parametrize("client", ASYNC.keys())
def test_an_async_error_status_replays_as_the_same_sdk_exception(
    tmp_path: Path, client: str
) -> None:
    trace = check_async(tmp_path, Answers(422), ASYNC[client], async_create, raises=True)
    assert [output["status"] for output in outputs(trace)] == [422]


@pytest.mark.parametrize(
    "statuses", [(429, 500, 200), (500, 500, 500)], ids=["429-500-200", "500-500-500"]
)
def test_retries_are_several_operations_and_replay_the_same(
    tmp_path: Path, statuses: tuple[int, ...]
) -> None:
    trace = check_sync(
        tmp_path,
        Answers(*statuses),
        SYNC["OpenAI"],
        create,
        raises=statuses[-1] != 200,
        max_retries=2,
    )
    assert [output["status"] for output in outputs(trace)] == list(statuses)
    assert [op.identity.occurrence for op in trace.operations] == [0, 1, 2]
    for output in outputs(trace):
        assert output["headers"]["x-request-id"].endswith(f"_{output['status']}")
        assert output["headers"].get("retry-after-ms") == (None if output["status"] == 200 else "5")


@pytest.mark.parametrize("client", ASYNC.keys())
def test_async_retries_replay_the_same(tmp_path: Path, client: str) -> None:
    trace = check_async(
        tmp_path, Answers(429, 500, 200), ASYNC[client], async_create, max_retries=2
    )
    assert [output["status"] for output in outputs(trace)] == [429, 500, 200]


# --- the network fails: a connection dropped mid-stream, a read timeout ------------------

CUT = 3  # events sent before the connection drops or stalls


def read_stream(stream: Iterator[Any]) -> tuple[list[Any], Any]:
    """The events an application receives, and what ended the stream."""
    events: list[Any] = []
    try:
        for event in stream:
            events.append(event)
    except Exception as error:
        return events, described(error)
    return events, None


async def async_read_stream(stream: AsyncIterator[Any]) -> tuple[list[Any], Any]:
    events: list[Any] = []
    try:
        async for event in stream:
            events.append(event)
    except Exception as error:
        return events, described(error)
    return events, None


def both_streams(client: openai.OpenAI) -> Any:
    return (
        read_stream(client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)),
        read_stream(
            client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)
        ),
    )


async def async_both_streams(client: openai.AsyncOpenAI) -> Any:
    # One after the other, as `both_streams`: the second request is sent after the first
    # stream ended, so the server's stall of one cannot overlap the other's.
    responses = await client.responses.create(model="gpt-5-mini", input="Refund?", stream=True)
    read_responses = await async_read_stream(responses)
    chat = await client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)
    return read_responses, await async_read_stream(chat)


def long_streams(request: Any) -> Any:
    """Streams well longer than `CUT` events (the chat one has a chunk per word)."""
    text = "approve order 7 and refund it today"
    return LocalOpenAI(text, chat_texts=(text,), deltas=DELTAS)(request)


def dropping(request: Any) -> Dropped:
    """Part of an event after the first `CUT`, then the connection is gone."""
    return Dropped(long_streams(request), CUT, partial=12)


READ_TIMEOUT = 0.5
"""The client's read timeout in the timeout tests: every answer not stalled on purpose
must start within it, so it leaves room for a loaded machine."""
STALL = 4 * READ_TIMEOUT
"""How long the server holds back a stalled answer: well past the read timeout."""


def stalling(request: Any) -> Stalled:
    return Stalled(long_streams(request), STALL, after_events=CUT)


def check_cut(trace: toolreplay.Trace, error_type: str) -> None:
    """Each stream recorded as the failure, holding the events received before it."""
    assert len(trace.operations) == 2
    for operation in trace.operations:
        assert isinstance(operation.outcome, toolreplay.Raised), operation.effect
        assert operation.outcome.error_type == error_type
        (envelope,) = operation.outcome.args or [None]
        assert isinstance(envelope, dict)
        received = envelope["response"]
        assert isinstance(received, dict)
        events = received["events"]
        assert isinstance(events, list)
        assert len(events) == CUT


@pytest.mark.parametrize("client", SYNC.keys())
def test_a_connection_dropped_mid_stream_replays_the_same_events_then_error(
    tmp_path: Path, client: str
) -> None:
    trace = check_sync(tmp_path, dropping, SYNC[client], both_streams)
    check_cut(trace, "httpx.RemoteProtocolError")


@pytest.mark.parametrize("client", ASYNC.keys())
def test_an_async_connection_dropped_mid_stream_replays_the_same(
    tmp_path: Path, client: str
) -> None:
    trace = check_async(tmp_path, dropping, ASYNC[client], async_both_streams)
    # aiohttp reports the cut body as a payload error, which its httpx adapter maps to ReadError.
    dropped = "httpx.ReadError" if client == "DefaultAioHttpClient" else "httpx.RemoteProtocolError"
    check_cut(trace, dropped)


@pytest.mark.parametrize("client", SYNC.keys())
def test_a_read_timeout_mid_stream_replays_the_same_events_then_error(
    tmp_path: Path, client: str
) -> None:
    trace = check_sync(tmp_path, stalling, SYNC[client], both_streams, timeout=READ_TIMEOUT)
    check_cut(trace, "httpx.ReadTimeout")


@pytest.mark.parametrize("client", ASYNC.keys())
def test_an_async_read_timeout_mid_stream_replays_the_same(tmp_path: Path, client: str) -> None:
    trace = check_async(tmp_path, stalling, ASYNC[client], async_both_streams, timeout=READ_TIMEOUT)
    check_cut(trace, "httpx.ReadTimeout")


def stalling_answer(request: Any) -> Any:
    """`POST /responses` answered only after the client's read timeout; the rest at once."""
    answer = LocalOpenAI()(request)
    return Stalled(answer, STALL) if request.url.path.endswith("/responses") else answer


def test_a_read_timeout_before_the_answer_replays_as_api_timeout_error(tmp_path: Path) -> None:
    def flow(client: openai.OpenAI) -> Any:
        with pytest.raises(openai.APITimeoutError):
            create(client)
        return embeddings_and_models(client)  # the client goes on after it

    trace = check_sync(tmp_path, stalling_answer, SYNC["OpenAI"], flow, timeout=READ_TIMEOUT)
    outcome = trace.operations[0].outcome
    assert isinstance(outcome, toolreplay.Raised)
    assert outcome.error_type == "httpx.ReadTimeout"


@pytest.mark.parametrize("client", ASYNC.keys())
def test_an_async_read_timeout_before_the_answer_replays_the_same(
    tmp_path: Path, client: str
) -> None:
    trace = check_async(
        tmp_path, stalling_answer, ASYNC[client], async_create, raises=True, timeout=READ_TIMEOUT
    )
    (operation,) = trace.operations
    assert isinstance(operation.outcome, toolreplay.Raised)
    assert operation.outcome.error_type == "httpx.ReadTimeout"


def test_a_stream_request_retried_after_an_error_status_replays_the_same(
    tmp_path: Path,
) -> None:
    def flow(client: openai.OpenAI) -> list[Any]:
        return list(client.responses.create(model="gpt-5-mini", input="Refund?", stream=True))

    trace = check_sync(tmp_path, Answers(500, 200), SYNC["OpenAI"], flow, max_retries=1)
    assert [output["status"] for output in outputs(trace)] == [500, 200]
    assert "events" in outputs(trace)[1]


@pytest.mark.parametrize("client", ASYNC.keys())
def test_concurrent_requests_replay_each_its_own_answer(tmp_path: Path, client: str) -> None:
    """Streams and a JSON request at once (`asyncio.gather`), two of them identical."""

    async def flow(client: openai.AsyncOpenAI) -> list[Any]:
        async def responses() -> list[Any]:
            stream = await client.responses.create(model="gpt-5-mini", input="Hi", stream=True)
            return [event async for event in stream]

        async def chat() -> list[Any]:
            stream = await client.chat.completions.create(
                model="gpt-4o-mini", messages=MESSAGES, stream=True
            )
            return [chunk async for chunk in stream]

        async def embedded() -> Any:
            return await client.embeddings.create(model="text-embedding-3-small", input="Hi")

        return list(await asyncio.gather(responses(), chat(), embedded(), responses()))

    trace = check_async(tmp_path, LocalOpenAI(deltas=20), ASYNC[client], flow)
    assert len({operation.lane for operation in trace.operations}) == 4


class Flaky:
    """Fails the first `failures` requests of every `failures + 1` (a network failure made
    by `fail`), then answers like the API."""

    def __init__(self, failures: int, fail: Callable[[Any], Any]) -> None:
        self.failures = failures
        self.fail = fail
        self.sent = 0

    def __call__(self, request: Any) -> Any:
        turn = self.sent % (self.failures + 1)
        self.sent += 1
        answer = LocalOpenAI()(request)
        return answer if turn == self.failures else self.fail(answer)


NETWORK_FAILURES: dict[str, tuple[Callable[[Any], Any], str, dict[str, Any]]] = {
    "timeouts": (
        lambda answer: Stalled(answer, STALL),
        "httpx.ReadTimeout",
        {"timeout": READ_TIMEOUT},
    ),
    "dropped connections": (
        lambda answer: Dropped(answer, 0),
        "httpx.RemoteProtocolError",
        {},
    ),
}


@pytest.fixture
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's first retry wait, 0.5 s (no `retry-after` follows a network failure), at
    10 ms: the same backoff, recorded or replayed, without slowing the suite."""
    monkeypatch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.01)  # pyright: ignore[reportPrivateUsage]


@pytest.mark.usefixtures("quick_backoff")
@pytest.mark.parametrize("failure", NETWORK_FAILURES.keys())
def test_network_failures_then_success_are_retried_and_replay_the_same(
    tmp_path: Path, failure: str
) -> None:
    fail, error_type, options = NETWORK_FAILURES[failure]
    trace = check_sync(tmp_path, Flaky(2, fail), SYNC["OpenAI"], create, max_retries=2, **options)
    outcomes = [operation.outcome for operation in trace.operations]
    assert [getattr(outcome, "error_type", "returned") for outcome in outcomes] == [
        error_type,
        error_type,
        "returned",
    ]
    assert [operation.identity.occurrence for operation in trace.operations] == [0, 1, 2]


@pytest.mark.usefixtures("quick_backoff")
@pytest.mark.parametrize("client", ASYNC.keys())
def test_async_network_failures_then_success_replay_the_same(tmp_path: Path, client: str) -> None:
    fail, _, options = NETWORK_FAILURES["dropped connections"]
    trace = check_async(
        tmp_path, Flaky(1, fail), ASYNC[client], async_create, max_retries=1, **options
    )
    assert len(trace.operations) == 2


# --- files: a multipart upload, a binary download, a paginated list -----------------------

FILE_BYTES = bytes(range(256)) * 4  # not UTF-8: recorded as base64


def file_object(number: int) -> dict[str, Any]:
    return {
        "id": f"file-{number}",
        "object": "file",
        "bytes": len(FILE_BYTES),
        "created_at": 1767225600 + number,
        "filename": f"calls-{number}.jsonl",
        "purpose": "batch",
        "status": "processed",
        "expires_at": None,
        "status_details": None,
    }


def files_api(request: Any) -> Any:
    """`POST /files`, `GET /files` (two a page, cursor `after`), `GET /files/{id}/content`."""
    path = request.url.path.removeprefix("/v1").removeprefix("/openai")
    headers = {"x-request-id": f"req_files_{request.method}"}
    if request.method == "POST" and path == "/files":
        assert request.headers["content-type"].startswith("multipart/form-data")
        assert FILE_BYTES in request.content
        return HTTP.Response(200, json=file_object(1), headers=headers)
    if request.method == "GET" and path == "/files":
        after = request.url.params.get("after")
        numbers = [1, 2] if after is None else [3]
        page = {
            "object": "list",
            "data": [file_object(number) for number in numbers],
            "first_id": f"file-{numbers[0]}",
            "last_id": f"file-{numbers[-1]}",
            "has_more": after is None,
        }
        return HTTP.Response(200, json=page, headers=headers)
    if request.method == "GET" and path.endswith("/content"):
        return HTTP.Response(
            200, content=FILE_BYTES, headers={**headers, "content-type": "application/octet-stream"}
        )
    return HTTP.Response(404, json=error_body(404), headers=headers)


def files(client: openai.OpenAI) -> Any:
    created = client.files.create(
        file=("calls.jsonl", FILE_BYTES, "application/jsonl"), purpose="batch"
    )
    content = client.files.content(created.id)
    listed = [file.id for file in client.files.list(limit=2)]
    return created, content.content, content.response.headers.get("content-type"), listed


async def async_files(client: openai.AsyncOpenAI) -> Any:
    created = await client.files.create(
        file=("calls.jsonl", FILE_BYTES, "application/jsonl"), purpose="batch"
    )
    content = await client.files.content(created.id)
    listed = [file.id async for file in client.files.list(limit=2)]
    return created, content.content, content.response.headers.get("content-type"), listed


def check_files(trace: toolreplay.Trace) -> None:
    operations = trace.operations
    assert [operation.effect for operation in operations] == [
        "openai.files.create",
        "openai.files.content.list",  # GET ending in a word (RFC 0006 §3.2)
        "openai.files.list",
        "openai.files.list",
    ]
    upload: Any = operations[0].inputs
    assert "body" not in upload
    assert upload["body_digest"]["content_type"] == "multipart/form-data"
    download = outputs(trace)[1]
    assert base64.b64decode(download["base64"]) == FILE_BYTES
    query: Any = operations[3].inputs["query"]
    assert (query["limit"], query["after"]) == ("2", "file-2")


@pytest.mark.parametrize("client", SYNC.keys())
def test_a_file_upload_download_and_list_replay_the_same(tmp_path: Path, client: str) -> None:
    check_files(check_sync(tmp_path, files_api, SYNC[client], files))


@pytest.mark.parametrize("client", ASYNC.keys())
def test_async_file_upload_download_and_list_replay_the_same(tmp_path: Path, client: str) -> None:
    check_files(check_async(tmp_path, files_api, ASYNC[client], async_files))
