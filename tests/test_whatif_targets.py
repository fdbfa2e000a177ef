"""Naming a patch's target without spelling the call: the next new call, and `at=N` (issue 22).

Also the provider-neutral recipe hook (`toolreplay.runtime.recipes`) a patch's
`reply(...)`/`edit(...)` goes through, exercised with a resolver of this test's own.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import cast

import pytest

import toolreplay
from tests.support import whatif
from toolreplay import (
    OutputRecipe,
    PatchApplicationError,
    PatchError,
    PatchFileError,
    PatchTargetError,
    ReplayMiss,
    UnappliedPatchError,
)
from toolreplay.runtime.recipes import RecipeCall, register_recipe_resolver

ROOT = Path(__file__).resolve().parent.parent
SOURCE_EFFECTS = [
    "crm.customer.get",
    "llm.refund.decide",
    "billing.refund.create",
    "notify.customer",
]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source.trp"
    with toolreplay.record(path, metadata={"runner": whatif.RUNNER}):
        assert whatif.handle_order()["decision"] == "approved"
    whatif.BODY_CALLS.clear()
    assert [op.effect for op in toolreplay.read_trace(path).operations] == SOURCE_EFFECTS
    return path


def manual_review(**target: object) -> toolreplay.OutputPatch:
    if not target:
        target = {
            "effect": "llm.refund.decide",
            "inputs": {"order_id": whatif.ORDER_ID, "amount": whatif.AMOUNT, "tier": "gold"},
        }
    return toolreplay.replace_output(**target, value={"decision": "manual_review"})  # type: ignore[arg-type]  # the target keywords under test


def test_supply_patches_without_inputs_answer_the_new_calls_in_order(
    source: Path, tmp_path: Path
) -> None:
    branch = tmp_path / "branch.trp"
    queued = toolreplay.supply_output(effect="review.queue.add", value={"ticket": "RV-9"})
    told = toolreplay.supply_output(effect="notify.customer", value={"sent": True})
    patches = [manual_review(), queued, told]
    with toolreplay.fork(source, branch, patches=patches, unobserved="allow") as session:
        result = whatif.handle_order()
    assert result == {"order_id": "o-7", "decision": "manual_review", "ticket": "RV-9"}
    assert session.patched_count == 3
    assert sum(whatif.BODY_CALLS.values()) == 0
    # The branch keeps the full inputs each patch answered, which the patch never named.
    supplied = [op for op in toolreplay.read_trace(branch).operations if op.origin == "supplied"]
    assert [(op.effect, op.inputs, op.patch_id) for op in supplied] == [
        (
            "review.queue.add",
            {"order_id": "o-7", "reason": "the model asked for a review"},
            queued.patch_id,
        ),
        (
            "notify.customer",
            {"customer_id": 42, "message": "Your request is being reviewed (ticket RV-9)."},
            told.patch_id,
        ),
    ]
    assert queued.to_dict() == {
        "kind": "supply_output",
        "effect": "review.queue.add",
        "value": {"ticket": "RV-9"},
        "patch_id": queued.patch_id,
    }
    assert queued.target_form == "next_call"
    with pytest.raises(PatchError, match=r"names the next call of review\.queue\.add"):
        _ = queued.identity


def several_notices() -> list[toolreplay.JsonValue]:
    """A new path: three notices the recording never sent (the CRM call is recorded)."""
    whatif.get_customer(whatif.CUSTOMER_ID)
    return [
        whatif.notify_customer(whatif.CUSTOMER_ID, message)
        for message in ("first", "second", "third")
    ]


def test_several_next_call_patches_answer_successive_calls_and_exact_ones_win(
    source: Path, tmp_path: Path
) -> None:
    one = toolreplay.supply_output(effect="notify.customer", value={"n": 1})
    two = toolreplay.supply_output(effect="notify.customer", value={"n": 2})
    second = toolreplay.supply_output(
        effect="notify.customer",
        inputs={"customer_id": whatif.CUSTOMER_ID, "message": "second"},
        value={"exact": True},
    )
    branch = tmp_path / "branch.trp"
    with toolreplay.fork(source, branch, patches=[one, two, second], unobserved="allow"):
        answers = several_notices()
    # The exact patch answers "second"; the next-call patches the others, in call order.
    assert answers == [{"n": 1}, {"exact": True}, {"n": 2}]
    lineage = [op.patch_id for op in toolreplay.read_trace(branch).operations[1:]]
    assert lineage == [one.patch_id, second.patch_id, two.patch_id]

    # The same answer twice is one change (one id) used for two calls.
    same = toolreplay.supply_output(effect="notify.customer", value={"sent": True})
    again = toolreplay.supply_output(effect="notify.customer", value={"sent": True})
    assert same.patch_id == again.patch_id
    patches = [same, again, same]
    with toolreplay.fork(
        source, tmp_path / "same.trp", patches=patches, unobserved="allow"
    ) as session:
        assert several_notices() == [{"sent": True}] * 3
    assert session.patched_count == 3


def test_a_next_call_patch_left_over_fails_the_fork(source: Path, tmp_path: Path) -> None:
    spare = toolreplay.supply_output(effect="notify.customer", value={"n": 4})
    patches = [
        *(toolreplay.supply_output(effect="notify.customer", value={"n": n}) for n in (1, 2, 3)),
        spare,
    ]
    with (
        pytest.raises(UnappliedPatchError) as caught,
        toolreplay.fork(source, tmp_path / "branch.trp", patches=patches, unobserved="allow"),
    ):
        several_notices()
    assert caught.value.patch_ids == (spare.patch_id,)
    assert (
        f"patch {spare.patch_id} (supply_output): the next call of notify.customer that the "
        "source does not hold" in str(caught.value)
    )


def test_without_patches_left_the_next_new_call_misses_and_says_how_to_answer_it(
    source: Path, tmp_path: Path
) -> None:
    one = toolreplay.supply_output(effect="notify.customer", value={"n": 1})
    with (
        pytest.raises(ReplayMiss) as caught,
        toolreplay.fork(source, tmp_path / "branch.trp", patches=[one], unobserved="allow"),
    ):
        several_notices()
    assert caught.value.inputs == {"customer_id": 42, "message": "second"}
    assert any(
        "toolreplay.supply_output(effect='notify.customer', value=...) answers the next call"
        in note
        for note in caught.value.__notes__
    )


def test_asyncio_tasks_take_next_call_patches_in_the_order_they_start(
    source: Path, tmp_path: Path
) -> None:
    async def gathered() -> list[toolreplay.JsonValue]:
        whatif.get_customer(whatif.CUSTOMER_ID)

        async def notice(message: str) -> toolreplay.JsonValue:
            await asyncio.sleep(0)
            return whatif.notify_customer(whatif.CUSTOMER_ID, message)

        return list(await asyncio.gather(notice("a"), notice("b"), notice("c")))

    patches = [
        toolreplay.supply_output(effect="notify.customer", value={"n": n}) for n in (1, 2, 3)
    ]
    for attempt in range(3):  # the same order on every run
        branch = tmp_path / f"branch-{attempt}.trp"
        with toolreplay.fork(source, branch, patches=patches, unobserved="allow"):
            assert asyncio.run(gathered()) == [{"n": 1}, {"n": 2}, {"n": 3}]
        operations = toolreplay.read_trace(branch).operations[1:]
        assert [op.inputs["message"] for op in operations] == ["a", "b", "c"]
        assert len({op.lane for op in operations}) == 3


def test_two_threads_racing_for_the_next_call_patch_are_refused(
    source: Path, tmp_path: Path
) -> None:
    patches = [toolreplay.supply_output(effect="notify.customer", value={"n": n}) for n in (1, 2)]
    first_done, release = threading.Event(), threading.Event()
    outcomes: dict[str, object] = {}

    def worker(name: str, wait: bool) -> None:
        try:
            outcomes[name] = whatif.notify_customer(whatif.CUSTOMER_ID, name)
        except Exception as error:  # what the second thread gets is the assertion
            outcomes[name] = error
        first_done.set()
        if wait:
            release.wait(10)  # still alive while the other thread asks

    branch = tmp_path / "branch.trp"
    with pytest.raises(toolreplay.ReplayContractError, match="PatchApplicationError"):
        with toolreplay.fork(source, branch, patches=patches, unobserved="allow"):
            whatif.get_customer(whatif.CUSTOMER_ID)
            one = threading.Thread(
                target=toolreplay.propagate(worker), args=("one", True), name="one"
            )
            one.start()
            assert first_done.wait(10)
            two = threading.Thread(
                target=toolreplay.propagate(worker), args=("two", False), name="two"
            )
            two.start()
            two.join(10)
            release.set()
            one.join(10)
    assert outcomes["one"] == {"n": 1}
    refused = outcomes["two"]
    assert isinstance(refused, PatchApplicationError)
    assert "calls of notify.customer come from two threads ('one' took" in str(refused)
    assert refused.patch_id == patches[1].patch_id


def test_at_names_a_source_operation_by_its_number(source: Path, tmp_path: Path) -> None:
    by_number = manual_review(at=1)
    by_call = manual_review()
    assert by_number.patch_id != by_call.patch_id
    assert by_number.to_dict(with_id=False) == {
        "kind": "replace_output",
        "at": 1,
        "value": {"decision": "manual_review"},
    }
    checked = manual_review(at=1, effect="llm.refund.decide")
    queued = toolreplay.supply_output(effect="review.queue.add", value={"ticket": "RV-9"})
    told = toolreplay.supply_output(effect="notify.customer", value={"sent": True})
    for patch in (by_number, checked):
        branch = tmp_path / f"{patch.patch_id}.trp"
        with toolreplay.fork(source, branch, patches=[patch, queued, told], unobserved="allow"):
            assert whatif.handle_order()["decision"] == "manual_review"
        decided = toolreplay.read_trace(branch).operations[1]
        assert (decided.origin, decided.patch_id, decided.source_logical_operation_id) == (
            "patched",
            patch.patch_id,
            1,
        )

    timeout = toolreplay.replace_error(at=0, error=TimeoutError("crm timed out"))
    apology = toolreplay.supply_output(effect="notify.customer", value={"sent": True})
    with toolreplay.fork(
        source, tmp_path / "timeout.trp", patches=[timeout, apology], unobserved="allow"
    ):
        assert whatif.handle_order() == {"order_id": "o-7", "decision": "deferred"}


def test_bad_at_targets_are_refused_before_any_application_code_runs(
    source: Path, tmp_path: Path
) -> None:
    def refused(*patches: toolreplay.Patch) -> str:
        branch = tmp_path / "refused.trp"
        session = toolreplay.fork(source, branch, patches=patches)
        trace = toolreplay.read_trace(source)
        with pytest.raises(PatchTargetError) as before_run:
            session.check_before_run(trace)
        with pytest.raises(PatchTargetError) as caught, session:
            whatif.handle_order()
        assert str(before_run.value) == str(caught.value)
        assert not branch.exists()
        assert sum(whatif.BODY_CALLS.values()) == 0
        return str(caught.value)

    message = refused(manual_review(at=9))
    assert "names source operation 9, but the source trace" in message
    assert "has no operation 9: its operations are numbered 0 to 3" in message
    message = refused(manual_review(at=2, effect="llm.refund.decide"))
    assert "names source operation 2 as a call of llm.refund.decide, but operation 2" in message
    assert "is billing.refund.create (operation 2, line 4)" in message
    message = refused(manual_review(at=1), manual_review())
    assert "both target llm.refund.decide occurrence 0" in message

    with pytest.raises(PatchError, match="give either at=N or inputs= and occurrence=, not both"):
        toolreplay.replace_output(at=1, inputs={}, value=None)
    with pytest.raises(PatchError, match="at must be a non-negative int"):
        toolreplay.replace_output(at=-1, value=None)
    with pytest.raises(PatchError, match="at must be a non-negative int"):
        toolreplay.replace_output(at=True, value=None)  # pyright: ignore[reportArgumentType]  # refused at run time
    with pytest.raises(PatchError, match=r"name the recorded call it changes, with inputs="):
        toolreplay.replace_output(effect="llm.refund.decide", value=None)
    with pytest.raises(PatchError, match=r"occurrence=1 counts calls with the same inputs"):
        toolreplay.supply_output(effect="notify.customer", occurrence=1, value=None)


def test_every_target_form_round_trips_through_a_version_3_file(tmp_path: Path) -> None:
    reply = OutputRecipe("reply", "openai", {"text": "Order 8812 is lost."})
    patches: list[toolreplay.Patch] = [
        manual_review(at=1),
        manual_review(at=1, effect="llm.refund.decide"),
        toolreplay.replace_error(at=0, error=TimeoutError("late")),
        toolreplay.supply_output(effect="notify.customer", value={"sent": True}),
        toolreplay.supply_error(effect="notify.customer", error=TimeoutError("down")),
        toolreplay.supply_output(effect="openai.responses.create", value=reply),
    ]
    path = toolreplay.write_patches(tmp_path / "patches.json", patches)
    assert toolreplay.read_patches(path) == patches
    document = json.loads(path.read_text())
    assert document["format_version"] == 3
    entries = [{k: v for k, v in e.items() if k != "patch_id"} for e in document["patches"]]
    assert entries[0] == {"kind": "replace_output", "at": 1, "value": {"decision": "manual_review"}}
    assert entries[5] == {
        "kind": "supply_output",
        "effect": "openai.responses.create",
        "reply": {"text": "Order 8812 is lost."},
    }
    recipe_patch = patches[5]
    assert isinstance(recipe_patch, toolreplay.OutputPatch)
    assert (recipe_patch.recipe, recipe_patch.value) == ("reply", reply.spec)
    # Content-addressed by the recipe, not by any output it resolves to.
    assert (
        recipe_patch.patch_id
        == toolreplay.supply_output(
            effect="openai.responses.create",
            value=OutputRecipe("reply", "openai", {"text": "Order 8812 is lost."}),
        ).patch_id
    )
    assert (
        recipe_patch.patch_id
        != toolreplay.supply_output(
            effect="openai.responses.create", value={"text": "Order 8812 is lost."}
        ).patch_id
    )

    # Patches every earlier release can hold are still written as version 2.
    exact = [manual_review()]
    older = toolreplay.write_patches(tmp_path / "exact.json", exact)
    assert json.loads(older.read_text())["format_version"] == 2
    assert toolreplay.read_patches(older) == exact

    def bad(*entries: dict[str, object], version: int = 3) -> str:
        target = tmp_path / "bad.json"
        document = {
            "format": "toolreplay.patches",
            "format_version": version,
            "patches": list(entries),
        }
        target.write_text(json.dumps(document))
        with pytest.raises(PatchFileError) as caught:
            toolreplay.read_patches(target)
        return str(caught.value)

    assert (
        "$.patches[0].reply: expected one of value, reply and edit, found value and reply"
        in bad(
            {"kind": "supply_output", "effect": "openai.responses.create", "value": 1, "reply": {}}
        )
    )
    assert "$.patches[0].at: expected no at in format version 2 (it is new in version 3)" in bad(
        {"kind": "replace_output", "at": 1, "value": 1}, version=2
    )
    assert "$.patches[0].inputs: expected either at or inputs and occurrence, not both" in bad(
        {
            "kind": "replace_output",
            "at": 1,
            "effect": "a.b",
            "inputs": {},
            "occurrence": 0,
            "value": 1,
        }
    )
    assert "$.patches[0].occurrence: expected effect, inputs and occurrence together" in bad(
        {"kind": "supply_output", "effect": "a.b", "inputs": {}, "value": 1}
    )
    assert "supply patch answers a call the source does not hold" in bad(
        {"kind": "supply_output", "at": 3, "value": 1}
    )
    assert "edit(...) changes a recorded output" in bad(
        {"kind": "supply_output", "effect": "openai.responses.create", "edit": {"$.x": 1}}
    )


class _EchoResolver:
    """A recipe resolver of this test's own namespace: answers with what it was given."""

    def __init__(self) -> None:
        self.calls: list[RecipeCall] = []

    def check(self, recipe: OutputRecipe, effect: str) -> None:
        if not isinstance(recipe.spec, dict):
            raise PatchError(f"an echo spec is an object, got {recipe.spec!r}")

    def resolve(self, call: RecipeCall) -> toolreplay.JsonValue:
        self.calls.append(call)
        spec = call.recipe.spec
        assert isinstance(spec, dict)
        if spec.get("refuse"):
            raise PatchError("this echo refuses")
        if spec.get("unportable"):
            return cast(toolreplay.JsonValue, {"words": {"a", "b"}})  # a set: not JSON
        replaced = call.replaced.value if isinstance(call.replaced, toolreplay.Returned) else None
        return {"spec": spec, "inputs": call.inputs, "replaced": replaced, "near": call.near}


ECHO = _EchoResolver()
register_recipe_resolver("echo", ECHO)


@toolreplay.effect("echo.say")
def say(word: str) -> toolreplay.JsonValue:
    return {"said": word}


def echo_app() -> list[toolreplay.JsonValue]:
    return [say("recorded"), say("new")]


def test_an_adapter_resolves_recipes_through_the_registry(tmp_path: Path) -> None:
    source = tmp_path / "echo.trp"
    with toolreplay.record(source):
        say("recorded")
    replaced = toolreplay.replace_output(at=0, value=OutputRecipe("edit", "echo", {"x": 1}))
    supplied = toolreplay.supply_output(
        effect="echo.say", value=OutputRecipe("reply", "echo", {"y": 2})
    )
    branch = tmp_path / "branch.trp"
    ECHO.calls.clear()
    with toolreplay.fork(source, branch, patches=[replaced, supplied]):
        answers = echo_app()
    assert answers == [
        {
            "spec": {"x": 1},
            "inputs": {"word": "recorded"},
            "replaced": {"said": "recorded"},
            "near": 0,
        },
        {"spec": {"y": 2}, "inputs": {"word": "new"}, "replaced": None, "near": 0},
    ]
    # The branch keeps the resolved outputs: a promoted case replays them as they are.
    kept = [op.outcome for op in toolreplay.read_trace(branch).operations]
    assert [
        outcome.value for outcome in kept if isinstance(outcome, toolreplay.Returned)
    ] == answers
    assert [call.patch_id for call in ECHO.calls] == [replaced.patch_id, supplied.patch_id]

    refusing = toolreplay.supply_output(
        effect="echo.say", value=OutputRecipe("reply", "echo", {"refuse": True})
    )
    with (
        pytest.raises(PatchApplicationError) as caught,
        toolreplay.fork(source, tmp_path / "refused.trp", patches=[refusing]),
    ):
        echo_app()
    assert f"patch {refusing.patch_id} (supply_output) could not answer echo.say occurrence 0" in (
        str(caught.value)
    )
    assert "this echo refuses" in str(caught.value)
    # Caught by the application, it still fails the fork.
    with pytest.raises(toolreplay.ReplayContractError, match="PatchApplicationError was raised"):
        with toolreplay.fork(source, tmp_path / "swallowed.trp", patches=[refusing]):
            say("recorded")
            with pytest.raises(PatchApplicationError):
                say("new")
    unportable = toolreplay.supply_output(
        effect="echo.say", value=OutputRecipe("reply", "echo", {"unportable": True})
    )
    with (
        pytest.raises(PatchApplicationError, match=r"resolved to: .*is not portable JSON"),
        toolreplay.fork(source, tmp_path / "unportable.trp", patches=[unportable]),
    ):
        echo_app()
    malformed = toolreplay.supply_output(
        effect="echo.say", value=OutputRecipe("reply", "echo", [1])
    )
    with pytest.raises(PatchTargetError, match=r"an echo spec is an object, got \[1\]"):
        with toolreplay.fork(source, tmp_path / "malformed.trp", patches=[malformed]):
            pass
    nobody = toolreplay.supply_output(
        effect="crm.customer.get", value=OutputRecipe("reply", "crm", {})
    )
    with pytest.raises(
        PatchApplicationError, match=r"no adapter that builds reply outputs for crm\.\* effects"
    ):
        with toolreplay.fork(
            tmp_path / "echo.trp", tmp_path / "nobody.trp", patches=[nobody], unobserved="allow"
        ):
            whatif.get_customer(whatif.CUSTOMER_ID)


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


def test_the_command_line_forks_with_at_and_next_call_patches(source: Path, tmp_path: Path) -> None:
    (tmp_path / "marked.py").write_text(
        "from pathlib import Path\n"
        "from tests.support import whatif\n"
        "Path('imported').touch()\n"
        "def main():\n"
        "    return whatif.handle_order()\n"
    )
    patches = [
        manual_review(at=1),
        toolreplay.supply_output(effect="review.queue.add", value={"ticket": "RV-9"}),
        toolreplay.supply_output(effect="notify.customer", value={"sent": True}),
    ]
    patch_file = toolreplay.write_patches(tmp_path / "whatif.json", patches)
    done = run_cli(
        "fork", str(source), "-p", str(patch_file), "-o", "done.trp", "--allow-unobserved",
        "-r", "marked:main", "-f", "json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    document = json.loads(done.stdout)
    assert document["return_value"]["ticket"] == "RV-9"
    assert document["counts"]["operations_patched"] == 3
    (tmp_path / "imported").unlink()

    out_of_range = toolreplay.write_patches(tmp_path / "bad.json", [manual_review(at=7)])
    refused = run_cli(
        "fork", str(source), "-p", str(out_of_range), "-o", "refused.trp",
        "-r", "marked:main", "-f", "json", cwd=tmp_path,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stdout + refused.stderr
    error = json.loads(refused.stdout)["error"]
    assert error["type"] == "toolreplay.errors.PatchTargetError"
    assert "has no operation 7: its operations are numbered 0 to 3" in error["message"]
    assert not (tmp_path / "imported").exists()  # refused before the runner's import
    assert not (tmp_path / "refused.trp").exists()
