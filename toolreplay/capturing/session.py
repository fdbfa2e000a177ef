"""`CaptureSession`: a record session that gives up instead of failing the application.

A recording made for a developer refuses whatever would make the trace wrong (a
nested effect, a value that is not portable JSON, a line the disk would not
take) and says so loudly: the developer asked for a faithful trace. A capture
runs in production, where the application's answer matters more than the
trace: each of those conditions makes the capture *give up* on its request
instead. From then on the request's effects run as if undecorated, nothing more
is written, and the trace is discarded when the request ends. The application
sees exactly the results and exceptions it would have seen without capture.

A capture does not arm the process-wide offline guard (RFC 0001 §3.2): an effect
called on a thread that does not carry the request's context (a plain thread
pool) runs live and is not in the trace, rather than being refused.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from toolreplay.errors import SecretInTraceError, ToolReplayError, TraceWriteError
from toolreplay.failures import session_ending
from toolreplay.jsonpath import JsonPath
from toolreplay.portable import JsonValue
from toolreplay.redaction import RedactionPolicy, SecretMode, SecretScanner
from toolreplay.runtime.context import PendingCall
from toolreplay.runtime.recording import RecordSession
from toolreplay.trace.model import OperationIdentity

__all__ = ["CaptureSession", "GiveUp"]

GiveUp = Callable[[str, str, BaseException | None], None]
"""Told why a capture gave up: a kind (`storage`, `max_bytes`, `unrecordable`, ...),
a sentence without any recorded value, and the error behind it (or None)."""

# A call made after the capture gave up: it has an identity for the runtime's
# bookkeeping, but is never in flight and never written.
_UNRECORDED = OperationIdentity("capture", "unrecorded", "", 0)


class CaptureSession(RecordSession):
    """Records one request to `path`; never raises into the application after it opened.

    `max_bytes` caps the trace's size: the line that crosses it makes the capture
    give up. `on_give_up` is called once, with why.
    """

    guards_process = False

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        metadata: dict[str, JsonValue],
        max_bytes: int | None,
        on_give_up: GiveUp,
        redaction: RedactionPolicy | None = None,
        secrets: SecretMode = "abandon",
        scanner: SecretScanner | None = None,
    ) -> None:
        # Set before the base class scans the metadata, which may abandon at once.
        self._on_give_up = on_give_up
        self._give_up_lock = threading.Lock()
        self.given_up = False
        super().__init__(
            path, metadata=metadata, redaction=redaction, secrets=secrets, scanner=scanner
        )
        self._max_bytes = max_bytes

    def give_up(self, kind: str, reason: str, error: BaseException | None = None) -> None:
        """Stop observing this request; the first reason is the one reported."""
        with self._give_up_lock:
            if self.given_up:
                return
            self.given_up = True
            self.observing = False
        self._on_give_up(kind, reason, error)

    # --- what a record session would refuse, a capture gives up on --------------------

    def tolerates(self, effect: str, error: Exception) -> bool:
        self.give_up(
            "unrecordable",
            f"the inputs of {effect} could not be recorded ({type(error).__name__})",
            error,
        )
        return True

    def note_violation(self, error: ToolReplayError) -> None:
        if isinstance(error, TraceWriteError):
            self.give_up("storage", "a line of the trace could not be written", error)
        else:
            self.give_up(
                "unrecordable", f"the request cannot be recorded ({type(error).__name__})", error
            )

    def _abandon(self, reason: SecretInTraceError) -> None:
        """Secret mode "abandon" (RFC 0007 §4.3): the base removes the trace; stop observing."""
        super()._abandon(reason)
        findings = sorted(
            {f"{finding.rule} in {finding.part} {finding.path}" for finding in reason.findings}
        )
        effects = sorted({finding.effect for finding in reason.findings if finding.effect})
        where = f" of {', '.join(effects)}" if effects else ""
        self.give_up("secret", f"a value{where} matched a secret rule ({'; '.join(findings)})")

    def begin(
        self,
        namespace: str,
        name: str,
        inputs: dict[str, JsonValue],
        redact: tuple[JsonPath, ...] = (),
    ) -> PendingCall:
        if not self.given_up:
            try:
                return super().begin(namespace, name, inputs, redact)
            except ToolReplayError as error:  # nested, or called after the request ended
                self.give_up(
                    "unrecordable",
                    f"{namespace}.{name} could not be recorded ({type(error).__name__})",
                    error,
                )
        return PendingCall(_UNRECORDED, {})

    def complete(
        self,
        call: PendingCall,
        value: object,
        *,
        portable: bool = False,
        encoded: bytes | None = None,
    ) -> None:
        if self._skips(call):
            return
        try:
            super().complete(call, value, portable=portable, encoded=encoded)
        except ToolReplayError as error:
            self._gave_up_on(call, error)
            return
        self._check_size()

    def fail(self, call: PendingCall, error: Exception) -> None:
        if self._skips(call):
            return
        try:
            super().fail(call, error)
        except ToolReplayError as failure:
            self._gave_up_on(call, failure)
            return
        self._check_size()

    def _skips(self, call: PendingCall) -> bool:
        if self.given_up:
            self.abort(call)
            return True
        return call.identity is _UNRECORDED

    def _gave_up_on(self, call: PendingCall, error: ToolReplayError) -> None:
        self.abort(call)
        kind = "storage" if isinstance(error, TraceWriteError) else "unrecordable"
        self.give_up(
            kind, f"{call.identity.effect} could not be recorded ({type(error).__name__})", error
        )

    def _check_size(self) -> None:
        writer = self._writer
        if self._max_bytes is not None and writer is not None and writer.size > self._max_bytes:
            self.give_up("max_bytes", f"the trace grew past max_bytes={self._max_bytes}")

    # --- the end of the request --------------------------------------------------------

    def _close(self, exc: BaseException | None) -> None:
        """Close the trace; nothing is raised and the application's exception is untouched."""
        self._end_open_calls()  # a failure in them gives the capture up, as in begin()
        left_elsewhere = self._leave_scope()
        if left_elsewhere is not None:
            self.give_up("unrecordable", "the capture was left in another context")
        with self._lock:
            running = bool(self._in_flight)
        if running:
            self.give_up("unrecordable", "an effect was still running when the request ended")
        with self._lock:
            writer = self._writer
        if writer is None:  # abandoned: its trace is already gone
            return
        try:
            writer.close(self._private_ending(session_ending(exc, local_paths=[self.path])))
        except TraceWriteError as error:
            self.give_up("storage", "the end of the trace could not be written", error)
