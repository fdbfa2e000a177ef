"""The pytest marker with the Anthropic adapter: record a test's Claude calls once, replay after.

    uv run pytest examples/pytest_marker

The first run records each marked test's calls into
`traces/test_anthropic_refund/<test>.trp` next to this file, from a local transport that
answers like the Messages API (examples/local_anthropic: no key, no network). Every later
run replays that trace and the transport is never reached; in CI (`CI` set, so
`--toolreplay-mode` defaults to `none`) a missing trace fails instead of going live.
"""

from __future__ import annotations

import anthropic
import httpx2
import pytest

from examples.anthropic_refund import client_over, refund_agent
from examples.local_anthropic import API_KEY, MODEL, LocalAnthropic
from toolreplay.adapters.anthropic import instrument
from toolreplay.pytest_plugin import TestTrace

REFUNDED = ["said: Let me check that order.", "refunded 8812"]


@pytest.fixture
def provider() -> LocalAnthropic:
    """Stands in for Claude while recording, and counts what reaches it."""
    return LocalAnthropic()


@pytest.mark.toolreplay
def test_claude_refunds_the_lost_order(
    provider: LocalAnthropic, toolreplay_session: TestTrace
) -> None:
    assert refund_agent(client_over(provider)) == REFUNDED
    # A recording reaches the provider once; a replay never does.
    assert len(provider.requests) == (1 if toolreplay_session.action == "record" else 0)


@pytest.mark.toolreplay
@pytest.mark.asyncio
async def test_a_streamed_answer_on_the_async_client_replays_the_same(
    provider: LocalAnthropic, toolreplay_session: TestTrace
) -> None:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(provider))
    client = instrument(anthropic.AsyncAnthropic(api_key=API_KEY, http_client=http))
    asked: list[anthropic.types.MessageParam] = [{"role": "user", "content": "Refund 8812?"}]
    async with client.messages.stream(model=MODEL, max_tokens=256, messages=asked) as stream:
        text = await stream.get_final_text()
    assert text == "Order 8812 was refunded in full."
    assert len(provider.requests) == (1 if toolreplay_session.action == "record" else 0)
