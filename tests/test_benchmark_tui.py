"""The TUI benchmark keeps running (small sizes here; the figures come from full runs)."""

from __future__ import annotations

from tests.support.benchmarks import run_benchmark


def test_tui_benchmark_runs_and_prints_its_tables() -> None:
    out = run_benchmark(
        "tui",
        *("--sizes", "1000", "3000"),
        *("--repeats", "1"),
        *("--presses", "1"),
        *("--forks", "1"),
        *("--large-mb", "2"),  # just over the size the debugger shows through pages
        *("--promotes", "1"),
        timeout=600,
    )
    for column in ("read_trace s", "read_trace RSS MB", "first rows s", "RSS / file", "G ms"):
        assert column in out
    for column in ("first matches s", "whole scan s", "key during scan ms"):
        assert column in out
    for column in ("cold, no bytecode s", "cold, bytecode s"):  # `toolreplay tui` in a pty
        assert column in out
    rows = [line for line in out.splitlines() if line.lstrip().startswith(("1,000 |", "3,000 |"))]
    assert len(rows) == 6  # one per size in each table
    assert "first rows under 0.2 s at N=3,000" in out
    assert "peak RSS below the trace's size at N=3,000" in out
    assert "first filter matches under 0.3 s at N=3,000" in out
    assert "fork round trip on the bundled incident, f to diff ready (1 forks each;" in out
    assert "warm runner (os.fork)" in out
    for column in ("first s", "later median s"):
        assert column in out
    for column in ("v s", "added / value", "check child RSS MB"):  # a large value
        assert column in out
    shapes = [line.split("|")[0].strip() for line in out.splitlines() if "| 2.0 |" in line]
    assert shapes == ["records", "text"]
    assert "records: first rows and v under 0.5 s with a 2 MB value" in out
    assert (
        "promote round trip on the bundled incident's corrected fork, P to the case shown "
        "(1 promotes each)"
    ) in out
    assert "cold child per promote" in out
    assert "warm promote round trip under 0.5 s" in out
