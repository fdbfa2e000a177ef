"""Sessions: the scope in which effect calls are recorded or replayed.

`Session` is what every kind shares: opening and closing its scope in the
calling context (`runtime/context.py`), the identity of each call (occurrences
counted in start order), lanes and time, the contract violations a run met,
and closing the trace it writes. Sessions do not nest. Effects may run
concurrently on several lanes (tasks or threads); an effect called inside
another effect's body is refused (`NestedEffectError`). `RecordSession`
(`runtime/recording.py`) runs bodies and writes a trace; `ReplaySession`
(`runtime/replaying.py`) answers calls from one, and `ForkSession`
(`runtime/fork.py`) builds on it.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Generator
from contextlib import AbstractContextManager
from types import TracebackType
from typing import ClassVar, Literal, Self, cast

from toolreplay.errors import (
    NestedEffectError,
    NonPortableValueError,
    RedactionError,
    ReplayContractError,
    SessionError,
    SessionNestingError,
    ToolReplayError,
    TraceWriteError,
)
from toolreplay.jsonpath import JsonPath
from toolreplay.portable import JsonValue, ensure_portable
from toolreplay.redaction.policy import EffectRedaction, RedactionPolicy, SessionRedaction
from toolreplay.redaction.scanner import DEFAULT_SCANNER
from toolreplay.redaction.secret_mode import SecretGate
from toolreplay.runtime.context import (
    PendingCall,
    current_session,
    lane_key,
    offline_guard,
    running_call_var,
    session_var,
)
from toolreplay.trace.model import (
    AttemptedCall,
    OperationIdentity,
    SessionEnding,
    UnobservedOperation,
    new_identity,
)
from toolreplay.trace.writer import TraceWriter

# The context's names are exported here too: `toolreplay.runtime.session.offline_guard`
# and the others are the paths the command line and the adapters reach them by.
__all__ = ["PendingCall", "Session", "current_session", "offline_guard", "session_var"]


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
        # What may reach the trace this session writes (RFC 0007 §4).
        self._secrets = SecretGate("error", DEFAULT_SCANNER)
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

    def body_returned(self, call: PendingCall, result: object) -> None:
        """Keep a call whose body returned `result` (`complete`); a call that could not be
        kept is given up."""
        try:
            self.complete(call, result)
        finally:
            if call in self._in_flight:  # not kept: an error, or a kind that keeps none
                self.abort(call)

    def body_raised(self, call: PendingCall, error: BaseException) -> None:
        """A call's body raised `error`: an `Exception` is kept as the call's outcome
        (`fail`); Tool Replay's own `SessionError` (a nested effect) and BaseExceptions
        (interrupts, cancellation) are not, and the call is given up."""
        try:
            if isinstance(error, Exception) and not isinstance(error, SessionError):
                self.fail(call, error)
        finally:
            if call in self._in_flight:
                self.abort(call)

    @contextlib.contextmanager
    def _running_body(
        self,
        call: PendingCall,
        around_body: AbstractContextManager[object] | None = None,
    ) -> Generator[PendingCall]:
        """Run a call's body in the block (inside `around_body`), then keep its outcome
        (`body_returned` with `call.result`, or `body_raised`).

        While the block runs, an effect called from it is nested in this call and
        refused. Whatever happens, the call is no longer in flight afterwards.
        """
        token = running_call_var.set(call)
        try:
            with around_body or contextlib.nullcontext():
                yield call
        except BaseException as error:
            running_call_var.reset(token)
            self.body_raised(call, error)
            raise
        running_call_var.reset(token)
        self.body_returned(call, call.result)

    def _portable_output(
        self, call: PendingCall, value: object, *, portable: bool, unkept: str
    ) -> JsonValue:
        """`value` checked to be portable JSON (`portable=True`: the caller checked).

        One that is not gives the call up and is a violation: the error raised says
        `unkept` (what became of the call) and asks for portable JSON.
        """
        if portable:
            return value  # pyright: ignore[reportReturnType]  # the caller checked
        try:
            return ensure_portable(value)
        except NonPortableValueError:
            self.abort(call)
        try:  # again, for a message naming the effect: built only for a refusal
            ensure_portable(value, what=f"output of {call.identity.effect}")
        except NonPortableValueError as error:
            refused = NonPortableValueError(
                f"{error}. {unkept}: make it return portable JSON.", path=error.path
            )
            self.note_violation(refused)
            raise refused from None
        raise AssertionError("unreachable: the value was refused a moment ago")

    def _refuse_when_closed(self, call: PendingCall, *, unkept: str) -> None:
        """Raise `SessionError` for a call that ended after the session closed (lock held)."""
        if self._state != "open":
            raise SessionError(
                f"{call.identity.effect} completed after its {self.mode} session closed, so "
                f"it was not {unkept}; await every effect inside the with block"
            )

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
        findings = self._secrets.scan(message, part="ending")
        subject = f"the ending message of the {self.mode} session"
        if not self._secrets.allows(findings, subject=subject):
            rules = ", ".join(sorted({finding.rule for finding in findings}))
            message = f"<message withheld: it matched secret rule {rules}>"
        return SessionEnding(ending.status, ending.error_type, message)

    def _redacted_inputs(
        self, namespace: str, name: str, inputs: dict[str, JsonValue], redact: tuple[JsonPath, ...]
    ) -> tuple[dict[str, JsonValue], EffectRedaction | None, tuple[str, ...]]:
        """A call's inputs redacted by the rules for its effect (with `redact`, its own), the
        rules, and the placeholders they wrote. A missing key is a violation (the call
        cannot be made)."""
        rules = self._redaction
        if not rules.enabled or not (redact or rules.policy_has_rules):
            return inputs, None, ()  # decided here: most calls have no rule, and a lookup costs
        try:
            redaction = rules.for_effect(f"{namespace}.{name}", redact)
        except RedactionError as error:
            self.note_violation(error)
            raise
        if redaction is None:
            return inputs, None, ()
        redacted, known = redaction.value(inputs)
        return cast(dict[str, JsonValue], redacted), redaction, known

    # --- scope ------------------------------------------------------------------------

    def __enter__(self) -> Self:
        self._open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._close(exc)

    def _open(self) -> None:
        """Open the session: what its kind prepares, then `_enter_scope`."""
        raise NotImplementedError

    def _close(self, exc: BaseException | None) -> None:
        """Close the session and its trace; `exc` is what leaves the with block (None on a
        normal exit). It raises what the session ends with, never replacing `exc`."""
        raise NotImplementedError

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

    def _take_identity(
        self, namespace: str, name: str, digest: str, taken: int = 0
    ) -> OperationIdentity:
        """The identity of a new call, its occurrence taken: occurrences count calls in the
        order they start. A call that then does not happen gives it back
        (`_release_occurrence`). `taken` is how many occurrences are taken when none is
        counted yet (see `ReplaySession._take_identity`)."""
        if self._state != "open":
            raise SessionError(
                f"{namespace}.{name} was called after its {self.mode} session closed (for "
                "example by a task that outlived the with block); await every effect inside "
                "the block"
            )
        key = (namespace, name, digest)
        occurrence = self._occurrences.get(key, taken)
        self._occurrences[key] = occurrence + 1
        return new_identity(OperationIdentity, (namespace, name, digest, occurrence))

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
