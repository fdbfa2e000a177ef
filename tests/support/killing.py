"""Killing a command at each step it takes on the filesystem, from outside the library.

The command runs as a child process started through `DRIVER`, a few lines that
install a CPython audit hook (`sys.addaudithook`, the interpreter's own
mechanism: nothing in the library knows about it) and then run `toolreplay`'s
command line. Before every call that changes the filesystem under the test's
folder (a file opened for writing, `rename`/`replace`, `link`, `unlink`,
`mkdir`, `rmdir`, `chmod`, `truncate`), the hook names the call on a pipe and
stops its own process with `SIGSTOP`. The test, the parent, sees the stop, reads
the step, and either lets the child go on (`SIGCONT`) or kills it (`SIGKILL`):
the state on disk is then exactly what a kill just before that step leaves.

What it covers: a kill before each such call, and (the unkilled run) after the
last. What it does not: a kill in the middle of one `write` of a file's bytes
(writes are not audited); the file being written is then partly written, which
is the state "opened, not yet renamed into place" this covers, with fewer bytes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DRIVER", "Stopped", "run_killed_at"]

DRIVER = r"""
import os, signal, sys

ROOT = os.path.realpath(sys.argv[1])
REPORT = int(sys.argv[2])
WRITING = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
CHANGES = {
    "os.rename": 2, "os.link": 2, "os.remove": 1, "os.rmdir": 1, "os.mkdir": 2,
    "os.chmod": 2, "os.truncate": 0, "os.symlink": 2,
}

def under_root(path, dir_fd):
    if isinstance(path, int):
        return True  # a descriptor this process opened (fchmod, ftruncate)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):
        path = os.fspath(path)
    if dir_fd is not None and not os.path.isabs(path):
        return True  # inside a folder opened by descriptor (shutil.rmtree)
    return os.path.realpath(os.path.abspath(path)).startswith(ROOT + os.sep)

def hook(event, args):
    if event == "open":
        path, mode, flags = args
        if isinstance(mode, str):
            writes = any(c in mode for c in "wxa+")
        else:
            writes = isinstance(flags, int) and bool(flags & WRITING)
        if not writes or not under_root(path, None):
            return
    elif event in CHANGES:
        path = args[0]
        position = CHANGES[event]
        dir_fd = args[position] if position and len(args) > position else None
        if not under_root(path, dir_fd):
            return
    else:
        return
    os.write(REPORT, f"{event} {path}\n".encode())
    os.kill(os.getpid(), signal.SIGSTOP)

sys.addaudithook(hook)
from toolreplay.cli import main
sys.exit(main(sys.argv[3:]))
"""


@dataclass(frozen=True)
class Stopped:
    """How a run went: the steps the command announced, and its exit status (None when
    it was killed before the last step announced)."""

    steps: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str


def run_killed_at(
    arguments: Sequence[str],
    *,
    root: Path,
    cwd: Path,
    env: Mapping[str, str],
    kill_at: int | None,
    timeout: float = 120.0,
) -> Stopped:
    """Run `toolreplay ARGUMENTS`, stopped before each filesystem change under `root`;
    `SIGKILL` it before change number `kill_at` (1-based), or let it finish (None)."""
    read_end, write_end = os.pipe()
    outputs = Path(tempfile.mkdtemp(prefix="toolreplay-killing-"))  # not under `root`
    stdout_path, stderr_path = outputs / "stdout", outputs / "stderr"
    environment = {**env, "PYTHONDONTWRITEBYTECODE": "1"}  # no .pyc writes to count
    with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-c", DRIVER, str(root), str(write_end), *arguments],
            cwd=cwd,
            env=environment,
            stdout=stdout,
            stderr=stderr,
            pass_fds=(write_end,),
        )
    os.close(write_end)
    steps: list[str] = []
    pending = b""
    code: int | None = None
    try:
        while True:
            _, status = _wait(process.pid, timeout)
            if os.WIFSTOPPED(status):
                while b"\n" not in pending:
                    pending += os.read(read_end, 4096)
                line, pending = pending.split(b"\n", 1)
                steps.append(line.decode())
                if kill_at is not None and len(steps) == kill_at:
                    os.kill(process.pid, signal.SIGKILL)
                    os.waitpid(process.pid, 0)
                    break
                os.kill(process.pid, signal.SIGCONT)
                continue
            code = os.waitstatus_to_exitcode(status)
            break
    finally:
        os.close(read_end)
        if code is None and process.poll() is None:
            process.kill()
        process.returncode = -9 if code is None else code  # reaped above, not by Popen
    stopped = Stopped(
        tuple(steps),
        code,
        stdout_path.read_text(errors="replace"),
        stderr_path.read_text(errors="replace"),
    )
    stdout_path.unlink()
    stderr_path.unlink()
    outputs.rmdir()
    return stopped


def _wait(pid: int, timeout: float) -> tuple[int, int]:
    """`waitpid(pid, WUNTRACED)` that gives up after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        waited, status = os.waitpid(pid, os.WUNTRACED | os.WNOHANG)
        if waited:
            return waited, status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"the command did not reach its next step within {timeout} s")
        time.sleep(0.002)
