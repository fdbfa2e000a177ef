"""Running a benchmark the way its README says, at tiny sizes, for the smoke tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def run_benchmark(module: str, *arguments: str, timeout: float = 300) -> str:
    """`python -m benchmarks.MODULE ARGUMENTS` from the repository root: what it printed.

    Fails the test with the benchmark's stderr when it exits non-zero. The timeout
    guards against a hang on a shared, busy machine; it is not a speed target.
    """
    result = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout
