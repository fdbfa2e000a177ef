"""The benchmarks keep running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.benchmarks import run_benchmark


def test_runtime_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("runtime", "--sizes", "50", "200", "--repeats", "1")
    assert "replay overhead µs" in out
    assert "timed alternately over 200 calls each" in out  # the flatness pass: 50 x 4 calls
    assert "loaded again after the replays" in out  # with the network guard's audit hook
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


def test_every_instruction_count_workload_runs_to_its_end(tmp_path: Path) -> None:
    # Each workload as the counted child runs it, without Valgrind: a replay that did not
    # consume its trace, or a recording that failed, exits non-zero and fails here.
    from benchmarks import instructions

    instructions.main(["--child", "prepare", "--units", "7", "--directory", str(tmp_path)])
    for workload in (*instructions.WORKLOADS, "replay-set-up", "read-set-up"):
        assert (
            instructions.main(["--child", workload, "--units", "7", "--directory", str(tmp_path)])
            == 0
        )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["echo-7.trp"]


def test_instruction_count_benchmark_counts_under_valgrind_or_says_why_not() -> None:
    out = run_benchmark("instructions", "--units", "3", "--only", "undecorated")
    if shutil.which("valgrind") is None:
        assert "[SKIP] no valgrind on the PATH" in out
        return
    row = next(line for line in out.splitlines() if line.strip().startswith("undecorated |"))
    # A call of a function returning a new dict: hundreds of instructions, not millions.
    assert 100 < int(row.split("|")[1].replace(",", "")) < 100_000, out
