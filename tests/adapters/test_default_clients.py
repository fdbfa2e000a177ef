"""Clients built the way applications build them: the SDK's own HTTP client, over real HTTP.

`instrument(OpenAI())` is the first line most users write. Here each client is
made with nothing but `base_url` pointed at a local server (and, for some, one of
the SDK's documented HTTP clients), records real HTTP exchanges (JSON gzipped as
the API sends it, a stream, a list), and replays after the server is gone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import openai
import pytest

import toolreplay
from examples.local_openai import LocalOpenAI
from examples.local_openai.scripted import ScriptedModel
from tests.adapters.agent_apps import agents_api, pydantic_ai_api, run_agents_sdk, run_pydantic_ai
from tests.adapters.http_api import served
from tests.adapters.real_clients import needs_openai_3
from tests.adapters.support import API_KEY, aiohttp_http_client
from toolreplay.adapters.openai import instrument

EFFECTS = ["openai.responses.create", "openai.chat.completions.create", "openai.models.list"]
MESSAGES: list[Any] = [{"role": "user", "content": "May I refund order 7?"}]


def sync_calls(client: openai.OpenAI) -> list[Any]:
    """The calls, then the client closed (an instrumented copy sends through its
    original's connections, so the original is closed)."""
    try:
        created = client.responses.create(model="gpt-5-mini", input="refund order 7?")
        stream = client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)
        return [created, list(stream), [model.id for model in client.models.list()]]
    finally:
        getattr(client, "original_client", client).close()


async def async_calls(client: openai.AsyncOpenAI) -> list[Any]:
    """The calls, then the client closed (see `sync_calls`)."""
    try:
        created = await client.responses.create(model="gpt-5-mini", input="refund order 7?")
        stream = await client.chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGES, stream=True
        )
        chunks = [chunk async for chunk in stream]
        return [created, chunks, [model.id async for model in client.models.list()]]
    finally:
        await getattr(client, "original_client", client).close()


SYNC: dict[str, Callable[[str], openai.OpenAI]] = {
    "OpenAI()": lambda url: openai.OpenAI(api_key=API_KEY, base_url=url, max_retries=0),
    "DefaultHttpxClient": lambda url: openai.OpenAI(
        api_key=API_KEY, base_url=url, max_retries=0, http_client=openai.DefaultHttpxClient()
    ),
}
ASYNC: dict[str, Callable[[str], openai.AsyncOpenAI]] = {
    "AsyncOpenAI()": lambda url: openai.AsyncOpenAI(api_key=API_KEY, base_url=url, max_retries=0),
    "DefaultAsyncHttpxClient": lambda url: openai.AsyncOpenAI(
        api_key=API_KEY, base_url=url, max_retries=0, http_client=openai.DefaultAsyncHttpxClient()
    ),
    "DefaultAioHttpClient": lambda url: openai.AsyncOpenAI(
        api_key=API_KEY, base_url=url, max_retries=0, http_client=aiohttp_http_client()
    ),
}


def outputs(trace: Path) -> list[Any]:
    values: list[Any] = []
    for operation in toolreplay.read_trace(trace).operations:
        assert isinstance(operation.outcome, toolreplay.Returned)
        values.append(operation.outcome.value)
    return values


def check_trace(trace: Path, chunks: int) -> None:
    operations = toolreplay.read_trace(trace).operations
    assert [operation.effect for operation in operations] == EFFECTS
    created, streamed, _ = outputs(trace)
    assert created["body"]["object"] == "response"  # sent gzipped, recorded decoded
    # Each chunk once and the closing [DONE], though the async SDK (3.x) reads the
    # stream a second time to drain it.
    assert len(streamed["events"]) == chunks + 1
    assert streamed["events"][-1] == {"data_text": "[DONE]"}


@pytest.mark.parametrize("make", SYNC.values(), ids=SYNC.keys())
def test_a_sync_client_as_applications_build_it(
    tmp_path: Path, make: Callable[[str], openai.OpenAI]
) -> None:
    trace = tmp_path / "sync.trp"
    api = LocalOpenAI("approve")
    with served(api) as url:
        plain = sync_calls(make(url))
        with toolreplay.record(trace):
            recorded = sync_calls(instrument(make(url)))
    assert api.calls == 6
    assert recorded == plain
    check_trace(trace, len(plain[1]))
    with toolreplay.replay(trace):  # the server is gone: any request would fail
        assert sync_calls(instrument(make(url))) == plain
    assert api.calls == 6


@pytest.mark.parametrize("make", ASYNC.values(), ids=ASYNC.keys())
def test_an_async_client_as_applications_build_it(
    tmp_path: Path, make: Callable[[str], openai.AsyncOpenAI]
) -> None:
    trace = tmp_path / "async.trp"
    api = LocalOpenAI("approve")

    with served(api) as url:
        plain = asyncio.run(async_calls(make(url)))
        with toolreplay.record(trace):
            recorded = asyncio.run(async_calls(instrument(make(url))))
    assert api.calls == 6
    assert recorded == plain
    check_trace(trace, len(plain[1]))
    with toolreplay.replay(trace):
        assert asyncio.run(async_calls(instrument(make(url)))) == plain
    assert api.calls == 6


def test_a_stream_a_sync_client_closed_replays_in_an_async_client_that_drains_it(
    tmp_path: Path,
) -> None:
    """The sync SDK closes a chat stream at its [DONE], before the body's end (recorded as
    closed early); the async SDK (3.x) reads such a stream again to drain it. That reading
    past the recording gets the HTTP library's read error, which the drain tolerates;
    nothing reaches the application and the replay stays clean."""
    trace = tmp_path / "closed.trp"
    with served(LocalOpenAI("approve")) as url:
        with toolreplay.record(trace):
            client = instrument(SYNC["OpenAI()"](url))
            recorded = list(
                client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True)
            )
            client.original_client.close()
    (streamed,) = outputs(trace)
    assert streamed["end"] == "closed_early"

    async def replayed() -> list[Any]:
        client = instrument(ASYNC["AsyncOpenAI()"](url))
        stream = await client.chat.completions.create(
            model="gpt-4o-mini", messages=MESSAGES, stream=True
        )
        chunks = [chunk async for chunk in stream]
        await client.original_client.close()
        return chunks

    with toolreplay.replay(trace):
        assert asyncio.run(replayed()) == recorded


AGENTS: dict[str, tuple[Callable[[], ScriptedModel], Callable[[Any], Awaitable[Any]]]] = {
    "agents Runner.run": (agents_api, lambda client: run_agents_sdk(client, streamed=False)),
    "agents Runner.run_streamed": (
        agents_api,
        lambda client: run_agents_sdk(client, streamed=True),
    ),
    "pydantic-ai responses stream": (
        pydantic_ai_api,
        lambda client: run_pydantic_ai(client, api="responses", streamed=True),
    ),
    "pydantic-ai chat stream": (
        pydantic_ai_api,
        lambda client: run_pydantic_ai(client, api="chat", streamed=True),
    ),
}


@needs_openai_3
@pytest.mark.parametrize(("api", "run"), AGENTS.values(), ids=AGENTS.keys())
def test_an_agent_framework_over_real_http(
    tmp_path: Path, api: Callable[[], ScriptedModel], run: Callable[[Any], Awaitable[Any]]
) -> None:
    """The agent apps of the real-client tests, each given a default `AsyncOpenAI`."""
    trace = tmp_path / "agent.trp"

    async def answer(url: str) -> Any:
        client = openai.AsyncOpenAI(api_key=API_KEY, base_url=url, max_retries=0)
        try:
            return await run(client)
        finally:
            await client.close()

    with served(api()) as url:
        plain = asyncio.run(answer(url))
        with toolreplay.record(trace):
            recorded = asyncio.run(answer(url))
    assert recorded == plain
    for operation in toolreplay.read_trace(trace).operations:
        outcome = operation.outcome
        if operation.effect.startswith("openai.") and isinstance(outcome, toolreplay.Returned):
            assert isinstance(outcome.value, dict)
            events = outcome.value.get("events", [])
            assert isinstance(events, list)
            ends = [
                event
                for event in events
                if isinstance(event, dict)
                and (
                    event.get("event") == "response.completed" or event.get("data_text") == "[DONE]"
                )
            ]
            assert len(ends) <= 1, "an event was recorded twice"
    with toolreplay.replay(trace):
        assert asyncio.run(answer(url)) == plain
