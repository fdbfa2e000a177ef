"""Strict fork: patches resolved up front, lineage in the branch, the source untouched."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from tests.support import crm
from toolreplay import (
    NonPortableValueError,
    PatchFileError,
    PatchTargetError,
    ReplayMiss,
    TraceError,
    TraceExistsError,
    UnappliedPatchError,
)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source.trp"
    with toolreplay.record(path, metadata={"runner": "tests.support.crm:handle_refund"}):
        crm.handle_refund(42, 120.0)
    crm.BODY_CALLS.clear()
    return path


def inactive_customer() -> toolreplay.OutputPatch:
    return toolreplay.replace_output(
        effect="crm.customer.get",
        inputs={"customer_id": 42, "include_history": False},
        occurrence=0,
        value={"id": 42, "name": "Ada (closed)", "active": False, "tier": "gold"},
    )


def test_a_fork_serves_the_patch_and_records_lineage(source: Path, tmp_path: Path) -> None:
    before = source.read_bytes()
    patch = inactive_customer()
    branch = tmp_path / "branch.trp"
    with toolreplay.fork(source, branch, patches=[patch]) as session:
        result = crm.handle_refund(42, 120.0)
        assert session.patched_count == 1
    assert result["customer"] == "Ada (closed)"
    assert sum(crm.BODY_CALLS.values()) == 0
    assert source.read_bytes() == before

    source_trace = toolreplay.read_trace(source)
    trace = toolreplay.read_trace(branch)
    assert trace.complete
    assert trace.header.mode == "fork"
    assert trace.header.source_trace_id == source_trace.header.trace_id
    assert trace.header.runner == "tests.support.crm:handle_refund"
    lineage = [
        (op.logical_id, op.origin, op.patch_id, op.source_logical_operation_id)
        for op in trace.operations
    ]
    assert lineage == [
        (0, "patched", patch.patch_id, 0),
        (1, "recorded", None, 1),
        (2, "recorded", None, 2),
    ]
    assert trace.operations[0].outcome == toolreplay.Returned(patch.value)
    assert trace.operations[1].outcome == source_trace.operations[1].outcome


def test_patches_built_directly_are_checked_like_replace_output() -> None:
    with pytest.raises(toolreplay.PatchError, match="not a valid effect name"):
        toolreplay.OutputPatch("crm", "bad name", {}, 0, None)
    with pytest.raises(toolreplay.PatchError, match="non-negative int"):
        toolreplay.OutputPatch("crm", "get", {}, -3, None)
    with pytest.raises(toolreplay.NonPortableValueError, match=r"\$\.ids"):
        toolreplay.OutputPatch("crm", "get", {"ids": (1, 2)}, 0, None)  # type: ignore[dict-item]


def test_a_patch_keeps_its_content_when_the_caller_mutates_its_arguments() -> None:
    value: dict[str, toolreplay.JsonValue] = {"active": False}
    patch = toolreplay.replace_output(effect="crm.customer.get", inputs={"id": 1}, value=value)
    before = patch.patch_id
    value["active"] = True
    assert patch.value == {"active": False}
    assert (
        toolreplay.replace_output(
            effect="crm.customer.get", inputs={"id": 1}, value={"active": False}
        ).patch_id
        == before
    )


def test_patch_ids_are_derived_from_content() -> None:
    assert inactive_customer().patch_id == inactive_customer().patch_id
    other = toolreplay.replace_output(
        effect="crm.customer.get",
        inputs={"customer_id": 42, "include_history": False},
        value={"id": 42, "active": True},
    )
    assert other.patch_id != inactive_customer().patch_id
    assert inactive_customer().patch_id.startswith("p-")


def test_a_patch_that_targets_nothing_fails_before_the_application_runs(
    source: Path, tmp_path: Path
) -> None:
    patch = toolreplay.replace_output(
        effect="crm.customer.get", inputs={"customer_id": 43, "include_history": False}, value={}
    )
    ran: list[str] = []
    with (
        pytest.raises(PatchTargetError) as caught,
        toolreplay.fork(source, tmp_path / "branch.trp", patches=[patch]),
    ):
        ran.append("application")
    message = str(caught.value)
    assert caught.value.patch_id == patch.patch_id
    assert "holds no such call" in message
    assert "$.customer_id: recorded 42, patch 43" in message
    assert ran == []
    assert not (tmp_path / "branch.trp").exists()


def test_a_wrong_occurrence_is_named(source: Path, tmp_path: Path) -> None:
    patch = toolreplay.replace_output(
        effect="crm.customer.get",
        inputs={"customer_id": 42, "include_history": False},
        occurrence=3,
        value={},
    )
    with pytest.raises(PatchTargetError, match=r"this call is occurrence 3"):
        toolreplay.fork(source, tmp_path / "b.trp", patches=[patch]).__enter__()
    assert toolreplay.current_session() is None


def test_an_unknown_effect_lists_what_the_trace_records(source: Path, tmp_path: Path) -> None:
    patch = toolreplay.replace_output(effect="crm.customer.lookup", inputs={}, value=None)
    expected = r"no call of crm\.customer\.lookup at all; it records"
    with pytest.raises(PatchTargetError, match=expected):
        toolreplay.fork(source, tmp_path / "b.trp", patches=[patch]).__enter__()


def test_two_patches_on_one_call_are_refused(source: Path, tmp_path: Path) -> None:
    first = inactive_customer()
    second = toolreplay.replace_output(
        effect="crm.customer.get",
        inputs={"include_history": False, "customer_id": 42},
        value={"id": 42},
    )
    with pytest.raises(PatchTargetError, match=r"both target crm\.customer\.get occurrence 0"):
        toolreplay.fork(source, tmp_path / "b.trp", patches=[first, second]).__enter__()
    assert not (tmp_path / "b.trp").exists()


def test_a_non_portable_patch_value_is_refused() -> None:
    not_json: Any = {"when": {1, 2}}
    with pytest.raises(
        NonPortableValueError, match=r"patch value for crm\.customer\.get: \$\.when"
    ):
        toolreplay.replace_output(
            effect="crm.customer.get", inputs={"customer_id": 42}, value=not_json
        )
    with pytest.raises(toolreplay.PatchError, match="dotted name the trace records"):
        toolreplay.replace_output(effect="customer", inputs={}, value=None)


def test_an_unapplied_patch_fails_a_normal_exit(source: Path, tmp_path: Path) -> None:
    branch = tmp_path / "branch.trp"
    with pytest.raises(UnappliedPatchError) as caught:
        with toolreplay.fork(source, branch, patches=[inactive_customer()]):
            pass  # the application never runs
    message = str(caught.value)
    assert "without making 1 patched call(s)" in message
    assert "3 of the 3 source operations were never called" in message
    assert str(branch) in caught.value.__notes__[0]
    ending = toolreplay.read_trace(branch).footer
    assert ending is not None
    assert ending.ending.error_type == "toolreplay.errors.UnappliedPatchError"


def test_an_application_exception_propagates_and_ends_the_branch(
    source: Path, tmp_path: Path
) -> None:
    branch = tmp_path / "branch.trp"
    failure = RuntimeError("boom")
    with (
        pytest.raises(RuntimeError) as caught,
        toolreplay.fork(source, branch, patches=[inactive_customer()]),
    ):
        crm.get_customer(42)
        raise failure
    assert caught.value is failure
    assert not getattr(caught.value, "__notes__", None)
    trace = toolreplay.read_trace(branch)
    assert len(trace) == 1
    assert trace.footer is not None
    assert trace.footer.ending.error_type == "builtins.RuntimeError"


def test_a_fork_failing_part_way_leaves_a_branch_that_diffs(source: Path, tmp_path: Path) -> None:
    branch = tmp_path / "branch.trp"
    with pytest.raises(ReplayMiss) as caught, toolreplay.fork(source, branch):
        crm.handle_refund(42, 999.0)  # the refund call now differs from the recording
    notes = "\n".join(caught.value.__notes__)
    assert str(branch) in notes
    trace = toolreplay.read_trace(branch)
    assert trace.complete
    assert [op.effect for op in trace.operations] == ["crm.customer.get"]
    assert trace.footer is not None
    assert trace.footer.ending.error_type == "toolreplay.errors.ReplayMiss"
    report = toolreplay.diff(source, branch)
    assert report.first_divergence is not None
    assert report.first_divergence.type == "operation_missing"
    assert report.first_divergence.effect == "billing.refund.create"


def test_the_branch_must_be_new_and_not_the_source(source: Path, tmp_path: Path) -> None:
    existing = tmp_path / "existing.trp"
    existing.write_text("keep me")
    with pytest.raises(TraceExistsError):
        toolreplay.fork(source, existing).__enter__()
    assert existing.read_text() == "keep me"
    before = source.read_bytes()
    with pytest.raises(TraceError, match="its own source trace"):
        toolreplay.fork(source, source).__enter__()
    assert source.read_bytes() == before
    assert toolreplay.current_session() is None


def test_a_refused_fork_can_be_retried(source: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken.trp"
    taken.write_text("keep")
    session = toolreplay.fork(source, taken, patches=[inactive_customer()])
    with pytest.raises(TraceExistsError):
        session.__enter__()
    taken.unlink()
    with session:
        crm.handle_refund(42, 120.0)
    assert session.patched_count == 1


def test_patches_are_attributed_only_against_the_source_they_were_forked_from(
    source: Path, tmp_path: Path
) -> None:
    branch = tmp_path / "branch.trp"
    with toolreplay.fork(source, branch, patches=[inactive_customer()]):
        crm.handle_refund(42, 120.0)
    assert toolreplay.diff(source, branch).differences[0].patch_id is not None
    again = tmp_path / "again.trp"
    with toolreplay.record(again):
        crm.handle_refund(42, 120.0)
    unrelated = toolreplay.diff(again, branch).differences[0]
    assert unrelated.type == "output_changed"
    assert unrelated.patch_id is None


def test_patching_a_recorded_failure_turns_it_into_a_return(tmp_path: Path) -> None:
    source = tmp_path / "timeout.trp"
    with toolreplay.record(source):
        crm.handle_refund(42, 5000.0)
    patch = toolreplay.replace_output(
        effect="billing.refund.create",
        inputs={"customer_id": 42, "amount": 5000.0},
        value={"refund_id": "r-manual", "amount": 5000.0},
    )
    # Strict tail: the note the application now writes differs from the recording.
    with (
        pytest.raises(ReplayMiss, match=r'\$\.text: recorded "retry later'),
        toolreplay.fork(source, tmp_path / "b.trp", patches=[patch]),
    ):
        crm.handle_refund(42, 5000.0)
    report = toolreplay.diff(source, tmp_path / "b.trp")
    first = report.first_divergence
    assert first is not None
    assert (first.type, first.patch_id) == ("status_changed", patch.patch_id)
    assert [f.path for f in first.fields] == ["$.status", "$.error", "$.output"]
    # What follows the patch is reported, never attributed to it.
    later = report.differences[1]
    assert (later.type, later.effect, later.patch_id) == (
        "operation_missing",
        "crm.notes.add",
        None,
    )


def test_async_fork(tmp_path: Path) -> None:
    source = tmp_path / "async.trp"
    with toolreplay.record(source):
        asyncio.run(crm.handle_refund_async(42))
    patch = toolreplay.replace_output(
        effect="llm.decide",
        inputs={"prompt": "refund for Ada?", "effort": "low"},
        value="manual_review",
    )
    crm.BODY_CALLS.clear()

    async def run() -> object:
        with toolreplay.fork(source, tmp_path / "branch.trp", patches=[patch]):
            return await crm.handle_refund_async(42)

    assert asyncio.run(run()) == {"decision": "manual_review", "second": "reject"}
    assert sum(crm.BODY_CALLS.values()) == 0


def test_patch_files_round_trip_and_refuse_bad_input(tmp_path: Path) -> None:
    patches = [inactive_customer()]
    path = toolreplay.write_patches(tmp_path / "fix.json", patches)
    assert toolreplay.read_patches(path) == patches
    document = json.loads(path.read_text())
    assert document["format"] == "toolreplay.patches"
    assert document["format_version"] == 2
    assert document["patches"][0]["patch_id"] == patches[0].patch_id
    with pytest.raises(PatchFileError, match="already exists"):
        toolreplay.write_patches(path, [])
    assert toolreplay.read_patches(path) == patches

    def bad(content: str) -> str:
        target = tmp_path / "bad.json"
        target.write_text(content)
        with pytest.raises(PatchFileError) as caught:
            toolreplay.read_patches(target)
        assert str(caught.value).startswith(f"{target}: ")
        return str(caught.value)

    entry = dict(document["patches"][0])
    wrap = lambda *items: json.dumps(  # noqa: E731
        {"format": "toolreplay.patches", "format_version": 1, "patches": list(items)}
    )
    assert "not valid JSON" in bad("{")
    assert "$: expected an object (a patch file), found []" in bad("[]")
    assert (
        "$.format_version: expected 1, 2 or 3, the versions this toolreplay reads, found 4"
        in bad(json.dumps({"format": "toolreplay.patches", "format_version": 4, "patches": []}))
    )
    supplied = {**entry, "kind": "supply_output"}
    del supplied["patch_id"]
    assert (
        '$.patches[0].kind: expected "replace_output" (format version 1), found "supply_output"'
        in bad(wrap(supplied))
    )
    assert (
        "$.patches[0]: expected only the keys effect, inputs, occurrence, at, patch_id, kind, "
        'value, reply, edit, found the key "colour"' in bad(wrap({**entry, "colour": "red"}))
    )
    assert "$.patches[0].value: expected the output value, found nothing" in bad(
        wrap({k: v for k, v in entry.items() if k != "value"})
    )
    assert "the id of its content (the patch was edited" in bad(
        wrap({**entry, "value": {"edited": True}})
    )
    # Strict types: a number in a string is not a number, and the value found is shown.
    assert '$.patches[0].occurrence: expected an integer, found "0"' in bad(
        wrap({**entry, "occurrence": "0"})
    )
    assert "float('nan') is not portable JSON" in bad(
        wrap({k: v for k, v in entry.items() if k != "patch_id"} | {"value": float("nan")})
    )
    with pytest.raises(PatchFileError, match="no such patch file"):
        toolreplay.read_patches(tmp_path / "missing.json")
    huge = wrap(entry | {"value": "HUGE"}).replace('"HUGE"', "9" * 5000)
    assert "not portable JSON" in bad(huge)
    assert "nested too deeply" in bad("[" * 100_000)


def test_a_failed_fork_keeps_no_machine_paths_in_its_branch(source: Path, tmp_path: Path) -> None:
    branch = tmp_path / "branch.trp"
    with pytest.raises(ReplayMiss), toolreplay.fork(source.resolve(), branch):
        crm.handle_refund(42, 999.0)
    ending = toolreplay.read_trace(branch).footer
    assert ending is not None
    assert ending.ending.message is not None
    assert "source.trp" in ending.ending.message
    assert str(tmp_path) not in branch.read_text()


def test_entering_and_leaving_in_different_contexts_still_closes_the_branch(
    source: Path, tmp_path: Path
) -> None:
    import contextvars

    branch = tmp_path / "branch.trp"
    session = toolreplay.fork(source, branch)
    contextvars.copy_context().run(session.__enter__)
    with pytest.raises(toolreplay.SessionError, match="entered in one context and left in another"):
        session.__exit__(None, None, None)
    assert toolreplay.read_trace(branch).complete
