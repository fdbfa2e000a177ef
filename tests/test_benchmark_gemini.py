"""The Google Gen AI adapter benchmark keeps running (tiny sizes here; the figures come from
full runs)."""

from __future__ import annotations

from tests.support.benchmarks import run_benchmark


def test_gemini_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("gemini_replay", "--sizes", "2", "3")
    for column in ("floor cpu", "replay cpu", "replay/floor", "record cpu", "record/floor"):
        assert column in out
    for workload in ("generate+function", "stream50"):
        assert f"{workload}, N=3: replay vs the floor" in out
        assert f"{workload}: replay flat in N" in out
