"""A client of the command-line run protocol: the application runs in a child process.

The debugger never runs the application in its own process. It starts
`python -m toolreplay replay|fork|promote ... --format json` with its own
process group, reads the one JSON document the command prints on stdout
(RFC 0004 §4.5, and `toolreplay promote --format json`), and keeps its stderr
(the application's own output goes there). A run can be cancelled, and is
killed when it runs past its timeout: the whole process group is killed, so
nothing the application started outlives it.

`RunHandle.wait` never raises for a run that failed, was refused, timed out,
was cancelled or printed no document: each is a `RunResult` with an outcome.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from toolreplay.errors import ProtocolError
from toolreplay.portable import JsonValue
from toolreplay.protocol import (
    ErrorReport,
    PromoteDocument,
    PromoteOutcome,
    PublishedCase,
    RunDocument,
    RunOutcome,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "ClientOutcome",
    "Command",
    "RunClient",
    "RunHandle",
    "RunRequest",
    "RunResult",
    "parse_document",
]

DEFAULT_TIMEOUT = 300.0
"""Seconds a run may take before it is killed."""

Command = Literal["replay", "fork", "promote"]

ClientOutcome = Literal["cancelled", "timed_out", "no_document", "not_started"]
"""Outcomes the client adds to the protocol's: the run was cancelled, ran past its
timeout, printed no readable document (it crashed), or could not be started."""


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One child-process run: its argv, working directory, environment and timeout."""

    command: Command
    argv: tuple[str, ...]
    cwd: Path | None = None
    env: Mapping[str, str] | None = None
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True, slots=True)
class RunClient:
    """Makes the requests of one debugging session, all with the same interpreter
    (`python -m toolreplay`, default this one), folder, environment and timeout."""

    python: str | None = None
    cwd: Path | None = None
    env: Mapping[str, str] | None = None
    timeout: float = DEFAULT_TIMEOUT

    def _request(self, command: Command, *arguments: str) -> RunRequest:
        argv = (self.python or sys.executable, "-m", "toolreplay", command, *arguments)
        return RunRequest(command, (*argv, "--format", "json"), self.cwd, self.env, self.timeout)

    def replay(self, trace: Path, *, runner: str | None = None) -> RunRequest:
        """`toolreplay replay TRACE [--runner R] --format json`."""
        return self._request("replay", str(trace), *_runner_option(runner))

    def fork(
        self, source: Path, patches: Path, branch: Path, *, runner: str | None = None
    ) -> RunRequest:
        """`toolreplay fork SOURCE --patches FILE --output BRANCH --allow-unobserved
        [--runner R] --format json`: the debugger lets a fork leave the recording's path
        (the diff shows what it skipped)."""
        return self._request(
            "fork",
            str(source),
            "--patches",
            str(patches),
            "--output",
            str(branch),
            "--allow-unobserved",
            *_runner_option(runner),
        )

    def promote(
        self, trace: Path, output: Path, *, name: str, runner: str, expect_file: Path
    ) -> RunRequest:
        """`toolreplay promote TRACE --output DIR --name N --runner R --expect-file F --format
        json`."""
        return self._request(
            "promote",
            str(trace),
            "--output",
            str(output),
            "--name",
            name,
            *_runner_option(runner),
            "--expect-file",
            str(expect_file),
        )


def _runner_option(runner: str | None) -> tuple[str, ...]:
    return ("--runner", runner) if runner else ()


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a child-process run ended. `ok` only when the command succeeded.

    The fields after `exit_code` come from the command's document
    (`toolreplay.protocol`); a promote's `{type, message}` error is an
    `ErrorReport` with only those two set.
    """

    command: Command
    outcome: RunOutcome | PromoteOutcome | ClientOutcome
    exit_code: int | None
    argv: tuple[str, ...] = ()
    runner: str | None = None
    return_value: JsonValue = None
    return_value_portable: bool = True
    error: ErrorReport | None = None
    paths: Mapping[str, str | None] = field(default_factory=dict[str, str | None])
    counts: Mapping[str, int] = field(default_factory=dict[str, int])
    case: PublishedCase | None = None
    stderr: str = ""
    elapsed: float = 0.0
    message: str | None = None  # what the client saw when there is no document

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def refused(self) -> bool:
        return self.outcome == "invalid_arguments"

    @property
    def branch(self) -> str | None:
        return self.paths.get("branch")


def _is_object(data: object) -> bool:
    """A non-empty JSON object: something that claims to be a document."""
    return isinstance(data, dict) and len(cast(dict[str, object], data)) > 0


def parse_document(
    command: Command,
    stdout: str,
    *,
    exit_code: int | None,
    stderr: str = "",
    argv: Sequence[str] = (),
    elapsed: float = 0.0,
) -> RunResult:
    """Read what a child printed. Never raises: no readable document is `no_document`."""
    base: dict[str, Any] = {
        "command": command,
        "exit_code": exit_code,
        "argv": tuple(argv),
        "stderr": stderr,
        "elapsed": elapsed,
    }
    try:
        data: object = json.loads(stdout)
    except (json.JSONDecodeError, RecursionError, ValueError):
        data = None
    if not _is_object(data):
        shown = stdout.strip()[:200]
        what = f"it printed {shown!r}" if shown else "it printed nothing on stdout"
        return RunResult(
            **base,
            outcome="no_document",
            message=f"the child process exited with status {exit_code} and {what}; "
            "its stderr says why",
        )
    try:
        if command == "promote":
            promoted = PromoteDocument.from_dict(data)
            error = promoted.error
            return RunResult(
                **base,
                outcome=promoted.outcome,
                case=promoted.case,
                error=None if error is None else ErrorReport(error.type, error.message),
            )
        document = RunDocument.from_dict(data)
    except ProtocolError as error:
        return RunResult(
            **base, outcome="no_document", message=f"the child printed no readable result: {error}"
        )
    return RunResult(
        **base,
        outcome=document.outcome,
        runner=document.runner,
        return_value=document.return_value,
        return_value_portable=document.return_value_portable,
        error=document.error,
        paths=document.paths,
        counts=document.counts,
    )


# --- running ------------------------------------------------------------------------


def _kill_group(process: subprocess.Popen[str]) -> None:
    """Kill the child and everything in its process group."""
    if process.poll() is not None and os.name != "posix":
        return
    if os.name == "posix":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, OSError):
        process.kill()


class RunHandle:
    """One run of a `RunRequest`: `start()`, then `wait()` (blocking), `cancel()` from anywhere.

    Meant for a worker thread: `wait` blocks until the child ends, is killed at
    the timeout, or is cancelled; `cancel` may be called from any thread, before
    or during the run.
    """

    def __init__(self, request: RunRequest) -> None:
        self.request = request
        self._process: subprocess.Popen[str] | None = None
        self._cancelled = threading.Event()
        self._finished = threading.Event()
        self._lock = threading.Lock()
        self.started_at: float | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def finished(self) -> bool:
        """True once `wait` has returned its result."""
        return self._finished.is_set()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def elapsed(self) -> float:
        return 0.0 if self.started_at is None else time.monotonic() - self.started_at

    def start(self) -> None:
        """Start the child (idempotent); a failure to start is reported by `wait`."""
        with self._lock:
            if self._process is not None or self._cancelled.is_set():
                return
            env = dict(os.environ if self.request.env is None else self.request.env)
            env.setdefault("PYTHONIOENCODING", "utf-8")
            self.started_at = time.monotonic()
            self._process = subprocess.Popen(
                self.request.argv,
                cwd=self.request.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,  # its own process group: killed as a whole
            )

    def cancel(self) -> None:
        """Stop the run: the child's process group is killed (if it started)."""
        with self._lock:
            self._cancelled.set()
            process = self._process
        if process is not None:
            _kill_group(process)

    def wait(self) -> RunResult:
        """Run to the end and read the result. Never raises for a failed run."""
        try:
            return self._wait()
        finally:
            self._finished.set()

    def _wait(self) -> RunResult:
        request = self.request
        try:
            self.start()
        except OSError as error:
            return RunResult(
                request.command,
                "not_started",
                None,
                argv=request.argv,
                message=f"could not start {request.argv[0]}: {error.strerror or error}",
            )
        process = self._process
        if process is None:  # cancelled before it started
            return RunResult(
                request.command, "cancelled", None, argv=request.argv, message="cancelled"
            )
        timed_out = False
        try:
            stdout, stderr = process.communicate(timeout=request.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(process)
            stdout, stderr = process.communicate()
        elapsed = self.elapsed()
        exit_code = process.returncode
        if timed_out or self.cancelled:
            outcome = "timed_out" if timed_out and not self.cancelled else "cancelled"
            message = (
                f"timed out after {request.timeout:g} s: the child process was killed"
                if outcome == "timed_out"
                else "cancelled: the child process was killed"
            )
            return RunResult(
                request.command,
                outcome,
                exit_code,
                argv=request.argv,
                stderr=stderr or "",
                elapsed=elapsed,
                message=message,
            )
        return parse_document(
            request.command,
            stdout or "",
            exit_code=exit_code,
            stderr=stderr or "",
            argv=request.argv,
            elapsed=elapsed,
        )
