from __future__ import annotations

from pathlib import Path

import pytest
from toolreplay_tui.model.patches import PendingPatches, describe_target

import toolreplay
from tests.support.traces import write_trace


def load(tmp_path: Path, name: str = "t.trp") -> toolreplay.Trace:
    path = write_trace(
        tmp_path / name,
        [
            ("crm.customer.get", {"customer_id": 42}, {"name": "Ada"}),
            ("llm.refund.decide", {"amount": 1200.0, "tier": "gold"}, {"decision": "approve"}),
        ],
    )
    return toolreplay.read_trace(path)


def test_set_replace_and_remove_one_patch_per_identity(tmp_path: Path) -> None:
    trace = load(tmp_path)
    decide = trace.operations[1]
    pending = PendingPatches()
    assert not pending.dirty
    assert len(pending) == 0
    patch = pending.set(decide, {"decision": "manual_review"})
    expected = toolreplay.replace_output(
        effect="llm.refund.decide",
        inputs={"amount": 1200.0, "tier": "gold"},
        value={"decision": "manual_review"},
    )
    assert patch.patch_id == expected.patch_id
    assert decide.identity in pending
    assert pending.dirty
    replaced = pending.set(decide, {"decision": "deny"})
    assert len(pending) == 1
    assert pending.get(decide.identity) == replaced
    assert replaced.value == {"decision": "deny"}
    assert pending.remove(decide.identity) == replaced
    assert pending.remove(decide.identity) is None
    assert len(pending) == 0


def test_a_value_that_is_not_portable_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    trace = load(tmp_path)
    pending = PendingPatches()
    with pytest.raises(toolreplay.NonPortableValueError):
        pending.set(trace.operations[1], {"x": float("nan")})
    assert len(pending) == 0
    assert not pending.dirty


def test_save_and_load_through_the_library_patch_file(tmp_path: Path) -> None:
    trace = load(tmp_path)
    pending = PendingPatches()
    pending.set(trace.operations[1], {"decision": "manual_review"})
    saved = pending.save(tmp_path / "fix.json")
    assert not pending.dirty
    assert pending.saved_path == saved
    assert [p.patch_id for p in toolreplay.read_patches(saved)] == [p.patch_id for p in pending]
    with pytest.raises(toolreplay.PatchFileError, match="already exists"):
        pending.save(saved)  # never over an existing file

    other = PendingPatches()
    result = other.load(saved, trace)
    assert [p.patch_id for p in result.loaded] == [p.patch_id for p in pending]
    assert not result.skipped
    assert not other.dirty
    assert trace.operations[1].identity in other


def test_load_skips_patches_the_trace_cannot_take(tmp_path: Path) -> None:
    trace = load(tmp_path)
    stray = toolreplay.replace_output(effect="crm.customer.get", inputs={"customer_id": 7}, value=1)
    first = toolreplay.replace_output(
        effect="crm.customer.get", inputs={"customer_id": 42}, value=1
    )
    second = toolreplay.replace_output(
        effect="crm.customer.get", inputs={"customer_id": 42}, value=2
    )
    path = toolreplay.write_patches(tmp_path / "mixed.json", [stray, first, second])
    pending = PendingPatches()
    result = pending.load(path, trace)
    assert [p.patch_id for p in result.loaded] == [first.patch_id]
    reasons = [skipped.reason for skipped in result.skipped]
    assert "holds no call of crm.customer.get" in reasons[0]
    assert "a second patch" in reasons[1]
    assert pending.dirty  # what is pending is not what the file holds


def test_load_of_a_bad_file_keeps_the_pending_set(tmp_path: Path) -> None:
    trace = load(tmp_path)
    pending = PendingPatches()
    pending.set(trace.operations[0], {"name": "Bob"})
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(toolreplay.PatchFileError, match="not valid JSON"):
        pending.load(tmp_path / "bad.json", trace)
    assert len(pending) == 1


def test_supplied_and_error_patches_sit_beside_replacements(tmp_path: Path) -> None:
    trace = load(tmp_path)
    crm = trace.operations[0]
    pending = PendingPatches()
    queued = pending.supply("review.queue.add", {"order_id": "o-7"}, 0, {"ticket": "RV-1"})
    assert queued == toolreplay.supply_output(
        effect="review.queue.add", inputs={"order_id": "o-7"}, value={"ticket": "RV-1"}
    )
    failed = pending.supply_failure("notify.customer", {"to": 42}, 0, "TimeoutError: slow")
    assert isinstance(failed, toolreplay.ErrorPatch)
    assert (failed.kind, failed.error_type, failed.args) == (
        "supply_error",
        "builtins.TimeoutError",
        ["slow"],
    )
    custom = pending.replace_failure(crm.identity, crm.inputs, "crm.Down: maintenance")
    assert isinstance(custom, toolreplay.ErrorPatch)
    assert (custom.kind, custom.error_type, custom.message, custom.args) == (
        "replace_error",
        "crm.Down",
        "maintenance",
        None,
    )
    assert [p.kind for p in pending] == ["supply_output", "supply_error", "replace_error"]

    assert pending.remove(queued.identity) == queued
    assert pending.undo() == f"removed patch {queued.patch_id} on review.queue.add"
    assert [p.kind for p in pending] == ["supply_output", "supply_error", "replace_error"]

    saved = pending.save(tmp_path / "all.json")
    again = PendingPatches()
    loaded = again.load(saved, trace)
    assert loaded.skipped == ()
    assert list(again) == list(pending)
    # A supply patch on a call the trace holds would be refused by the fork: skipped.
    wrong = toolreplay.supply_output(effect="crm.customer.get", inputs=crm.inputs, value={})
    toolreplay.write_patches(tmp_path / "wrong.json", [wrong])
    skipped = again.load(tmp_path / "wrong.json", trace).skipped
    assert [s.reason for s in skipped] == [
        f"{wrong.patch_id}: this trace already holds a call of crm.customer.get occurrence 0 "
        "with these inputs"
    ]


def test_undo_takes_back_every_kind_of_change_last_first(tmp_path: Path) -> None:
    trace = load(tmp_path)
    crm, decide = trace.operations
    pending = PendingPatches()
    assert pending.undo() is None
    first = pending.set(decide, {"decision": "manual_review"})
    saved = pending.save(tmp_path / "one.json")
    assert not pending.dirty
    second = pending.set(decide, {"decision": "deny"})  # replaces the first
    queued = pending.supply("review.queue.add", {"order_id": "o-7"}, 0, {"ticket": "RV-1"})
    pending.remove(decide.identity)
    failed = pending.replace_failure(crm.identity, crm.inputs, "TimeoutError: slow")
    assert list(pending) == [queued, failed]

    assert pending.undo() == f"added patch {failed.patch_id} on crm.customer.get"
    assert list(pending) == [queued]
    assert pending.undo() == f"removed patch {second.patch_id} on llm.refund.decide"
    assert list(pending) == [second, queued]  # back where it was listed
    assert pending.undo() == f"added patch {queued.patch_id} on review.queue.add"
    assert pending.dirty
    assert pending.undo() == f"changed patch {second.patch_id} on llm.refund.decide"
    assert list(pending) == [first]
    assert not pending.dirty  # what was saved
    assert pending.undo() == f"added patch {first.patch_id} on llm.refund.decide"
    assert len(pending) == 0
    assert pending.dirty  # the file holds one patch
    assert pending.undo() is None

    pending.set(crm, {"name": "Grace"})
    pending.load(saved, trace)
    assert list(pending) == [first]
    assert pending.undo() == "loaded patches from one.json"
    assert [p.effect for p in pending] == ["crm.customer.get"]
    assert pending.dirty


def test_every_target_form_loads_keeps_its_place_and_saves_back_the_same(
    tmp_path: Path,
) -> None:
    trace = load(tmp_path)
    decide = trace.operations[1]
    by_number = toolreplay.replace_output(at=1, value={"decision": "deny"})
    next_call = toolreplay.supply_output(effect="review.queue.add", value={"ticket": "RV-1"})
    again = toolreplay.supply_output(effect="review.queue.add", value={"ticket": "RV-1"})
    reply = toolreplay.replace_output(
        effect="crm.customer.get",
        inputs={"customer_id": 42},
        value=toolreplay.OutputRecipe("reply", "crm", {"text": "deny"}),
    )
    patches = [by_number, next_call, reply, again]
    path = toolreplay.write_patches(tmp_path / "v3.json", patches)
    pending = PendingPatches()
    loaded = pending.load(path, trace)
    assert loaded.skipped == ()
    assert list(pending) == patches  # two equal next-call patches are two entries
    assert not pending.dirty
    # The operation-number patch is the pending patch of that operation.
    assert pending.get(decide.identity) == by_number
    assert decide.identity in pending
    slots = [key for key, patch in pending.entries() if patch.target_form == "next_call"]
    assert [pending.next_call_number(key) for key in slots] == [1, 2]
    assert describe_target(by_number) == "#1"
    assert describe_target(next_call, 2) == "next new call #2 of review.queue.add"

    # Each changes in place; a next-call patch removed and brought back keeps its turn.
    assert pending.remove(slots[0]) == next_call
    assert pending.next_call_number(slots[1]) == 1
    pending.undo()
    assert list(pending) == patches
    failed = pending.fail_instead(decide.identity, "TimeoutError: slow")
    assert (failed.kind, failed.at) == ("replace_error", 1)
    timed_out = pending.fail_instead(slots[0], "TimeoutError: queue down")
    assert (timed_out.kind, timed_out.target_form) == ("supply_error", "next_call")
    assert [p.kind for p in pending] == [
        "replace_error",
        "supply_error",
        "replace_output",
        "supply_output",
    ]
    saved = pending.save(tmp_path / "back.json")
    assert toolreplay.read_patches(saved) == list(pending)


def test_load_says_why_it_skips_what_the_fork_would_refuse(tmp_path: Path) -> None:
    trace = load(tmp_path)
    beyond = toolreplay.replace_output(at=7, value=1)
    wrong_effect = toolreplay.replace_output(at=0, effect="llm.refund.decide", value=1)
    first = toolreplay.replace_output(at=1, value={"decision": "deny"})
    second = toolreplay.replace_output(
        effect="llm.refund.decide", inputs={"amount": 1200.0, "tier": "gold"}, value=2
    )
    path = toolreplay.write_patches(tmp_path / "v3.json", [beyond, wrong_effect, first, second])
    pending = PendingPatches()
    loaded = pending.load(path, trace)
    assert loaded.loaded == (first,)
    assert [skipped.reason for skipped in loaded.skipped] == [
        f"{beyond.patch_id}: this trace has no operation #7",
        f"{wrong_effect.patch_id}: operation #0 of this trace is crm.customer.get, not "
        "llm.refund.decide",
        f"{second.patch_id}: a second patch on llm.refund.decide occ 0 (the first, "
        f"{first.patch_id}, is kept)",
    ]
    assert pending.dirty
