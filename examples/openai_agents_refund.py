"""An OpenAI Agents SDK agent with tools: capture it, replay it, fork it, promote it.

Run it with `uv run python examples/openai_agents_refund.py`. Offline, and no API
key is needed: the agent's model is the scripted model of `examples/local_openai`
(it answers like the Responses API, one function call per turn, refunding what the
order lookup said the order cost), standing in for the provider; replay and the
offline forks use a client whose transport refuses every request. Everything is
written to a temporary folder.

The incident: a customer asked for a refund of order 8812 ($1,200). The agent
looked the order up and called the billing tool, and billing answered "issued",
although refunds above $1,000 must be held for review: billing's limit check was
broken. Nothing in the agent is changed for Tool Replay: its tools are ordinary
functions marked `@toolreplay.effect`, and its OpenAI client is `instrument(...)`
of the client it already had. We record the run, replay it with zero requests,
fork it with the answer billing should have given, and see where the two runs
differ.

Then a what-if on a tool's answer: had the order cost $300, the lookup's answer
would have gone into the model's next request, which the recording never made.
The fork answers that request two ways: live (the provider, here the local
stand-in, is sent exactly that one new request, `fork(..., live=[...])`), and
offline (`reply(...)` writes the model's answer in one line, in a supply patch
that names no inputs: zero requests). Billing's call for $300 is new too, and a
supply patch answers it. The corrected run and both what-if branches are kept
as pytest cases, which replay with the network blocked.
"""

from __future__ import annotations

import ast
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
from toolreplay.adapters.openai import instrument, reply

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


def order_total(lookup: str) -> float:
    """The total in the lookup's output as the model reads it (the SDK sends the tool's
    return value as its text)."""
    return float(ast.literal_eval(lookup)["total"])


def provider() -> ScriptedModel:
    """The model, as it answered in production: look the order up, then refund its total."""
    return ScriptedModel(
        turns=[
            [ToolCall("lookup_order", {"order_id": ORDER_ID})],
            [
                ToolCall(
                    "issue_refund",
                    lambda outputs: {"order_id": ORDER_ID, "amount": order_total(outputs[-1])},
                )
            ],
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


CHEAPER: Order = {"order_id": ORDER_ID, "total": 300.0, "status": "delivered"}
PARTIAL: Receipt = {"refund_id": f"rf_{ORDER_ID}", "status": "issued", "amount": 300.0}


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

        # What if the order had cost $300? The lookup's answer goes into the model's
        # next request, which the recording never made; billing's call for $300 is new
        # too (a supply patch naming no inputs answers the next such call).
        cheaper = toolreplay.replace_output(
            effect="shop.order.lookup", inputs={"order_id": ORDER_ID}, value=CHEAPER
        )
        billed = toolreplay.supply_output(effect="billing.refund.issue", value=PARTIAL)

        # Live: the provider (the local stand-in) is asked exactly the new request.
        live_branch, asked = Path(folder) / "cheaper-live.trp", provider()
        with toolreplay.fork(
            incident,
            live_branch,
            patches=[cheaper, billed],
            live=["openai.responses.create"],
            unobserved="allow",
        ) as session:
            live = asyncio.run(settle_refund(client_of(asked)))
        print(
            f"live:      {live}  ({len(asked.requests)} model request sent, "
            f"{session.live_count} kept as live)"
        )

        # Offline: the model's answer in one line, zero requests.
        offline_branch = Path(folder) / "cheaper-offline.trp"
        answer = toolreplay.supply_output(
            effect="openai.responses.create",
            value=reply(tool_calls=[("issue_refund", {"order_id": ORDER_ID, "amount": 300.0})]),
        )
        with toolreplay.fork(
            incident, offline_branch, patches=[cheaper, answer, billed], unobserved="allow"
        ):
            offline = asyncio.run(settle_refund(client_of(refusing(sent))))
        print(f"offline:   {offline}  ({len(sent)} requests sent)")
        changed = toolreplay.diff(incident, offline_branch).differences
        asked_again = next(d for d in changed if d.effect == "openai.responses.create")
        print(f"diff:      {asked_again.type} at {asked_again.fields[0].path}")

        cases = Path(folder) / "cases"
        runner = "examples.openai_agents_refund:refund_request"
        for name, branch, value in (
            ("large_refund_is_held", corrected, expected),
            ("cheaper_order_asked_live", live_branch, live),
            ("cheaper_order_answered_offline", offline_branch, offline),
        ):
            toolreplay.promote(branch, cases / name, name=name, runner=runner, expected=value)
        environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        environment["PYTHONPATH"] = str(here.parent)  # the runner is examples.openai_agents_refund
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(cases)],
            env=environment,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        names = ", ".join(sorted(path.name for path in cases.iterdir()))
        print(f"promoted:  {names}; pytest: {result.stdout.strip().splitlines()[-1]}")
        if result.returncode != 0:
            print(result.stdout + result.stderr, file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
