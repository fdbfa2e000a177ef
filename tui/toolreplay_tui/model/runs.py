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

from toolreplay.portable import JsonValue

__all__ = [
    "DEFAULT_TIMEOUT",
    "CaseInfo",
    "Command",
    "RunError",
    "RunHandle",
    "RunIdentity",
    "RunOperation",
    "RunRequest",
    "RunResult",
    "fork_request",
    "parse_document",
    "promote_request",
    "replay_request",
]

DEFAULT_TIMEOUT = 300.0
"""Seconds a run may take before it is killed."""

Command = Literal["replay", "fork", "promote"]

CLIENT_OUTCOMES = ("cancelled", "timed_out", "no_document", "not_started")
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


def _base(python: str | None) -> list[str]:
    return [python or sys.executable, "-m", "toolreplay"]


def replay_request(
    trace: Path,
    *,
    runner: str | None = None,
    python: str | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> RunRequest:
    """`toolreplay replay TRACE [--runner R] --format json`."""
    argv = [*_base(python), "replay", str(trace)]
    if runner:
        argv += ["--runner", runner]
    argv += ["--format", "json"]
    return RunRequest("replay", tuple(argv), cwd, env, timeout)


def fork_request(
    source: Path,
    patches: Path,
    branch: Path,
    *,
    runner: str | None = None,
    python: str | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> RunRequest:
    """`toolreplay fork SOURCE --patches FILE --output BRANCH [--runner R] --format json`."""
    argv = [*_base(python), "fork", str(source), "--patches", str(patches), "--output", str(branch)]
    if runner:
        argv += ["--runner", runner]
    argv += ["--format", "json"]
    return RunRequest("fork", tuple(argv), cwd, env, timeout)


def promote_request(
    trace: Path,
    output: Path,
    *,
    name: str,
    runner: str,
    expect_file: Path,
    python: str | None = None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> RunRequest:
    """`toolreplay promote TRACE --output DIR --name N --runner R --expect-file F --format json`."""
    argv = [
        *_base(python),
        "promote",
        str(trace),
        "--output",
        str(output),
        "--name",
        name,
        "--runner",
        runner,
        "--expect-file",
        str(expect_file),
        "--format",
        "json",
    ]
    return RunRequest("promote", tuple(argv), cwd, env, timeout)


@dataclass(frozen=True, slots=True)
class RunIdentity:
    """The identity of a call, as the protocol reports it."""

    effect: str
    fingerprint: str
    occurrence: int


@dataclass(frozen=True, slots=True)
class RunOperation:
    """A recorded operation the protocol names (a candidate, an unconsumed one)."""

    logical_id: int | None
    line: int | None
    effect: str
    occurrence: int
    fingerprint: str
    inputs: JsonValue


@dataclass(frozen=True, slots=True)
class RunError:
    """The protocol's error object (RFC 0004 §4.6), or promote's `{type, message}`."""

    type: str
    message: str
    notes: tuple[str, ...] = ()
    identity: RunIdentity | None = None
    inputs: JsonValue = None
    candidates: tuple[RunOperation, ...] = ()
    operations: tuple[RunOperation, ...] = ()
    patch_ids: tuple[str, ...] = ()
    traceback: str | None = None
    exit_code: int | None = None

    @property
    def short_type(self) -> str:
        return self.type.rpartition(".")[2]


@dataclass(frozen=True, slots=True)
class CaseInfo:
    """The case folder `toolreplay promote` published."""

    directory: str
    name: str
    trace_path: str
    trace_sha256: str
    test_path: str


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a child-process run ended. `ok` only when the command succeeded."""

    command: Command
    outcome: str
    exit_code: int | None
    argv: tuple[str, ...] = ()
    runner: str | None = None
    return_value: JsonValue = None
    return_value_portable: bool = True
    error: RunError | None = None
    paths: Mapping[str, str | None] = field(default_factory=dict[str, str | None])
    counts: Mapping[str, int] = field(default_factory=dict[str, int])
    case: CaseInfo | None = None
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


# --- parsing the document -----------------------------------------------------------


def _str(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: object) -> dict[str, Any]:
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return cast(list[Any], value) if isinstance(value, list) else []


def _identity(value: object) -> RunIdentity | None:
    data = _dict(value)
    if not data:
        return None
    return RunIdentity(
        effect=_str(data.get("effect")),
        fingerprint=_str(data.get("fingerprint")),
        occurrence=_int(data.get("occurrence")) or 0,
    )


def _operation(value: object) -> RunOperation:
    data = _dict(value)
    return RunOperation(
        logical_id=_int(data.get("logical_id")),
        line=_int(data.get("line")),
        effect=_str(data.get("effect")),
        occurrence=_int(data.get("occurrence")) or 0,
        fingerprint=_str(data.get("fingerprint")),
        inputs=cast(JsonValue, data.get("inputs")),
    )


def _error(value: object) -> RunError | None:
    data = _dict(value)
    if not data:
        return None
    traceback = data.get("traceback")
    return RunError(
        type=_str(data.get("type"), "unknown error"),
        message=_str(data.get("message")),
        notes=tuple(_str(note) for note in _list(data.get("notes"))),
        identity=_identity(data.get("identity")),
        inputs=cast(JsonValue, data.get("inputs")),
        candidates=tuple(_operation(item) for item in _list(data.get("candidates"))),
        operations=tuple(_operation(item) for item in _list(data.get("operations"))),
        patch_ids=tuple(_str(item) for item in _list(data.get("patch_ids"))),
        traceback=traceback if isinstance(traceback, str) else None,
        exit_code=_int(data.get("exit_code")),
    )


def _case(value: object) -> CaseInfo | None:
    data = _dict(value)
    if not data:
        return None
    return CaseInfo(
        directory=_str(data.get("directory")),
        name=_str(data.get("name")),
        trace_path=_str(data.get("trace_path")),
        trace_sha256=_str(data.get("trace_sha256")),
        test_path=_str(data.get("test_path")),
    )


def parse_document(
    command: Command,
    stdout: str,
    *,
    exit_code: int | None,
    stderr: str = "",
    argv: Sequence[str] = (),
    elapsed: float = 0.0,
) -> RunResult:
    """Read what a child printed. Never raises: no document is outcome `no_document`."""
    base: dict[str, Any] = {
        "command": command,
        "exit_code": exit_code,
        "argv": tuple(argv),
        "stderr": stderr,
        "elapsed": elapsed,
    }
    try:
        document: object = json.loads(stdout)
    except (json.JSONDecodeError, RecursionError, ValueError):
        document = None
    data = _dict(document)
    if not data:
        shown = stdout.strip()[:200]
        what = f"it printed {shown!r}" if shown else "it printed nothing on stdout"
        return RunResult(
            **base,
            outcome="no_document",
            message=f"the child process exited with status {exit_code} and {what}; "
            "its stderr says why",
        )
    if command == "promote":
        outcome = _str(data.get("outcome"), "no_document")
        return RunResult(
            **base,
            outcome=outcome,
            case=_case(data.get("case")),
            error=_error(data.get("error")),
        )
    if data.get("protocol") != "toolreplay.run":
        return RunResult(
            **base,
            outcome="no_document",
            message="the child printed a JSON document that is not the toolreplay.run protocol",
        )
    paths = {
        key: (item if isinstance(item, str) else None)
        for key, item in _dict(data.get("paths")).items()
    }
    counts = {
        key: number
        for key, item in _dict(data.get("counts")).items()
        if (number := _int(item)) is not None
    }
    return RunResult(
        **base,
        outcome=_str(data.get("outcome"), "no_document"),
        runner=data.get("runner") if isinstance(data.get("runner"), str) else None,
        return_value=cast(JsonValue, data.get("return_value")),
        return_value_portable=data.get("return_value_portable") is not False,
        error=_error(data.get("error")),
        paths=paths,
        counts=counts,
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


def run(request: RunRequest) -> RunResult:
    """Run `request` to the end (blocking); see `RunHandle`."""
    return RunHandle(request).wait()
