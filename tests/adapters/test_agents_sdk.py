"""An unmodified openai-agents agent, end to end and offline: record, replay, fork, promote.

The agent has two function tools that are `@toolreplay.effect` functions and is
served by the local scripted model (a function-call turn per tool). Replays and forks
use a client whose transport refuses every request, and count them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from examples.local_openai import refusing
from tests.adapters.agent_apps import ORDER_ID, agents_api, run_agents_sdk
from tests.adapters.real_clients import needs_openai_3, pytest_on_case
from tests.adapters.support import async_client

pytestmark = needs_openai_3

RECEIPT = {"refund_id": f"rf_{ORDER_ID}", "status": "issued", "amount": 1200.0}
REJECTED = {"refund_id": f"rf_{ORDER_ID}", "status": "rejected: chargeback open", "amount": 0.0}
EFFECTS = [
    "openai.responses.create",
    "shop.order.lookup",
    "openai.responses.create",
    "billing.refund.issue",
]


@pytest.mark.parametrize("streamed", [False, True], ids=["Runner.run", "Runner.run_streamed"])
def test_an_agent_is_recorded_replayed_forked_and_promoted(streamed: bool, tmp_path: Path) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "rejected.trp"
    api = agents_api()
    with toolreplay.record(trace):
        recorded = asyncio.run(run_agents_sdk(async_client(api), streamed=streamed))
    assert recorded == RECEIPT
    assert len(api.requests) == 2
    assert all(bool(body.get("stream")) is streamed for body in api.requests)
    operations = toolreplay.read_trace(trace).operations
    assert [op.effect for op in operations] == EFFECTS
    model_call = operations[0]
    assert model_call.inputs["path"] == "/responses"  # type: ignore[index]  # a JSON object

    refused: list[Any] = []
    with toolreplay.replay(trace):
        replayed = asyncio.run(run_agents_sdk(async_client(refusing(refused)), streamed=streamed))
    assert replayed == RECEIPT
    assert refused == []

    rejection = toolreplay.replace_output(
        effect="billing.refund.issue",
        inputs={"order_id": ORDER_ID, "amount": 1200.0},
        value=REJECTED,
    )
    with toolreplay.fork(trace, branch, patches=[rejection]):
        forked = asyncio.run(run_agents_sdk(async_client(refusing(refused)), streamed=streamed))
    assert forked == REJECTED
    assert refused == []

    report = toolreplay.diff(trace, branch)
    first = report.first_divergence
    assert first is not None
    assert first.effect == "billing.refund.issue"
    assert first.type == "output_changed"
    assert "$.output.status" in report.render_text()

    runner = "agents_refund_streamed" if streamed else "agents_refund"
    case = toolreplay.promote(
        branch,
        tmp_path / "cases" / "refund_rejected",
        name="refund_rejected",
        runner=f"tests.adapters.agent_apps:{runner}",
        expected=REJECTED,
    )
    result = pytest_on_case(case.directory)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


def test_a_fork_that_changes_what_the_model_sees_stops_at_the_next_model_call(
    tmp_path: Path,
) -> None:
    """Strict tail: the model was never asked about a lost order, so the fork says so."""
    trace, branch = tmp_path / "refund.trp", tmp_path / "lost.trp"
    with toolreplay.record(trace):
        asyncio.run(run_agents_sdk(async_client(agents_api()), streamed=False))
    lost = toolreplay.replace_output(
        effect="shop.order.lookup",
        inputs={"order_id": ORDER_ID},
        value={"order_id": ORDER_ID, "total": 1200.0, "status": "lost"},
    )
    refused: list[Any] = []
    with pytest.raises(Exception) as raised:  # what the SDK wraps the miss in is its own
        with toolreplay.fork(trace, branch, patches=[lost]):
            asyncio.run(run_agents_sdk(async_client(refusing(refused)), streamed=False))
    assert refused == []
    assert "openai.responses.create" in "".join(
        str(error) for error in (raised.value, raised.value.__cause__) if error is not None
    )
    report = toolreplay.diff(trace, branch)
    kinds = [(row.type, row.effect) for row in report.differences]
    assert ("output_changed", "shop.order.lookup") in kinds
    assert any(effect == "openai.responses.create" for _kind, effect in kinds[1:])
