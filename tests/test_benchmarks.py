"""The benchmarks keep running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_runtime_benchmark_runs_and_prints_its_table(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.runtime", "--sizes", "50", "200", "--repeats", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "replay overhead µs" in result.stdout
    assert "targets" in result.stdout


def test_concurrency_benchmark_runs_and_prints_its_table() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.concurrency", "--calls", "64", "--repeats", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.strip().startswith("16 |") for line in lines)
    assert "record per call, 16 threads vs sequential" in result.stdout
    assert "replay overhead per call, 4 threads vs sequential" in result.stdout
