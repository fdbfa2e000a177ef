"""The diff benchmark keeps running (tiny sizes here; the figures come from full runs)."""

from __future__ import annotations

from pathlib import Path

from benchmarks import diff as diff_benchmark
from tests.support.benchmarks import run_benchmark


def test_diff_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("diff", "--sizes", "50", "200", "--repeats", "1")
    header = next(line for line in out.splitlines() if line.lstrip().startswith("N |"))
    assert [cell.strip() for cell in header.split("|")][3:9] == [
        "load s",
        "floor s",
        "diff s",
        "diff+to_dict s",
        "diff x floor",
        "diff+to_dict x floor",
    ]
    assert "targets" in out
    assert "[SKIP] load + diff of two 1M traces" in out


def test_the_end_to_end_figures_come_from_children_that_write_then_load_and_diff(
    tmp_path: Path,
) -> None:
    end_to_end = diff_benchmark.measure_end_to_end(300, tmp_path)
    written = diff_benchmark.trace_paths(300, tmp_path)
    assert end_to_end.trace_bytes == sum(path.stat().st_size for path in written)
    assert end_to_end.load > 0
    assert end_to_end.diff > 0
    assert 0 <= end_to_end.diff_gc <= end_to_end.diff
    assert end_to_end.json_loads > 0
    assert end_to_end.peak_rss > end_to_end.trace_bytes  # an interpreter holding both traces
    results = [diff_benchmark.measure_size(50, 1, tmp_path)]
    out = diff_benchmark.report(results, end_to_end, 1, 1.0)
    assert "load + diff of two 300-operation traces end to end" in out
    assert "] load + diff of two 1M traces < 10 s, peak memory < 3x files: " in out
    assert "floor: json.loads of every line of the two files alone takes " in out
