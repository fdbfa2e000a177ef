"""Change one recorded fact and rerun the application against it: a strict fork.

Run it with `uv run python examples/fork_replace_output.py`. Offline: the CRM
below is a local function, and the fork proves it is never called again.

The story: a refund was approved for customer 42. What would the application
have decided had the CRM said the customer's account was closed?
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import toolreplay

crm_calls = 0


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, toolreplay.JsonValue]:
    global crm_calls
    crm_calls += 1
    return {"id": customer_id, "active": True, "lifetime_value": 1830.0}


def decide(customer_id: int) -> str:
    customer = get_customer(customer_id)
    return "approved" if customer["active"] else "rejected: inactive customer"


def main() -> None:
    global crm_calls
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "incident.trp"
        branch = Path(folder) / "closed-account.trp"

        with toolreplay.record(source):
            print(f"recorded decision: {decide(42)}")

        patch = toolreplay.replace_output(
            effect="crm.customer.get",
            inputs={"customer_id": 42},
            occurrence=0,
            value={"id": 42, "active": False, "lifetime_value": 1830.0},
        )
        crm_calls = 0
        with toolreplay.fork(source, branch, patches=[patch]):
            forked = decide(42)
        print(f"forked decision:   {forked}")
        print(f"  CRM calls during the fork: {crm_calls}")
        assert forked == "rejected: inactive customer"
        assert crm_calls == 0

        for operation in toolreplay.read_trace(branch).operations:
            print(
                f"  branch operation {operation.logical_id}: {operation.effect} "
                f"origin={operation.origin} patch={operation.patch_id} "
                f"source operation={operation.source_logical_operation_id}"
            )


if __name__ == "__main__":
    main()
