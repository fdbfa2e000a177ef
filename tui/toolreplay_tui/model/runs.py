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
A request may go through a `WarmRunner` (`toolreplay_tui.model.warm`), which starts
it without paying the imports again.
"""

from __future__ import annotations

import json
import os
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
from toolreplay_tui.model.warm import WarmRunner, kill_group, kill_pid_group

__all__ = [
    "DEFAULT_TIMEOUT",
    "ClientOutcome",
    "Command",
    "RunClient",
    "RunHandle",
    "RunRequest",
    "RunResult",
    "WarmRunner",  # from `warm`: a request names the warm runner it goes through
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
    warm: WarmRunner | None = field(default=None, compare=False)
    """Forks, replays and promotes go through this warm runner when set (and it is free)."""


@dataclass(frozen=True, slots=True)
class RunClient:
    """Makes the requests of one debugging session, all with the same interpreter
    (`python -m toolreplay`, default this one), folder, environment and timeout."""

    python: str | None = None
    cwd: Path | None = None
    env: Mapping[str, str] | None = None
    timeout: float = DEFAULT_TIMEOUT
    warm: WarmRunner | None = None

    def _request(self, command: Command, *arguments: str) -> RunRequest:
        argv = (self.python or sys.executable, "-m", "toolreplay", command, *arguments)
        # Every command that runs the application goes through the warm runner: a fork
        # of it is a process of its own, so a promote still verifies its case end to end
        # in a separate process before publishing it.
        warm = self.warm if command in ("replay", "fork", "promote") else None
        return RunRequest(
            command, (*argv, "--format", "json"), self.cwd, self.env, self.timeout, warm
        )

    def replay(self, trace: Path, *, runner: str | None = None) -> RunRequest:
        """`toolreplay replay TRACE [--runner R] --format json`."""
        return self._request("replay", str(trace), *_runner_option(runner))

    def fork(
        self,
        source: Path,
        patches: Path,
        branch: Path,
        *,
        runner: str | None = None,
        live: Sequence[str] = (),
    ) -> RunRequest:
        """`toolreplay fork SOURCE --patches FILE --output BRANCH --allow-unobserved
        [--live EFFECT]... [--runner R] --format json`: the debugger lets a fork leave
        the recording's path (the diff shows what it skipped), and sends the calls of
        the `live` effects the source does not hold (a model asked live)."""
        return self._request(
            "fork",
            str(source),
            "--patches",
            str(patches),
            "--output",
            str(branch),
            "--allow-unobserved",
            *(option for effect in live for option in ("--live", effect)),
            *_runner_option(runner),
        )

    def promote(
        self,
        trace: Path,
        output: Path,
        *,
        name: str,
        runner: str,
        expect_file: Path,
        allow_secret_findings: bool = False,
    ) -> RunRequest:
        """`toolreplay promote TRACE --output DIR --name N --runner R --expect-file F
        [--allow-secret-findings] --format json`."""
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
            *(("--allow-secret-findings",) if allow_secret_findings else ()),
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
        self._warm_pid: int | None = None
        self._warming: WarmRunner | None = None  # the warm runner this run waits for
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
        if self._warm_pid is not None:
            return self._warm_pid
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
            process, warm_pid, warming = self._process, self._warm_pid, self._warming
        if process is not None:
            kill_group(process)
        if warm_pid is not None:
            kill_pid_group(warm_pid)
        elif warming is not None:
            warming.interrupt()  # still starting: do not wait for it

    def wait(self) -> RunResult:
        """Run to the end and read the result. Never raises for a failed run."""
        try:
            return self._wait()
        finally:
            self._finished.set()

    def _wait_warm(self, warm: WarmRunner) -> RunResult | None:
        """The run through the warm runner, or None when it must run cold."""
        request = self.request
        self.started_at = time.monotonic()
        timed_out = threading.Event()

        def started(pid: int) -> None:
            with self._lock:
                self._warm_pid = pid
                stopped = self._cancelled.is_set() or timed_out.is_set()
            if stopped:
                kill_pid_group(pid)

        def expire() -> None:
            with self._lock:
                timed_out.set()
                pid = self._warm_pid
            if pid is not None:
                kill_pid_group(pid)
            else:
                warm.interrupt()  # the timeout covers the warm child's start too

        timer = threading.Timer(request.timeout, expire)
        timer.daemon = True
        with self._lock:
            self._warming = warm
        timer.start()
        try:
            ran = warm.run(request.argv[3:], started)
        finally:
            timer.cancel()
            with self._lock:
                self._warming = None
        if ran is None:
            with self._lock:
                forked, self._warm_pid = self._warm_pid, None
            if forked is not None:  # its warm parent died mid-run: never two runs at once
                kill_pid_group(forked)
            if timed_out.is_set() and not self.cancelled:
                return self._killed(timed_out=True, exit_code=None, stderr="")
            return None
        exit_code, stdout, stderr = ran
        if timed_out.is_set() or self.cancelled:
            return self._killed(timed_out=timed_out.is_set(), exit_code=exit_code, stderr=stderr)
        return parse_document(
            request.command,
            stdout,
            exit_code=exit_code,
            stderr=stderr,
            argv=request.argv,
            elapsed=self.elapsed(),
        )

    def _killed(self, *, timed_out: bool, exit_code: int | None, stderr: str) -> RunResult:
        """The result of a run killed at its timeout or cancelled (a cancel wins)."""
        request = self.request
        outcome: ClientOutcome = "timed_out" if timed_out and not self.cancelled else "cancelled"
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
            stderr=stderr,
            elapsed=self.elapsed(),
            message=message,
        )

    def _wait(self) -> RunResult:
        request = self.request
        if request.warm is not None and not self.cancelled:
            warm_result = self._wait_warm(request.warm)
            if warm_result is not None:
                return warm_result
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
            kill_group(process)
            stdout, stderr = process.communicate()
        exit_code = process.returncode
        if timed_out or self.cancelled:
            return self._killed(timed_out=timed_out, exit_code=exit_code, stderr=stderr or "")
        return parse_document(
            request.command,
            stdout or "",
            exit_code=exit_code,
            stderr=stderr or "",
            argv=request.argv,
            elapsed=self.elapsed(),
        )
