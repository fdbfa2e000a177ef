"""The benchmarks keep running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

from tests.support.benchmarks import run_benchmark


def test_runtime_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("runtime", "--sizes", "50", "200", "--repeats", "1")
    assert "replay overhead µs" in out
    assert "targets" in out


def test_concurrency_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("concurrency", "--calls", "64", "--repeats", "1")
    assert any(line.strip().startswith("16 |") for line in out.splitlines())
    assert "record per call, 16 threads vs sequential" in out
    assert "replay overhead per call, 4 threads vs sequential" in out


def test_network_guard_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("network_guard", "--rounds", "1", "--repeats", "1")
    assert "replayed effect call" in out
    assert "blocking / no hook" in out


def test_cli_startup_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("cli_startup", "--repeats", "1")
    assert "toolreplay show TRACE" in out
    assert "CPU after/before" in out
    assert "show TRACE, Typer converting (pydantic)" in out
