"""The pytest marker with the OpenAI adapter: record a test's model calls once, replay after.

    uv run pytest examples/pytest_marker

The first run records each marked test's calls into
`traces/test_openai_refund/<test>.trp` next to this file, from a local
transport that answers like the Responses API (no key, no network). Every later
run replays that trace and the transport is never reached; commit the traces
and CI (where `CI` is set, so `--toolreplay-mode` defaults to `none`) replays
them too, and fails instead of going live if one is missing. To record real
answers, give the client a real provider and run once with
`--toolreplay-mode=once` (or `all`, to record again).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from examples import openai_async_responses_approval as async_example
from examples import openai_responses_approval as sync_example
from examples.local_openai import LocalOpenAI
from toolreplay.adapters.openai import InstrumentedOpenAI
from toolreplay.pytest_plugin import TestTrace


@pytest.fixture
def provider() -> LocalOpenAI:
    """Stands in for the provider while recording, and counts what reaches it."""
    return LocalOpenAI("manual_review")


@pytest.fixture
def client(provider: LocalOpenAI) -> Iterator[InstrumentedOpenAI]:
    with sync_example.offline_client(provider) as instrumented:
        yield instrumented


@pytest.mark.toolreplay
def test_a_large_refund_goes_to_manual_review(
    client: InstrumentedOpenAI,
    provider: LocalOpenAI,
    toolreplay_session: TestTrace,
) -> None:
    assert sync_example.decide_refund(client, sync_example.MODEL) == "manual_review"
    # A recording reaches the provider once; a replay never does.
    assert provider.calls == (1 if toolreplay_session.action == "record" else 0)


@pytest.mark.toolreplay
@pytest.mark.asyncio
async def test_the_async_client_is_recorded_and_replayed_the_same_way(
    toolreplay_session: TestTrace,
) -> None:
    provider = LocalOpenAI("manual_review")
    async with async_example.offline_client(provider) as client:
        decision = await async_example.decide_refund(client, async_example.MODEL)
    assert decision == "manual_review"
    assert provider.calls == (1 if toolreplay_session.action == "record" else 0)
