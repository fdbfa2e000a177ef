"""The README's quick start runs as written, and its sample output is what the CLI prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import toolreplay

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def fenced_blocks(section: str, language: str) -> list[str]:
    body = README.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", body, flags=re.DOTALL)


def test_the_quick_start_records_replays_and_explains_a_miss(tmp_path: Path) -> None:
    code = fenced_blocks("Quick start", "python")[0]
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("(calling the CRM for real)") == 1  # recording only, never replay
    assert "recorded: queued for retry" in out
    assert "replayed: queued for retry" in out
    expected_miss = fenced_blocks("Quick start", "text")[0]
    for line in expected_miss.splitlines():
        if line != "...":
            assert line in out.splitlines()

    shown = subprocess.run(
        [sys.executable, "-m", "toolreplay", "show", "refund.trp"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    documented = fenced_blocks("Quick start", "text")[1]

    def without_trace_id(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("trace id")]

    assert without_trace_id(shown) == without_trace_id(documented)


def test_ci_runs_the_readme_commands() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert "<!-- setup -->" in README
    assert "<!-- checks -->" in README
    assert "run_block setup" in script
    assert "run_block checks" in script
    checks = README.split("<!-- checks -->", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    assert "uv run pytest" in checks
    assert "uv run pyright" in checks


def test_the_redaction_example_records_placeholders_and_replays_them(tmp_path: Path) -> None:
    code = fenced_blocks("Redaction and secrets", "python")[0]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TOOLREPLAY_")}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    recorded, replayed = result.stdout.splitlines()
    assert recorded == "ada@example.com"
    assert re.fullmatch(r"<redacted:[0-9a-f]{12}:[0-9a-f]{32}>", replayed)
    written = (tmp_path / "customer.trp").read_bytes()
    for original in (b"ada@example.com", b"4111 1111 1111 1111", b"NID-123456789"):
        assert original not in written


def test_the_fork_section_answers_a_new_model_call_offline(tmp_path: Path) -> None:
    code = fenced_blocks("Change one fact, rerun, compare", "python")[1]
    environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
    environment["PYTHONPATH"] = str(ROOT)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "recorded: Refunded in full.",
        "forked: It was lost: refunded, and a claim filed.",
    ]
    origins = [op.origin for op in toolreplay.read_trace(tmp_path / "lost.trp").operations]
    assert origins == ["patched", "supplied"]
