"""The two OpenAI Responses examples run offline, and their live mode refuses without credentials.

`--live-record` is only ever run here without credentials (or without a model):
it must refuse before any client is built, so no test can reach a provider.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.offline import offline_env

pytest.importorskip("openai")

ROOT = Path(__file__).resolve().parent.parent
SYNC_EXAMPLE = ROOT / "examples" / "openai_responses_approval.py"
ASYNC_EXAMPLE = ROOT / "examples" / "openai_async_responses_approval.py"
EXAMPLES = [SYNC_EXAMPLE, ASYNC_EXAMPLE]
FIRST_DIVERGENCE = re.compile(
    r"^first observable divergence: output_changed at openai\.responses\.create\b.*\n"
    r"  \$\.output\.body\.output\[1\]\.content\[0\]\.text: "
    r'source "approve", target "manual_review"$',
    re.MULTILINE,
)
KEY_LOOKING = re.compile(r"sk-[A-Za-z0-9_-]{6,}")


def run(
    example: Path, tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(example), *args],
        cwd=tmp_path,
        env=offline_env() if env is None else env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.parametrize("args", [(), ("--offline-demo",)], ids=["default", "explicit"])
def test_sync_example_replays_and_forks_without_the_provider(
    args: tuple[str, ...], tmp_path: Path
) -> None:
    result = run(SYNC_EXAMPLE, tmp_path, *args)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "recorded decision: approved" in out
    assert "provider calls while recording: 1" in out
    assert "replayed decision: approved" in out
    assert "provider calls during replay: 0" in out
    assert "forked decision:   manual_review" in out
    assert "provider calls during the fork: 0" in out
    assert FIRST_DIVERGENCE.search(out), out
    assert "not a claim about the cause" in out
    assert list(tmp_path.iterdir()) == []


def test_async_example_promotes_a_case_that_passes_under_pytest(tmp_path: Path) -> None:
    result = run(ASYNC_EXAMPLE, tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "recorded decision: approved" in out
    assert "provider calls during replay: 0" in out
    assert "forked decision:   manual_review" in out
    assert "provider calls during the fork: 0" in out
    assert FIRST_DIVERGENCE.search(out), out
    assert "promoted: openai_async_approval/ holds ['case.json', 'test_case.py'" in out
    assert "verify_case_async: returned 'manual_review', 1 operation(s) replayed" in out
    assert "provider calls while promoting and verifying: 0" in out
    assert re.search(r"^pytest on the case: 1 passed\b", out, re.MULTILINE), out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_live_record_refuses_without_credentials(example: Path, tmp_path: Path) -> None:
    result = run(example, tmp_path, "--live-record")
    assert result.returncode == 2
    assert "OPENAI_API_KEY" in result.stderr
    assert "OPENAI_MODEL" in result.stderr
    assert not KEY_LOOKING.search(result.stdout + result.stderr)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_live_record_without_a_model_refuses_and_never_prints_the_key(
    example: Path, tmp_path: Path
) -> None:
    # A made-up key, with no model: the example must refuse before building a client.
    fake_key = "sk-test-not-a-real-key-0123456789abcdef"
    env = offline_env()
    env["OPENAI_API_KEY"] = fake_key
    result = run(example, tmp_path, "--live-record", env=env)
    assert result.returncode == 2
    assert "not set: OPENAI_MODEL" in result.stderr
    output = result.stdout + result.stderr
    assert fake_key not in output
    assert not KEY_LOOKING.search(output)
    assert list(tmp_path.iterdir()) == []
