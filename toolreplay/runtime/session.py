"""Sessions: the scope in which effect calls are recorded or replayed.

A session is found through a context variable, so it follows the code that
runs inside its `with` block, across `await`s and into tasks created there
(and into threads through `toolreplay.propagate` / `SessionExecutor`), and
nowhere else. Sessions do not nest. Effects may run concurrently on several
lanes (tasks or threads); an effect called inside another effect's body is
refused (`NestedEffectError`).

The guard: while a record or replay session is open anywhere in the process,
an effect called where no session is visible (a plain worker thread, a callback
on another event loop) raises `SessionContextError` instead of running its live
body unrecorded or unreplayed. A process-wide counter makes that check one
attribute read on the fast path of every effect call.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Literal, Self, cast

from toolreplay._version import __version__
from toolreplay.errors import (
    NestedEffectError,
    NonPortableValueError,
    ReplayContractError,
    SessionContextError,
    SessionError,
    SessionNestingError,
    ToolReplayError,
    TraceWriteError,
)
from toolreplay.portable import JsonValue, copy_value, ensure_portable, fingerprint
from toolreplay.runtime.failures import capture_failure, rebuild_failure, session_ending
from toolreplay.runtime.matching import (
    concurrent_ambiguities,
    concurrent_ambiguity,
    match_operation,
    unconsumed_operations,
)
from toolreplay.trace.model import (
    Operation,
    OperationIdentity,
    Raised,
    Returned,
    SessionEnding,
    TraceHeader,
)
from toolreplay.trace.reader import Trace, read_trace
from toolreplay.trace.writer import TraceWriter, check_new_trace_path

__all__ = [
    "PendingCall",
    "RecordSession",
    "ReplaySession",
    "Session",
    "current_session",
    "record",
    "replay",
]

session_var: contextvars.ContextVar[Session | None] = contextvars.ContextVar(
    "toolreplay_session", default=None
)
# The recorded call whose body is running here: an effect called while it is
# still in flight is nested in it.
running_call_var: contextvars.ContextVar[PendingCall | None] = contextvars.ContextVar(
    "toolreplay_running_call", default=None
)


class _OfflineGuard:
    """The sessions open anywhere in the process (`active` counts them and the holds)."""

    __slots__ = ("_holds", "_lock", "_sessions", "active")

    def __init__(self) -> None:
        self.active = 0
        self._sessions: list[Session] = []
        self._holds = 0
        self._lock = threading.Lock()

    def enter(self, session: Session) -> None:
        with self._lock:
            self._sessions.append(session)
            self.active = len(self._sessions) + self._holds

    def leave(self, session: Session) -> None:
        with self._lock:
            self._sessions.remove(session)
            self.active = len(self._sessions) + self._holds

    @contextlib.contextmanager
    def holding(self) -> Generator[None]:
        """Refuse live effects everywhere for a while (e.g. while a runner module imports)."""
        with self._lock:
            self._holds += 1
            self.active = len(self._sessions) + self._holds
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
                self.active = len(self._sessions) + self._holds

    def refuse(self, effect: str) -> SessionContextError:
        """The error for a call outside every open session's context; each session fails too."""
        error = outside_context_error(effect)
        with self._lock:
            for session in self._sessions:
                session.note_violation(error)
        return error


offline_guard = _OfflineGuard()


def current_session() -> Session | None:
    """The session visible from the calling context, if any."""
    return session_var.get()


def outside_context_error(effect: str) -> SessionContextError:
    return SessionContextError(
        f"{effect} was called in thread {threading.current_thread().name!r} outside the "
        "context of any session while Tool Replay refuses unobserved effects in this "
        "process (a record or replay session is open, or a runner module is being "
        "imported), so it could be neither recorded nor replayed, and running it unseen "
        "would lose it. A session follows its context, which plain threads, thread pools "
        "and callbacks on another event loop do not inherit: submit the work with "
        "toolreplay.propagate(fn) or a toolreplay.SessionExecutor (or asyncio.to_thread, "
        "which copies the context), or call it after the session has closed."
    )


def lane_key() -> object:
    """What makes a lane: the running task, or outside any task the thread."""
    # No task can run before asyncio is imported, and importing it here would
    # cost every sync program its import time.
    running_asyncio = sys.modules.get("asyncio")
    task: object = None
    if running_asyncio is not None:
        current_task = cast("Callable[[], object]", running_asyncio.current_task)
        try:
            task = current_task()
        except RuntimeError:  # no event loop runs in this thread
            task = None
    return task if task is not None else threading.current_thread()


@dataclass(slots=True, eq=False)
class PendingCall:
    """An effect call that has an identity and is waiting for its outcome.

    `lane` and `start_ns` say where and when it started (see `Operation`). The
    body's return value goes in `result` (see `RecordSession.recording`).
    """

    identity: OperationIdentity
    inputs: dict[str, JsonValue]
    lane: str = "main"
    start_ns: int = 0
    result: object = None


class Session:
    """What record and replay sessions share: scoping, occurrences, lanes and time."""

    mode: ClassVar[Literal["record", "replay", "fork"]]

    def __init__(self) -> None:
        self._state: Literal["new", "open", "closed"] = "new"
        self._token: contextvars.Token[Session | None] | None = None
        self._lock = threading.Lock()
        self._occurrences: dict[tuple[str, str, str], int] = {}
        self._in_flight: set[PendingCall] = set()
        self._lanes: dict[object, str] = {}
        self._lane_counts = {"task": 0, "thread": 0}
        self._origin_ns = 0
        # The first contract violation raised into the application. If the
        # application swallows it, leaving the session still fails.
        self._violation: ToolReplayError | None = None
        self._write_error: TraceWriteError | None = None

    @property
    def write_error(self) -> TraceWriteError | None:
        """The first failure to write this session's trace (record, fork's branch), if any."""
        return self._write_error

    def _close_trace(
        self, writer: TraceWriter, ending: SessionEnding, error: BaseException | None
    ) -> None:
        """Close the trace this session writes, without ever replacing `error`.

        `error` is the exception the session ends with. A footer that cannot be
        written is added to it as a note (RFC 0001 §5.2); with no such error, the
        `TraceWriteError` is raised.
        """
        try:
            writer.close(ending)
        except TraceWriteError as failure:
            self._note_write_error(failure)
            if error is None:
                raise
            error.add_note(f"Tool Replay could not finish the trace: {failure}")

    def _note_write_error(self, failure: TraceWriteError) -> None:
        if self._write_error is None:
            self._write_error = failure

    # --- scope ------------------------------------------------------------------------

    def _check_can_open(self) -> None:
        if self._state != "new":
            raise SessionError(
                f"this {self.mode} session was already used; open a new one for each run"
            )
        active = session_var.get()
        if active is not None:
            raise SessionNestingError(
                f"cannot open a {self.mode} session inside the {active.mode} session that is "
                "already active here; sessions do not nest. Close the outer one first, or run "
                "the inner work in its own process."
            )

    def _enter_scope(self) -> None:
        self._check_can_open()
        self._origin_ns = time.monotonic_ns()
        self._lanes = {lane_key(): "main"}
        self._token = session_var.set(self)
        self._state = "open"

    def _elapsed_ns(self) -> int:
        """Monotonic nanoseconds since the session opened."""
        return time.monotonic_ns() - self._origin_ns

    def _lane_name(self, key: object) -> str:
        """The calling task's or thread's lane, named on its first effect call (lock held)."""
        name = self._lanes.get(key)
        if name is None:
            kind = "thread" if isinstance(key, threading.Thread) else "task"
            self._lane_counts[kind] += 1
            name = f"{kind}-{self._lane_counts[kind]}"
            self._lanes[key] = name
        return name

    def _leave_scope(self) -> SessionError | None:
        """Close the session; the error to raise if it was left from another context."""
        with self._lock:  # a call on another thread sees either open or closed, never both
            self._state = "closed"
        token, self._token = self._token, None
        if token is None:
            return None
        try:
            session_var.reset(token)
        except ValueError:
            session_var.set(None)
            return SessionError(
                f"this {self.mode} session was entered in one context and left in another "
                "(for example an async fixture whose setup and teardown run in different "
                "tasks); open and close it in one with block. Its trace was closed anyway."
            )
        return None

    # --- identity (callers hold self._lock) -------------------------------------------

    def _next_identity(self, namespace: str, name: str, digest: str) -> OperationIdentity:
        """The identity of a new call: occurrences count calls in the order they start."""
        effect = f"{namespace}.{name}"
        if self._state != "open":
            raise SessionError(
                f"{effect} was called after its {self.mode} session closed (for example by a "
                "task that outlived the with block); await every effect inside the block"
            )
        occurrence = self._occurrences.get((namespace, name, digest), 0)
        return OperationIdentity(namespace, name, digest, occurrence)

    def _advance_occurrence(self, identity: OperationIdentity) -> None:
        key = (identity.namespace, identity.name, identity.fingerprint)
        self._occurrences[key] = identity.occurrence + 1

    def _release_occurrence(self, identity: OperationIdentity) -> None:
        """Give back the occurrence of a call that was not recorded, unless a later one took
        the next (then the unrecorded call leaves a gap, as it would in the program)."""
        key = (identity.namespace, identity.name, identity.fingerprint)
        if self._occurrences.get(key) == identity.occurrence + 1:
            self._occurrences[key] = identity.occurrence

    def note_violation(self, error: ToolReplayError) -> None:
        """Remember the first error that means this run cannot reproduce the recording."""
        if self._violation is None:
            self._violation = error

    def _swallowed_violation(self) -> ToolReplayError | None:
        """The error a normal exit raises when the application caught a violation."""
        violation = self._violation
        if violation is None:
            return None
        error_class = (
            ReplayContractError if isinstance(violation, ReplayContractError) else SessionError
        )
        swallowed = error_class(
            f"the block exited normally, but {type(violation).__name__} was raised during it "
            "and caught by the application, so this run does not reproduce the recording. "
            f"The error was:\n{violation}"
        )
        swallowed.__cause__ = violation
        return swallowed


_RECORD_IF_EXISTS = (
    "choose another path or delete that file (record(..., overwrite=True) or "
    "`toolreplay record --overwrite` replaces it on purpose)"
)


class RecordSession(Session):
    """Runs effect bodies and appends each completed call to a trace. See `record()`."""

    mode = "record"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        overwrite: bool = False,
        metadata: dict[str, JsonValue] | None = None,
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self._overwrite = overwrite
        self._metadata = cast(
            dict[str, JsonValue], ensure_portable(dict(metadata or {}), what="trace metadata")
        )
        self._writer: TraceWriter | None = None

    def check_before_run(self) -> None:
        """Raise what opening would raise about the trace path, creating nothing.

        The command line calls it before importing the application, so a refused
        `--output` runs none of its code. Opening the session checks again.
        """
        check_new_trace_path(self.path, overwrite=self._overwrite, if_exists=_RECORD_IF_EXISTS)

    @property
    def operation_count(self) -> int:
        """How many operations have been recorded so far."""
        return self._writer.operation_count if self._writer is not None else 0

    def __enter__(self) -> Self:
        header = TraceHeader(
            trace_id=uuid.uuid4().hex,
            mode="record",
            library_version=__version__,
            metadata=self._metadata,
        )
        self._check_can_open()
        self._writer = TraceWriter(
            self.path, header, overwrite=self._overwrite, if_exists=_RECORD_IF_EXISTS
        )
        self._enter_scope()
        offline_guard.enter(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        offline_guard.leave(self)
        failure: ToolReplayError | None = self._leave_scope()
        with self._lock:
            running = min(self._in_flight, key=lambda call: call.start_ns, default=None)
        if failure is None and exc is None and running is not None:
            failure = SessionError(
                f"{running.identity.effect} was still running on lane {running.lane} when the "
                "record session closed, so it could not be recorded (a task or thread that "
                "outlived the with block?); await every effect, and join every thread "
                "pool, inside the block"
            )
        elif failure is None and exc is None:
            failure = self._swallowed_violation()
        assert self._writer is not None
        ending = exc or failure
        self._close_trace(self._writer, session_ending(ending, local_paths=[self.path]), ending)
        if exc is None and failure is not None:
            raise failure

    @contextlib.contextmanager
    def recording(
        self, namespace: str, name: str, inputs: dict[str, JsonValue]
    ) -> Generator[PendingCall]:
        """Record one call around its body: set `call.result` inside the block.

            with session.recording("crm", "customer.get", inputs) as call:
                call.result = body(...)

        A return is recorded when the block ends, an `Exception` from the body as
        the call's failure; Tool Replay's own `SessionError` (a nested effect) and
        BaseExceptions (interrupts, cancellation) are not recorded. While the
        block runs, an effect called from it (or from tasks and threads it starts
        with the context) is nested in this call and refused.
        """
        call = self.begin(namespace, name, inputs)
        token = running_call_var.set(call)
        try:
            try:
                yield call
            except SessionError:
                raise
            except Exception as error:
                self.fail(call, error)
                raise
            self.complete(call, call.result)
        finally:
            running_call_var.reset(token)
            self.abort(call)  # a no-op once the call was recorded

    def begin(
        self, namespace: str, name: str, inputs: dict[str, JsonValue], *, owned: bool = False
    ) -> PendingCall:
        """Give a call its identity (occurrences in start order), lane and start time.

        `owned=True` hands `inputs` over: the caller built them for this call and
        nothing will change them, so they are not copied.
        """
        if not owned:
            # A copy: the trace must hold the inputs as they were, even if the body mutates them.
            inputs = cast(dict[str, JsonValue], copy_value(inputs))
        digest = fingerprint(inputs)
        lane = lane_key()
        parent = running_call_var.get()
        with self._lock:
            identity = self._next_identity(namespace, name, digest)
            if parent is not None and parent in self._in_flight:
                raise self._nested(identity, parent)
            self._advance_occurrence(identity)
            call = PendingCall(identity, inputs, self._lane_name(lane), self._elapsed_ns())
            self._in_flight.add(call)
        return call

    def _nested(self, identity: OperationIdentity, parent: PendingCall) -> NestedEffectError:
        error = NestedEffectError(
            f"{identity.effect} was called inside the body of {parent.identity.effect} "
            f"(occurrence {parent.identity.occurrence}, lane {parent.lane}), which is still "
            "running. Nested effects are refused: replay never runs the outer body, so the "
            "inner call could never be replayed. Make the outer function a plain function "
            "that calls both effects, or make the inner call plain code inside the effect."
        )
        self.note_violation(error)
        return error

    def complete(self, call: PendingCall, value: object, *, portable: bool = False) -> None:
        """Record a call that returned `value` (which must be portable JSON).

        `portable=True` says the caller has established that already (see
        `portable.loads_portable`), so it is not checked again.
        """
        if portable:
            self._append(call, Returned(cast(JsonValue, value)))
            return
        try:
            checked = ensure_portable(value, what=f"output of {call.identity.effect}")
        except NonPortableValueError as error:
            self.abort(call)
            unrecorded = NonPortableValueError(
                f"{error}. The effect ran, but its call was not recorded: make it return "
                "portable JSON.",
                path=error.path,
            )
            self.note_violation(unrecorded)
            raise unrecorded from None
        self._append(call, Returned(checked))

    def fail(self, call: PendingCall, error: Exception) -> None:
        """Record a call whose body raised `error`."""
        self._append(call, capture_failure(error))

    def abort(self, call: PendingCall) -> None:
        """Forget a call that did not complete (interrupted, or an unrecordable result)."""
        with self._lock:
            if call in self._in_flight:
                self._in_flight.discard(call)
                self._release_occurrence(call.identity)

    def _append(self, call: PendingCall, outcome: Returned | Raised) -> None:
        writer = self._writer
        assert writer is not None
        end_ns = self._elapsed_ns()  # before waiting for the lock: when the body returned
        with self._lock:
            try:
                if self._state != "open":
                    raise SessionError(
                        f"{call.identity.effect} completed after its record session closed, "
                        "so it was not recorded; await every effect inside the with block"
                    )
                writer.append(
                    Operation(
                        logical_id=writer.operation_count,
                        identity=call.identity,
                        inputs=call.inputs,
                        outcome=outcome,
                        lane=call.lane,
                        start_ns=call.start_ns,
                        end_ns=end_ns,
                    )
                )
            except TraceWriteError as error:
                # The application was told the call failed; if it carries on,
                # the trace lacks a call it made (5.1).
                self._release_occurrence(call.identity)
                self._note_write_error(error)
                self.note_violation(error)
                raise
            finally:
                self._in_flight.discard(call)


class ReplaySession(Session):
    """Answers every effect call from a trace; never runs an effect body. See `replay()`."""

    mode = "replay"

    def __init__(self, source: str | os.PathLike[str] | Trace) -> None:
        super().__init__()
        self._source = source
        self._trace: Trace | None = source if isinstance(source, Trace) else None
        self._consumed: set[int] = set()
        self._ambiguous: dict[OperationIdentity, tuple[Operation, ...]] = {}

    @property
    def trace(self) -> Trace:
        """The trace being replayed (loaded when the session opens)."""
        if self._trace is None:
            raise SessionError("the replay session has not been opened yet; use it in a with block")
        return self._trace

    @property
    def consumed_count(self) -> int:
        """How many recorded operations have been answered so far."""
        return len(self._consumed)

    def __enter__(self) -> Self:
        self._check_can_open()
        if self._trace is None:
            assert not isinstance(self._source, Trace)
            self._trace = read_trace(self._source)
        self._ambiguous = concurrent_ambiguities(self._trace)
        self._prepare(self._trace)
        self._enter_scope()
        offline_guard.enter(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        offline_guard.leave(self)
        left_elsewhere = self._leave_scope()
        # The application's own exception propagates unmodified: no check runs.
        failure = left_elsewhere or (self._contract_failure() if exc is None else None)
        self._finish(exc or failure)
        if exc is None and failure is not None:
            raise failure

    def answer(
        self, namespace: str, name: str, inputs: dict[str, JsonValue], *, read_only: bool = False
    ) -> JsonValue:
        """The recorded output for this call, or raise its recorded failure.

        The output is a copy, which the caller may change; with `read_only=True` it is
        the trace's own value, which the caller promises only to read.
        """
        digest = fingerprint(inputs)
        with self._lock:
            identity = self._next_identity(namespace, name, digest)
            try:
                operation = match_operation(self.trace, identity, inputs)
                if self._ambiguous and identity in self._ambiguous:
                    raise concurrent_ambiguity(self.trace, identity, self._ambiguous[identity])
            except ReplayContractError as error:
                self.note_violation(error)
                self._annotate_violation(error)
                raise
            # First: a fork's branch write may fail, and then the call did not happen.
            outcome = self._outcome_for(operation)
            self._advance_occurrence(identity)
            self._consumed.add(operation.logical_id)
        if isinstance(outcome, Raised):
            raise rebuild_failure(outcome)
        return outcome.value if read_only else copy_value(outcome.value)

    # --- what a fork changes ----------------------------------------------------------

    def _prepare(self, trace: Trace) -> None:
        """Runs before the session opens, after the trace is loaded."""

    def _outcome_for(self, operation: Operation) -> Returned | Raised:
        """The outcome to serve for a matched operation (called holding the lock)."""
        return operation.outcome

    def _annotate_violation(self, error: ReplayContractError) -> None:
        """Add context to a contract error before it reaches the application."""

    def _contract_failure(self) -> ToolReplayError | None:
        """The error a normal exit must raise, if the run broke the replay contract."""
        swallowed = self._swallowed_violation()
        if swallowed is not None:
            return swallowed
        trace = self.trace
        if len(self._consumed) != len(trace):
            missing = [op for op in trace.operations if op.logical_id not in self._consumed]
            return unconsumed_operations(trace, missing)
        return None

    def _finish(self, error: BaseException | None) -> None:
        """Runs once the session has closed, with the error it ends on (if any)."""


def record(
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    metadata: dict[str, JsonValue] | None = None,
) -> RecordSession:
    """Record every effect called inside the `with` block to a new trace at `path`.

    Bodies run as usual; each completed call (a return or an exception) is
    appended to the trace and flushed at once, so a crash keeps every completed
    operation. `path` must not exist unless `overwrite=True`. `metadata` is
    stored in the trace header (`{"runner": "myapp.cli:main"}` lets later
    commands default to that runner).

        with toolreplay.record("incident.trp"):
            decide_refund(order_id=7)
    """
    return RecordSession(path, overwrite=overwrite, metadata=metadata)


def replay(source: str | os.PathLike[str] | Trace) -> ReplaySession:
    """Replay a trace strictly: effect calls are answered from it, and no body runs.

    Each call must match a recorded operation exactly (effect, inputs and
    occurrence), or `ReplayMiss` is raised; on normal exit every recorded
    operation must have been called, or `UnconsumedOperationsError` is raised.
    An exception from the application propagates unchanged. `source` is a path
    or an already loaded `Trace`.

        with toolreplay.replay("incident.trp"):
            assert decide_refund(order_id=7) == "approved"
    """
    return ReplaySession(source)
