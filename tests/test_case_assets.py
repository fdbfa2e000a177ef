"""A pipe, a device or a huge sparse file as a case's trace is refused at once, never read.

Each check runs the real command line in a child process with a timeout: before the
fix, `toolreplay verify` waited forever on a pipe and read a device or a 4 GB file
whole before comparing its size.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

import toolreplay
from tests.support.case_app import EXPECTED, App, run_cli

# Generous for a loaded machine; a hang is what this bounds, not speed.
CHILD_TIMEOUT = 60


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_device(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 5))  # what /dev/zero is
    except PermissionError:
        pytest.skip("creating a device file needs CAP_MKNOD, which this process lacks")


def make_sparse(path: Path) -> None:
    with path.open("wb") as file:
        file.truncate(4 * 1024**3)  # 4 GiB of holes: no disk used, but read whole it is 4 GiB


REPLACEMENTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (make_fifo, "is not a regular file (a pipe or a device?)"),
    "device": (make_device, "is not a regular file (a pipe or a device?)"),
    "sparse 4 GiB": (make_sparse, f"is {4 * 1024**3} bytes but the manifest says"),
}


@pytest.mark.parametrize("kind", REPLACEMENTS)
def test_verify_refuses_a_non_regular_or_huge_trace_asset(
    app: App, tmp_path: Path, kind: str
) -> None:
    trace = app.record(tmp_path / "incident.trp")
    case = toolreplay.promote(
        trace, tmp_path / "cases" / "one", name="one", runner=app.runner(), expected=EXPECTED
    ).trace_path
    app.forget_import()
    case.unlink()
    make, message = REPLACEMENTS[kind]
    make(case)

    result = run_cli(app, tmp_path, "verify", "cases", "--format", "json", timeout=CHILD_TIMEOUT)

    assert result.returncode == 1, result.stderr
    [verdict] = json.loads(result.stdout)["cases"]
    assert verdict["error"]["type"] == "toolreplay.errors.CaseIntegrityError"
    assert message in verdict["error"]["message"]
    assert case.name in verdict["error"]["message"]
    assert not app.marker.exists()  # refused before the runner was imported


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_promote_refuses_a_non_regular_trace(app: App, tmp_path: Path, kind: str) -> None:
    source = tmp_path / "incident.trp"
    REPLACEMENTS[kind][0](source)
    result = run_cli(
        app,
        tmp_path,
        "promote",
        "incident.trp",
        "-o",
        "cases/one",
        "-n",
        "one",
        "-r",
        app.runner(),
        "--expect-json",
        "1",
        timeout=CHILD_TIMEOUT,
    )
    assert result.returncode == 2
    assert "incident.trp: is not a regular file (a pipe or a device?)" in result.stderr
    assert not (tmp_path / "cases").exists()
    assert not app.marker.exists()


def test_a_pipe_given_as_a_trace_or_patch_file_is_refused_in_process(tmp_path: Path) -> None:
    # The library's own readers: no read may block waiting for a writer.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(toolreplay.TraceNotFoundError, match="not a regular file"):
        toolreplay.read_trace(fifo)
    with pytest.raises(toolreplay.PatchFileError, match="not a regular file"):
        toolreplay.read_patches(fifo)
