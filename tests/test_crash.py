"""A recording process killed with SIGKILL keeps every completed operation."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import toolreplay

APP = textwrap.dedent(
    """
    import sys
    import toolreplay

    @toolreplay.effect("orders.fetch")
    def fetch(order_id: int) -> dict:
        if order_id == HANG_AT and MODE == "record":
            sys.stdin.readline()  # blocks until the parent kills us mid-call
        return {"order_id": order_id, "total": order_id * 10.5}

    MODE, TRACE, HANG_AT = sys.argv[1], sys.argv[2], int(sys.argv[3])
    session = toolreplay.record(TRACE) if MODE == "record" else toolreplay.replay(TRACE)
    with session:
        for order_id in range(HANG_AT):
            print("done", fetch(order_id)["order_id"], flush=True)
        if MODE == "record":
            fetch(HANG_AT)
    print("exited normally", flush=True)
    """
)


def test_sigkill_mid_run_leaves_every_completed_operation_readable(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(APP)
    trace_path = tmp_path / "incident.trp"
    child = subprocess.Popen(
        [sys.executable, str(script), "record", str(trace_path), "5"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    for expected in range(5):
        assert child.stdout.readline().split() == ["done", str(expected)]
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL

    trace = toolreplay.read_trace(trace_path)
    assert not trace.complete
    assert trace.torn_line is None
    assert [op.inputs for op in trace.operations] == [{"order_id": i} for i in range(5)]
    assert trace.operations[4].outcome == toolreplay.Returned({"order_id": 4, "total": 42.0})

    # The incident replays offline: a new process consumes all five operations.
    replayed = subprocess.run(
        [sys.executable, str(script), "replay", str(trace_path), "5"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.splitlines()[-1] == "exited normally"
