"""The TUI benchmark keeps running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_tui_benchmark_runs_and_prints_its_tables() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.tui",
            *("--sizes", "20", "60"),
            *("--repeats", "1"),
            *("--presses", "1"),
            *("--forks", "1"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "first rows s" in result.stdout
    assert "G ms" in result.stdout
    assert "targets" in result.stdout
    assert "[SKIP] first paint with rows under 1 s at N=100,000" in result.stdout
    assert "G cost flat in N, N=60 vs N=20" in result.stdout
    assert "fork round trip on the bundled incident, f to diff ready (1 forks each)" in (
        result.stdout
    )
    assert "warm runner (os.fork)" in result.stdout
