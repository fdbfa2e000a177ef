"""A full disk while recording, simulated with a file size limit in a real child process.

`RLIMIT_FSIZE` makes the kernel refuse to grow any file past the limit: a
`write` that crosses it writes what fits and the next one fails with `EFBIG`
(with `SIGXFSZ` ignored, as a full disk fails with `ENOSPC`). Raising the
limit again is the disk getting space back.
"""

from __future__ import annotations

import errno
import json
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import toolreplay

CHILD = textwrap.dedent(
    """
    import json
    import resource
    import signal
    import sys
    from pathlib import Path

    import toolreplay

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail with EFBIG rather than die
    HARD = resource.getrlimit(resource.RLIMIT_FSIZE)[1]


    def disk_full_after(path):
        # The next line does not fit: 40 bytes of it are written, then EFBIG.
        resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 40, HARD))


    def disk_has_space():
        resource.setrlimit(resource.RLIMIT_FSIZE, (HARD, HARD))


    @toolreplay.effect("orders.fetch")
    def fetch(order_id: int) -> dict:
        return {"order_id": order_id, "note": "x" * 300}


    class CheckoutFailed(Exception):
        pass


    def describe(error):
        cause = error.__cause__
        return {
            "type": type(error).__name__,
            "tool_replay": isinstance(error, toolreplay.ToolReplayError),
            "message": str(error),
            "notes": list(getattr(error, "__notes__", [])),
            "path": str(getattr(error, "path", "")),
            "cause_errno": getattr(cause, "errno", None),
        }


    SCENARIO, TRACE = sys.argv[1], Path(sys.argv[2])
    result = {}
    if SCENARIO == "full_disk":
        application_error = CheckoutFailed("checkout failed")
        try:
            with toolreplay.record(TRACE):
                for order_id in range(3):
                    fetch(order_id)
                result["size_before"] = TRACE.stat().st_size
                disk_full_after(TRACE)
                try:
                    fetch(3)
                except Exception as error:
                    result["effect_error"] = describe(error)
                raise application_error
        except BaseException as error:
            result["raised_is_the_application_error"] = error is application_error
            result["raised"] = describe(error)
    elif SCENARIO == "header":
        resource.setrlimit(resource.RLIMIT_FSIZE, (10, HARD))
        try:
            with toolreplay.record(TRACE):
                fetch(0)
        except BaseException as error:
            result["raised"] = describe(error)
        result["exists_after"] = TRACE.exists()
        disk_has_space()
        with toolreplay.record(TRACE):  # the retry finds the path free
            fetch(0)
    elif SCENARIO == "transient":
        try:
            with toolreplay.record(TRACE):
                for order_id in range(3):
                    fetch(order_id)
                disk_full_after(TRACE)
                try:
                    fetch(3)
                except toolreplay.TraceWriteError as error:
                    result["effect_error"] = describe(error)
                disk_has_space()
                fetch(4)
                fetch(5)
        except BaseException as error:
            result["raised"] = describe(error)
    elif SCENARIO == "fork":
        source = Path(sys.argv[3])
        with toolreplay.record(source):
            fetch(0)
            fetch(1)
        result["source_before"] = source.read_bytes().hex()
        application_error = CheckoutFailed("checkout failed")
        try:
            with toolreplay.fork(source, TRACE):
                fetch(0)
                disk_full_after(TRACE)
                try:
                    fetch(1)
                except Exception as error:
                    result["effect_error"] = describe(error)
                raise application_error
        except BaseException as error:
            result["raised_is_the_application_error"] = error is application_error
            result["raised"] = describe(error)
    disk_has_space()
    print(json.dumps(result))
    """
)


def run_child(tmp_path: Path, scenario: str, trace: Path, *extra: str) -> dict[str, Any]:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    completed = subprocess.run(
        [sys.executable, str(script), scenario, str(trace), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_a_full_disk_is_a_tool_replay_error_and_the_application_error_survives(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "incident.trp"
    result = run_child(tmp_path, "full_disk", trace)

    effect_error = result["effect_error"]
    assert effect_error["type"] == "TraceWriteError"
    assert effect_error["tool_replay"]
    assert effect_error["path"] == str(trace)
    assert effect_error["message"].startswith(f"{trace}: cannot write operation 3:")
    assert effect_error["cause_errno"] == errno.EFBIG

    # The footer does not fit either; the application's own exception is still the one
    # raised, with its message, and a note says what happened to the trace.
    assert result["raised_is_the_application_error"]
    raised = result["raised"]
    assert (raised["type"], raised["message"]) == ("CheckoutFailed", "checkout failed")
    assert len(raised["notes"]) == 1
    assert raised["notes"][0].startswith(f"Tool Replay could not finish the trace: {trace}:")

    # What was acknowledged is there, readable; the failed lines left nothing behind.
    assert trace.stat().st_size == result["size_before"]
    read = toolreplay.read_trace(trace)
    assert not read.complete
    assert read.torn_line is None
    assert [op.inputs for op in read.operations] == [{"order_id": i} for i in range(3)]


def test_a_full_disk_at_the_header_leaves_no_file_so_a_retry_works(tmp_path: Path) -> None:
    trace = tmp_path / "incident.trp"
    result = run_child(tmp_path, "header", trace)
    assert result["raised"]["type"] == "TraceWriteError"
    assert result["raised"]["message"].startswith(f"{trace}: cannot write the header:")
    assert result["exists_after"] is False
    assert [op.inputs for op in toolreplay.read_trace(trace).operations] == [{"order_id": 0}]


def test_one_failed_write_loses_nothing_acknowledged_and_the_failed_call_never_appears(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "incident.trp"
    result = run_child(tmp_path, "transient", trace)
    assert result["effect_error"]["type"] == "TraceWriteError"
    assert "taken back out" in result["effect_error"]["message"]
    # The application carried on after a call it was told had failed: the trace lacks
    # that call, so the run does not reproduce the recording and the session says so.
    assert result["raised"]["type"] == "SessionError"
    assert "TraceWriteError was raised during it" in result["raised"]["message"]

    read = toolreplay.read_trace(trace)
    assert read.complete
    assert [op.inputs for op in read.operations] == [{"order_id": i} for i in (0, 1, 2, 4, 5)]
    assert [op.logical_id for op in read.operations] == [0, 1, 2, 3, 4]
    assert [op.identity.occurrence for op in read.operations] == [0] * 5
    assert read.footer is not None
    assert read.footer.ending.error_type == "toolreplay.errors.SessionError"


def test_a_full_disk_while_forking_names_the_branch_and_keeps_the_source(
    tmp_path: Path,
) -> None:
    source = tmp_path / "incident.trp"
    branch = tmp_path / "branch.trp"
    result = run_child(tmp_path, "fork", branch, str(source))
    assert result["effect_error"]["type"] == "TraceWriteError"
    assert result["effect_error"]["path"] == str(branch)
    assert result["raised_is_the_application_error"]
    assert result["raised"]["message"] == "checkout failed"
    assert source.read_bytes().hex() == result["source_before"]
    read = toolreplay.read_trace(branch)
    assert [op.inputs for op in read.operations] == [{"order_id": 0}]


RUNNER = textwrap.dedent(
    """
    import toolreplay


    @toolreplay.effect("orders.fetch")
    def fetch(order_id: int) -> dict:
        return {"order_id": order_id, "note": "x" * 300}


    def main() -> list:
        return [fetch(order_id)["order_id"] for order_id in range(5)]
    """
)


def cli_with_file_size_limit(workdir: Path, limit: int | None, *args: str) -> Any:
    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # kept across exec
        if limit is not None:
            hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))

    completed = subprocess.run(
        [sys.executable, "-m", "toolreplay", *args, "--format", "json"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=limit_file_size,
    )
    return completed.returncode, json.loads(completed.stdout)


def test_the_record_command_reports_a_full_disk_as_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(RUNNER)
    record = ("record", "--runner", "shop:main", "--output")
    status, document = cli_with_file_size_limit(tmp_path, None, *record, "probe.trp")
    assert (status, document["outcome"]) == (0, "ok")
    lines = (tmp_path / "probe.trp").read_bytes().splitlines(keepends=True)
    room = len(lines[0]) + len(lines[1]) + len(lines[2]) + 40  # header, two operations

    status, document = cli_with_file_size_limit(tmp_path, room, *record, "incident.trp")
    assert (status, document["outcome"]) == (1, "storage_error")
    assert document["error"]["type"] == "toolreplay.errors.TraceWriteError"
    assert document["error"]["message"].startswith("incident.trp: cannot write operation 2:")
    assert "traceback" not in document["error"]
    read = toolreplay.read_trace(tmp_path / "incident.trp")
    assert [op.inputs for op in read.operations] == [{"order_id": 0}, {"order_id": 1}]

    status, document = cli_with_file_size_limit(tmp_path, 10, *record, "retry.trp")
    assert (status, document["outcome"]) == (1, "storage_error")
    assert document["error"]["message"].startswith("retry.trp: cannot write the header:")
    assert not (tmp_path / "retry.trp").exists()
    status, document = cli_with_file_size_limit(tmp_path, None, *record, "retry.trp")
    assert (status, document["outcome"]) == (0, "ok")
