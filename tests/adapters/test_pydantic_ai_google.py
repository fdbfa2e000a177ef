"""An unmodified pydantic-ai agent on Gemini (`GoogleModel`), end to end and offline.

The agent of tests/adapters/agent_apps.py (one `@toolreplay.effect` tool) runs on
`GoogleModel` over an instrumented `genai.Client`, served on loopback by the fake Gemini
API (examples/local_gemini): a function call, then an answer holding the tool's output.
Recorded, then replayed and forked with the client pointed at a fresh fake API with the
network guard open, which counts what reaches it. The fork changes the tool's output and
answers the model turn that follows with `reply(...)`; the branch, promoted, passes under
pytest in a new process. Run with `agent.run` and `agent.run_stream`.

pydantic-ai makes up an id for each function call Gemini sends without one, fresh every
run; replaying at all shows the Google profile records them stably.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import toolreplay
from examples.local_gemini import LocalGemini
from tests.adapters.agent_apps import (
    ORDER_ID,
    gemini_client,
    pydantic_ai_gemini_api,
    run_pydantic_ai_gemini,
)
from tests.adapters.http_api import served
from tests.adapters.real_clients import pytest_on_case
from toolreplay.adapters.google_genai import reply

DELIVERED = '{"order_id":8812,"total":1200.0,"status":"delivered"}'
ANSWER = f"Order {ORDER_ID} is on file: {DELIVERED}"
LOST = {"order_id": ORDER_ID, "total": 1200.0, "status": "lost"}
LOST_ANSWER = f"Order {ORDER_ID} was lost in transit; I have refunded all 1200.0 dollars."
LOOKUP = "shop.order.lookup"
MODEL_EFFECT = {
    False: "google_genai.models.generate_content",
    True: "google_genai.models.stream_generate_content",
}
RUNNERS = {False: "pydantic_ai_gemini_refund", True: "pydantic_ai_gemini_refund_streamed"}


def run_offline(streamed: bool) -> tuple[object, int]:
    """The agent, pointed at a fresh fake API that no recorded call should reach (the
    network guard open, so a leaked request would be counted): its answer and the count."""
    api = LocalGemini()
    with served(api) as url:
        answer = asyncio.run(run_pydantic_ai_gemini(gemini_client(base_url=url), streamed=streamed))
    return answer, len(api.requests)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
def test_a_gemini_agent_is_recorded_replayed_forked_and_promoted(
    streamed: bool, tmp_path: Path
) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "lost.trp"
    model = MODEL_EFFECT[streamed]
    api = pydantic_ai_gemini_api()
    with served(api) as url, toolreplay.record(trace):
        recorded = asyncio.run(
            run_pydantic_ai_gemini(gemini_client(base_url=url), streamed=streamed)
        )
    assert recorded == ANSWER
    assert len(api.requests) == 2
    operations = toolreplay.read_trace(trace).operations
    assert [op.effect for op in operations] == [model, LOOKUP, model]
    # The call id pydantic-ai made up is recorded by its order, on the call and its answer.
    turns = operations[2].inputs["body"]["contents"]  # type: ignore[index]  # recorded JSON, checked by the asserts
    assert turns[1]["parts"][0]["functionCall"]["id"] == "<call-1>"  # type: ignore[index]
    assert turns[2]["parts"][0]["functionResponse"]["id"] == "<call-1>"  # type: ignore[index]

    with toolreplay.replay(trace, network="allow"):
        replayed, sent = run_offline(streamed)
    assert (replayed, sent) == (ANSWER, 0)

    patches = [
        toolreplay.replace_output(at=1, value=LOST),
        toolreplay.supply_output(effect=model, value=reply(text=LOST_ANSWER)),
    ]
    with toolreplay.fork(trace, branch, patches=patches, unobserved="allow", network="allow"):
        forked, sent = run_offline(streamed)
    assert (forked, sent) == (LOST_ANSWER, 0)
    assert [op.origin for op in toolreplay.read_trace(branch).operations] == [
        "recorded",
        "patched",
        "supplied",
    ]
    report = toolreplay.diff(trace, branch)
    assert [(d.type, d.effect) for d in report.differences] == [
        ("output_changed", LOOKUP),
        ("input_changed", model),
        ("output_changed", model),
    ]
    tool_output = "$.inputs.body.contents[2].parts[0].functionResponse.response.status"
    assert [f.path for f in report.differences[1].fields] == [tool_output]
    assert report.differences[2].patch_id == patches[1].patch_id
    assert "lost" in report.render_text()

    case = toolreplay.promote(
        branch,
        tmp_path / "cases" / "lost_order",
        name="lost_order",
        runner=f"tests.adapters.agent_apps:{RUNNERS[streamed]}",
        expected=LOST_ANSWER,
    )
    result = pytest_on_case(case.directory)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
