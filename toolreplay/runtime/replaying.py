"""Replay: a session that answers every effect call from a trace and never runs a body.

Matching is strict (RFC 0002); on a normal exit every recorded operation must
have been called. The methods under "what a fork changes" are the hooks
`ForkSession` (`runtime/fork.py`) overrides to patch outcomes, supply calls the
source never made, run calls live and write its branch trace.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Generator, Mapping, Sequence

from toolreplay.errors import (
    ReplayContractError,
    SessionError,
    ToolReplayError,
)
from toolreplay.failures import capture_failure, rebuild_failure
from toolreplay.jsonpath import JsonPath
from toolreplay.portable import JsonValue, copy_value, fingerprint
from toolreplay.redaction.policy import (
    EffectRedaction,
    RedactionPolicy,
    SessionRedaction,
)
from toolreplay.runtime.context import PendingCall, offline_guard, running_call_var
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
from toolreplay.runtime.session import Session
from toolreplay.trace.model import (
    Operation,
    OperationIdentity,
    Raised,
    Returned,
    new_identity,
)
from toolreplay.trace.reader import Trace, read_trace

__all__ = ["ReplaySession", "replay"]


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
        self._by_identity: Mapping[OperationIdentity, Operation] = {}
        self._in_order: tuple[Operation, ...] = ()
        self._next = 0
        self._ambiguous: dict[OperationIdentity, tuple[Operation, ...]] = {}
        self._duplicated: Mapping[OperationIdentity, Sequence[Operation]] = {}

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

    def _open(self) -> None:
        self._check_can_open()
        if self._trace is None:
            assert not isinstance(self._source, Trace)
            self._trace = read_trace(self._source)
        self._redaction = SessionRedaction.for_replay(
            self._policy, self._secrets.scanner, self._trace.header.metadata, str(self._trace.path)
        )
        self._ambiguous = concurrent_ambiguities(self._trace)
        self._duplicated = self._trace.duplicates  # indexes the trace now, not on a call
        self._by_identity = self._trace.by_identity
        # With an identity held twice, only the index (and the error it leads to) may answer.
        self._in_order = () if self._duplicated else self._trace.operations
        self._prepare(self._trace)
        self._enter_scope()
        offline_guard.enter(self)
        self._network_refusals = network_guard.enter(self, self._network)

    def _close(self, exc: BaseException | None) -> None:
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
        if self._redaction.enabled:  # tested here too: a call less for every unredacted trace
            inputs, redaction, known = self._redacted_inputs(namespace, name, inputs, redact)
        else:
            redaction, known = None, ()
        digest = fingerprint(inputs)
        parent = running_call_var.get()
        with self._lock:
            identity, operation = self._claim(namespace, name, digest)
            if parent is not None and parent in self._in_flight:
                self._release_occurrence(identity)
                raise self._nested(identity, parent)  # inside a live body
            try:
                served = self._serve(identity, operation, inputs, redaction, known)
            except BaseException as error:
                self._release_occurrence(identity)  # the call did not happen
                if isinstance(error, ReplayContractError):
                    self.note_violation(error)
                    self._annotate_violation(error)
                raise
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
        with self._running_body(call, allowing_network()) as running:
            yield running

    def complete(
        self,
        call: PendingCall,
        value: object,
        *,
        portable: bool = False,
        encoded: bytes | None = None,
    ) -> None:
        """Keep a live call (see `answer`) that returned `value`, as `record()` keeps one."""
        checked = self._portable_output(
            call,
            value,
            portable=portable,
            unkept="The effect ran live, but its call could not be kept",
        )
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
                self._refuse_when_closed(call, unkept="kept")
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
        operation: Operation | None,
        inputs: dict[str, JsonValue],
        redaction: EffectRedaction | None,
        known: tuple[str, ...],
    ) -> Returned | Raised | PendingCall:
        """The outcome for a call (called holding the lock); raises a contract error.

        `operation` is the one the trace holds once under `identity`, or None (`_claim`).
        `inputs` are redacted already; `redaction` and `known` redact whatever a
        fork writes for the call (a patch's outcome, a live call's), as under
        `record()`.
        """
        trace = self._trace
        assert trace is not None  # the session is open
        if operation is None:
            operation = match_operation(trace, identity, inputs)  # raises: it says why
        if self._ambiguous and identity in self._ambiguous:
            raise concurrent_ambiguity(trace, identity, self._ambiguous[identity])
        # First: a fork's branch write may fail, and then the call did not happen.
        outcome = self._outcome_for(operation, redaction, known)
        position = operation.logical_id
        self._consumed.add(position)
        in_order = self._in_order
        if position < len(in_order) and in_order[position] is operation:
            self._next = position + 1
        return outcome

    def _recorded(self, identity: OperationIdentity) -> Operation | None:
        """The operation the trace holds once under `identity`, or None (held twice, or not
        at all). A replay mostly calls in recorded order, so the operation after the last
        one served is tried first: comparing one identity costs less than hashing it for
        the index, and at a hundred thousand operations the index's random reads miss the
        caches. Either way the answer is the index's (held once: one operation has it).
        """
        in_order, position = self._in_order, self._next
        if position < len(in_order):
            operation = in_order[position]
            if operation.identity == identity:
                return operation
        operation = self._by_identity.get(identity)
        if operation is not None and self._duplicated and identity in self._duplicated:
            return None
        return operation

    def _claim(
        self, namespace: str, name: str, digest: str
    ) -> tuple[OperationIdentity, Operation | None]:
        """A new call's identity, its occurrence taken (`Session._take_identity`), and the
        operation the trace holds once under it (None: held twice, or not at all).

        No count is kept for the first occurrence of a call the trace holds: it is taken
        once its operation has been served, which `_consumed` says. A long replay, whose
        calls are mostly each the first with their inputs, then leaves nothing behind per
        call: a count each made replaying 100k calls a tenth slower a call than replaying 1k.

        Served means taken for good: a call that misses or fails before it is served
        gives its occurrence back, and a strict replay serves a call under the lock it
        takes its identity under. Calls the trace does not hold (a fork's supplied and
        live calls) and identities it holds twice are counted as in a recording.
        """
        first = new_identity(OperationIdentity, (namespace, name, digest, 0))
        operation = self._recorded(first)
        if operation is not None and self._state == "open":
            if operation.logical_id not in self._consumed:
                return first, operation
            identity = self._take_identity(namespace, name, digest, 1)
        else:
            identity = self._take_identity(namespace, name, digest)
        return identity, self._recorded(identity)

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
