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
            "--suite-operations",
            "5",
            "--collect",
            "12",
            "--repeats",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,  # a guard against a hang: the machine may be shared and busy
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "verify µs/op" in out
    assert "speed-up serial / -n 2 (wall): N=5 " in out
    assert "most -n 2 can gain on two idle cores (serial CPU / half the -n 2 CPU): N=5 " in out
    for suite in ("N=5", "triage"):
        assert f"{suite} suite: where each process of the best serial and -n 2 runs" in out
        for mode in ("serial", "-n 2"):
            assert f'[PASS] every {suite} {mode} run reports "6 passed"' in out
    # What -n 2 adds is split part by part, the controller's loop by thread, and the case
    # length that 1.7x needs is derived from them.
    assert "first call s" in out
    for part in ("-n 2 adds ", "per-test protocol ", "first case "):
        assert part in out
    assert "the controller's run loop: " in out
    assert " in execnet's receiving threads" in out
    assert "for 1.7x on two idle cores a serial run must take 5.67x the CPU -n 2 adds" in out
    # Every process of a run leaves its phases: the serial one, the controller, two workers.
    for role in (" serial | ", " controller | ", " gw0 | ", " gw1 | "):
        assert role in out
    assert "the plugin collecting 12 cases (--collect-only, best of 1)" in out
    assert '[PASS] every --collect-only run reports "12 tests collected in ..."' in out
    assert "(generated modules, -n 2)" in out
    assert "(repository plugins, -n 2)" in out
    assert "triage cases:" in out
    assert "targets" in out
