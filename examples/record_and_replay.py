"""Record a CRM lookup and a timed-out billing call, then replay both offline.

Run it with `uv run python examples/record_and_replay.py`. It needs no network
and no API key: the "services" below are local functions standing in for real
ones, and the replay proves they are not called again.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import toolreplay

live_calls = 0


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, toolreplay.JsonValue]:
    """Stands in for an HTTP call to the CRM."""
    global live_calls
    live_calls += 1
    return {"id": customer_id, "name": "Ada Lovelace", "active": True}


@toolreplay.effect("billing.refund.create")
def create_refund(customer_id: int, amount: float) -> str:
    """Stands in for a billing API that times out on this day."""
    global live_calls
    live_calls += 1
    raise TimeoutError(f"billing did not answer within 30s (refund of {amount:.2f})")


def handle_refund(customer_id: int, amount: float) -> str:
    """The application code under test: it never knows whether it is replayed."""
    customer = get_customer(customer_id)
    if not customer["active"]:
        return "rejected: inactive customer"
    try:
        refund_id = create_refund(customer_id, amount)
    except TimeoutError as error:
        return f"queued for retry: {error}"
    return f"refunded as {refund_id}"


def main() -> None:
    global live_calls
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "refund.trp"

        with toolreplay.record(trace):
            recorded = handle_refund(42, 120.0)
        print(f"recorded: {recorded}")
        print(f"  live calls while recording: {live_calls}")

        loaded = toolreplay.read_trace(trace)
        for operation in loaded.operations:
            print(f"  {operation.logical_id}: {operation.effect} -> {operation.outcome.status}")

        live_calls = 0
        with toolreplay.replay(trace):
            replayed = handle_refund(42, 120.0)
        print(f"replayed: {replayed}")
        print(f"  live calls while replaying: {live_calls}")
        assert replayed == recorded
        assert live_calls == 0


if __name__ == "__main__":
    main()
