"""The capture-upload benchmark keeps running (a few requests here; the figures come
from full runs)."""

from __future__ import annotations

from tests.support.benchmarks import run_benchmark


def test_capture_upload_benchmark_runs_and_prints_its_table() -> None:
    out = run_benchmark("capture_upload", "--requests", "20")
    assert "capture to s3 (uploader on)" in out
    assert "median s3 / local (alternating)" in out
    assert "uploaded 70 of 70 traces" in out
    assert "CPU of a captured request" in out
    assert "targets" in out
