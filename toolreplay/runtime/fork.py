"""Fork: strict replay of a source trace with some recorded outputs replaced.

A fork answers every call from the source trace, like `replay()`, except that
patched calls return their patch's value; it never runs an effect body. What the
application observed is written, call by call, to a new branch trace whose
operations carry their lineage (`origin`, `patch_id`,
`source_logical_operation_id`), so `diff()` can compare the branch with its
source and say which differences a patch introduced. The source is only read.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from pathlib import Path

from toolreplay._version import __version__
from toolreplay.errors import (
    PatchTargetError,
    ReplayContractError,
    SecretScanError,
    ToolReplayError,
    TraceError,
    TraceWriteError,
    UnappliedPatchError,
)
from toolreplay.patches import OutputPatch
from toolreplay.portable import preview
from toolreplay.redaction.policy import RedactionPolicy, SecretMode, resolve_secret_mode
from toolreplay.redaction.scanner import DEFAULT_SCANNER, SecretScanner, secret_in_trace_error
from toolreplay.runtime.failures import session_ending
from toolreplay.runtime.matching import explain_absence
from toolreplay.runtime.session import ReplaySession, lane_key
from toolreplay.trace.model import (
    Operation,
    OperationIdentity,
    Raised,
    Returned,
    TraceHeader,
)
from toolreplay.trace.reader import Trace
from toolreplay.trace.writer import TraceWriter, check_new_trace_path

__all__ = ["ForkSession", "fork"]


_FORK_IF_EXISTS = "give the fork a new branch path or delete that file"


class ForkSession(ReplaySession):
    """Replays a source trace with patches applied, writing a branch trace. See `fork()`."""

    mode = "fork"

    def __init__(
        self,
        source: str | os.PathLike[str] | Trace,
        branch: str | os.PathLike[str],
        patches: Iterable[OutputPatch],
        *,
        redaction: RedactionPolicy | None = None,
        secrets: SecretMode | None = None,
        scanner: SecretScanner | None = None,
    ) -> None:
        super().__init__(source, redaction=redaction)
        self._secret_mode = resolve_secret_mode(secrets)
        if self._secret_mode == "abandon":
            if secrets is not None:
                raise SecretScanError(
                    "secrets='abandon' is for unattended recordings; a fork takes 'error', "
                    "'warn' or 'off'"
                )
            # TOOLREPLAY_SECRETS=abandon configures production capture; a fork is run by
            # a person, who is told.
            self._secret_mode = "error"
        self._scanner = scanner or DEFAULT_SCANNER
        self.branch_path = Path(branch)
        self.patches = tuple(patches)
        self._targets: dict[OperationIdentity, OutputPatch] = {}
        self._applied: set[str] = set()
        self._writer: TraceWriter | None = None

    @property
    def patched_count(self) -> int:
        """How many patched calls the application has made so far."""
        return len(self._applied)

    def check_before_run(self, trace: Trace) -> None:
        """Raise what opening would raise about `trace`'s patches and the branch path.

        Creates nothing: the command line calls it before importing the
        application, so a refused patch or `--output` runs none of its code.
        Opening the session checks again.
        """
        self._resolve_patches(trace)
        if (
            self.branch_path.exists()
            and trace.path.exists()
            and (self.branch_path.resolve() == trace.path.resolve())
        ):
            raise TraceError(
                f"{self.branch_path}: the branch would overwrite its own source trace; give "
                "the fork a new path",
                path=self.branch_path,
            )
        check_new_trace_path(self.branch_path, if_exists=_FORK_IF_EXISTS)

    def _prepare(self, trace: Trace) -> None:
        self.check_before_run(trace)
        header = TraceHeader(
            trace_id=uuid.uuid4().hex,
            mode="fork",
            library_version=__version__,
            metadata=dict(trace.header.metadata),
            source_trace_id=trace.header.trace_id,
        )
        self._writer = TraceWriter(self.branch_path, header, if_exists=_FORK_IF_EXISTS)

    def _resolve_patches(self, trace: Trace) -> None:
        """Every patch must name exactly one recorded call, before any application code runs."""
        self._targets = {}  # a refused entry can be retried
        for patch in self.patches:
            identity = patch.identity
            if trace.get(identity) is None:
                explanation, _ = explain_absence(trace, identity, patch.inputs, asked="patch")
                raise PatchTargetError(
                    "\n".join(
                        [
                            f"patch {patch.patch_id} targets {patch.effect} occurrence "
                            f"{patch.occurrence} with inputs {preview(patch.inputs)}, but the "
                            f"source trace {trace.path} holds no such call.",
                            *explanation,
                            "What to do: copy the inputs and occurrence of the call you mean "
                            "from `toolreplay show` of the source trace.",
                        ]
                    ),
                    patch_id=patch.patch_id,
                )
            other = self._targets.get(identity)
            if other is not None:
                raise PatchTargetError(
                    f"patches {other.patch_id} and {patch.patch_id} both target "
                    f"{identity.describe()}; a call can have one replacement output. Keep "
                    "one of them.",
                    patch_id=patch.patch_id,
                )
            self._targets[identity] = patch

    def _outcome_for(self, operation: Operation) -> Returned | Raised:
        patch = self._targets.get(operation.identity)
        outcome: Returned | Raised = operation.outcome
        if patch is not None:
            outcome = Returned(patch.value)
            self._check_patch_secrets(patch, operation)
        assert self._writer is not None
        now_ns = self._elapsed_ns()  # answered at once: a branch call starts as it ends
        try:
            self._writer.append(
                Operation(
                    logical_id=self._writer.operation_count,
                    identity=operation.identity,
                    inputs=operation.inputs,
                    outcome=outcome,
                    origin="recorded" if patch is None else "patched",
                    patch_id=None if patch is None else patch.patch_id,
                    source_logical_operation_id=operation.logical_id,
                    lane=self._lane_name(lane_key()),
                    start_ns=now_ns,
                    end_ns=now_ns,
                )
            )
        except TraceWriteError as error:
            # The call is not answered: the branch must hold what the application saw.
            self._note_write_error(error)
            self.note_violation(error)
            raise
        if patch is not None:
            self._applied.add(patch.patch_id)
        return outcome

    def _check_patch_secrets(self, patch: OutputPatch, operation: Operation) -> None:
        """A patched value is new content for the branch: scan it as a recording would."""
        if self._secret_mode == "off":
            return
        findings = self._scanner.scan_value(patch.value, part="output", effect=operation.effect)
        if not findings:
            return
        what = f"patch {patch.patch_id} for {operation.effect}"
        if self._secret_mode == "warn":
            self._warn(findings, subject=f"the output {what} puts in the branch")
            return
        error = secret_in_trace_error(
            findings,
            what=f"{what} was not applied and the call not answered",
            advice="Nothing of it was written to the branch. Put a placeholder or a made-up "
            "value in the patch, or fork with secrets='warn' or 'off' on purpose (RFC 0007).",
        )
        self.note_violation(error)
        raise error

    def _annotate_violation(self, error: ReplayContractError) -> None:
        error.add_note(self._branch_note())

    def _contract_failure(self) -> ToolReplayError | None:
        # An unapplied patch always leaves its target unconsumed too; say the
        # more specific thing first.
        unapplied = [p for p in self.patches if p.patch_id not in self._applied]
        failure: ToolReplayError | None
        if unapplied and self._violation is None:
            failure = UnappliedPatchError(
                "\n".join(
                    [
                        f"The application finished without making {len(unapplied)} patched "
                        "call(s), so the fork did not exercise what it was asked to:",
                        *(
                            f"  - patch {p.patch_id}: {p.effect} occurrence {p.occurrence}, "
                            f"inputs {preview(p.inputs, 80)}"
                            for p in unapplied
                        ),
                        f"{len(self.trace) - self.consumed_count} of the {len(self.trace)} "
                        "source operations were never called: the application took another "
                        "path than the recording before reaching the patched call.",
                    ]
                ),
                patch_ids=[p.patch_id for p in unapplied],
            )
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
        with self._lock:  # a late call on another thread must not write after the footer
            self._close_trace(self._writer, ending, error)

    def _branch_note(self) -> str:
        return (
            f"The fork's branch trace, with every call observed before this point and how the "
            f"run ended, is at {self.branch_path}; `toolreplay diff` compares it with the source."
        )


def fork(
    source: str | os.PathLike[str] | Trace,
    branch: str | os.PathLike[str],
    *,
    patches: Iterable[OutputPatch] = (),
    redaction: RedactionPolicy | None = None,
    secrets: SecretMode | None = None,
    scanner: SecretScanner | None = None,
) -> ForkSession:
    """Replay `source` strictly with `patches` applied, recording what happens to `branch`.

        patch = toolreplay.replace_output(
            effect="llm.decide", inputs={"prompt": "..."}, value="manual_review"
        )
        with toolreplay.fork("incident.trp", "branch.trp", patches=[patch]):
            decision = handle_refund(42)

    Before the block runs, every patch must match exactly one recorded call
    (`PatchTargetError` otherwise, listing the nearest calls). Inside it, calls
    are answered as in `replay()`, patched calls with their patch's value; no
    effect body runs. On normal exit every patch must have been applied
    (`UnappliedPatchError`) and every source operation called. An exception
    from the application propagates unchanged. The source trace is never
    written; `branch` must not exist, and holds what was observed even when the
    run fails part-way.

    A redacted source is forked by redacting each call's inputs as `replay()`
    does (`redaction`, RFC 0007). Patched values are scanned for secrets
    before they reach the branch (`secrets`: "error", the default, "warn" or
    "off"). The branch file is private to its owner (0600).
    """
    return ForkSession(
        source, branch, patches, redaction=redaction, secrets=secrets, scanner=scanner
    )
