"""The OpenAI adapter benchmark keeps running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_openai_benchmark_runs_and_prints_its_tables() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.openai_replay",
            "--sizes",
            "10",
            "20",
            "--vcr-sizes",
            "10",
            "--repeats",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for column in (
        "replay/floor",
        "record/floor",
        "build+send",
        "vcrpy defaults",
        "vcrpy +body",
        "defaults/adapter",
        "defaults/floor",
        "+body/adapter",
        "+body/floor",
        "record cpu",
        "scan output",
        "rest",
    ):
        assert column in result.stdout
    for workload in ("responses+tools", "chat", "stream50"):
        assert workload in result.stdout
    assert "targets" in result.stdout
    assert "[SKIP] replay vs vcrpy replay at N=1,000" in result.stdout
