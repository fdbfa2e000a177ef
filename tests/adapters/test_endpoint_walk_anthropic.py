"""Nothing an instrumented Anthropic client does is sent during replay, for any endpoint.

Every resource method the installed SDK exposes on `Anthropic` and `AsyncAnthropic`
(messages, batches, models, files, skills, every beta resource, and their
`with_raw_response`/`with_streaming_response` forms), found by introspection
(tests/adapters/endpoint_walk.py), is called under replay of an empty trace, with the
network guard open and the client pointed at a loopback server that counts the
connections it accepts. Each call must end in Tool Replay's refusal, and the server
must accept nothing. The few methods that send no request of their own are listed in
`SENDS_NOTHING` with the reason, and checked to exist.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

import anthropic
import pytest
from anthropic._resource import AsyncAPIResource, SyncAPIResource  # the SDK's resource bases

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
