"""Recording: a session that runs effect bodies and appends each completed call to a trace.

Each call's inputs are redacted before they are fingerprinted, and every part
about to be written is scanned for secrets; the session's secret mode says
whether a match refuses the call, is written with a warning, or abandons the
recording (RFC 0007).
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import cast

from toolreplay._version import __version__
from toolreplay.errors import (
    RedactionRuleError,
    SecretInTraceError,
    SessionError,
    ToolReplayError,
    TraceWriteError,
)
from toolreplay.failures import capture_failure, session_ending
from toolreplay.jsonpath import JsonPath
from toolreplay.portable import JsonValue, canonical_json, ensure_portable
from toolreplay.redaction.policy import METADATA_KEY, RedactionPolicy, SessionRedaction
from toolreplay.redaction.scanner import (
    DEFAULT_SCANNER,
    SecretFinding,
    SecretPart,
    SecretScanner,
    secret_in_trace_error,
)
from toolreplay.redaction.secret_mode import SecretGate, SecretMode, resolve_secret_mode
from toolreplay.runtime.context import PendingCall, lane_key, offline_guard, running_call_var
from toolreplay.runtime.session import Session
from toolreplay.trace.codec import (
    encode_operation_fields,
    encode_raised,
    encode_returned,
    encode_value,
)
from toolreplay.trace.model import TraceHeader
from toolreplay.trace.writer import TraceWriter, check_new_trace_path

__all__ = ["RecordSession", "record"]

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
        self._secrets = SecretGate(resolve_secret_mode(secrets), scanner or DEFAULT_SCANNER)
        self._writer: TraceWriter | None = None
        self._abandoned: SecretInTraceError | None = None
        findings = self._secrets.scan(self._metadata, part="metadata")
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

    def _open(self) -> None:
        self._check_can_open()
        self._redaction = SessionRedaction.for_recording(self._policy, self._secrets.scanner)
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

    def _close(self, exc: BaseException | None) -> None:
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
        """Act on findings as the secret mode says: True when the value may be written anyway.

        The gate lets it through in mode "warn" (warning that `subject` was written).
        Otherwise "error" raises `SecretInTraceError` (`what` says what was refused),
        and "abandon" stops the recording (removing its trace) and lets the
        application carry on.
        """
        if self._secrets.allows(findings, subject=subject):
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
        if self._secrets.mode == "abandon":
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
        plain_json: bool = False,
    ) -> bool:
        """Whether a part of a call may be written (see `_refuse_or_allow`); `encoded` and
        `plain_json` as `SecretScanner.scan_value` takes them."""
        if self._abandoned is not None:
            self.abort(call)
            return False
        if self._secrets.mode == "off":
            return True
        effect = call.identity.effect
        findings = self._secrets.scanner.scan_value(
            value, part=part, effect=effect, encoded=encoded, plain_json=plain_json
        )
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

    def begin(
        self,
        namespace: str,
        name: str,
        inputs: dict[str, JsonValue],
        redact: tuple[JsonPath, ...] = (),
    ) -> PendingCall:
        """Give a call its identity (occurrences in start order), lane and start time.

        The inputs are redacted first (RFC 0007), so the fingerprint and the
        trace only ever see placeholders, and then scanned for secrets.
        `redact` are the effect's own path rules.
        """
        inputs, redaction, known = self._redacted_inputs(namespace, name, inputs, redact)
        # Encoded now for the trace line, which must hold the inputs as they were even if
        # the body changes them: cheaper than the copy it replaces, and needed anyway.
        inputs_text = encode_value(inputs)
        encoded = canonical_json(inputs)
        digest = hashlib.sha256(encoded).hexdigest()
        lane = lane_key()
        parent = running_call_var.get()
        with self._lock:
            identity = self._take_identity(namespace, name, digest)
            if parent is not None and parent in self._in_flight:
                self._release_occurrence(identity)
                raise self._nested(identity, parent)
            call = PendingCall(
                identity,
                inputs,
                self._lane_name(lane),
                self._elapsed_ns(),
                None,
                redaction,
                known,
                inputs_text,
            )
            self._in_flight.add(call)
        self._check_secrets(inputs, part="inputs", call=call, encoded=encoded, plain_json=True)
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
        checked = self._portable_output(
            call, value, portable=portable, unkept="The effect ran, but its call was not recorded"
        )
        if call.redaction is not None:
            checked, _ = call.redaction.value(checked, call.known)
            encoded = None  # it holds the value before redaction
        value_text = None
        if encoded is None and self._secrets.mode != "off":
            # The scan searches the text the trace line will hold: one encoding, not two.
            value_text = encode_value(checked)
            encoded = value_text.encode("utf-8")
        plain_json = value_text is not None
        if self._check_secrets(
            checked, part="output", call=call, encoded=encoded, plain_json=plain_json
        ):
            self._append(call, encode_returned(checked, value_text))

    def fail(self, call: PendingCall, error: Exception) -> None:
        """Record a call whose body raised `error`."""
        raised = capture_failure(error)
        if call.redaction is not None:
            raised = call.redaction.failure(raised, call.known)
        failure: dict[str, JsonValue] = {"message": raised.message, "args": raised.args}
        if self._check_secrets(failure, part="error", call=call):
            self._append(call, encode_raised(raised))

    def _append(self, call: PendingCall, outcome_text: str) -> None:
        """Write a completed call, its outcome encoded (`encode_returned`, `encode_raised`)."""
        end_ns = self._elapsed_ns()  # before waiting for the lock: when the body returned
        with self._lock:
            writer = self._writer
            if writer is None:  # abandoned (secret mode "abandon"): nothing more is written
                self._in_flight.discard(call)
                return
            try:
                self._refuse_when_closed(call, unkept="recorded")
                logical_id = writer.operation_count
                line = encode_operation_fields(
                    logical_id,
                    call.identity,
                    encode_value(call.inputs) if call.inputs_text is None else call.inputs_text,
                    outcome_text,
                    "recorded",
                    None,
                    None,
                    call.lane,
                    call.start_ns,
                    end_ns,
                )
                writer.append_line(line, logical_id)
            except TraceWriteError as error:
                # The application was told the call failed; if it carries on,
                # the trace lacks a call it made (5.1).
                self._release_occurrence(call.identity)
                self._note_write_error(error)
                self.note_violation(error)
                raise
            finally:
                self._in_flight.discard(call)


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
