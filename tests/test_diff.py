"""diff(): alignment that refuses to guess, typed differences, and patch attribution."""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import pytest

import toolreplay
from tests.support.traces import Call, write_trace
from toolreplay import DiffError, Raised
from toolreplay.comparison import AlignmentRow

GET = "crm.customer.get"
DECIDE = "llm.decide"
NOTE = "crm.notes.add"


def base_calls() -> list[Call]:
    return [
        (GET, {"id": 1}, {"name": "Ada", "active": True}),
        (DECIDE, {"prompt": "refund?"}, {"decision": "approve", "score": 0.9}),
        (NOTE, {"text": "approved"}, None),
    ]


def compare(tmp_path: Path, source: list[Call], target: list[Call]) -> toolreplay.DiffReport:
    return toolreplay.diff(
        write_trace(tmp_path / "source.trp", source), write_trace(tmp_path / "target.trp", target)
    )


def kinds(report: toolreplay.DiffReport) -> list[tuple[str, str, int]]:
    return [(d.type, d.effect, d.row) for d in report.differences]


def test_identical_traces_have_no_difference(tmp_path: Path) -> None:
    report = compare(tmp_path, base_calls(), base_calls())
    assert report.identical
    assert report.first_divergence is None
    assert [(row.status, row.match) for row in report.rows] == [("same", "exact")] * 3
    assert "no observable difference" in report.render_text()


def test_output_changed_names_each_json_path_with_both_values(tmp_path: Path) -> None:
    target = base_calls()
    target[1] = (DECIDE, {"prompt": "refund?"}, {"decision": "manual_review", "score": 0.9})
    report = compare(tmp_path, base_calls(), target)
    first = report.first_divergence
    assert first is not None
    assert (first.type, first.effect, first.row) == ("output_changed", DECIDE, 1)
    assert [(f.path, f.source, f.target) for f in first.fields] == [
        ("$.output.decision", "approve", "manual_review")
    ]


def test_type_exact_outputs_one_is_not_one_point_zero(tmp_path: Path) -> None:
    target = base_calls()
    target[1] = (DECIDE, {"prompt": "refund?"}, {"decision": "approve", "score": 1})
    source = base_calls()
    source[1] = (DECIDE, {"prompt": "refund?"}, {"decision": "approve", "score": 1.0})
    report = compare(tmp_path, source, target)
    assert kinds(report) == [("output_changed", DECIDE, 1)]


def test_zero_and_negative_zero_are_different_outputs(tmp_path: Path) -> None:
    source: list[Call] = [(DECIDE, {"prompt": "x"}, {"score": 0.0})]
    target: list[Call] = [(DECIDE, {"prompt": "x"}, {"score": -0.0})]
    report = compare(tmp_path, source, target)
    assert [(f.path, f.source, f.target) for f in report.differences[0].fields] == [
        ("$.output.score", 0.0, -0.0)
    ]


def test_input_changed_pairs_structurally_when_unambiguous(tmp_path: Path) -> None:
    target = base_calls()
    target[0] = (GET, {"id": 2}, {"name": "Ada", "active": True})
    report = compare(tmp_path, base_calls(), target)
    assert kinds(report) == [("input_changed", GET, 0)]
    row = report.rows[0]
    assert row.match == "structural"
    assert [(f.path, f.source, f.target) for f in row.fields] == [("$.inputs.id", 1, 2)]


def test_status_and_error_changes(tmp_path: Path) -> None:
    timeout = Raised("builtins.TimeoutError", "timed out", ["timed out"])
    source = [*base_calls(), ("billing.refund.create", {"amount": 5}, timeout)]
    target = base_calls()
    target[2] = (NOTE, {"text": "approved"}, Raised("builtins.ValueError", "bad", ["bad"]))
    target.append(
        ("billing.refund.create", {"amount": 5}, Raised("builtins.TimeoutError", "late", ["late"]))
    )
    report = compare(tmp_path, source, target)
    assert kinds(report) == [
        ("status_changed", NOTE, 2),
        ("error_changed", "billing.refund.create", 3),
    ]
    status, error = report.differences
    assert status.fields[0].to_dict() == {
        "path": "$.status",
        "source": "ok",
        "target": "error",
        "source_present": True,
        "target_present": True,
    }
    assert [(f.path, f.source, f.target) for f in error.fields] == [
        ("$.error.args[0]", "timed out", "late"),
        ("$.error.message", "timed out", "late"),
    ]


def test_missing_and_added_operations(tmp_path: Path) -> None:
    target = [base_calls()[0], base_calls()[2], ("crm.audit.log", {"event": "x"}, True)]
    report = compare(tmp_path, base_calls(), target)
    assert kinds(report) == [
        ("operation_missing", DECIDE, 1),
        ("operation_added", "crm.audit.log", 3),
    ]
    assert [(r.status, r.source is None, r.target is None) for r in report.rows] == [
        ("same", False, False),
        ("missing", False, True),
        ("same", False, False),
        ("added", True, False),
    ]


def test_order_changed_for_an_exact_pair_out_of_order(tmp_path: Path) -> None:
    calls = base_calls()
    target = [calls[1], calls[0], calls[2]]
    report = compare(tmp_path, calls, target)
    assert [(d.type, d.effect) for d in report.differences] == [("order_changed", GET)]
    assert [r.match for r in report.rows] == ["exact", "moved", "exact"]


def test_structural_uniqueness_is_judged_between_anchors(tmp_path: Path) -> None:
    # Two input changes to one effect, each alone between its anchors: both pair.
    source: list[Call] = [(GET, {"id": 1}, {}), (NOTE, {"text": "a"}, None), (GET, {"id": 2}, {})]
    target: list[Call] = [(GET, {"id": 8}, {}), (NOTE, {"text": "a"}, None), (GET, {"id": 9}, {})]
    report = compare(tmp_path, source, target)
    assert kinds(report) == [("input_changed", GET, 0), ("input_changed", GET, 2)]
    assert [r.match for r in report.rows] == ["structural", "exact", "structural"]


def test_ambiguous_structural_candidates_stay_unmatched(tmp_path: Path) -> None:
    source: list[Call] = [(GET, {"id": 1}, {}), (GET, {"id": 2}, {})]
    target: list[Call] = [(GET, {"id": 3}, {}), (GET, {"id": 4}, {})]
    report = compare(tmp_path, source, target)
    assert [d.type for d in report.differences] == [
        "operation_missing",
        "operation_missing",
        "operation_added",
        "operation_added",
    ]
    assert all(row.match is None for row in report.rows)


def test_crossing_structural_pairs_stay_unmatched(tmp_path: Path) -> None:
    source: list[Call] = [(GET, {"id": 1}, {}), (DECIDE, {"p": "a"}, "x")]
    target: list[Call] = [(DECIDE, {"p": "b"}, "x"), (GET, {"id": 2}, {})]
    report = compare(tmp_path, source, target)
    assert sorted(d.type for d in report.differences) == [
        "operation_added",
        "operation_added",
        "operation_missing",
        "operation_missing",
    ]


def test_structural_pairs_never_cross_an_exact_anchor(tmp_path: Path) -> None:
    anchor: Call = (NOTE, {"text": "anchor"}, None)
    source: list[Call] = [(GET, {"id": 1}, {}), anchor]
    target: list[Call] = [anchor, (GET, {"id": 2}, {})]
    report = compare(tmp_path, source, target)
    assert kinds(report) == [("operation_missing", GET, 0), ("operation_added", GET, 2)]


def test_duplicate_identities_fail_explicitly(tmp_path: Path) -> None:
    source = write_trace(tmp_path / "source.trp", base_calls())
    lines = source.read_text().splitlines()
    duplicate = json.loads(lines[1]) | {"logical_id": 7}
    edited = tmp_path / "edited.trp"
    edited.write_text("\n".join([*lines[:-1], json.dumps(duplicate)]) + "\n")
    with pytest.raises(DiffError, match=r"holds crm\.customer\.get occurrence 0") as caught:
        toolreplay.diff(source, edited)
    assert "the target trace" in str(caught.value)
    with pytest.raises(DiffError, match="the source trace"):
        toolreplay.diff(edited, source)


def test_the_report_is_deterministic_json(tmp_path: Path) -> None:
    target = base_calls()
    target[1] = (DECIDE, {"prompt": "refund?"}, {"decision": "deny", "score": 0.9})
    first = compare(tmp_path, base_calls(), target).to_dict()
    second = toolreplay.diff(tmp_path / "source.trp", tmp_path / "target.trp").to_dict()
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    assert first["format_version"] == 2
    assert first["identical"] is False
    assert first["counts"]["output_changed"] == 1
    assert first["first_divergence"]["fields"][0]["path"] == "$.output.decision"
    assert len(first["rows"]) == 3
    assert first["rows"][1]["differences"] == ["output_changed"]


def test_text_is_stable_for_snapshots(tmp_path: Path) -> None:
    target = base_calls()
    target[1] = (DECIDE, {"prompt": "refund?"}, {"decision": "deny", "score": 0.9})
    text = compare(tmp_path, base_calls(), target).render_text()
    text = text.replace(str(tmp_path), "TMP")
    assert text == (
        "source  TMP/source.trp (record, 3 operations, complete)\n"
        "target  TMP/target.trp (record, 3 operations, complete)\n"
        "1 difference (output_changed 1)\n"
        "\n"
        "first observable divergence, row 1: output_changed at llm.decide occurrence 0 "
        "(source #1, target #1)\n"
        '  $.output.decision: source "approve", target "deny"\n'
        "\n"
        "differences:\n"
        "  row 1: output_changed at llm.decide occurrence 0 (source #1, target #1)\n"
        '    $.output.decision: source "approve", target "deny"\n'
    )


def test_alignment_rows_stay_frozen_dataclasses(tmp_path: Path) -> None:
    row = compare(tmp_path, base_calls(), base_calls()).rows[1]
    same = AlignmentRow(
        index=1,
        source=row.source,
        target=row.target,
        status="same",
        match="exact",
        differences=(),
        fields=(),
        patch_id=None,
    )
    assert same == row
    assert repr(same) == repr(row)
    assert pickle.loads(pickle.dumps(row)) == row
    changed = dataclasses.replace(row, status="changed", differences=("output_changed",))
    assert (changed.index, changed.status, changed.differences) == (
        1,
        "changed",
        ("output_changed",),
    )
    assert changed != row
    assert [field.name for field in dataclasses.fields(AlignmentRow)][-1] == "attempted"
    assert row.attempted is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.status = "changed"  # type: ignore[misc]  # the assignment is the point: refused


def test_the_rows_read_as_a_sequence_whichever_way_they_are_read(tmp_path: Path) -> None:
    # Agreeing rows are made when read, changed and one-sided rows are kept as made:
    # indexing, slicing, iterating and comparing must not tell them apart.
    target = base_calls()
    target[1] = (DECIDE, {"prompt": "refund?"}, {"decision": "deny", "score": 0.9})
    target.append((NOTE, {"text": "denied"}, None))
    report = compare(tmp_path, base_calls(), target)
    rows = report.rows

    assert len(rows) == 4
    assert [row.status for row in rows] == ["same", "changed", "same", "added"]
    assert [row.index for row in rows] == [0, 1, 2, 3]
    assert list(rows) == [rows[k] for k in range(4)] == [rows[k - 4] for k in range(4)]
    assert rows[1:3] == (rows[1], rows[2])
    assert rows[::-1] == tuple(reversed(rows))
    assert rows[0] in rows
    assert rows.index(rows[2]) == 2
    with pytest.raises(IndexError, match="row 4 of a report of 4 rows"):
        rows[4]
    with pytest.raises(IndexError, match="row -5 of a report of 4 rows"):
        rows[-5]
    with pytest.raises(TypeError):
        rows["1"]  # type: ignore[call-overload]  # a wrong index type is the point
    (tmp_path / "again").mkdir()
    (tmp_path / "other").mkdir()
    assert rows == compare(tmp_path / "again", base_calls(), target).rows
    assert rows != compare(tmp_path / "other", base_calls(), base_calls()).rows
    assert rows != tuple(rows)  # a sequence of rows, not a tuple
    assert repr(rows) == "<AlignmentRows: 4 rows>"
    assert [row["status"] for row in rows.to_dicts()] == ["same", "changed", "same", "added"]
    assert rows.to_dicts() == report.to_dict()["rows"]


@toolreplay.effect("diffending.customer.get")
def get_customer(customer_id: int) -> dict[str, toolreplay.JsonValue]:
    return {"id": customer_id, "active": True}


def test_how_each_session_ended_is_shown(tmp_path: Path) -> None:
    completed = tmp_path / "completed.trp"
    with toolreplay.record(completed):
        get_customer(1)
    raised = tmp_path / "raised.trp"
    with pytest.raises(RuntimeError), toolreplay.record(raised):
        get_customer(1)
        raise RuntimeError("refund pipeline exploded")
    torn = tmp_path / "torn.trp"
    torn.write_text("".join(completed.read_text().splitlines(keepends=True)[:-1]))  # no footer

    report = toolreplay.diff(completed, raised)
    assert report.identical  # the ending is shown, not reported as a difference
    lines = report.render_text().replace(str(tmp_path), "TMP").splitlines()
    assert lines[:2] == [
        "source  TMP/completed.trp (record, 1 operations, complete)",
        "target  TMP/raised.trp (record, 1 operations, complete, ended with builtins.RuntimeError)",
    ]
    document = report.to_dict()
    assert document["source"]["ending"] == {"status": "completed", "error_type": None}
    assert document["target"]["ending"] == {
        "status": "raised",
        "error_type": "builtins.RuntimeError",
    }
    assert list(document["source"]) == [
        "path",
        "trace_id",
        "mode",
        "operation_count",
        "complete",
        "ending",
    ]
    incomplete = toolreplay.diff(torn, raised)
    assert incomplete.to_dict()["source"]["ending"] is None
    assert "torn.trp (record, 1 operations, incomplete)" in incomplete.render_text()
