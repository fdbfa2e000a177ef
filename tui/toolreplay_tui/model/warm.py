"""`WarmRunner`: a child that has imported the command line once, from which each run
is forked, so that forks and replays start at once; and killing a run's whole process
group, cold or warm.

The warm child (`toolreplay.cli.warm`) never imports or calls a runner on its own:
opening a trace runs nothing. Each run forked from it is a process of its own, in
its own process group, isolated as a cold child is.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

__all__ = ["WarmRunner", "kill_group", "kill_pid_group"]


class WarmRunner:
    """The client of one warm runner child (`toolreplay.cli.warm`).

    The child imports the command line once, and the application's modules once a
    run has imported them (it never imports or calls a runner on its own: opening
    a trace runs nothing); each run is a fresh process forked from it, in its own
    process group, so a run is isolated as a cold child is, without paying the
    imports. Started on first use (or `warm_up`); one run at a time (a second
    concurrent run goes cold); a child that reports its application's sources
    changed is replaced by a new one.
    """

    def __init__(
        self,
        *,
        python: str | None = None,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.python = python or sys.executable
        self.cwd = cwd
        self.env = env
        self._process: subprocess.Popen[str] | None = None
        self._busy = threading.Lock()
        self.starts = 0  # how many warm children were started (for tests and benchmarks)

    @property
    def pid(self) -> int | None:
        """The warm child's process id while it runs (each run is a child of it)."""
        process = self._process
        return None if process is None or process.poll() is not None else process.pid

    def start(self) -> None:
        """Start (or restart) the warm child and wait until it has imported everything."""
        self.close()
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONIOENCODING", "utf-8")
        process = subprocess.Popen(
            [self.python, "-m", "toolreplay.cli.warm"],
            cwd=self.cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
            start_new_session=True,
        )
        self._process = process
        self.starts += 1
        if self._read(process) != {"ready": True}:
            self.close()
            raise OSError("the warm runner did not start")

    def warm_up(self) -> None:
        """Start the warm child now unless it runs (a run meanwhile goes cold)."""
        with self._busy:
            if self._process is None or self._process.poll() is not None:
                self.start()

    def prepare(self, trace: Path, effects: Sequence[str]) -> None:
        """Let the warm child prepare for runs of `trace`, whose effects are `effects`:
        it imports Tool Replay's adapters for the namespaces among them (the SDKs they
        wrap included) and lets them parse the recorded answers; nothing of the
        application. Starts the child if needed (after a run in progress) and waits
        until it is done; a run meanwhile goes cold, as while the child starts."""
        with self._busy:
            try:
                if self._process is None or self._process.poll() is not None:
                    self.start()
                process = self._process
                assert process is not None
                assert process.stdin is not None
                request = {"prepare": str(trace), "effects": list(effects)}
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
                self._read(process)
            except (OSError, ValueError):
                self.close()

    def interrupt(self) -> None:
        """Kill the warm child from any thread, leaving it to the run in progress to
        clean up: a run waiting for it to start (or to answer) gets None at once."""
        process = self._process
        if process is not None:
            kill_group(process)

    def close(self) -> None:
        """Stop the warm child (its runs have their own process groups)."""
        process, self._process = self._process, None
        if process is not None:
            kill_group(process)
            process.wait()

    @staticmethod
    def _read(process: subprocess.Popen[str]) -> dict[str, Any]:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line:
            raise OSError("the warm runner exited")
        return cast(dict[str, Any], json.loads(line))

    def run(
        self, arguments: Sequence[str], on_start: Callable[[int], None]
    ) -> tuple[int, str, str] | None:
        """Run `toolreplay ARGUMENTS` in a forked process: (exit code, stdout, stderr).

        `on_start` gets the run's pid (its process group) as soon as it exists. None
        when the warm runner is busy or cannot run it: the caller runs it cold. The
        warm child then imports what the run imported, for the next runs.
        """
        if not self._busy.acquire(blocking=False):
            return None
        try:
            with tempfile.TemporaryDirectory(prefix="toolreplay-warm-") as folder:
                out, err = Path(folder, "stdout"), Path(folder, "stderr")
                fields: dict[str, object] = {
                    "argv": list(arguments),
                    "stdout": str(out),
                    "stderr": str(err),
                    "modules": str(Path(folder, "modules")),
                }
                if len(arguments) > 1:  # `replay TRACE ...`, `fork SOURCE ...`
                    fields["trace"] = arguments[1]
                request = json.dumps(fields)
                for _ in range(2):  # a stale child is replaced once
                    if self._process is None or self._process.poll() is not None:
                        self.start()
                    process = self._process
                    assert process is not None
                    assert process.stdin is not None
                    process.stdin.write(request + "\n")
                    process.stdin.flush()
                    answer = self._read(process)
                    if answer.get("stale"):
                        self.close()
                        continue
                    on_start(int(answer["pid"]))
                    code = int(self._read(process)["exit"])
                    return code, _text(out), _text(err)
                return None
        except (OSError, ValueError, KeyError):
            self.close()
            return None
        finally:
            self._busy.release()


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace") if path.exists() else ""


def kill_pid_group(pid: int) -> None:
    """Kill the process group `pid` leads (a warm run's)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def kill_group(process: subprocess.Popen[str]) -> None:
    """Kill the child and everything in its process group."""
    if process.poll() is not None and os.name != "posix":
        return
    if os.name == "posix":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, OSError):
        process.kill()
