"""An unmodified pydantic-ai agent on Claude (`AnthropicModel`), end to end and offline.

The agent (tests/adapters/agent_apps.py) has one tool, a `@toolreplay.effect` function,
and talks through an instrumented `AsyncAnthropic` to the local Anthropic API served on
loopback: a tool use, then an answer made from the tool's result. `agent.run` sends its
requests unstreamed (JSON bodies), `agent.run_stream` streamed (named events). Replays and
forks use a client whose transport refuses every request, and count them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

import toolreplay
from tests.adapters.agent_apps import (
    ORDER_ID,
    claude_api,
    claude_client,
    run_pydantic_ai_claude,
)
from tests.adapters.http_api import served
from tests.adapters.real_clients import pytest_on_case
from toolreplay.adapters.anthropic import reply

DELIVERED = {"order_id": ORDER_ID, "total": 1200.0, "status": "delivered"}
ANSWER = f'Order {ORDER_ID} is on file: {{"order_id":8812,"total":1200.0,"status":"delivered"}}'
LOST = f"Order {ORDER_ID} was lost in transit: I will refund it in full."
MODEL = "anthropic.messages.create"
RUNNER = {False: "pydantic_ai_claude", True: "pydantic_ai_claude_streamed"}


def run(client: Any, streamed: bool) -> str:
    return asyncio.run(run_pydantic_ai_claude(client, streamed=streamed))


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
def test_an_agent_on_claude_is_recorded_replayed_forked_diffed_and_promoted(
    streamed: bool, tmp_path: Path
) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "lost.trp"
    api = claude_api()
    with served(api) as url, toolreplay.record(trace):
        recorded = run(claude_client(url.removesuffix("/v1")), streamed)
    assert recorded == ANSWER
    assert len(api.requests) == 2
    operations = toolreplay.read_trace(trace).operations
    assert [op.effect for op in operations] == [MODEL, "shop.order.lookup", MODEL]
    first = cast(Any, operations[0].outcome).value
    # The request as pydantic-ai sent it, and the answer in the form it came in.
    assert cast(Any, operations[0].inputs["body"])["tools"][0]["name"] == "lookup_order"
    assert ("events" in first) is streamed
    assert ("body" in first) is not streamed

    sent: list[Any] = []
    with toolreplay.replay(trace):
        assert run(claude_client(sent=sent), streamed) == ANSWER
    assert sent == []

    # The tool says the order was lost: pydantic-ai then asks Claude something the
    # recording never saw, and `reply` answers it (streamed, for a streamed request). The
    # recorded question goes unasked, which the fork allows (`unobserved`).
    patches = [
        toolreplay.replace_output(
            effect="shop.order.lookup",
            inputs={"order_id": ORDER_ID},
            value={**DELIVERED, "status": "lost"},
        ),
        toolreplay.supply_output(effect=MODEL, value=reply(text=LOST)),
    ]
    with toolreplay.fork(trace, branch, patches=patches, unobserved="allow"):
        assert run(claude_client(sent=sent), streamed) == LOST
    assert sent == []
    forked = toolreplay.read_trace(branch).operations
    assert [op.effect for op in forked] == [MODEL, "shop.order.lookup", MODEL]
    asked = cast(Any, forked[2].inputs["body"])["messages"][-1]["content"][0]
    assert asked["type"] == "tool_result"
    assert '"status":"lost"' in str(asked["content"])
    assert ("events" in cast(Any, forked[2].outcome).value) is streamed

    report = toolreplay.diff(trace, branch)
    divergence = report.first_divergence
    assert divergence is not None
    assert (divergence.type, divergence.effect) == ("output_changed", "shop.order.lookup")
    # Claude's turn: asked about the lost order, answered by the reply.
    assert [(d.type, d.effect) for d in report.differences] == [
        ("output_changed", "shop.order.lookup"),
        ("input_changed", MODEL),
        ("output_changed", MODEL),
    ]
    rendered = report.render_text()
    assert '\\"status\\":\\"lost\\"' in rendered
    assert f"supplied by patch {patches[1].patch_id}" in rendered

    # The branch replays as a recording does, and both runs become passing cases.
    with toolreplay.replay(branch):
        assert run(claude_client(sent=sent), streamed) == LOST
    assert sent == []
    runner = f"tests.adapters.agent_apps:{RUNNER[streamed]}"
    for source, name, expected in ((trace, "delivered", ANSWER), (branch, "lost", LOST)):
        toolreplay.promote(
            source, tmp_path / "cases" / name, name=name, runner=runner, expected=expected
        )
    result = pytest_on_case(tmp_path / "cases")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
