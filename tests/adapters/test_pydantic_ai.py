"""An unmodified pydantic-ai agent, end to end and offline, over Responses and Chat Completions.

The agent has one tool (a `@toolreplay.effect` function) and is served by the local
scripted model: a function-call turn, then a final message. Replays and forks use a client
whose transport refuses every request, and count them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from examples.local_openai import refusing
from tests.adapters.agent_apps import ORDER_ID, pydantic_ai_api, run_pydantic_ai
from tests.adapters.real_clients import needs_openai_3, pytest_on_case
from tests.adapters.support import async_client

pytestmark = needs_openai_3

ANSWER = f'Order {ORDER_ID} is on file: {{"order_id":8812,"total":1200.0,"status":"delivered"}}'
MODEL_EFFECT = {"responses": "openai.responses.create", "chat": "openai.chat.completions.create"}


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
@pytest.mark.parametrize("api", ["responses", "chat"])
def test_an_agent_is_recorded_replayed_and_forked(api: str, streamed: bool, tmp_path: Path) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "lost.trp"
    model_api = pydantic_ai_api()
    with toolreplay.record(trace):
        recorded = asyncio.run(run_pydantic_ai(async_client(model_api), api=api, streamed=streamed))
    assert recorded == ANSWER
    assert len(model_api.requests) == 2
    model = MODEL_EFFECT[api]
    operations = toolreplay.read_trace(trace).operations
    assert [op.effect for op in operations] == [model, "shop.order.lookup", model]

    refused: list[Any] = []
    with toolreplay.replay(trace):
        replayed = asyncio.run(
            run_pydantic_ai(async_client(refusing(refused)), api=api, streamed=streamed)
        )
    assert replayed == ANSWER
    assert refused == []

    # The tool's answer changes what the model is asked next, which the recording never
    # saw: the strict fork stops there, and the diff shows both steps.
    lost = toolreplay.replace_output(
        effect="shop.order.lookup",
        inputs={"order_id": ORDER_ID},
        value={"order_id": ORDER_ID, "total": 1200.0, "status": "lost"},
    )
    with pytest.raises(Exception) as raised:  # the framework may wrap the miss
        with toolreplay.fork(trace, branch, patches=[lost]):
            asyncio.run(
                run_pydantic_ai(async_client(refusing(refused)), api=api, streamed=streamed)
            )
    assert refused == []
    chain = [raised.value, raised.value.__cause__, raised.value.__context__]
    assert any(model in str(error) for error in chain if error is not None)
    report = toolreplay.diff(trace, branch)
    first = report.first_divergence
    assert first is not None
    assert (first.type, first.effect) == ("output_changed", "shop.order.lookup")
    assert "lost" in report.render_text()


def test_the_recorded_run_is_promoted_and_passes_under_pytest(tmp_path: Path) -> None:
    trace = tmp_path / "refund.trp"
    with toolreplay.record(trace):
        recorded = asyncio.run(
            run_pydantic_ai(async_client(pydantic_ai_api()), api="responses", streamed=False)
        )
    case = toolreplay.promote(
        trace,
        tmp_path / "cases" / "refund_lookup",
        name="refund_lookup",
        runner="tests.adapters.agent_apps:pydantic_ai_refund",
        expected=recorded,
    )
    result = pytest_on_case(case.directory)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
