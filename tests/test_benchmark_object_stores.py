"""The object-storage benchmarks keep running (small sizes here; the figures in
benchmarks/README.md come from full runs)."""

from __future__ import annotations

from tests.support.benchmarks import run_benchmark


def test_object_store_clients_benchmark_prints_obstore_figures() -> None:
    out = run_benchmark("object_store_clients", "--puts", "30")
    assert "30 uploads of 2 KB each" in out
    (row,) = [line for line in out.splitlines() if line.strip().startswith("obstore |")]
    cells = [cell.strip() for cell in row.split("|")]
    assert float(cells[1]) > 0  # put ms
    assert int(cells[5]) >= 1  # distributions


def test_find_objects_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("find_objects", "--traces", "20")
    assert "bucket/local" in out
    assert "same, --since 1 day" in out
