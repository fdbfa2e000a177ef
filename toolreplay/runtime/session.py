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
import hashlib
import os
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Literal, Self, cast

from toolreplay._version import __version__
from toolreplay.errors import (
    NestedEffectError,
    NonPortableValueError,
    RedactionError,
    RedactionRuleError,
    ReplayContractError,
    SecretInTraceError,
    SecretInTraceWarning,
    SessionContextError,
    SessionError,
    SessionNestingError,
    ToolReplayError,
    TraceWriteError,
)
from toolreplay.jsonpath import JsonPath
from toolreplay.portable import JsonValue, canonical_json, copy_value, ensure_portable, fingerprint
from toolreplay.redaction.policy import (
    METADATA_KEY,
    EffectRedaction,
    RedactionPolicy,
    SecretMode,
    SessionRedaction,
    resolve_secret_mode,
)
from toolreplay.redaction.scanner import (
    DEFAULT_SCANNER,
    SecretFinding,
    SecretPart,
    SecretScanner,
    secret_in_trace_error,
)
from toolreplay.runtime.failures import capture_failure, rebuild_failure, session_ending
from toolreplay.runtime.matching import (
    concurrent_ambiguities,
    concurrent_ambiguity,
    match_operation,
    unconsumed_operations,
)
from toolreplay.runtime.network import (
    NetworkOption,
    NetworkRefusal,
    allowing_network,
    network_guard,
    network_policy,
    warn_refused,
)
from toolreplay.trace.model import (
    AttemptedCall,
    Operation,
    OperationIdentity,
    Raised,
    Returned,
    SessionEnding,
    TraceHeader,
    UnobservedOperation,
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
    # The rules that redacted the inputs and will redact the outcome, and the strings
    # they removed from the inputs (hidden wherever they reappear in the outcome).
    redaction: EffectRedaction | None = None
    known: tuple[str, ...] = ()


class Session:
    """What record and replay sessions share: scoping, occurrences, lanes and time."""

    mode: ClassVar[Literal["record", "replay", "fork"]]
    guards_process: ClassVar[bool] = True
    """Whether an open session makes the offline guard (§3.2) refuse unobserved effects.

    A per-request capture (`toolreplay.capture`) does not: refusing calls in the
    rest of a production process would change what the application does.
    """
    observing: bool = True
    """False once a capture gave up on its request: effects then run as if undecorated."""

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
        self._secret_mode: SecretMode = "error"
        self._scanner: SecretScanner = DEFAULT_SCANNER
        self._redaction = SessionRedaction(RedactionPolicy(), None, DEFAULT_SCANNER, enabled=False)
        self._ends_at_close: dict[object, Callable[[], None]] = {}

    # --- calls that run (record), or run live (a fork) ---------------------------------
    #
    # A call given its identity by `RecordSession.begin` or `ReplaySession.answer` (a
    # fork's live call) ends with exactly one of these; what runs the call (an effect's
    # wrapper, the OpenAI adapter's transport) needs no more than this to have it kept.

    def complete(
        self,
        call: PendingCall,
        value: object,
        *,
        portable: bool = False,
        encoded: bytes | None = None,
    ) -> None:
        """Keep a call that returned `value` (portable JSON; `portable=True` says the
        caller checked). `encoded` is text the secret scan may search instead of
        encoding `value` (see `SecretScanner.scan_value`)."""
        raise NotImplementedError

    def fail(self, call: PendingCall, error: Exception) -> None:
        """Keep a call whose body (or request) raised `error`."""
        raise NotImplementedError

    def abort(self, call: PendingCall) -> None:
        """Forget a call that was not kept (interrupted, an unrecordable result); it gives
        back its occurrence. A no-op once the call was kept."""
        with self._lock:
            if call in self._in_flight:
                self._in_flight.discard(call)
                self._release_occurrence(call.identity)

    def end_at_close(self, key: object, end: Callable[[], None] | None) -> None:
        """Have `end` run as this session closes, before it stops keeping calls (None: no
        longer, for the call `key`).

        For a call kept when it ends rather than when it starts (a response body,
        RFC 0006 §4.2): one the application has not finished when the block ends is
        kept then, as far as it got, instead of being lost.
        """
        with self._lock:
            if end is None:
                self._ends_at_close.pop(key, None)
            else:
                self._ends_at_close[key] = end

    def _end_open_calls(self) -> ToolReplayError | None:
        """Run the `end_at_close` callbacks still registered; the first error they raised."""
        with self._lock:
            ends = list(self._ends_at_close.values())
            self._ends_at_close.clear()
        first: ToolReplayError | None = None
        for end in ends:
            try:
                end()
            except ToolReplayError as error:  # refused by a secret rule, a write failure
                first = first or error
        return first

    @property
    def write_error(self) -> TraceWriteError | None:
        """The first failure to write this session's trace (record, fork's branch), if any."""
        return self._write_error

    @property
    def violation(self) -> ToolReplayError | None:
        """The first contract violation raised into the application (a `ReplayMiss`...),
        whether or not it caught it; None while there is none. A command reports the
        call a run left the recording at from it when the application caught it and
        then failed in another way."""
        return self._violation

    def _close_trace(
        self,
        writer: TraceWriter,
        ending: SessionEnding,
        error: BaseException | None,
        *,
        unobserved: tuple[UnobservedOperation, ...] = (),
        attempted: AttemptedCall | None = None,
    ) -> None:
        """Close the trace this session writes, without ever replacing `error`.

        `error` is the exception the session ends with. A footer that cannot be
        written is added to it as a note (RFC 0001 §5.2); with no such error, the
        `TraceWriteError` is raised.
        """
        try:
            writer.close(ending, unobserved=unobserved, attempted=attempted)
        except TraceWriteError as failure:
            self._note_write_error(failure)
            if error is None:
                raise
            error.add_note(f"Tool Replay could not finish the trace: {failure}")

    def _note_write_error(self, failure: TraceWriteError) -> None:
        if self._write_error is None:
            self._write_error = failure

    def _private_ending(self, ending: SessionEnding) -> SessionEnding:
        """The ending with its message redacted, and withheld if a secret rule still matches."""
        message = ending.message
        if message is None:
            return ending
        message = self._redaction.text(message)
        if self._secret_mode != "off":
            findings = self._scanner.scan_value(message, part="ending")
            if findings and self._secret_mode == "warn":
                self._warn(findings, subject=f"the ending message of the {self.mode} session")
            elif findings:
                rules = ", ".join(sorted({finding.rule for finding in findings}))
                message = f"<message withheld: it matched secret rule {rules}>"
        return SessionEnding(ending.status, ending.error_type, message)

    def _effect_redaction(
        self, effect: str, effect_paths: tuple[JsonPath, ...]
    ) -> EffectRedaction | None:
        """The rules for `effect`; a missing key is a violation (the call cannot be made)."""
        try:
            return self._redaction.for_effect(effect, effect_paths)
        except RedactionError as error:
            self.note_violation(error)
            raise

    def _warn(self, findings: list[SecretFinding], *, subject: str) -> None:
        """Warn that `subject` (what is being written) matches secret rules."""
        error = secret_in_trace_error(
            findings,
            what=f"{subject} was written anyway (secret mode 'warn')",
            advice="Redact it (RFC 0007) so that it is not written.",
            verb="holds",
        )
        warnings.warn(SecretInTraceWarning(str(error)), stacklevel=4)

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

    def tolerates(self, effect: str, error: Exception) -> bool:
        """Whether `effect` may run unobserved after its inputs failed to bind with `error`.

        Sessions refuse (False: the error reaches the caller); a capture gives up
        on its request instead, so the application behaves as without it.
        """
        del effect, error
        return False

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
        redaction: RedactionPolicy | None = None,
        secrets: SecretMode | None = None,
        scanner: SecretScanner | None = None,
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self._overwrite = overwrite
        self._metadata = cast(
            dict[str, JsonValue], ensure_portable(dict(metadata or {}), what="trace metadata")
        )
        if METADATA_KEY in self._metadata:
            raise RedactionRuleError(
                f"trace metadata: the key {METADATA_KEY!r} is reserved for the redaction key "
                "id that Tool Replay records; choose another name"
            )
        self._policy = redaction
        self._secret_mode = resolve_secret_mode(secrets)
        self._scanner = scanner or DEFAULT_SCANNER
        self._writer: TraceWriter | None = None
        self._abandoned: SecretInTraceError | None = None
        if self._secret_mode != "off":
            findings = self._scanner.scan_value(self._metadata, part="metadata")
            if findings:
                what = "the trace metadata given to record()"
                self._refuse_or_allow(findings, what=what, subject="the trace metadata")

    @property
    def abandoned(self) -> SecretInTraceError | None:
        """Why a recording in secret mode "abandon" stopped and removed its trace, if it did."""
        return self._abandoned

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
        self._check_can_open()
        self._redaction = SessionRedaction.for_recording(self._policy, self._scanner)
        metadata = dict(self._metadata)
        entry = self._redaction.metadata_entry()
        if entry is not None:
            metadata[METADATA_KEY] = entry
        header = TraceHeader(
            trace_id=uuid.uuid4().hex,
            mode="record",
            library_version=__version__,
            metadata=metadata,
        )
        if self._abandoned is None:
            self._writer = TraceWriter(
                self.path, header, overwrite=self._overwrite, if_exists=_RECORD_IF_EXISTS
            )
        self._enter_scope()
        if self.guards_process:
            offline_guard.enter(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        ended = self._end_open_calls()
        if self.guards_process:
            offline_guard.leave(self)
        failure: ToolReplayError | None = self._leave_scope() or ended
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
        ending = exc or failure
        with self._lock:
            writer = self._writer
        if writer is not None:
            summary = self._private_ending(session_ending(ending, local_paths=[self.path]))
            self._close_trace(writer, summary, ending)
        if exc is None and failure is not None:
            raise failure

    def _refuse_or_allow(self, findings: list[SecretFinding], *, what: str, subject: str) -> bool:
        """Act on findings by the secret mode: True when the value may be written anyway.

        "error" raises `SecretInTraceError` (`what` says what was refused), "warn"
        warns (that `subject` was written), "abandon" stops the recording
        (removing its trace) and lets the application carry on.
        """
        if self._secret_mode == "warn":
            self._warn(findings, subject=subject)
            return True
        paths = sorted({finding.path for finding in findings if finding.part != "error"})
        suggestion = (
            f"redact it (@effect(..., redact={paths!r}), toolreplay.redact(...) or "
            "record(..., redaction=RedactionPolicy(...)))"
            if paths
            else "redact it (RedactionPolicy(redact_secrets=True) or a pattern)"
        )
        error = secret_in_trace_error(
            findings,
            what=what,
            advice=(
                f"Nothing of it was written. To record this call, {suggestion}; or choose "
                "record(..., secrets='warn' or 'off') on purpose (RFC 0007)."
            ),
        )
        if self._secret_mode == "abandon":
            self._abandon(error)
            return False
        self.note_violation(error)
        raise error from None

    def _abandon(self, reason: SecretInTraceError) -> None:
        """Stop recording for good: remove the trace; later calls run unrecorded."""
        with self._lock:
            if self._abandoned is None:
                self._abandoned = reason
            writer, self._writer = self._writer, None
            if writer is not None:
                writer.discard()

    def _check_secrets(
        self,
        value: JsonValue,
        *,
        part: SecretPart,
        call: PendingCall,
        encoded: bytes | None = None,
    ) -> bool:
        """Whether a part of a call may be written (see `_refuse_or_allow`)."""
        if self._abandoned is not None:
            self.abort(call)
            return False
        if self._secret_mode == "off":
            return True
        effect = call.identity.effect
        findings = self._scanner.scan_value(value, part=part, effect=effect, encoded=encoded)
        if not findings:
            return True
        if part == "inputs":
            what = f"{effect} was refused before its body ran"
        else:
            what = f"{effect} ran, but its call was not recorded"
        try:
            allowed = self._refuse_or_allow(findings, what=what, subject=f"the {part} of {effect}")
        except SecretInTraceError:
            self.abort(call)
            raise
        if not allowed:
            self.abort(call)
        return allowed

    @contextlib.contextmanager
    def recording(
        self,
        namespace: str,
        name: str,
        inputs: dict[str, JsonValue],
        redact: tuple[JsonPath, ...] = (),
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
        call = self.begin(namespace, name, inputs, redact)
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
        self,
        namespace: str,
        name: str,
        inputs: dict[str, JsonValue],
        redact: tuple[JsonPath, ...] = (),
        *,
        owned: bool = False,
    ) -> PendingCall:
        """Give a call its identity (occurrences in start order), lane and start time.

        The inputs are redacted first (RFC 0007), so the fingerprint and the
        trace only ever see placeholders, and then scanned for secrets.
        `redact` are the effect's own path rules. `owned=True` hands `inputs`
        over: the caller built them for this call and nothing will change them,
        so they are not copied.
        """
        redaction = self._effect_redaction(f"{namespace}.{name}", redact)
        known: tuple[str, ...] = ()
        if redaction is not None:
            redacted, known = redaction.value(inputs)
            inputs = cast(dict[str, JsonValue], redacted)
        if not owned:
            # A copy: the trace must hold the inputs as they were, even if the body mutates
            # them (redaction copies only what it replaces).
            inputs = cast(dict[str, JsonValue], copy_value(inputs))
        encoded = canonical_json(inputs)
        digest = hashlib.sha256(encoded).hexdigest()
        lane = lane_key()
        parent = running_call_var.get()
        with self._lock:
            identity = self._next_identity(namespace, name, digest)
            if parent is not None and parent in self._in_flight:
                raise self._nested(identity, parent)
            self._advance_occurrence(identity)
            call = PendingCall(
                identity, inputs, self._lane_name(lane), self._elapsed_ns(), None, redaction, known
            )
            self._in_flight.add(call)
        self._check_secrets(inputs, part="inputs", call=call, encoded=encoded)
        return call

    def complete(
        self,
        call: PendingCall,
        value: object,
        *,
        portable: bool = False,
        encoded: bytes | None = None,
    ) -> None:
        """Record a call that returned `value` (which must be portable JSON).

        `portable=True` says the caller has established that already (see
        `portable.loads_checked`), so it is not checked again; it is still
        redacted and scanned. `encoded` is text the secret scan may search instead
        of encoding `value` (see `SecretScanner.scan_value`); it is used only when
        no redaction changes the value.
        """
        if self._abandoned is not None:  # nothing more is recorded, nothing is refused
            self.abort(call)
            return
        if portable:
            checked = cast(JsonValue, value)
        else:
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
        if call.redaction is not None:
            checked, _ = call.redaction.value(checked, call.known)
            encoded = None  # it holds the value before redaction
        if self._check_secrets(checked, part="output", call=call, encoded=encoded):
            self._append(call, Returned(checked))

    def fail(self, call: PendingCall, error: Exception) -> None:
        """Record a call whose body raised `error`."""
        raised = capture_failure(error)
        if call.redaction is not None:
            raised = call.redaction.failure(raised, call.known)
        failure: dict[str, JsonValue] = {"message": raised.message, "args": raised.args}
        if self._check_secrets(failure, part="error", call=call):
            self._append(call, raised)

    def _append(self, call: PendingCall, outcome: Returned | Raised) -> None:
        end_ns = self._elapsed_ns()  # before waiting for the lock: when the body returned
        with self._lock:
            writer = self._writer
            if writer is None:  # abandoned (secret mode "abandon"): nothing more is written
                self._in_flight.discard(call)
                return
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

    def __init__(
        self,
        source: str | os.PathLike[str] | Trace,
        *,
        redaction: RedactionPolicy | None = None,
        network: NetworkOption = "block",
    ) -> None:
        super().__init__()
        self._policy = redaction
        self._network = network_policy(network)
        self._network_refusals: list[NetworkRefusal] = []
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

    @property
    def network_refusals(self) -> tuple[NetworkRefusal, ...]:
        """The outbound connections and lookups the network guard refused so far (§10)."""
        return tuple(self._network_refusals)

    def __enter__(self) -> Self:
        self._check_can_open()
        if self._trace is None:
            assert not isinstance(self._source, Trace)
            self._trace = read_trace(self._source)
        self._redaction = SessionRedaction.for_replay(
            self._policy, self._scanner, self._trace.header.metadata, str(self._trace.path)
        )
        self._ambiguous = concurrent_ambiguities(self._trace)
        self._prepare(self._trace)
        self._enter_scope()
        offline_guard.enter(self)
        self._network_refusals = network_guard.enter(self, self._network)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        ended = self._end_open_calls()  # a fork's live responses still open
        network_guard.leave(self)
        offline_guard.leave(self)
        left_elsewhere = self._leave_scope()
        # The application's own exception propagates unmodified: no check runs.
        failure = left_elsewhere or ended or (self._contract_failure() if exc is None else None)
        self._finish(exc or failure)
        warn_refused(self._network_refusals, what=f"{self.mode} session", stacklevel=3)
        if exc is None and failure is not None:
            raise failure

    def answer(
        self,
        namespace: str,
        name: str,
        inputs: dict[str, JsonValue],
        redact: tuple[JsonPath, ...] = (),
        *,
        read_only: bool = False,
    ) -> JsonValue | PendingCall:
        """The recorded output for this call, or raise its recorded failure.

        The inputs are redacted as the recording redacted them (RFC 0007), then
        matched; `redact` are the effect's own path rules. A fork may return a
        `PendingCall` instead: the call may run live, and the caller runs the
        body inside `running_live` (or, sending a request itself, with the
        network allowed, ends the call with `complete`, `fail` or `abort`). The
        output is a copy, which the caller may change; with `read_only=True` it
        is the trace's own value, which the caller promises only to read.
        """
        redaction = self._effect_redaction(f"{namespace}.{name}", redact)
        known: tuple[str, ...] = ()
        if redaction is not None:
            redacted, known = redaction.value(inputs)
            inputs = cast(dict[str, JsonValue], redacted)
        digest = fingerprint(inputs)
        parent = running_call_var.get()
        with self._lock:
            identity = self._next_identity(namespace, name, digest)
            if parent is not None and parent in self._in_flight:
                raise self._nested(identity, parent)  # inside a live body
            try:
                served = self._serve(identity, inputs, redaction, known)
            except ReplayContractError as error:
                self.note_violation(error)
                self._annotate_violation(error)
                raise
            self._advance_occurrence(identity)
            if isinstance(served, PendingCall):
                self._in_flight.add(served)  # until its body completes
                return served
        if isinstance(served, Raised):
            raise rebuild_failure(served)
        return served.value if read_only else copy_value(served.value)

    @contextlib.contextmanager
    def running_live(self, call: PendingCall) -> Generator[PendingCall]:
        """Run the body of a call `answer` let run live: set `call.result` in the block.

        A return or an `Exception` is kept as the call's outcome (`complete`,
        `fail`); a non-portable return value is refused as under `record()`. An
        effect called from the body is nested in it and refused. The body may
        connect while the network is blocked (§10). Whatever happens, the call is
        no longer in flight afterwards, and an unkept call gives back its
        occurrence.
        """
        token = running_call_var.set(call)
        try:
            with allowing_network():
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
            self.abort(call)  # a no-op once the call was kept

    def complete(
        self,
        call: PendingCall,
        value: object,
        *,
        portable: bool = False,
        encoded: bytes | None = None,
    ) -> None:
        """Keep a live call (see `answer`) that returned `value`, as `record()` keeps one."""
        if portable:
            checked = cast(JsonValue, value)
        else:
            try:
                checked = ensure_portable(value, what=f"output of {call.identity.effect}")
            except NonPortableValueError as error:
                self.abort(call)
                unkept = NonPortableValueError(
                    f"{error}. The effect ran live, but its call could not be kept: make it "
                    "return portable JSON.",
                    path=error.path,
                )
                self.note_violation(unkept)
                raise unkept from None
        self._keep_live(call, Returned(checked), encoded)

    def fail(self, call: PendingCall, error: Exception) -> None:
        """Keep a live call whose body (or request) raised `error`."""
        self._keep_live(call, capture_failure(error), None)

    def _keep_live(
        self, call: PendingCall, outcome: Returned | Raised, encoded: bytes | None
    ) -> None:
        with self._lock:
            if call not in self._in_flight:
                return  # given up already (`abort`), or kept
            try:
                if self._state != "open":
                    raise SessionError(
                        f"{call.identity.effect} completed after its {self.mode} session "
                        "closed, so it was not kept; await every effect inside the with block"
                    )
                self._record_live(call, outcome, encoded)
            except BaseException:
                self._release_occurrence(call.identity)
                raise
            finally:
                self._in_flight.discard(call)

    # --- what a fork changes ----------------------------------------------------------

    def _prepare(self, trace: Trace) -> None:
        """Runs before the session opens, after the trace is loaded."""

    def _serve(
        self,
        identity: OperationIdentity,
        inputs: dict[str, JsonValue],
        redaction: EffectRedaction | None,
        known: tuple[str, ...],
    ) -> Returned | Raised | PendingCall:
        """The outcome for a call (called holding the lock); raises a contract error.

        `inputs` are redacted already; `redaction` and `known` redact whatever a
        fork writes for the call (a patch's outcome, a live call's), as under
        `record()`.
        """
        operation = match_operation(self.trace, identity, inputs)
        if self._ambiguous and identity in self._ambiguous:
            raise concurrent_ambiguity(self.trace, identity, self._ambiguous[identity])
        # First: a fork's branch write may fail, and then the call did not happen.
        outcome = self._outcome_for(operation, redaction, known)
        self._consumed.add(operation.logical_id)
        return outcome

    def _record_live(
        self, call: PendingCall, outcome: Returned | Raised, encoded: bytes | None
    ) -> None:
        """Keep a call that ran live (only a fork lets one run; lock held)."""
        raise SessionError(f"{call.identity.effect} cannot run live in a strict replay")

    def _outcome_for(
        self, operation: Operation, redaction: EffectRedaction | None, known: tuple[str, ...]
    ) -> Returned | Raised:
        """The outcome to serve for a matched operation (called holding the lock)."""
        del redaction, known
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
    redaction: RedactionPolicy | None = None,
    secrets: SecretMode | None = None,
    scanner: SecretScanner | None = None,
) -> RecordSession:
    """Record every effect called inside the `with` block to a new trace at `path`.

    Bodies run as usual; each completed call (a return or an exception) is
    appended to the trace and flushed at once, so a crash keeps every completed
    operation. `path` must not exist unless `overwrite=True`. `metadata` is
    stored in the trace header (`{"runner": "myapp.cli:main"}` lets later
    commands default to that runner).

    Privacy (RFC 0007): `redaction` adds rules to the process-wide policy
    (`toolreplay.redact`) and the effects' own; redacted values are written as
    keyed-hash placeholders. `secrets` says what to do when a value about to be
    written matches a secret rule of `scanner` (the built-in rules by default):
    "error" (the default, or `TOOLREPLAY_SECRETS`) fails the effect call with
    `SecretInTraceError`, "warn" writes it with a warning, "abandon" removes the
    trace and records nothing more, "off" does not scan. The trace file is
    private to its owner (0600).

        with toolreplay.record("incident.trp"):
            decide_refund(order_id=7)
    """
    return RecordSession(
        path,
        overwrite=overwrite,
        metadata=metadata,
        redaction=redaction,
        secrets=secrets,
        scanner=scanner,
    )


def replay(
    source: str | os.PathLike[str] | Trace,
    *,
    redaction: RedactionPolicy | None = None,
    network: NetworkOption = "block",
) -> ReplaySession:
    """Replay a trace strictly: effect calls are answered from it, and no body runs.

    Each call must match a recorded operation exactly (effect, inputs and
    occurrence), or `ReplayMiss` is raised; on normal exit every recorded
    operation must have been called, or `UnconsumedOperationsError` is raised.
    An exception from the application propagates unchanged. `source` is a path
    or an already loaded `Trace`. A trace redacted when recorded is replayed by
    redacting each call's inputs the same way, which needs the same key
    (`redaction`'s, the process-wide policy's, or `TOOLREPLAY_REDACTION_KEY`).

    While the session is open the network is blocked (`network="block"`, the
    default): every outbound connection in the process, from any thread, is
    refused with `NetworkBlockedError`, and a `NetworkBlockedWarning` at the end
    names what was refused (`session.network_refusals` lists it). Give a list of
    hosts (`network=["localhost:5432"]`) to let those through, or "allow".

        with toolreplay.replay("incident.trp"):
            assert decide_refund(order_id=7) == "approved"
    """
    return ReplaySession(source, redaction=redaction, network=network)
