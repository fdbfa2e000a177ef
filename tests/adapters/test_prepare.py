"""prepare_replay: the SDK's answer types are built before a warm runner forks."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import toolreplay
from toolreplay.adapters.openai import prepare_replay

INCIDENT = Path(__file__).resolve().parents[2] / "examples" / "incident" / "refund.trp"


def test_it_parses_each_recorded_json_answer_of_a_known_endpoint() -> None:
    trace = toolreplay.read_trace(INCIDENT)
    assert [op.effect for op in trace.operations].count("openai.responses.create") == 1
    assert prepare_replay(trace) == 1


def test_it_skips_other_effects(tmp_path: Path) -> None:
    @toolreplay.effect("crm.customer.get")
    def get_customer(customer_id: int) -> dict[str, int]:
        return {"id": customer_id}

    path = tmp_path / "plain.trp"
    with toolreplay.record(path):
        get_customer(1)
    assert prepare_replay(toolreplay.read_trace(path)) == 0


def test_a_prepared_process_replays_the_answer_without_building_its_types() -> None:
    # In a fresh interpreter: the Response model is complete only after preparing.
    script = textwrap.dedent(
        f"""
        import toolreplay
        from openai.types.responses import Response
        from toolreplay.adapters.openai import prepare_replay
        assert not Response.__pydantic_complete__
        prepare_replay(toolreplay.read_trace({str(INCIDENT)!r}))
        assert Response.__pydantic_complete__
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
