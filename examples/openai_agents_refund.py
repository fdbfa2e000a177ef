"""An OpenAI Agents SDK agent with tools: capture it, replay it, fork it, promote it.

Run it with `uv run python examples/openai_agents_refund.py`. Offline, and no API
key is needed: the agent's model is the scripted model of `examples/local_openai`
(it answers like the Responses API, one function call per turn), and replay and
the fork use a client whose transport refuses every request.
Everything is written to a temporary folder.

The incident: a customer asked for a refund of order 8812 ($1,200). The agent
looked the order up and called the billing tool, and billing answered "issued",
although refunds above $1,000 must be held for review: billing's limit check was
broken. Nothing in the agent is changed for Tool Replay: its tools are ordinary
functions marked `@toolreplay.effect`, and its OpenAI client is `instrument(...)`
of the client it already had. We record the run, replay it with zero requests,
fork it with the answer billing should have given, see where the two runs
differ, and keep the corrected run as a pytest case.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict  # pydantic needs it on Python 3.11

if __package__ in (None, ""):  # run as a script: the repository root holds `examples`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai  # after the path is set

import toolreplay
from examples.local_openai import HTTP, refusing
from examples.local_openai.scripted import ScriptedModel, ToolCall
from toolreplay import JsonValue
from toolreplay.adapters.openai import instrument

if TYPE_CHECKING:
    from agents import Agent, RunConfig

ORDER_ID = 8812
QUESTION = f"Please refund order {ORDER_ID}; it arrived broken."


class Order(TypedDict):
    """What the shop knows about an order."""

    order_id: int
    total: float
    status: str


@toolreplay.effect("shop.order.lookup")
async def lookup_order(order_id: int) -> Order:
    """Look an order up by its id: its total and delivery status."""
    return {"order_id": order_id, "total": 1200.0, "status": "delivered"}


class Receipt(TypedDict):
    """What billing answers to a refund."""

    refund_id: str
    status: str
    amount: float


@toolreplay.effect("billing.refund.issue")
async def issue_refund(order_id: int, amount: float) -> Receipt:
    """Refund an order; billing holds large refunds for review."""
    return {"refund_id": f"rf_{order_id}", "status": "issued", "amount": amount}  # the bug


def provider() -> ScriptedModel:
    """The model, as it answered in production: look the order up, then refund it."""
    return ScriptedModel(
        turns=[
            [ToolCall("lookup_order", {"order_id": ORDER_ID})],
            [ToolCall("issue_refund", {"order_id": ORDER_ID, "amount": 1200.0})],
        ],
        final_text=lambda outputs: outputs[-1],
    )


def client_of(handler: Any) -> openai.AsyncOpenAI:
    """An OpenAI client whose only transport is `handler`, in process."""
    transport = HTTP.MockTransport(handler)
    return openai.AsyncOpenAI(
        api_key="sk-offline-example", http_client=HTTP.AsyncClient(transport=transport)
    )


def refund_agent(client: openai.AsyncOpenAI) -> Agent[Any]:
    """The agent: two tools, and billing's receipt as its typed output."""
    from agents import Agent, OpenAIResponsesModel, StopAtTools, function_tool, set_tracing_disabled

    set_tracing_disabled(True)  # the Agents SDK would export traces to OpenAI
    return Agent(
        name="refunds",
        instructions="You settle refund requests: look the order up, then refund it.",
        tools=[function_tool(lookup_order), function_tool(issue_refund)],
        model=OpenAIResponsesModel(model="gpt-5-mini", openai_client=instrument(client)),
        # Billing's receipt ends the run (no model turn after it) and is its typed output.
        tool_use_behavior=StopAtTools(stop_at_tool_names=["issue_refund"]),
        output_type=Receipt,
    )


def grouped_run() -> RunConfig:
    """The run's configuration: one group for every run of this request.

    Without a group the SDK sends a random `prompt_cache_key` per run, so no two
    runs would send the same request; grouped runs send one derived from the group.
    """
    from agents import RunConfig

    return RunConfig(group_id=f"refund-{ORDER_ID}")


async def settle_refund(client: openai.AsyncOpenAI) -> dict[str, JsonValue]:
    """The application: the agent settles the request, then the customer is told."""
    from agents import Runner

    result = await Runner.run(refund_agent(client), QUESTION, run_config=grouped_run())
    receipt = result.final_output
    status = receipt["status"]
    message = "Your refund is on its way." if status == "issued" else "Your refund is in review."
    return {"order": ORDER_ID, "billing": status, "customer_told": message}


def refund_request() -> dict[str, JsonValue]:
    """The runner the promoted case calls (no arguments). Under a replay the
    instrumented client answers from the trace: the fake API is never reached."""
    return asyncio.run(settle_refund(client_of(provider())))


def main() -> int:
    try:
        import agents  # noqa: F401  # only to say early what is missing
    except ImportError:
        print("this example needs openai-agents (uv sync --all-extras; it needs openai>=3)")
        return 2
    here = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory() as folder:
        incident, corrected = Path(folder) / "incident.trp", Path(folder) / "corrected.trp"

        model = provider()
        with toolreplay.record(incident):
            outcome = asyncio.run(settle_refund(client_of(model)))
        print(f"recorded:  {outcome}  ({len(model.requests)} model requests)")
        for operation in toolreplay.read_trace(incident).operations:
            print(f"  #{operation.logical_id} {operation.effect}")

        sent: list[Any] = []  # what reached the refusing transport: must stay empty
        with toolreplay.replay(incident):
            replayed = asyncio.run(settle_refund(client_of(refusing(sent))))
        print(f"replayed:  {replayed}  ({len(sent)} requests sent)")

        held = toolreplay.replace_output(
            effect="billing.refund.issue",
            inputs={"order_id": ORDER_ID, "amount": 1200.0},
            value={"refund_id": f"rf_{ORDER_ID}", "status": "held_for_review", "amount": 1200.0},
        )
        with toolreplay.fork(incident, corrected, patches=[held]):
            expected = asyncio.run(settle_refund(client_of(refusing(sent))))
        print(f"forked:    {expected}  ({len(sent)} requests sent)")

        report = toolreplay.diff(incident, corrected)
        first = report.first_divergence
        assert first is not None
        print(f"diff:      {first.describe()}")
        for field in first.fields:
            print(f"           {field.describe()}")

        case = toolreplay.promote(
            corrected,
            Path(folder) / "cases" / "large_refund_is_held",
            name="large_refund_is_held",
            runner="examples.openai_agents_refund:refund_request",
            expected=expected,
        )
        environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        environment["PYTHONPATH"] = str(here.parent)  # the runner is examples.openai_agents_refund
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(case.directory)],
            env=environment,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        print(f"promoted:  {case.directory.name}; pytest: {result.stdout.strip().splitlines()[-1]}")
        if result.returncode != 0:
            print(result.stdout + result.stderr, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
