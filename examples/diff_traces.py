"""Find the first observable difference between a recorded run and a fork of it.

Run it with `uv run python examples/diff_traces.py`. Offline.

A refund agent looks up the customer, reads the refund policy and asks a model
(a local stand-in here) for a decision. The recorded model said "approve" for a
$1,200 refund although refunds above $1,000 need manual review. We fork with the
decision the model should have given, and ask where the two runs diverge.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import toolreplay
from toolreplay import JsonValue


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, JsonValue]:
    return {"id": customer_id, "tier": "gold"}


@toolreplay.effect("policy.refund.get")
def refund_policy(region: str) -> dict[str, JsonValue]:
    return {"region": region, "manual_review_over": 1000.0}


@toolreplay.effect("llm.refund.decide")
def ask_model(amount: float, tier: str) -> dict[str, JsonValue]:
    return {"decision": "approve", "reason": f"{tier} customer, good history"}


def handle_refund(customer_id: int, amount: float) -> str:
    customer = get_customer(customer_id)
    refund_policy("eu")
    verdict = ask_model(amount, str(customer["tier"]))
    return "approved" if verdict["decision"] == "approve" else "sent to manual review"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "incident.trp"
        branch = Path(folder) / "corrected.trp"
        with toolreplay.record(source):
            print(f"recorded: {handle_refund(42, 1200.0)}")

        correction = toolreplay.replace_output(
            effect="llm.refund.decide",
            inputs={"amount": 1200.0, "tier": "gold"},
            value={"decision": "manual_review", "reason": "above the $1,000 review limit"},
        )
        with toolreplay.fork(source, branch, patches=[correction]):
            print(f"forked:   {handle_refund(42, 1200.0)}")

        report = toolreplay.diff(source, branch)
        first = report.first_divergence
        assert first is not None
        assert first.effect == "llm.refund.decide"
        print()
        print(report.render_text().replace(folder, "<tmp>"), end="")
        print()
        print("the same, as report.to_dict()['first_divergence']['fields']:")
        print(json.dumps(first.to_dict()["fields"], indent=2))


if __name__ == "__main__":
    main()
