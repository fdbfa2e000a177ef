"""Every example under examples/ runs offline, as a user would run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.offline import offline_env

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.py") if p.name != "__init__.py")


def test_there_are_examples() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_example_runs_offline(example: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(example)],
        cwd=tmp_path,
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
    assert list(tmp_path.iterdir()) == []  # examples clean up after themselves


def test_record_and_replay_example_reports_zero_live_calls_on_replay(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "record_and_replay.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "live calls while recording: 2" in result.stdout
    assert "live calls while replaying: 0" in result.stdout
    assert "1: billing.refund.create -> error" in result.stdout


def run_example(name: str, tmp_path: Path) -> str:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def test_fork_example_changes_the_decision_without_calling_the_crm(tmp_path: Path) -> None:
    out = run_example("fork_replace_output.py", tmp_path)
    assert "recorded decision: approved" in out
    assert "forked decision:   rejected: inactive customer" in out
    assert "CRM calls during the fork: 0" in out
    assert "origin=patched" in out


def test_diff_example_names_the_model_call_and_its_json_path(tmp_path: Path) -> None:
    out = run_example("diff_traces.py", tmp_path)
    assert "first observable divergence, row 2: output_changed at llm.refund.decide" in out
    assert '$.output.decision: source "approve", target "manual_review"' in out


def test_capture_example_finds_the_failed_request_and_replays_it_offline(tmp_path: Path) -> None:
    out = run_example("capture_web_handler.py", tmp_path)
    assert "req-0003: HTTP 500" in out
    assert "5 requests captured in captured/" in out
    assert "1 matching  request_id=req-0003 route=/refund\n" in out
    assert "no email address in any trace: they are redacted" in out
    assert "the customer's email, as recorded: <redacted:" in out
    assert "1 of 5 traces scanned matched" in out
    assert "replayed req-0003: HTTP 500 'billing did not answer within 30s'" in out
    assert "live calls while replaying: 0" in out


def test_capture_s3_example_uploads_to_a_local_s3_server_offline(tmp_path: Path) -> None:
    # A package (its lifecycle rule beside it), so not among EXAMPLES: run as a module.
    result = subprocess.run(
        [sys.executable, "-m", "examples.capture_s3.run"],
        cwd=tmp_path,
        env={**offline_env(), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "lifecycle rule captured-traces-30-days expires traces/ after 30 days" in result.stdout
    assert "customer 2 (free): HTTP 504" in result.stdout
    assert "3 traces in s3://incidents/traces/" in result.stdout
    assert "customer 2: billing.refund.create raised builtins.TimeoutError" in result.stdout
    assert list(tmp_path.iterdir()) == []  # the spool was a temporary folder
