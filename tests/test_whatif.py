"""What-if forks through new paths: supplied calls, replaced errors, live effects (issue 12)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolreplay
from tests.support import whatif
from tests.support.case_pytest import case_pytest
from toolreplay import (
    ErrorPatch,
    ForkOptionError,
    NonPortableValueError,
    PatchError,
    PatchTargetError,
    ReplayMiss,
    UnappliedPatchError,
    UnconsumedOperationsError,
)

ROOT = Path(__file__).resolve().parent.parent
REVIEW_MESSAGE = "Your request is being reviewed (ticket RV-9)."


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source.trp"
    with toolreplay.record(path, metadata={"runner": whatif.RUNNER}):
        assert whatif.handle_order()["decision"] == "approved"
    whatif.BODY_CALLS.clear()
    return path


def manual_review() -> toolreplay.OutputPatch:
    return toolreplay.replace_output(
        effect="llm.refund.decide",
        inputs={"order_id": whatif.ORDER_ID, "amount": whatif.AMOUNT, "tier": "gold"},
        value={"decision": "manual_review"},
    )


def queued() -> toolreplay.OutputPatch:
    return toolreplay.supply_output(
        effect="review.queue.add",
        inputs={"order_id": whatif.ORDER_ID, "reason": "the model asked for a review"},
        value={"ticket": "RV-9", "position": 1},
    )


def notified() -> toolreplay.OutputPatch:
    return toolreplay.supply_output(
        effect="notify.customer",
        inputs={"customer_id": whatif.CUSTOMER_ID, "message": REVIEW_MESSAGE},
        value={"sent": True},
    )


def test_a_fork_through_the_other_branch_completes_offline(source: Path, tmp_path: Path) -> None:
    before = source.read_bytes()
    branch = tmp_path / "branch.trp"
    patches = [manual_review(), queued(), notified()]
    with toolreplay.fork(source, branch, patches=patches, unobserved="allow") as session:
        result = whatif.handle_order()
    assert result == {"order_id": "o-7", "decision": "manual_review", "ticket": "RV-9"}
    assert session.patched_count == 3
    assert sum(whatif.BODY_CALLS.values()) == 0, "no effect body ran"
    assert source.read_bytes() == before

    trace = toolreplay.read_trace(branch)
    assert [
        (op.effect, op.origin, op.patch_id, op.source_logical_operation_id)
        for op in trace.operations
    ] == [
        ("crm.customer.get", "recorded", None, 0),
        ("llm.refund.decide", "patched", patches[0].patch_id, 1),
        ("review.queue.add", "supplied", patches[1].patch_id, None),
        ("notify.customer", "supplied", patches[2].patch_id, None),
    ]
    assert trace.footer is not None
    assert trace.footer.ending.status == "completed"
    assert trace.footer.attempted is None
    assert [(u.source_logical_operation_id, u.effect) for u in trace.footer.unobserved] == [
        (2, "billing.refund.create"),
        (3, "notify.customer"),
    ]

    report = toolreplay.diff(source, branch)
    kinds = [(d.type, d.effect, d.patch_id) for d in report.differences]
    # The notice is the same call asked differently (it stands where the recorded notice
    # stood, which the branch never made): one changed request, not missing + added.
    assert kinds == [
        ("output_changed", "llm.refund.decide", patches[0].patch_id),
        ("operation_missing", "billing.refund.create", None),
        ("operation_added", "review.queue.add", None),
        ("input_changed", "notify.customer", None),
    ]
    notice = report.rows[-1]
    assert (notice.status, notice.match, notice.patch_id) == (
        "changed",
        "structural",
        patches[2].patch_id,
    )
    assert [(f.path, f.target) for f in notice.fields] == [("$.inputs.message", REVIEW_MESSAGE)]
    added = [row for row in report.rows if row.status == "added"]
    assert [row.patch_id for row in added] == [patches[1].patch_id]
    document = report.to_dict()
    assert document["format_version"] == 2
    assert [d["target"]["origin"] for d in document["differences"] if d["target"]][-2:] == [
        "supplied",
        "supplied",
    ]
    assert document["rows"][-1]["target"]["patch_id"] == patches[2].patch_id
    assert document["rows"][-1]["source"]["logical_id"] == 3
    text = report.render_text()
    assert "operation_added at review.queue.add occurrence 0 (source #-, target #2), " in text
    assert f"outcome supplied by patch {patches[1].patch_id}" in text
    assert (
        "input_changed at notify.customer occurrence 0 (source #3, target #3), outcome "
        f"supplied by patch {patches[2].patch_id}"
    ) in text


def test_without_allow_the_fork_names_the_unobserved_operations(
    source: Path, tmp_path: Path
) -> None:
    branch = tmp_path / "branch.trp"
    patches = [manual_review(), queued(), notified()]
    with (
        pytest.raises(UnconsumedOperationsError) as caught,
        toolreplay.fork(source, branch, patches=patches),
    ):
        whatif.handle_order()
    message = str(caught.value)
    assert "2 of the 4 recorded operations" in message
    assert "billing.refund.create" in message
    assert "notify.customer" in message
    assert [op.effect for op in caught.value.operations] == [
        "billing.refund.create",
        "notify.customer",
    ]
    footer = toolreplay.read_trace(branch).footer
    assert footer is not None
    assert len(footer.unobserved) == 2


def test_the_corrected_branch_promotes_and_passes_under_pytest(
    source: Path, tmp_path: Path
) -> None:
    branch = tmp_path / "branch.trp"
    patches = [manual_review(), queued(), notified()]
    with toolreplay.fork(source, branch, patches=patches, unobserved="allow"):
        expected = whatif.handle_order()
    case = toolreplay.promote(
        branch,
        tmp_path / "cases" / "review_over_limit",
        name="review_over_limit",
        runner=whatif.RUNNER,
        expected=expected,
    )
    environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    environment["PYTHONPATH"] = str(ROOT)
    completed = subprocess.run(
        case_pytest(str(case.directory)),
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "1 passed" in completed.stdout


def test_a_stop_at_an_unrecorded_call_is_structured(source: Path, tmp_path: Path) -> None:
    branch = tmp_path / "branch.trp"
    with (
        pytest.raises(ReplayMiss) as caught,
        toolreplay.fork(source, branch, patches=[manual_review()], unobserved="allow"),
    ):
        whatif.handle_order()
    miss = caught.value
    assert miss.effect == "review.queue.add"
    assert miss.occurrence == 0
    assert miss.inputs == {"order_id": "o-7", "reason": "the model asked for a review"}
    assert miss.candidates == ()
    assert any("supply_output(effect='review.queue.add'" in note for note in miss.__notes__)

    trace = toolreplay.read_trace(branch)
    assert trace.footer is not None
    attempted = trace.footer.attempted
    assert attempted is not None
    assert attempted.identity == miss.identity
    assert attempted.inputs == miss.inputs
    report = toolreplay.diff(source, branch)
    last = report.rows[-1]
    assert (last.status, last.attempted, last.target) == ("added", attempted, None)
    document = report.to_dict()
    assert document["rows"][-1]["attempted"] is True
    assert document["rows"][-1]["target"]["status"] == "attempted"
    assert document["differences"][-1]["fields"] == [
        {
            "path": "$.inputs",
            "source": None,
            "target": miss.inputs,
            "source_present": False,
            "target_present": True,
        }
    ]
    assert "(source #-, target attempted, not recorded)" in report.render_text()


def test_replace_error_on_the_crm_call_takes_the_error_path(source: Path, tmp_path: Path) -> None:
    timeout = toolreplay.replace_error(
        effect="crm.customer.get",
        inputs={"customer_id": whatif.CUSTOMER_ID},
        error=TimeoutError("crm timed out"),
    )
    apology = toolreplay.supply_output(
        effect="notify.customer",
        inputs={
            "customer_id": whatif.CUSTOMER_ID,
            "message": "We could not check your account yet; we will write again.",
        },
        value={"sent": True},
    )
    branch = tmp_path / "branch.trp"
    with toolreplay.fork(source, branch, patches=[timeout, apology], unobserved="allow"):
        result = whatif.handle_order()
    assert result == {"order_id": "o-7", "decision": "deferred"}
    report = toolreplay.diff(source, branch)
    first = report.first_divergence
    assert first is not None
    assert (first.type, first.effect, first.patch_id) == (
        "status_changed",
        "crm.customer.get",
        timeout.patch_id,
    )
    assert [f.path for f in first.fields] == ["$.status", "$.output", "$.error"]
    assert first.fields[2].target == {
        "type": "builtins.TimeoutError",
        "message": "crm timed out",
        "args": ["crm timed out"],
    }
    assert report.counts()["operation_missing"] == 2
    # The apology stands where the recorded notice stood: the same call, other words.
    (notice,) = [d for d in report.differences if d.effect == "notify.customer"]
    assert (notice.type, notice.patch_id) == ("input_changed", None)
    assert notice.target is not None
    assert notice.target.patch_id == apology.patch_id
    assert "status_changed at crm.customer.get occurrence 0" in report.render_text()


def test_live_runs_exactly_the_named_effects(source: Path, tmp_path: Path) -> None:
    live_ticket_notice = toolreplay.supply_output(
        effect="notify.customer",
        inputs={
            "customer_id": whatif.CUSTOMER_ID,
            "message": "Your request is being reviewed (ticket RV-o-7).",
        },
        value={"sent": True},
    )
    with toolreplay.fork(
        source,
        tmp_path / "branch.trp",
        patches=[manual_review(), live_ticket_notice],
        live=["review.*"],
        unobserved="allow",
    ):
        result = whatif.handle_order()
    assert result["ticket"] == "RV-o-7"  # the real body's answer
    assert dict(whatif.BODY_CALLS) == {"review.queue.add": 1}

    whatif.BODY_CALLS.clear()
    branch = tmp_path / "branch-2.trp"
    with toolreplay.fork(
        source,
        branch,
        patches=[manual_review()],
        live=["review.queue.add", "notify.customer"],
        unobserved="allow",
    ):
        result = whatif.handle_order()
    assert result["ticket"] == "RV-o-7"
    assert dict(whatif.BODY_CALLS) == {"review.queue.add": 1, "notify.customer": 1}
    trace = toolreplay.read_trace(branch)
    assert [(op.effect, op.origin) for op in trace.operations] == [
        ("crm.customer.get", "recorded"),
        ("llm.refund.decide", "patched"),
        ("review.queue.add", "live"),
        ("notify.customer", "live"),
    ]
    assert "ran live" in toolreplay.diff(source, branch).render_text()


def test_bad_patches_are_refused_before_any_application_code_runs(
    source: Path, tmp_path: Path
) -> None:
    with pytest.raises(NonPortableValueError, match=r"patch value for review.queue.add"):
        toolreplay.supply_output(
            effect="review.queue.add", inputs={"order_id": "o-7"}, value={1, 2}
        )
    with pytest.raises(NonPortableValueError, match=r"patch inputs for crm.customer.get"):
        toolreplay.replace_error(
            effect="crm.customer.get", inputs={"at": object()}, error=TimeoutError("x")
        )
    with pytest.raises(PatchError, match="occurrence must be a non-negative int, got -1"):
        toolreplay.supply_error(
            effect="review.queue.add", inputs={}, occurrence=-1, error=TimeoutError("x")
        )
    with pytest.raises(PatchError, match="CustomError would not be raised again as itself"):

        class CustomError(Exception):
            pass

        toolreplay.replace_error(effect="crm.customer.get", inputs={}, error=CustomError())

    def refused(patches: list[toolreplay.Patch], **options: object) -> str:
        branch = tmp_path / "refused.trp"
        with pytest.raises((PatchTargetError, ForkOptionError)) as caught:
            with toolreplay.fork(source, branch, patches=patches, **options):  # type: ignore[arg-type]  # options are the keyword arguments under test
                whatif.handle_order()
        assert not branch.exists()
        assert sum(whatif.BODY_CALLS.values()) == 0
        return str(caught.value)

    unknown = toolreplay.supply_output(effect="reviews.queue.add", inputs={}, value=None)
    message = refused([manual_review(), unknown])
    assert "supplies reviews.queue.add, an unknown effect" in message
    assert "did you mean review.queue.add?" in message

    present = toolreplay.supply_output(
        effect="crm.customer.get", inputs={"customer_id": 42}, value={}
    )
    message = refused([present])
    assert "already records that call (operation 0, line 2)" in message
    assert "use replace_output" in message

    missing = toolreplay.replace_error(
        effect="review.queue.add", inputs={"order_id": "o-7"}, error=TimeoutError("x")
    )
    message = refused([missing])
    assert "(replace_error) targets review.queue.add" in message
    assert "use supply_output or supply_error" in message

    assert "live effect 'kb..*'" in refused([], live=["kb..*"])
    assert 'unobserved must be "error"' in refused([], unobserved="sometimes")


def test_an_unused_supply_patch_is_refused_at_exit(source: Path, tmp_path: Path) -> None:
    never = toolreplay.supply_output(
        effect="review.queue.add", inputs={"order_id": "o-8", "reason": "x"}, value={}
    )
    with (
        pytest.raises(UnappliedPatchError) as caught,
        toolreplay.fork(source, tmp_path / "branch.trp", patches=[never]),
    ):
        whatif.handle_order()
    assert caught.value.patch_ids == (never.patch_id,)
    assert "(supply_output)" in str(caught.value)


def test_every_patch_kind_round_trips_through_a_version_2_file(tmp_path: Path) -> None:
    patches: list[toolreplay.Patch] = [
        manual_review(),
        queued(),
        toolreplay.replace_error(
            effect="crm.customer.get", inputs={"customer_id": 42}, error=TimeoutError("late")
        ),
        toolreplay.supply_error(
            effect="review.queue.add",
            inputs={"order_id": "o-7", "reason": "x"},
            error=toolreplay.ReplayedEffectError("queue.errors.Full", "the queue is full"),
        ),
    ]
    path = toolreplay.write_patches(tmp_path / "patches.json", patches)
    assert toolreplay.read_patches(path) == patches
    document = json.loads(path.read_text())
    assert document["format_version"] == 2
    assert [entry["kind"] for entry in document["patches"]] == [
        "replace_output",
        "supply_output",
        "replace_error",
        "supply_error",
    ]
    assert document["patches"][3]["error"] == {
        "type": "queue.errors.Full",
        "message": "the queue is full",
        "args": None,
    }
    error_patch = patches[2]
    assert isinstance(error_patch, ErrorPatch)
    assert (
        error_patch.patch_id
        == toolreplay.replace_error(
            effect="crm.customer.get", inputs={"customer_id": 42}, error=TimeoutError("late")
        ).patch_id
    )
    # A version 1 file (replace_output only) still loads, with the same ids.
    old = {
        "format": "toolreplay.patches",
        "format_version": 1,
        "patches": [manual_review().to_dict()],
    }
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert toolreplay.read_patches(tmp_path / "old.json") == [manual_review()]


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    environment["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_command_line_reports_the_stop_and_forks_through(source: Path, tmp_path: Path) -> None:
    first = toolreplay.write_patches(tmp_path / "first.json", [manual_review()])
    stopped = run_cli(
        "fork", str(source), "-p", str(first), "-o", "stopped.trp", "--allow-unobserved",
        "-f", "json", cwd=tmp_path,
    )  # fmt: skip
    assert stopped.returncode == 1, stopped.stderr
    document = json.loads(stopped.stdout)
    assert document["protocol_version"] == 2
    error = document["error"]
    assert (error["identity"]["effect"], error["identity"]["occurrence"]) == ("review.queue.add", 0)
    assert error["inputs"] == {"order_id": "o-7", "reason": "the model asked for a review"}
    assert error["candidates"] == []
    footer = toolreplay.read_trace(tmp_path / "stopped.trp").footer
    assert footer is not None
    assert footer.attempted is not None

    both = toolreplay.write_patches(tmp_path / "both.json", [manual_review(), queued(), notified()])
    done = run_cli(
        "fork", str(source), "-p", str(both), "-o", "done.trp", "--allow-unobserved",
        "-f", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["return_value"]["decision"] == "manual_review"
    assert document["counts"] == {
        "operations_in_trace": 4,
        "operations_consumed": 2,
        "operations_patched": 3,
        "operations_live": 0,
        "operations_unobserved": 2,
        "patches": 3,
    }
    refused = run_cli(
        "fork", str(source), "-p", str(both), "-o", "refused.trp", "--live", "kb.",
        "-f", "json", cwd=tmp_path,
    )  # fmt: skip
    assert refused.returncode == 2
    assert "live effect 'kb.'" in json.loads(refused.stdout)["error"]["message"]
    assert not (tmp_path / "refused.trp").exists()


def test_the_command_line_refuses_bad_patches_before_the_application_runs(
    source: Path, tmp_path: Path
) -> None:
    # The runner's module marks its import; its entry point marks a run.
    (tmp_path / "marked.py").write_text(
        "from pathlib import Path\n"
        "from tests.support import whatif\n"
        "Path('imported').touch()\n"
        "def main():\n"
        "    Path('ran').touch()\n"
        "    return whatif.handle_order()\n"
    )

    def refused(patches: list[toolreplay.Patch]) -> str:
        patch_file = toolreplay.write_patches(tmp_path / "patches.json", patches, overwrite=True)
        completed = run_cli(
            "fork", str(source), "-p", str(patch_file), "-o", "refused.trp",
            "--runner", "marked:main", "-f", "json", cwd=tmp_path,
        )  # fmt: skip
        assert completed.returncode == 2, completed.stderr
        assert not (tmp_path / "refused.trp").exists()
        assert not (tmp_path / "ran").exists()
        return json.loads(completed.stdout)["error"]["message"]

    present = toolreplay.supply_output(
        effect="crm.customer.get", inputs={"customer_id": whatif.CUSTOMER_ID}, value={}
    )
    assert "already records that call" in refused([present])
    absent = toolreplay.replace_output(
        effect="review.queue.add", inputs={"order_id": "o-7"}, value={}
    )
    assert "holds no such call" in refused([absent])
    assert not (tmp_path / "imported").exists()  # refused before the import
    # An effect neither recorded nor declared is known only once the application is
    # imported: still refused before its entry point runs.
    unknown = toolreplay.supply_output(effect="reviews.queue.add", inputs={}, value=None)
    message = refused([manual_review(), unknown])
    assert "supplies reviews.queue.add, an unknown effect" in message
    assert "did you mean review.queue.add?" in message


def test_an_effect_called_inside_a_live_body_is_refused_as_nested(
    source: Path, tmp_path: Path
) -> None:
    @toolreplay.effect("review.escalate")
    def escalate(order_id: str) -> dict[str, toolreplay.JsonValue]:
        whatif.notify_customer(whatif.CUSTOMER_ID, "escalated")  # nested in a live body
        return {"escalated": order_id}

    def app() -> None:
        whatif.get_customer(whatif.CUSTOMER_ID)
        escalate("o-7")

    with (
        pytest.raises(toolreplay.NestedEffectError, match=r"inside the body of review\.escalate"),
        toolreplay.fork(source, tmp_path / "branch.trp", live=["review.*"], unobserved="allow"),
    ):
        app()
    assert whatif.BODY_CALLS["notify.customer"] == 0


def test_concurrent_live_calls_are_kept_with_their_lanes(source: Path, tmp_path: Path) -> None:
    import asyncio

    @toolreplay.effect("kb.article.get")
    async def article(slug: str) -> dict[str, toolreplay.JsonValue]:
        await asyncio.sleep(0.01)  # both calls are in flight at once
        return {"slug": slug}

    async def app() -> list[dict[str, toolreplay.JsonValue]]:
        whatif.get_customer(whatif.CUSTOMER_ID)
        return list(await asyncio.gather(article("refunds"), article("reviews")))

    branch = tmp_path / "branch.trp"
    with toolreplay.fork(source, branch, live=["kb.*"], unobserved="allow"):
        assert asyncio.run(app()) == [{"slug": "refunds"}, {"slug": "reviews"}]
    operations = toolreplay.read_trace(branch).operations
    live = [op for op in operations if op.origin == "live"]
    assert sorted(str(op.inputs["slug"]) for op in live) == ["refunds", "reviews"]
    # The gathered tasks are two lanes, besides the main task's (task-1, the CRM call).
    assert {op.lane for op in live} == {"task-2", "task-3"}
    assert operations[0].lane == "task-1"
    for op in live:
        assert op.start_ns is not None
        assert op.end_ns is not None
        assert op.end_ns - op.start_ns >= 5_000_000  # the body's own time


CATCHING_APP = """
import toolreplay


@toolreplay.effect("shop.lookup")
def lookup(order_id):
    return {"total": 1200.0}


@toolreplay.effect("billing.refund")
def refund(amount):
    return {"status": "issued"}


def main():
    order = lookup(7)
    try:
        receipt = refund(order["total"])
    except Exception as error:  # as an agent framework turns a tool's failure into text
        receipt = f"the tool failed: {error}"
    return receipt["status"]
"""


def test_a_miss_the_application_caught_before_failing_is_still_reported(tmp_path: Path) -> None:
    # The application catches the ReplayMiss and then fails on its own: the run document
    # names the call the run left the recording at, so that it can be answered.
    (tmp_path / "catching.py").write_text(CATCHING_APP, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolreplay", *args, "--format", "json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    assert cli("record", "--runner", "catching:main", "--output", "t.trp").returncode == 0
    patch = toolreplay.replace_output(
        effect="shop.lookup", inputs={"order_id": 7}, value={"total": 250.0}
    )
    toolreplay.write_patches(tmp_path / "p.json", [patch])
    forked = cli("fork", "t.trp", "--patches", "p.json", "--output", "b.trp", "--allow-unobserved")
    assert forked.returncode == 1
    document = json.loads(forked.stdout)
    assert document["outcome"] == "application_error"
    error = document["error"]
    assert error["type"] == "builtins.TypeError"
    assert error["identity"]["effect"] == "billing.refund"
    assert error["inputs"] == {"amount": 250.0}
    assert [c["inputs"] for c in error["candidates"]] == [{"amount": 1200.0}]
    assert "the application caught a ReplayMiss: billing.refund occurrence 0" in error["notes"][-1]
