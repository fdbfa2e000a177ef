"""The case benchmark keeps running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_cases_benchmark_runs_and_prints_its_tables() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.cases",
            "--sizes",
            "20",
            "--suite",
            "6",
            "--collect",
            "12",
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
    assert "verify µs/op" in result.stdout
    assert "speed-up serial / -n 2" in result.stdout
    assert "summary line, serial: 6 passed in " in result.stdout
    assert "summary line, -n 2: 6 passed in " in result.stdout
    assert '[PASS] every serial run reports "6 passed"' in result.stdout
    assert '[PASS] every -n 2 run reports "6 passed"' in result.stdout
    assert "the plugin collecting 12 cases (--collect-only, best of 1)" in result.stdout
    assert '[PASS] every --collect-only run reports "12 tests collected in ..."' in result.stdout
    assert "(generated modules, -n 2)" in result.stdout
    assert "targets" in result.stdout
