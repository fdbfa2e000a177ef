from __future__ import annotations

from pathlib import Path

import pytest
from toolreplay_tui.model.rows import OperationRows, marker_of
from toolreplay_tui.model.search import matches
from toolreplay_tui.model.trace_file import TraceFile

from tests.support.agent_fork import record_sync_agent
from tests.support.traces import write_trace
from toolreplay import Raised


def trace(tmp_path: Path) -> TraceFile:
    path = write_trace(
        tmp_path / "t.trp",
        [
            ("crm.customer.get", {"customer_id": 42}, {"name": "Ada"}),
            ("policy.refund.get", {"region": "eu"}, {"limit": 1000.0}),
            ("llm.refund.decide", {"amount": 1200.0}, {"decision": "approve"}),
            ("crm.customer.get", {"customer_id": 42}, {"name": "Ada"}),
            (
                "billing.refund.create",
                {"amount": 1200.0},
                Raised("builtins.TimeoutError", "slow", ["slow"]),
            ),
        ],
    )
    return TraceFile.open(path)


def test_rows_show_index_effect_status_marker_and_a_preview(tmp_path: Path) -> None:
    loaded = trace(tmp_path)
    rows = OperationRows(loaded, preview_width=20)
    assert len(rows) == 5
    first = rows.row(0)
    assert (first.index, first.effect, first.status, first.marker) == (
        0,
        "crm.customer.get",
        "ok",
        "recorded",
    )
    assert first.preview == '{"customer_id": 42}'
    assert rows.row(3).occurrence == 1
    assert rows.row(4).status == "error"
    pending = {loaded.operations[2].identity}
    assert rows.row(2, pending).marker == "pending"
    assert marker_of(loaded.operations[1], pending) == "recorded"


def test_an_agents_model_turns_read_as_their_message_and_answer(tmp_path: Path) -> None:
    pytest.importorskip("openai")
    rows = OperationRows(TraceFile.open(record_sync_agent(tmp_path / "agent.trp")))
    first, tool, second = (rows.row(position, preview_width=100).preview for position in range(3))
    assert first == (
        'user: Please refund order 8812; it arrived broken. → lookup_order({"order_id": 8812})'
    )
    assert tool == '{"order_id": 8812}'  # any other call: its inputs, as before
    assert second == (
        'tool lookup_order: {"order_id": 8812, "total": 1… → '
        'Order 8812 is on file: {"order_id": 8812, "tota…'
    )
    # In a narrow column, what the call did tells the turns apart.
    assert rows.row(0, preview_width=20).preview == '→ lookup_order({"or…'
    assert rows.row(2, preview_width=20).preview == "→ Order 8812 is on…"


def test_filter_by_effect_or_text_and_step_through_matches(tmp_path: Path) -> None:
    loaded = trace(tmp_path)
    rows = OperationRows(loaded)
    assert rows.apply_filter("effect:crm.") == 2
    assert [rows.index_at(p) for p in range(len(rows))] == [0, 3]
    assert rows.filtered
    assert rows.step(0) == 1
    assert rows.step(1) == 0  # wraps
    assert rows.step(0, forward=False) == 1
    assert rows.apply_filter("APPROVE") == 1  # outcome text, case-insensitive
    assert rows.index_at(0) == 2
    assert rows.apply_filter("timeouterror") == 1
    assert rows.apply_filter("nothing like this") == 0
    assert rows.step(0) is None
    assert rows.apply_filter("") == 5
    assert not rows.filtered


def test_stepping_without_a_filter_searches_for_the_last_query(tmp_path: Path) -> None:
    loaded = trace(tmp_path)
    rows = OperationRows(loaded)
    assert rows.step(0) is None  # no query yet
    rows.apply_filter("customer")
    rows.clear_filter()
    assert len(rows) == 5
    assert rows.step(0) == 3
    assert rows.step(3) == 0  # wraps
    assert rows.step(2, forward=False) == 0
    assert rows.index_at(3) == 3


def test_positions_map_back_to_trace_indices(tmp_path: Path) -> None:
    loaded = trace(tmp_path)
    rows = OperationRows(loaded)
    rows.apply_filter("effect:crm")
    assert rows.index_at(1) == 3
    assert rows.nearest_position(2) == 1
    assert rows.nearest_position(4) == 1
    assert rows.row(1).logical_id == loaded.operations[3].logical_id


def test_matches_on_inputs(tmp_path: Path) -> None:
    loaded = trace(tmp_path)
    assert matches(loaded.operations[1], '"eu"')
    assert not matches(loaded.operations[1], "effect:eu")
    assert matches(loaded.operations[1], "")
