"""The diff reads a fork's new call as the recorded call it stands in for (RFC 0004 §3.3).

A supplied or live call is paired with a recorded call of the same effect that the
branch never made, when the pairing is unambiguous: the same gap between anchors, the
same (effect, occurrence) unique on both sides, no crossing. Each scenario is a real
fork of a real recording; the ambiguous ones must stay `operation_missing` +
`operation_added`. The last tests fork an unmodified pydantic-ai agent whose second model
request carries the tool's output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from tests.support.agent_fork import TOOL_OUTPUT_PATH, record_and_fork
from toolreplay import JsonValue

ROOT = Path(__file__).resolve().parent.parent

# --- a small agent loop: the "model" is asked the whole conversation ---------------------

SCRIPT: dict[str, str] = {"order": "delivered", "plan": "ask-then-note"}


@toolreplay.effect("askdiff.model.ask")
def ask(conversation: list[str]) -> dict[str, JsonValue]:
    return {"answer": f"answer {len(conversation)}"}


@toolreplay.effect("askdiff.order.lookup")
def lookup(order_id: int) -> dict[str, JsonValue]:
    return {"order_id": order_id, "status": SCRIPT["order"]}


@toolreplay.effect("askdiff.notes.add")
def add_note(text: str) -> dict[str, JsonValue]:
    return {"noted": True}


def agent() -> list[JsonValue]:
    """Ask, look the order up, then ask again with the tool's answer in the conversation.

    How it goes on depends on the order's status, so a patched lookup changes the path.
    """
    conversation = ["refund order 8812?"]
    answers: list[JsonValue] = [ask(conversation)["answer"]]
    order = lookup(8812)
    conversation.append(json.dumps(order, sort_keys=True))
    status = order["status"]
    if status in ("delivered", "lost"):  # the recording's path; "lost" asks about it
        answers.append(ask(conversation)["answer"])
        if SCRIPT["plan"] == "ask-twice":
            answers.append(ask([*conversation, "and the fee?"])["answer"])
        add_note("refunded")
    elif status == "note-first":  # the same calls, the note before the question
        add_note("refunded")
        answers.append(ask(conversation)["answer"])
    elif status == "same-question":  # asks the first question again
        answers.append(ask(["refund order 8812?"])["answer"])
        add_note("refunded")
    elif status == "swapped":  # notes something else, then asks: the two cross
        add_note("lost in transit")
        answers.append(ask(conversation)["answer"])
    return answers


def conversation_after(status: str) -> list[str]:
    order = {"order_id": 8812, "status": status}
    return ["refund order 8812?", json.dumps(order, sort_keys=True)]


def record(tmp_path: Path, plan: str = "ask-then-note") -> Path:
    SCRIPT.update(order="delivered", plan=plan)
    path = tmp_path / f"source-{plan}.trp"
    with toolreplay.record(path):
        agent()
    return path


def lookup_says(status: str) -> toolreplay.OutputPatch:
    return toolreplay.replace_output(
        effect="askdiff.order.lookup",
        inputs={"order_id": 8812},
        value={"order_id": 8812, "status": status},
    )


def supply_ask(conversation: list[str], answer: str) -> toolreplay.OutputPatch:
    return toolreplay.supply_output(
        effect="askdiff.model.ask", inputs={"conversation": conversation}, value={"answer": answer}
    )


def fork(
    source: Path, tmp_path: Path, patches: list[toolreplay.Patch], **options: Any
) -> toolreplay.DiffReport:
    branch = tmp_path / "branch.trp"
    with toolreplay.fork(source, branch, patches=patches, unobserved="allow", **options):
        agent()
    return toolreplay.diff(source, branch)


def kinds(report: toolreplay.DiffReport) -> list[tuple[str, str]]:
    return [(d.type, d.effect.removeprefix("askdiff.")) for d in report.differences]


def test_a_supplied_model_call_reads_as_the_recorded_request_asked_differently(
    tmp_path: Path,
) -> None:
    source = record(tmp_path)
    lost, answered = lookup_says("lost"), supply_ask(conversation_after("lost"), "lost: refund")
    report = fork(source, tmp_path, [lost, answered])

    assert kinds(report) == [
        ("output_changed", "order.lookup"),
        ("input_changed", "model.ask"),
        ("output_changed", "model.ask"),
    ]
    row = report.rows[2]
    assert (row.status, row.match, row.patch_id) == ("changed", "structural", answered.patch_id)
    assert row.source is not None
    assert row.target is not None
    assert (row.source.logical_id, row.target.origin) == (2, "supplied")
    assert row.target.source_logical_operation_id is None  # lineage is kept as written
    (changed,) = report.differences[1].fields
    assert changed.path == "$.inputs.conversation[1]"
    assert '"status": "lost"' in str(changed.target)
    # The inputs are the application's doing; the outcome is the supply patch's.
    assert [d.patch_id for d in report.differences] == [
        lost.patch_id,
        None,
        answered.patch_id,
    ]
    document = report.to_dict()
    pair = document["rows"][2]
    assert (pair["status"], pair["match"], pair["patch_id"]) == (
        "changed",
        "structural",
        answered.patch_id,
    )
    assert pair["target"]["origin"] == "supplied"
    assert pair["target"]["patch_id"] == answered.patch_id
    assert pair["source"]["logical_id"] == 2
    text = report.render_text()
    assert (
        "input_changed at askdiff.model.ask occurrence 0 (source #2, target #2), outcome "
        f"supplied by patch {answered.patch_id}\n"
        '    $.inputs.conversation[1]: source "{\\"order_id\\": 8812, \\"status\\": '
    ) in text
    assert "operation_missing" not in text
    assert "operation_added" not in text


def test_a_live_call_pairs_the_same_way(tmp_path: Path) -> None:
    source = record(tmp_path)
    report = fork(source, tmp_path, [lookup_says("lost")], live=["askdiff.model.*"])
    assert kinds(report) == [
        ("output_changed", "order.lookup"),
        ("input_changed", "model.ask"),
    ]
    row = report.rows[2]
    assert row.target is not None
    assert (row.target.origin, row.patch_id) == ("live", None)
    assert "(source #2, target #2), ran live" in report.render_text()


def test_two_new_calls_where_two_recorded_ones_stood_stay_unpaired(tmp_path: Path) -> None:
    # Both recorded questions and both new ones have occurrence 0 in the same gap: which
    # new one stands for which recorded one is a guess.
    source = record(tmp_path, plan="ask-twice")
    SCRIPT["plan"] = "ask-twice"
    first = supply_ask(conversation_after("lost"), "lost")
    second = supply_ask([*conversation_after("lost"), "and the fee?"], "no fee")
    report = fork(source, tmp_path, [lookup_says("lost"), first, second])
    assert kinds(report) == [
        ("output_changed", "order.lookup"),
        ("operation_missing", "model.ask"),
        ("operation_missing", "model.ask"),
        ("operation_added", "model.ask"),
        ("operation_added", "model.ask"),
    ]
    assert all(row.match != "structural" for row in report.rows)


def test_one_new_call_where_two_recorded_ones_stood_stays_unpaired(tmp_path: Path) -> None:
    source = record(tmp_path, plan="ask-twice")
    SCRIPT["plan"] = "ask-then-note"  # the new path asks only once
    answered = supply_ask(conversation_after("lost"), "lost")
    report = fork(source, tmp_path, [lookup_says("lost"), answered])
    assert sorted(kinds(report)) == [
        ("operation_added", "model.ask"),
        ("operation_missing", "model.ask"),
        ("operation_missing", "model.ask"),
        ("output_changed", "order.lookup"),
    ]


def test_a_new_call_across_an_anchor_stays_unpaired(tmp_path: Path) -> None:
    # The note, made identically by both runs, lies between the recorded question and
    # the new one: pairing them would contradict the order both runs agree on.
    source = record(tmp_path)
    answered = supply_ask(conversation_after("note-first"), "noted first")
    report = fork(source, tmp_path, [lookup_says("note-first"), answered])
    assert kinds(report) == [
        ("output_changed", "order.lookup"),
        ("operation_missing", "model.ask"),
        ("operation_added", "model.ask"),
    ]
    assert [row.match for row in report.rows] == ["exact", "exact", None, "exact", None]


def test_a_new_call_with_another_occurrence_stays_unpaired(tmp_path: Path) -> None:
    # The first question asked again is occurrence 1 of a recorded identity; the
    # unobserved question was occurrence 0 of its own.
    source = record(tmp_path)
    again = supply_ask(["refund order 8812?"], "asked again")
    assert again.occurrence == 0
    again = toolreplay.supply_output(
        effect=again.effect, inputs=again.inputs, occurrence=1, value=again.value
    )
    report = fork(source, tmp_path, [lookup_says("same-question"), again])
    assert kinds(report) == [
        ("output_changed", "order.lookup"),
        ("operation_missing", "model.ask"),
        ("operation_added", "model.ask"),
    ]


def test_crossing_new_calls_stay_unpaired(tmp_path: Path) -> None:
    # Recorded: question, then note. New: another note, then the question. Each key is
    # unique, but the two pairs would cross: both stay unpaired.
    source = record(tmp_path)
    note = toolreplay.supply_output(
        effect="askdiff.notes.add", inputs={"text": "lost in transit"}, value={"noted": True}
    )
    answered = supply_ask(conversation_after("swapped"), "swapped")
    report = fork(source, tmp_path, [lookup_says("swapped"), note, answered])
    assert sorted(kinds(report)) == [
        ("operation_added", "model.ask"),
        ("operation_added", "notes.add"),
        ("operation_missing", "model.ask"),
        ("operation_missing", "notes.add"),
        ("output_changed", "order.lookup"),
    ]


# --- an unmodified pydantic-ai agent ---------------------------------------------------


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_a_pydantic_ai_fork_shows_the_tool_output_inside_the_model_request(
    api: str, tmp_path: Path
) -> None:
    pytest.importorskip("pydantic_ai")
    forked = record_and_fork(tmp_path, api)
    model_effect, lookup_effect = forked.model_effect, forked.lookup_effect

    report = toolreplay.diff(forked.source, forked.branch)
    assert [(d.type, d.effect) for d in report.differences] == [
        ("output_changed", lookup_effect),
        ("input_changed", model_effect),
        ("output_changed", model_effect),
    ]
    asked = report.differences[1]
    assert [field.path for field in asked.fields] == [TOOL_OUTPUT_PATH[api]]
    assert '"status":"lost"' in str(asked.fields[0].target)
    assert asked.target is not None
    assert asked.target.origin == "supplied"
    assert report.rows[2].patch_id == forked.answered.patch_id

    # The command line shows the same, as text and JSON.
    def diff(*options: str) -> str:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "toolreplay",
                "diff",
                str(forked.source),
                str(forked.branch),
                *options,
            ],
            cwd=ROOT,
            env={k: v for k, v in os.environ.items() if "API_KEY" not in k},
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout

    assert (
        f"input_changed at {model_effect} occurrence 0 (source #2, target #2), outcome supplied "
        f"by patch {forked.answered.patch_id}\n    {TOOL_OUTPUT_PATH[api]}: source "
    ) in diff()
    document = json.loads(diff("-f", "json"))
    assert [row["status"] for row in document["rows"]] == ["same", "changed", "changed"]
    assert document["differences"][1]["fields"][0]["path"] == TOOL_OUTPUT_PATH[api]
    assert document["rows"][2]["target"]["origin"] == "supplied"
