"""The diff benchmark keeps running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

from tests.support.benchmarks import run_benchmark


def test_diff_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("diff", "--sizes", "50", "200", "--repeats", "1")
    assert "diff+to_dict s" in out
    assert "load s" in out
    assert "targets" in out
