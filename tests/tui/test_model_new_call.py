"""The ways to answer a model call a fork stopped at, built and previewed without the UI.

An unmodified Agents SDK agent (the bundled example) is recorded and forked, in child
processes as the debugger runs them, with the order lookup's answer changed: the fork
stops at the model request that carries it. Each answer is a patch; the preview of a
reply must be exactly what the fork then answers the application with.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from toolreplay_tui.model.new_call import (
    LiveStatus,
    NewModelCall,
    OfferedTool,
    live_status,
    new_model_call,
    position_in_source,
    preview,
)
from toolreplay_tui.model.runs import RunClient, RunHandle, RunResult
from toolreplay_tui.model.stops import unrecorded_call
from toolreplay_tui.model.trace_file import TraceFile

import toolreplay
from tests.adapters.real_clients import needs_openai_3
from tests.tui.agent_project import (
    MODEL,
    ORDER_ID,
    PARTIAL,
    RUNNER,
    AgentProject,
    agent_env,
    record_agent,
)
from toolreplay import JsonValue

pytestmark = needs_openai_3


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> AgentProject:
    return record_agent(tmp_path_factory.mktemp("agent"))


def fork(project: AgentProject, patches: list[toolreplay.Patch], name: str) -> RunResult:
    client = RunClient(cwd=project.root, env=agent_env())
    patch_file = toolreplay.write_patches(project.root / f"{name}.json", patches, overwrite=True)
    branch = project.root / f"{name}.trp"
    branch.unlink(missing_ok=True)
    return RunHandle(client.fork(project.trace, patch_file, branch, runner=RUNNER)).wait()


@pytest.fixture(scope="module")
def stopped(agent: AgentProject) -> NewModelCall:
    result = fork(agent, [agent.cheaper], "stopped")
    assert result.outcome == "replay_contract_error", result.stderr
    call = unrecorded_call(result)
    assert call is not None
    new_call = new_model_call(call)
    assert new_call is not None
    return new_call


def test_the_stop_reads_as_a_model_request_with_its_tools(stopped: NewModelCall) -> None:
    assert stopped.effect == MODEL
    assert (stopped.api, stopped.streamed) == ("responses", False)
    assert [tool.name for tool in stopped.tools] == ["lookup_order", "issue_refund"]
    assert "Refund an order" in stopped.tools[1].description
    # The arguments start from what the recording's answer gave that tool.
    assert json.loads(stopped.arguments_template("issue_refund")) == {
        "order_id": ORDER_ID,
        "amount": 1200.0,
    }
    assert json.loads(stopped.arguments_template("lookup_order")) == {"order_id": ORDER_ID}
    # A tool the recording never called starts from its schema's properties.
    schema: JsonValue = {
        "properties": {"order_id": {"type": "integer"}, "reason": {"type": "string"}}
    }
    cancel = OfferedTool("cancel_order", "", schema)
    offered = replace(stopped, tools=(*stopped.tools, cancel))
    assert json.loads(offered.arguments_template("cancel_order")) == {"order_id": 0, "reason": ""}


def test_a_tool_call_and_a_text_are_checked_before_anything_runs(stopped: NewModelCall) -> None:
    with pytest.raises(toolreplay.PatchError, match="offers no tool 'refund_all'"):
        stopped.tool_reply("refund_all", "{}")
    with pytest.raises(toolreplay.PatchError, match="not JSON"):
        stopped.tool_reply("issue_refund", '{"order_id": 8812,')
    with pytest.raises(toolreplay.PatchError, match="a JSON object"):
        stopped.tool_reply("issue_refund", "[8812]")
    with pytest.raises(toolreplay.PatchError, match="type the answer"):
        stopped.text_reply("  ")
    patch = stopped.text_reply("Refunded.")
    assert (patch.kind, patch.target_form, patch.recipe) == ("supply_output", "next_call", "reply")


def test_the_preview_is_exactly_what_the_fork_answers_with(
    agent: AgentProject, stopped: NewModelCall
) -> None:
    refund = stopped.tool_reply("issue_refund", '{"order_id": 8812, "amount": 250.0}')
    with TraceFile.open(agent.trace) as source:
        source.index()
        near = position_in_source(agent.root / "stopped.trp")
        assert near == 1  # the lookup, the last source operation served before the stop
        shown = preview(stopped, refund, source, near)
    assert shown.transcript is not None
    answer = [entry for entry in shown.transcript.response if entry.kind == "tool_call"]
    assert [(entry.who, json.loads(entry.text)) for entry in answer] == [
        ("issue_refund", {"order_id": ORDER_ID, "amount": 250.0})
    ]

    billing = toolreplay.supply_output(effect="billing.refund.issue", value=PARTIAL)
    result = fork(agent, [agent.cheaper, refund, billing], "answered")
    assert result.ok, result.stderr
    assert result.return_value == {
        "order": ORDER_ID,
        "billing": "issued",
        "customer_told": "Your refund is on its way.",
    }
    answered = toolreplay.read_trace(agent.root / "answered.trp").operations[2]
    assert (answered.effect, answered.origin) == (MODEL, "supplied")
    assert answered.outcome == toolreplay.Returned(shown.output)


def test_a_text_that_a_structured_output_request_cannot_take_is_refused_in_the_preview(
    agent: AgentProject, stopped: NewModelCall
) -> None:
    # The agent's output type makes every request ask for JSON: plain text is refused.
    with TraceFile.open(agent.trace) as source:
        source.index()
        with pytest.raises(toolreplay.PatchError, match="asks for a JSON answer"):
            preview(stopped, stopped.text_reply("Refunded."), source, 1)
        receipt = json.dumps(PARTIAL)
        shown = preview(stopped, stopped.text_reply(receipt), source, 1)
    assert shown.transcript is not None
    assert [entry.text for entry in shown.transcript.response if entry.kind == "text"] == [receipt]


def test_the_nearest_recorded_answer_is_reused_as_it_was(stopped: NewModelCall) -> None:
    answer = stopped.recorded_answer()
    assert answer is not None
    assert answer.logical_id == 2  # the recorded request that asked the same, differently
    patch = stopped.reuse_reply()
    assert patch is not None
    assert (patch.target_form, patch.recipe, patch.value) == ("next_call", None, answer.output)


def test_live_status_says_only_what_the_environment_shows() -> None:
    assert live_status(MODEL, {}) == LiveStatus(MODEL, key_set=False, base_url=None)
    status = live_status(
        MODEL,
        {"OPENAI_API_KEY": "sk-secret-1234", "OPENAI_BASE_URL": "https://u:pw@llm.local:8443/v1"},
    )
    assert status == LiveStatus(MODEL, key_set=True, base_url="https://llm.local:8443")
    described = status.describe()
    assert "OPENAI_API_KEY is set" in described
    assert "sk-secret" not in described
    assert "pw" not in described
    assert "not set" in live_status(MODEL, {"OPENAI_API_KEY": " "}).describe()
