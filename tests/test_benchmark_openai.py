"""The OpenAI adapter benchmark keeps running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

from tests.support.benchmarks import run_benchmark


def test_openai_benchmark_runs_and_prints_its_tables() -> None:
    out = run_benchmark(
        "openai_replay",
        *("--sizes", "4", "8"),
        *("--vcr-sizes", "4"),
        *("--repeats", "1"),
        *("--breakdown-n", "4"),
    )
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
        "least cpu",
        "least/floor",
        "replay/floor cpu",
        "scan output",
        "rest",
    ):
        assert column in out
    assert "targets" in out
    for workload in ("responses+tools", "chat", "stream50"):
        assert workload in out
        assert f"{workload}: replay flat in N, replay/floor cpu" in out
        assert f"{workload}, CPU time alternating: record overhead" in out
    assert "[SKIP] replay vs vcrpy replay at N=1,000" in out
