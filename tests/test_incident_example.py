"""The bundled incident (`examples/incident/`): reproducible, replayable, forkable, offline."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from tests.support.offline import offline_env

openai = pytest.importorskip("openai")

from examples.incident import app  # noqa: E402  # needs openai

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "examples" / "incident" / "refund.trp"
BUNDLED_ARG = "examples/incident/refund.trp"  # as the README writes it, from the root
MODEL_TEXT = "$.output.body.output[1].content[0].text"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_json(*args: str) -> dict[str, Any]:
    result = run("-m", "toolreplay", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def model_call(trace: toolreplay.Trace) -> toolreplay.Operation:
    (operation,) = (op for op in trace.operations if op.effect == "openai.responses.create")
    return operation


def recorded_response(trace: toolreplay.Trace) -> Any:
    """The model call's recorded output: status, headers and the Responses API body."""
    outcome = model_call(trace).outcome
    assert isinstance(outcome, toolreplay.Returned)
    return copy.deepcopy(outcome.value)


def test_the_bundled_trace_is_complete_and_names_its_runner() -> None:
    trace = toolreplay.read_trace(BUNDLED)
    assert trace.complete
    assert trace.header.mode == "record"
    assert trace.header.runner == "examples.incident.app:run_incident"
    assert [op.effect for op in trace.operations] == [
        "crm.customer.get",
        "policy.refund.get",
        "openai.responses.create",
        "billing.refund.create",
        "notify.customer",
    ]
    recorded = recorded_response(trace)
    assert recorded["status"] == 200
    assert recorded["headers"]["x-request-id"]
    body = recorded["body"]
    assert isinstance(body["created_at"], int)
    assert [item["type"] for item in body["output"]] == ["reasoning", "message"]
    assert body["output"][1]["content"][0]["text"] == "approve"
    assert body["usage"]["total_tokens"] > 0


def test_the_bundled_trace_is_reproducible(tmp_path: Path) -> None:
    output = tmp_path / "refund.trp"
    result = run("-m", "examples.incident.record", "--output", str(output))
    assert result.returncode == 0, result.stderr
    assert "decision: approved" in result.stdout
    again = toolreplay.read_trace(output)
    bundled = toolreplay.read_trace(BUNDLED)
    assert again.complete
    assert again.header.trace_id != bundled.header.trace_id
    assert again.header.metadata == bundled.header.metadata
    # Effects, identities, inputs, outcomes and lineage (Operation equality ignores `line`).
    assert again.operations == bundled.operations
    # Recording never overwrites by accident.
    refused = run("-m", "examples.incident.record", "--output", str(output))
    assert refused.returncode == 2
    assert "already exists" in refused.stderr
    overwritten = run("-m", "examples.incident.record", "--output", str(output), "--overwrite")
    assert overwritten.returncode == 0, overwritten.stderr


def test_the_runner_cannot_reach_a_provider() -> None:
    # The runner's client refuses every request: the incident can only be replayed offline.
    client = app.openai_client()
    with pytest.raises(openai.APIConnectionError) as raised:
        client.original_client.responses.create(model=app.MODEL, input="ping")
    assert "only replays offline" in str(raised.value.__cause__)


def test_the_cli_replays_the_bundled_incident_with_the_header_runner() -> None:
    document = run_json("replay", BUNDLED_ARG)
    assert document["outcome"] == "ok"
    assert document["runner"] == "examples.incident.app:run_incident"
    assert document["return_value"] == {
        "order_id": "ord_1042",
        "amount": 1200.0,
        "decision": "approved",
        "refund_id": "rf_ord_1042",
    }
    # The runner's transport refuses every request, so success means no provider was asked.
    assert document["counts"] == {"operations_in_trace": 5, "operations_consumed": 5}


REVIEW_INPUTS = {
    "order_id": "ord_1042",
    "amount": 1200.0,
    "reason": "above the manual review limit",
}
REVIEW_NOTICE = {
    "customer_id": 5817,
    "message": "Your refund request for order ord_1042 is being reviewed by our team.",
}


def test_a_fork_with_manual_review_goes_to_review_with_supplied_answers(tmp_path: Path) -> None:
    source = toolreplay.read_trace(BUNDLED)
    recorded = model_call(source)
    corrected = recorded_response(source)
    corrected["body"]["output"][1]["content"][0]["text"] = "manual_review"
    patch = toolreplay.replace_output(
        effect="openai.responses.create",
        inputs=recorded.inputs,
        occurrence=recorded.identity.occurrence,
        value=corrected,
    )
    only_the_answer = toolreplay.write_patches(tmp_path / "answer.json", [patch])
    before = BUNDLED.read_bytes()

    # The corrected run calls the review queue, which the recording never did: it stops.
    stopped = run(
        "-m", "toolreplay", "fork", BUNDLED_ARG, "-p", str(only_the_answer),
        "-o", str(tmp_path / "stopped.trp"), "--allow-unobserved", "--format", "json",
    )  # fmt: skip
    assert stopped.returncode == 1
    error = json.loads(stopped.stdout)["error"]
    assert error["identity"]["effect"] == "review.queue.add"
    assert error["inputs"] == REVIEW_INPUTS

    supplied = [
        patch,
        toolreplay.supply_output(
            effect="review.queue.add", inputs=REVIEW_INPUTS, value={"ticket": "rv_ord_1042"}
        ),
        toolreplay.supply_output(
            effect="notify.customer", inputs=REVIEW_NOTICE, value={"sent": True}
        ),
    ]
    patches = toolreplay.write_patches(tmp_path / "fix.json", supplied)
    branch = tmp_path / "corrected.trp"
    forked = run_json(
        "fork", BUNDLED_ARG, "--patches", str(patches), "--output", str(branch),
        "--allow-unobserved",
    )  # fmt: skip
    assert forked["outcome"] == "ok"
    assert forked["return_value"]["decision"] == "manual_review"
    assert forked["return_value"]["review_ticket"] == "rv_ord_1042"
    assert forked["counts"]["operations_patched"] == 3
    assert forked["counts"]["operations_unobserved"] == 2
    assert BUNDLED.read_bytes() == before  # the source trace is never modified

    report = run_json("diff", BUNDLED_ARG, str(branch))
    assert [(d["type"], d["effect"]) for d in report["differences"]] == [
        ("output_changed", "openai.responses.create"),
        ("operation_missing", "billing.refund.create"),
        ("operation_added", "review.queue.add"),
        # The notice the customer gets now: the same call asked differently, answered by
        # its supply patch (which the outcome's difference is credited to).
        ("input_changed", "notify.customer"),
        ("output_changed", "notify.customer"),
    ]
    asked, answered = report["differences"][-2:]
    assert [field["path"] for field in asked["fields"]] == ["$.inputs.message"]
    assert asked["target"]["origin"] == "supplied"
    assert (asked["patch_id"], answered["patch_id"]) == (None, supplied[2].patch_id)
    first = report["first_divergence"]
    assert first["type"] == "output_changed"
    assert first["effect"] == "openai.responses.create"
    assert first["patch_id"] == patch.patch_id
    assert first["fields"][0]["path"] == MODEL_TEXT
    assert first["fields"][0]["source"] == "approve"
    assert first["fields"][0]["target"] == "manual_review"

    text = run("-m", "toolreplay", "diff", BUNDLED_ARG, str(branch))
    assert f'{MODEL_TEXT}: source "approve", target "manual_review"' in text.stdout


def test_a_case_promoted_into_the_checkout_runs_by_name_not_with_the_suite(
    tmp_path: Path,
) -> None:
    # A copy of this checkout's test configuration, holding the case the README's walk
    # promotes into tests/cases/: the suite leaves it out; naming it runs it.
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "tests").mkdir()
    for name in ("__init__.py", "conftest.py"):
        shutil.copy(ROOT / "tests" / name, tmp_path / "tests" / name)
    shutil.copytree(ROOT / "tests" / "support", tmp_path / "tests" / "support")
    replayed = run_json("replay", BUNDLED_ARG)
    name = "refund_over_limit_needs_review"
    toolreplay.promote(
        BUNDLED,
        tmp_path / "tests" / "cases" / name,
        name=name,
        runner=str(replayed["runner"]),
        expected=replayed["return_value"],
    )

    def pytest_in_copy(*args: str) -> subprocess.CompletedProcess[str]:
        env = offline_env() | {"PYTHONPATH": str(ROOT)}  # where examples.incident lives
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    suite = pytest_in_copy()
    assert suite.returncode == pytest.ExitCode.NO_TESTS_COLLECTED, suite.stdout
    named = pytest_in_copy(f"tests/cases/{name}")
    assert named.returncode == pytest.ExitCode.OK, named.stdout
    assert "1 passed" in named.stdout
