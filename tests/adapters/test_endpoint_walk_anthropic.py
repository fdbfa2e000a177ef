"""Nothing an instrumented Anthropic client does is sent during replay, for any endpoint.

Every resource method the installed SDK exposes on `Anthropic` and `AsyncAnthropic`
(messages, batches, models, files, skills, every beta resource, and their
`with_raw_response`/`with_streaming_response` forms), found by introspection
(tests/adapters/endpoint_walk.py), is called under replay of an empty trace, with the
network guard open and the client pointed at a loopback server that counts the
connections it accepts. Each call must end in Tool Replay's refusal, and the server
must accept nothing. The few methods that send no request of their own are listed in
`SENDS_NOTHING` with the reason, and checked to exist.

The same for `AnthropicBedrock` and `AnthropicVertex` (and async), whose requests the SDK
signs first (SigV4 with made-up keys, offline) or gives a made-up Google token: what
their platform does not offer (batches, Bedrock's token counting, threads) the SDK
refuses before building a request, and everything else Tool Replay refuses.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic._resource import AsyncAPIResource, SyncAPIResource  # the SDK's resource bases
from anthropic.lib.bedrock import AnthropicBedrock, AsyncAnthropicBedrock
from anthropic.lib.vertex import AnthropicVertex, AsyncAnthropicVertex

import toolreplay
from tests.adapters.endpoint_walk import walk
from tests.support.counting_server import CountingServer
from toolreplay.adapters.anthropic import instrument

RESOURCES = (SyncAPIResource, AsyncAPIResource)

SENDS_NOTHING = {
    "client.beta.webhooks.parse_unverified": "parses a webhook body the application received",
    "client.beta.webhooks.unwrap": "checks a received webhook's signature and parses it",
    "client.beta.messages.thread": (
        "builds a thread object; its `send` is called below and refused"
    ),
    "client.beta.environments.work.worker": (
        "builds a worker (async client); the work endpoints its loop polls are walked"
    ),
}
"""Methods that build something or read what the application holds, sending nothing
themselves, and why."""

# Found by the walk in every supported release: the discovery is not empty or partial.
EXPECTED = (
    "client.messages.create",
    "client.messages.stream",
    "client.messages.count_tokens",
    "client.messages.batches.create",
    "client.messages.batches.results",
    "client.messages.with_raw_response.create",
    "client.messages.with_streaming_response.create",
    "client.models.list",
    "client.models.retrieve",
    "client.beta.messages.create",
    "client.beta.messages.batches.cancel",
    "client.beta.models.list",
)
# The client's own request methods, which no resource holds.
VERBS = ("get", "post", "put", "patch", "delete")


def _raw_verbs(client: Any, asynchronous: bool) -> dict[str, type[BaseException] | None]:
    """What each of the client's raw request methods ended in (None: returned)."""
    ended: dict[str, type[BaseException] | None] = {}
    for verb in VERBS:
        try:
            result = getattr(client, verb)("/v1/anything", cast_to=object)
            if asynchronous:
                asyncio.run(result)
        except Exception as error:
            ended[verb] = type(error)
        else:
            ended[verb] = None
    return ended


def _empty_replay(tmp_path: Path) -> Any:
    return toolreplay.replay(tmp_path / "empty.trp", network="allow")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_every_anthropic_endpoint_is_refused_under_replay_and_sends_nothing(
    mode: str, tmp_path: Path
) -> None:
    server = CountingServer()
    verbs: dict[str, type[BaseException] | None] = {}
    kind = anthropic.Anthropic if mode == "sync" else anthropic.AsyncAnthropic
    try:
        client: Any = instrument(
            kind(api_key="sk-ant-walk", base_url=server.url.removesuffix("/"), max_retries=0)
        )
        walked = walk(client, tmp_path, RESOURCES, network="allow")
        # Each replay ends failed, since the misses were caught: what is checked is that
        # they were misses.
        with pytest.raises(toolreplay.ReplayContractError), _empty_replay(tmp_path):
            thread = client.beta.messages.thread(model="claude-sonnet-4-6", max_tokens=8)
            with pytest.raises(toolreplay.ReplayMiss):
                sent: Any = thread.send({"role": "user", "content": "hi"})
                if inspect.iscoroutine(sent):
                    asyncio.run(sent)
        with pytest.raises(toolreplay.ReplayContractError), _empty_replay(tmp_path):
            verbs = _raw_verbs(client, mode == "async")
    finally:
        server.close()
    assert server.accepted == 0
    assert verbs == dict.fromkeys(VERBS, toolreplay.ReplayMiss)
    names = {item.where for item in walked}
    assert set(EXPECTED) <= names
    assert len(walked) > 300
    not_refused = {item.where: repr(item.error) for item in walked if item.outcome != "refused"}
    assert set(not_refused) <= set(SENDS_NOTHING), not_refused
    # Each listed method is still there (async only: the worker).
    assert set(SENDS_NOTHING) - names <= {"client.beta.environments.work.worker"}
    print(mode, len(walked), "endpoints; sending nothing by design:", sorted(not_refused))


def cloud_client(platform: str, mode: str, base_url: str) -> Any:
    """An instrumented Bedrock client (signing with made-up AWS keys, offline) or Vertex
    client (a made-up token) of `base_url`."""
    if platform == "bedrock":
        kind: Any = AnthropicBedrock if mode == "sync" else AsyncAnthropicBedrock
        return instrument(
            kind(
                aws_access_key="AKIAWALK000000000000",
                aws_secret_key="walk-secret",
                aws_region="us-east-1",
                base_url=base_url,
                max_retries=0,
            )
        )
    kind = AnthropicVertex if mode == "sync" else AsyncAnthropicVertex
    return instrument(
        kind(
            region="us-east5",
            project_id="walk",
            access_token="ya29.walk",
            base_url=f"{base_url}/v1",
            max_retries=0,
        )
    )


# The platform clients refuse, before any request, what their platform does not offer.
UNOFFERED = re.compile(r"not supported in (the )?(Bedrock|Vertex)|not available on this client")


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("platform", ["bedrock", "vertex"])
def test_every_bedrock_and_vertex_endpoint_is_refused_under_replay_and_sends_nothing(
    platform: str, mode: str, tmp_path: Path
) -> None:
    server = CountingServer()
    try:
        client = cloud_client(platform, mode, server.url.removesuffix("/"))
        walked = walk(client, tmp_path, RESOURCES, network="allow")
    finally:
        server.close()
    assert server.accepted == 0
    names = {item.where for item in walked}
    assert {"client.messages.create", "client.messages.stream", "client.beta.messages.create"} <= (
        names
    )
    refused = [item.where for item in walked if item.outcome == "refused"]
    assert len(refused) >= 10
    unoffered = {item.where: repr(item.error) for item in walked if item.outcome != "refused"}
    assert all(
        isinstance(item.error, anthropic.AnthropicError) and UNOFFERED.search(str(item.error))
        for item in walked
        if item.outcome != "refused"
    ), unoffered
    print(platform, mode, len(refused), "refused;", len(unoffered), "not offered by the platform")
