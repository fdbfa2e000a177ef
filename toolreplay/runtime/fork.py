"""Fork: strict replay of a source trace with some recorded facts changed.

A fork answers every call from the source trace, like `replay()`, except that
patched calls get their patch's outcome (`replace_output`, `replace_error`),
calls the source never saw get a supply patch's outcome (`supply_output`,
`supply_error`; one without inputs answers the next such call of its effect),
and effects named in `live=` run their real bodies for calls the source does
not hold. A patch holding an adapter's recipe (`reply(...)`, `edit(...)`) gets
its output from that adapter's resolver (`runtime/recipes.py`), for the call it
answers. Nothing else runs, and nothing is guessed: any other
unrecorded call stops the fork with `ReplayMiss`, and the branch's footer keeps
that attempted call. What the application observed is written, call by call, to
a new branch trace whose operations carry their lineage (`origin`, `patch_id`,
`source_logical_operation_id`), so `diff()` can compare the branch with its
source and say which outcomes a patch set. The source is only read.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from toolreplay._version import __version__
from toolreplay.errors import (
    ForkOptionError,
    LiveCallLimitError,
    ReplayContractError,
    ToolReplayError,
    TraceError,
    TraceWriteError,
    UnappliedPatchError,
)
from toolreplay.failures import session_ending
from toolreplay.files import source_conflict
from toolreplay.names import effect_name_problem
from toolreplay.patches import Patch
from toolreplay.portable import JsonValue
from toolreplay.redaction.policy import EffectRedaction, RedactionPolicy
from toolreplay.redaction.scanner import (
    DEFAULT_SCANNER,
    SecretPart,
    SecretScanner,
    secret_in_trace_error,
)
from toolreplay.redaction.secret_mode import SecretGate, SecretMode, resolve_secret_mode
from toolreplay.runtime.context import PendingCall, lane_key
from toolreplay.runtime.matching import replay_miss
from toolreplay.runtime.network import NetworkOption
from toolreplay.runtime.patch_plan import PatchPlan
from toolreplay.runtime.replaying import ReplaySession
from toolreplay.trace.codec import encode_operation_fields, encode_outcome, encode_value
from toolreplay.trace.model import (
    AttemptedCall,
    Operation,
    OperationIdentity,
    Origin,
    Raised,
    Returned,
    TraceHeader,
    UnobservedOperation,
)
from toolreplay.trace.reader import Trace
from toolreplay.trace.writer import TraceWriter, check_new_trace_path

__all__ = ["DEFAULT_LIVE_LIMIT", "ForkSession", "fork", "live_pattern_problem"]

Unobserved = Literal["error", "allow"]
DEFAULT_LIVE_LIMIT = 20
"""How many live calls a fork makes at most, unless told otherwise (`live_limit`)."""
_WILDCARD = re.compile(r"(?P<prefix>.+)\.\*")


def live_pattern_problem(pattern: str) -> str | None:
    """What is wrong with a `live=` entry (an effect name or `namespace.*`), or None."""
    if type(pattern) is not str:  # pyright: ignore[reportUnnecessaryComparison]
        return f"a live effect must be a string, got {type(pattern).__name__}"
    wildcard = _WILDCARD.fullmatch(pattern)
    dotted = wildcard["prefix"] + ".x" if wildcard else pattern
    namespace, _, name = dotted.partition(".")
    problem = effect_name_problem(namespace, name)
    if problem is None:
        return None
    return (
        f"live effect {pattern!r}: give an exact effect name ('crm.customer.get') or a "
        "namespace wildcard ('kb.*', 'crm.customer.*')"
    )


def _matches_live(effect: str, patterns: tuple[str, ...]) -> bool:
    return any(
        effect == pattern or (pattern.endswith(".*") and effect.startswith(pattern[:-1]))
        for pattern in patterns
    )


_FORK_IF_EXISTS = "give the fork a new branch path or delete that file"


_PATCH_REFUSED = "was not applied and the call not answered"


class ForkSession(ReplaySession):
    """Replays a source trace with patches applied, writing a branch trace. See `fork()`."""

    mode = "fork"

    def __init__(
        self,
        source: str | os.PathLike[str] | Trace,
        branch: str | os.PathLike[str],
        patches: Iterable[Patch],
        *,
        live: Iterable[str] = (),
        live_limit: int = DEFAULT_LIVE_LIMIT,
        unobserved: Unobserved = "error",
        redaction: RedactionPolicy | None = None,
        secrets: SecretMode | None = None,
        scanner: SecretScanner | None = None,
        network: NetworkOption = "block",
    ) -> None:
        super().__init__(source, redaction=redaction, network=network)
        self._secrets = SecretGate(
            resolve_secret_mode(secrets, use="fork"), scanner or DEFAULT_SCANNER
        )
        self.branch_path = Path(branch)
        self.patches = tuple(patches)
        if isinstance(live, str):
            raise ForkOptionError(
                f"live must be a list of effect names, not the string {live!r}: write "
                f"live=[{live!r}]"
            )
        self.live = tuple(live)
        for pattern in self.live:
            problem = live_pattern_problem(pattern)
            if problem is not None:
                raise ForkOptionError(problem)
        if type(live_limit) is not int or live_limit < 0:
            raise ForkOptionError(
                f"live_limit must be a whole number of live calls, 0 or more (the default is "
                f"{DEFAULT_LIVE_LIMIT}), got {live_limit!r}"
            )
        self.live_limit = live_limit
        if unobserved not in ("error", "allow"):
            raise ForkOptionError(
                f'unobserved must be "error" (the default: every source operation must be '
                f'called) or "allow", got {unobserved!r}'
            )
        self.unobserved: Unobserved = unobserved
        self._plan = PatchPlan(self.patches)
        self._position: int | None = None  # the last source operation served
        self._attempted: AttemptedCall | None = None
        self._live_count = 0
        self._live_started = 0  # kept or not: what `live_limit` bounds
        self._writer: TraceWriter | None = None

    @property
    def patched_count(self) -> int:
        """How many patched or supplied calls the application has made so far."""
        return self._plan.applied_count

    @property
    def live_count(self) -> int:
        """How many calls ran live and were kept in the branch so far (`live=`)."""
        return self._live_count

    @property
    def attempted(self) -> AttemptedCall | None:
        """The first call that neither the source, a patch nor `live` could answer."""
        return self._attempted

    def check_before_run(self, trace: Trace) -> None:
        """Raise what opening would raise about `trace`'s patches and the branch path.

        Creates nothing: the command line calls it before importing the
        application, so a refused patch or `--output` runs none of its code.
        Opening the session checks again, and then also refuses a supply patch
        for an effect that neither the source records nor the (by then
        imported) application declares.
        """
        self._check(trace, effects_declared=False)

    def _check(self, trace: Trace, *, effects_declared: bool) -> None:
        self._plan.resolve(trace, effects_declared=effects_declared)
        problem = source_conflict(self.branch_path, [trace.path])
        if problem is not None:
            raise TraceError(
                f"{self.branch_path}: the branch would overwrite its own source trace: it "
                f"{problem}; give the fork a new path",
                path=self.branch_path,
            )
        check_new_trace_path(self.branch_path, if_exists=_FORK_IF_EXISTS)

    def _prepare(self, trace: Trace) -> None:
        self._check(trace, effects_declared=True)
        header = TraceHeader(
            trace_id=uuid.uuid4().hex,
            mode="fork",
            library_version=__version__,
            metadata=dict(trace.header.metadata),
            source_trace_id=trace.header.trace_id,
        )
        self._writer = TraceWriter(self.branch_path, header, if_exists=_FORK_IF_EXISTS)

    def _serve(
        self,
        identity: OperationIdentity,
        operation: Operation | None,
        inputs: dict[str, JsonValue],
        redaction: EffectRedaction | None,
        known: tuple[str, ...],
    ) -> Returned | Raised | PendingCall:
        trace = self.trace
        if operation is not None or identity in trace.duplicates:  # the source holds it
            return super()._serve(identity, operation, inputs, redaction, known)
        effect = identity.effect
        planned = self._plan.supplying(identity)
        if planned is not None:
            what = f"{planned.what} for {effect}"
            self._check_branch_secrets(
                inputs, part="inputs", effect=effect, what=what, refused=_PATCH_REFUSED
            )
            near = self._position
            outcome = self._plan.outcome(planned, trace, identity, inputs, None, near=near)
            written = self._branch_outcome(outcome, redaction, known, effect=effect, what=what)
            self._append(identity, inputs, written, "supplied", planned.patch.patch_id, None)
            self._plan.applied(planned)
            return outcome
        if _matches_live(effect, self.live):
            if self._live_started >= self.live_limit:
                raise self._over_the_limit(identity, inputs)
            # Redacted and scanned as `record()` does, before the body runs.
            self._check_branch_secrets(
                inputs,
                part="inputs",
                effect=effect,
                what=f"live call of {effect}",
                refused="was refused before its body ran",
            )
            self._live_started += 1
            return PendingCall(
                identity,
                inputs,
                self._lane_name(lane_key()),
                self._elapsed_ns(),
                None,
                redaction,
                known,
            )
        miss = replay_miss(trace, identity, inputs)
        if self._attempted is None:
            self._attempted = AttemptedCall(identity, inputs)
        miss.add_note(
            f"To let the fork go on past this call, give it an outcome: "
            f"toolreplay.supply_output(effect={identity.effect!r}, value=...) answers the next "
            f"call of {identity.effect} the source does not hold (add inputs=<the inputs "
            f"above>, occurrence={identity.occurrence} to answer only this one), or "
            f"supply_error(...); or let {identity.effect} run live with "
            f"fork(..., live=[{identity.effect!r}])."
        )
        raise miss

    def _over_the_limit(
        self, identity: OperationIdentity, inputs: dict[str, JsonValue]
    ) -> LiveCallLimitError:
        """The error for a live call past `live_limit`; nothing of it is sent or run."""
        if self._attempted is None:
            self._attempted = AttemptedCall(identity, inputs)
        return LiveCallLimitError(
            f"{identity.effect} (occurrence {identity.occurrence}) was not run live: this fork "
            f"already made {self._live_started} live calls, its bound (live_limit="
            f"{self.live_limit}), so nothing of this call was sent. An application that keeps "
            "calling (an agent whose model asks for one tool call after another) stops here "
            "instead of running on. If the calls are expected, raise the bound: fork(..., "
            f"live_limit={max(2 * self.live_limit, self.live_limit + 10)}), or `toolreplay fork "
            "--live-limit N`; otherwise answer the call that starts the loop with a patch.",
            limit=self.live_limit,
            count=self._live_started,
            effect=identity.effect,
        )

    def _outcome_for(
        self, operation: Operation, redaction: EffectRedaction | None, known: tuple[str, ...]
    ) -> Returned | Raised:
        planned = self._plan.replacing(operation.identity)
        outcome: Returned | Raised = operation.outcome
        written = outcome
        if planned is not None:
            outcome = self._plan.outcome(
                planned,
                self.trace,
                operation.identity,
                operation.inputs,
                operation.outcome,
                near=operation.logical_id,
            )
            written = self._branch_outcome(
                outcome,
                redaction,
                known,
                effect=operation.effect,
                what=f"{planned.what} for {operation.effect}",
            )
        self._append(
            operation.identity,
            operation.inputs,
            written,
            "recorded" if planned is None else "patched",
            None if planned is None else planned.patch.patch_id,
            operation.logical_id,
        )
        self._position = operation.logical_id
        if planned is not None:
            self._plan.applied(planned)
        return outcome

    def _record_live(
        self, call: PendingCall, outcome: Returned | Raised, encoded: bytes | None
    ) -> None:
        written = self._branch_outcome(
            outcome,
            call.redaction,
            call.known,
            effect=call.identity.effect,
            what=f"live call of {call.identity.effect}",
            refused="ran, but its call was not kept",
            encoded=encoded,
        )
        self._append(
            call.identity, call.inputs, written, "live", None, None, call.lane, call.start_ns
        )
        self._live_count += 1

    def _branch_outcome(
        self,
        outcome: Returned | Raised,
        redaction: EffectRedaction | None,
        known: tuple[str, ...],
        *,
        effect: str,
        what: str,
        refused: str = _PATCH_REFUSED,
        encoded: bytes | None = None,
    ) -> Returned | Raised:
        """An outcome the source does not hold, as the branch may keep it (RFC 0007).

        Redacted by the effect's rules, then scanned for secrets, as `record()`
        treats an outcome; the application is served the unredacted one.
        `encoded` is text the scan may search first, as in `RecordSession.complete`.
        """
        if isinstance(outcome, Returned):
            value = outcome.value
            if redaction is not None:
                value, _ = redaction.value(value, known)
                encoded = None  # it holds the value before redaction
            self._check_branch_secrets(
                value, part="output", effect=effect, what=what, refused=refused, encoded=encoded
            )
            return Returned(value)
        if redaction is not None:
            outcome = redaction.failure(outcome, known)
        failure: dict[str, JsonValue] = {"message": outcome.message, "args": outcome.args}
        self._check_branch_secrets(failure, part="error", effect=effect, what=what, refused=refused)
        return outcome

    def _check_branch_secrets(
        self,
        value: JsonValue,
        *,
        part: SecretPart,
        effect: str,
        what: str,
        refused: str,
        encoded: bytes | None = None,
    ) -> None:
        """Refuse (or warn about) new content for the branch that matches a secret rule."""
        findings = self._secrets.scan(value, part=part, effect=effect, encoded=encoded)
        subject = f"the {part} of the {what} the fork wrote to the branch"
        if self._secrets.allows(findings, subject=subject):
            return
        error = secret_in_trace_error(
            findings,
            what=f"the {what} {refused}",
            advice="Nothing of it was written to the branch. Redact it (RFC 0007), put a "
            "placeholder or a made-up value in a patch, or fork with secrets='warn' or 'off' "
            "on purpose.",
        )
        self.note_violation(error)
        raise error

    def _append(
        self,
        identity: OperationIdentity,
        inputs: dict[str, JsonValue],
        outcome: Returned | Raised,
        origin: Origin,
        patch_id: str | None,
        source_id: int | None,
        lane: str | None = None,
        start_ns: int | None = None,
    ) -> None:
        """Write one call to the branch (lock held); by default one answered at once."""
        writer = self._writer
        assert writer is not None
        now_ns = self._elapsed_ns()
        logical_id = writer.operation_count
        try:
            line = encode_operation_fields(
                logical_id,
                identity,
                encode_value(inputs),
                encode_outcome(outcome),
                origin,
                patch_id,
                source_id,
                self._lane_name(lane_key()) if lane is None else lane,
                now_ns if start_ns is None else start_ns,
                now_ns,
            )
            writer.append_line(line, logical_id)
        except TraceWriteError as error:
            # The call is not answered: the branch must hold what the application saw.
            self._note_write_error(error)
            self.note_violation(error)
            raise

    def _annotate_violation(self, error: ReplayContractError) -> None:
        error.add_note(self._branch_note())

    def _contract_failure(self) -> ToolReplayError | None:
        # An unapplied patch always leaves its target unconsumed too; say the
        # more specific thing first.
        unapplied = self._plan.unapplied()
        failure: ToolReplayError | None
        if unapplied and self._violation is None:
            failure = UnappliedPatchError(
                "\n".join(
                    [
                        f"The application finished without making {len(unapplied)} patched "
                        "call(s), so the fork did not exercise what it was asked to:",
                        *(
                            f"  - patch {p.patch_id} ({p.kind}): {p.describe_target(80)}"
                            for p in unapplied
                        ),
                        f"{len(self.trace) - self.consumed_count} of the {len(self.trace)} "
                        "source operations were never called: the application took another "
                        "path than the patches expected before reaching the patched call "
                        "(a patch for the next new call of an effect waits for a call the "
                        "source does not hold). Remove the patches it never used.",
                    ]
                ),
                patch_ids=[p.patch_id for p in unapplied],
            )
        elif self.unobserved == "allow":
            failure = self._swallowed_violation()
        else:
            failure = super()._contract_failure()
        if failure is not None:
            failure.add_note(self._branch_note())
        return failure

    def _finish(self, error: BaseException | None) -> None:
        if self._writer is None:
            return
        paths = [self.branch_path, self.branch_path.resolve(), self.trace.path]
        ending = self._private_ending(
            session_ending(error, local_paths=sorted(paths, key=lambda p: -len(str(p))))
        )
        unobserved = tuple(
            UnobservedOperation(op.logical_id, op.identity)
            for op in self.trace.operations
            if op.logical_id not in self._consumed
        )
        with self._lock:  # a late call on another thread must not write after the footer
            self._close_trace(
                self._writer, ending, error, unobserved=unobserved, attempted=self._attempted
            )

    def _branch_note(self) -> str:
        return (
            f"The fork's branch trace, with every call observed before this point and how the "
            f"run ended, is at {self.branch_path}; `toolreplay diff` compares it with the source."
        )


def fork(
    source: str | os.PathLike[str] | Trace,
    branch: str | os.PathLike[str],
    *,
    patches: Iterable[Patch] = (),
    live: Iterable[str] = (),
    live_limit: int = DEFAULT_LIVE_LIMIT,
    unobserved: Unobserved = "error",
    redaction: RedactionPolicy | None = None,
    secrets: SecretMode | None = None,
    scanner: SecretScanner | None = None,
    network: NetworkOption = "block",
) -> ForkSession:
    """Replay `source` strictly with `patches` applied, recording what happens to `branch`.

        patch = toolreplay.replace_output(
            effect="llm.decide", inputs={"prompt": "..."}, value="manual_review"
        )
        queued = toolreplay.supply_output(
            effect="review.queue.add", inputs={"order_id": "o-7"}, value={"ticket": 1}
        )
        with toolreplay.fork(
            "incident.trp", "branch.trp", patches=[patch, queued], unobserved="allow"
        ):
            decision = handle_refund(42)

    Before the block runs, every `replace_*` patch must match exactly one
    recorded call (by its inputs, or by its operation number, `at=N`) and every
    `supply_*` patch naming inputs a call the source does not hold
    (`PatchTargetError` otherwise); a `supply_*` patch without inputs answers the
    next call of its effect that the source does not hold, in the order calls are
    made. A patch whose value is an adapter's recipe (`reply(...)`, `edit(...)`)
    gets the output its adapter builds for the call it answers. Inside the
    block, calls are answered as in `replay()`, patched and supplied calls with
    their patch's outcome; effects named in `live` (exact names or
    `namespace.*`) run their real bodies for calls the source does not hold,
    and no other body runs; an effect of an instrumented OpenAI client
    (`live=["openai.responses.create"]`, `["openai.*"]`) sends its request
    through the client's own transport. At most `live_limit` calls run live (20
    by default): the next one raises `LiveCallLimitError`, so an agent that
    loops stops. Any other unrecorded call raises `ReplayMiss`, and the branch
    footer keeps it as the attempted call. On normal exit every patch must have
    been applied
    (`UnappliedPatchError`) and, unless `unobserved="allow"`, every source
    operation called (`UnconsumedOperationsError`); the branch footer lists the
    source operations that were not. An exception from the application
    propagates unchanged. The source trace is never written; `branch` must not
    exist, and holds what was observed even when the run fails part-way.

    A redacted source is forked by redacting each call's inputs as `replay()`
    does (`redaction`, RFC 0007). What the fork writes that the source does not
    hold (patched and supplied outcomes, live calls) is redacted and scanned
    for secrets as a recording is, before it reaches the branch (`secrets`:
    "error", the default, "warn" or "off"). The branch file is private to its
    owner (0600).

    The network is blocked as in `replay()` (`network`), except for the live
    calls: an effect named in `live` runs its body, and an instrumented client
    sends its live request, with the network allowed.
    """
    return ForkSession(
        source,
        branch,
        patches,
        live=live,
        live_limit=live_limit,
        unobserved=unobserved,
        redaction=redaction,
        secrets=secrets,
        scanner=scanner,
        network=network,
    )
