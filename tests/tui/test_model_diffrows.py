from __future__ import annotations

from pathlib import Path

from toolreplay_tui.model.diffrows import DiffRows, describe_trace, marker_for

import toolreplay
from tests.support.traces import write_trace
from toolreplay import JsonValue, Raised


@toolreplay.effect("tuitest.customer.get")
def get_customer(customer_id: int) -> dict[str, JsonValue]:
    return {"id": customer_id, "tier": "gold"}


@toolreplay.effect("tuitest.refund.decide")
def decide(amount: float) -> dict[str, JsonValue]:
    return {"decision": "approve"}


def handle() -> str:
    get_customer(42)
    return str(decide(1200.0)["decision"])


def test_rows_markers_first_divergence_and_stepping(tmp_path: Path) -> None:
    source = write_trace(
        tmp_path / "source.trp",
        [
            ("crm.customer.get", {"customer_id": 42}, {"name": "Ada"}),
            ("policy.refund.get", {"region": "eu"}, {"limit": 1000.0}),
            ("llm.refund.decide", {"amount": 1200.0}, {"decision": "approve"}),
            ("billing.refund.create", {"amount": 1200.0}, "r-1"),
            ("mail.send", {"to": "ada"}, None),
        ],
    )
    target = write_trace(
        tmp_path / "target.trp",
        [
            ("crm.customer.get", {"customer_id": 42}, {"name": "Ada"}),
            ("policy.refund.get", {"region": "eu"}, {"limit": 1000.0}),
            ("llm.refund.decide", {"amount": 1200.0}, {"decision": "manual_review"}),
            (
                "billing.refund.create",
                {"amount": 1200.0},
                Raised("builtins.TimeoutError", "slow", None),
            ),
            ("mail.send", {"to": "ada"}, None),
            ("ticket.open", {"id": 1}, "t-1"),
        ],
    )
    rows = DiffRows(toolreplay.diff(source, target))
    assert len(rows) == 6
    assert rows.first_divergence == 2
    assert rows.difference_rows == [2, 3, 5]
    first = rows.row(2)
    assert first.marker == "O"
    assert first.differs
    assert first.left == '#2 llm.refund.decide "approve" at $.output.decision'
    assert first.right == '#2 llm.refund.decide "manual_review" at $.output.decision'
    assert rows.row(0).left == '#0 crm.customer.get ok {"name": "Ada"}'
    assert rows.row(0).marker == "="
    assert not rows.row(0).differs
    assert rows.row(3).marker == "S"
    assert "error TimeoutError: slow" in rows.row(3).right
    added = rows.row(5)
    assert added.marker == "+"
    assert added.left == ""
    assert added.right.startswith("#5 ticket.open")
    assert rows.next_difference(0) == 2
    assert rows.next_difference(2) == 3
    assert rows.next_difference(5) is None
    assert rows.next_difference(5, forward=False) == 3
    assert rows.next_difference(2, forward=False) is None
    assert rows.difference_number(3) == 2
    assert rows.difference_number(1) is None
    fields = rows.fields(2)
    assert [(f.path, f.source, f.target) for f in fields] == [
        ("$.output.decision", '"approve"', '"manual_review"')
    ]
    status = rows.fields(3)
    assert status[0].path == "$.status"
    assert status[1].target == "(absent)"
    assert rows.summary() == "3 differences (output_changed 1, status_changed 1, operation_added 1)"
    assert rows.attribution(2) is None  # not a fork of this source: no patch is credited
    assert rows.row_description(2) == "row 2: output_changed (exact match)"
    assert (
        describe_trace(rows.report.source, "source.trp")
        == "source.trp (record, 5 operations, complete)"
    )


def test_patch_attribution_of_a_real_fork(tmp_path: Path) -> None:
    with toolreplay.record(tmp_path / "incident.trp"):
        handle()
    patch = toolreplay.replace_output(
        effect="tuitest.refund.decide", inputs={"amount": 1200.0}, value={"decision": "review"}
    )
    with toolreplay.fork(tmp_path / "incident.trp", tmp_path / "branch.trp", patches=[patch]):
        assert handle() == "review"
    rows = DiffRows(toolreplay.diff(tmp_path / "incident.trp", tmp_path / "branch.trp"))
    assert rows.first_divergence == 1
    row = rows.row(1)
    assert row.patch_id == patch.patch_id
    attribution = rows.attribution(1)
    assert attribution is not None
    assert patch.patch_id in attribution


def handle_by_tier() -> str:
    customer = get_customer(42)
    return str(decide(1200.0 if customer["tier"] == "gold" else 900.0)["decision"])


def test_a_supplied_call_standing_for_a_recorded_one_is_one_changed_row(tmp_path: Path) -> None:
    with toolreplay.record(tmp_path / "incident.trp"):
        handle_by_tier()
    silver = toolreplay.replace_output(
        effect="tuitest.customer.get",
        inputs={"customer_id": 42},
        value={"id": 42, "tier": "silver"},
    )
    decided = toolreplay.supply_output(
        effect="tuitest.refund.decide", inputs={"amount": 900.0}, value={"decision": "review"}
    )
    with toolreplay.fork(
        tmp_path / "incident.trp",
        tmp_path / "branch.trp",
        patches=[silver, decided],
        unobserved="allow",
    ):
        assert handle_by_tier() == "review"
    rows = DiffRows(toolreplay.diff(tmp_path / "incident.trp", tmp_path / "branch.trp"))
    assert len(rows) == 2
    row = rows.row(1)
    assert (row.status, row.match, row.marker, row.patch_id) == (
        "changed",
        "structural",
        "IO",
        decided.patch_id,
    )
    assert row.left == "#1 tuitest.refund.decide 1200.0 at $.inputs.amount"
    assert row.right == "#1 tuitest.refund.decide [supplied] 900.0 at $.inputs.amount"
    assert rows.attribution(1) == (
        f"the recording never made this call; its outcome was supplied by patch "
        f"{decided.patch_id}; it stands where the recording's #1 stood, which the fork never "
        "called"
    )
    assert rows.row_description(1) == "row 1: input_changed, output_changed (structural match)"


def test_identical_traces(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "a.trp", [("a.b", {}, 1)])
    rows = DiffRows(toolreplay.diff(path, path))
    assert rows.first_divergence is None
    assert rows.summary() == "no observable difference in 1 rows"
    assert rows.next_difference(0) is None


def test_marker_for_several_differences() -> None:
    assert marker_for(("order_changed", "input_changed")) == "MI"
    assert marker_for(()) == "="
