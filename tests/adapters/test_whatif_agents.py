"""A tool-output what-if on unmodified agents, answered offline with `reply(...)` (issue 22).

Changing what a tool returned changes the next model request, which the recording
never saw. The fork answers that request with a supply patch that names no inputs
and holds a one-line `reply(...)`; an Agents SDK agent (two tools, run and run
streamed) and a pydantic-ai agent (Responses and Chat Completions, run and run
streamed) then complete with zero requests sent (their client's transport refuses and
counts them), and the branch, promoted, passes under pytest in a new process.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from examples.local_openai import refusing
from tests.adapters.agent_apps import (
    ORDER_ID,
    agents_api,
    pydantic_ai_api,
    run_agents_sdk,
    run_pydantic_ai,
)
from tests.adapters.real_clients import needs_openai_3, pytest_on_case
from tests.adapters.support import async_client
from tests.support.agent_fork import TOOL_OUTPUT_PATH
from toolreplay.adapters.openai import reply

pytestmark = needs_openai_3

CHEAPER = {"order_id": ORDER_ID, "total": 250.0, "status": "delivered"}
PARTIAL = {"refund_id": f"rf_{ORDER_ID}", "status": "issued", "amount": 250.0}
LOST = {"order_id": ORDER_ID, "total": 1200.0, "status": "lost"}
LOST_ANSWER = f"Order {ORDER_ID} was lost in transit; I have refunded all 1200.0 dollars."


@pytest.mark.parametrize("streamed", [False, True], ids=["Runner.run", "Runner.run_streamed"])
def test_an_agents_sdk_what_if_completes_offline_and_promotes(
    streamed: bool, tmp_path: Path
) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "cheaper.trp"
    with toolreplay.record(trace):
        asyncio.run(run_agents_sdk(async_client(agents_api()), streamed=streamed))
    # What if the order had cost 250? The model is asked again, with that tool output:
    # it refunds 250 (one line), and billing answers that new call (no inputs named).
    patches = [
        toolreplay.replace_output(
            effect="shop.order.lookup", inputs={"order_id": ORDER_ID}, value=CHEAPER
        ),
        toolreplay.supply_output(
            effect="openai.responses.create",
            value=reply(tool_calls=[("issue_refund", {"order_id": ORDER_ID, "amount": 250.0})]),
        ),
        toolreplay.supply_output(effect="billing.refund.issue", value=PARTIAL),
    ]
    refused: list[Any] = []
    with toolreplay.fork(trace, branch, patches=patches, unobserved="allow") as session:
        forked = asyncio.run(run_agents_sdk(async_client(refusing(refused)), streamed=streamed))
    assert forked == PARTIAL
    assert refused == []
    assert session.patched_count == 3

    operations = toolreplay.read_trace(branch).operations
    assert [(op.effect, op.origin) for op in operations] == [
        ("openai.responses.create", "recorded"),
        ("shop.order.lookup", "patched"),
        ("openai.responses.create", "supplied"),
        ("billing.refund.issue", "supplied"),
    ]
    # The branch holds the full request it answered, with the patched tool output in it.
    request: Any = operations[2].inputs["body"]
    (tool_output,) = [i for i in request["input"] if i.get("type") == "function_call_output"]
    assert "250.0" in tool_output["output"]
    assert operations[3].inputs == {"order_id": ORDER_ID, "amount": 250.0}
    report = toolreplay.diff(trace, branch)
    asked = [d for d in report.differences if d.type == "input_changed"]
    assert [(d.effect, [f.path for f in d.fields]) for d in asked] == [
        ("openai.responses.create", ["$.inputs.body.input[2].output"]),
        ("billing.refund.issue", ["$.inputs.amount"]),
    ]

    runner = "agents_refund_streamed" if streamed else "agents_refund"
    case = toolreplay.promote(
        branch,
        tmp_path / "cases" / "partial_refund",
        name="partial_refund",
        runner=f"tests.adapters.agent_apps:{runner}",
        expected=PARTIAL,
    )
    result = pytest_on_case(case.directory)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


RUNNERS = {
    ("responses", True): "pydantic_ai_refund_streamed",
    ("chat", False): "pydantic_ai_refund_chat",
}
PROMOTED = set(RUNNERS)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
@pytest.mark.parametrize("api", ["responses", "chat"])
def test_a_pydantic_ai_what_if_completes_offline_and_promotes(
    api: str, streamed: bool, tmp_path: Path
) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "lost.trp"
    with toolreplay.record(trace):
        asyncio.run(run_pydantic_ai(async_client(pydantic_ai_api()), api=api, streamed=streamed))
    model = "openai.responses.create" if api == "responses" else "openai.chat.completions.create"
    # The tool's answer by its operation number; the model's next answer in one line.
    patches = [
        toolreplay.replace_output(at=1, value=LOST),
        toolreplay.supply_output(effect=model, value=reply(text=LOST_ANSWER)),
    ]
    refused: list[Any] = []
    with toolreplay.fork(trace, branch, patches=patches, unobserved="allow"):
        forked = asyncio.run(
            run_pydantic_ai(async_client(refusing(refused)), api=api, streamed=streamed)
        )
    assert forked == LOST_ANSWER
    assert refused == []
    operations = toolreplay.read_trace(branch).operations
    assert [op.origin for op in operations] == ["recorded", "patched", "supplied"]
    # The diff reads the new request as the recorded one asked differently: at the tool
    # output inside it (RFC 0004 §3.3), its answer credited to the supply patch.
    report = toolreplay.diff(trace, branch)
    assert [(d.type, d.effect) for d in report.differences] == [
        ("output_changed", "shop.order.lookup"),
        ("input_changed", model),
        ("output_changed", model),
    ]
    assert [f.path for f in report.differences[1].fields] == [TOOL_OUTPUT_PATH[api]]
    assert report.differences[2].patch_id == patches[1].patch_id

    if (api, streamed) not in PROMOTED:
        return  # each child pytest run costs seconds: two variants are promoted
    case = toolreplay.promote(
        branch,
        tmp_path / "cases" / "lost_order",
        name="lost_order",
        runner=f"tests.adapters.agent_apps:{RUNNERS[api, streamed]}",
        expected=LOST_ANSWER,
    )
    result = pytest_on_case(case.directory)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
