"""The diff benchmark keeps running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_diff_benchmark_runs_and_prints_its_table() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.diff", "--sizes", "50", "200", "--repeats", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "diff+to_dict s" in result.stdout
    assert "load s" in result.stdout
    assert "targets" in result.stdout
