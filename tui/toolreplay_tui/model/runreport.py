"""A `RunResult` as the lines the run screen shows: the outcome first, then the detail."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from toolreplay.portable import JsonValue, preview, value_differences
from toolreplay.protocol import ReportedOperation
from toolreplay_tui.model.jsontext import format_json
from toolreplay_tui.model.runs import RunResult

__all__ = ["STDERR_TAIL", "ReportLine", "describe_result", "headline"]

Style = Literal["title", "ok", "error", "warning", "text", "dim", "json", "code"]
STDERR_TAIL = 40  # lines of the child's stderr shown


@dataclass(frozen=True, slots=True)
class ReportLine:
    """One line of the report, with the kind of text it is (for styling)."""

    style: Style
    text: str


_OUTCOMES = {
    "ok": "succeeded",
    "replay_contract_error": "failed: the run left the recording",
    "session_error": "failed: the application misused the session",
    "application_error": "failed: the application raised",
    "application_exit": "failed: the application exited",
    "storage_error": "failed: its trace could not be written (a full disk?)",
    "invalid_arguments": "was refused before the application ran (nothing was written)",
    "case_failed": "failed: the case does not hold (nothing was written)",
    "cancelled": "was cancelled: the child process was killed",
    "timed_out": "timed out: the child process was killed",
    "no_document": "failed: the child process printed no result",
    "not_started": "could not start",
}


def headline(result: RunResult) -> str:
    """`fork succeeded`, `replay failed: the run left the recording (ReplayMiss)`."""
    outcome = _OUTCOMES.get(result.outcome, result.outcome)
    if result.error is not None and result.error.short_type == "RunnerImportError":
        outcome = "was refused: the runner's module cannot be imported (nothing was written)"
    text = f"{result.command} {outcome}"
    if result.error is not None and not result.ok:
        text += f" ({result.error.short_type})"
    return text


def _operation_lines(
    operations: Sequence[ReportedOperation], called: JsonValue | None, limit: int = 10
) -> list[ReportLine]:
    lines: list[ReportLine] = []
    for operation in operations[:limit]:
        where = f"#{operation.logical_id}"
        if operation.line is not None:
            where += f", line {operation.line}"
        lines.append(
            ReportLine(
                "text",
                f"  - {operation.effect} occurrence {operation.occurrence} ({where}): "
                f"inputs {preview(operation.inputs, 80)}",
            )
        )
        if called is not None:
            for difference in value_differences(operation.inputs, called)[:5]:
                lines.append(
                    ReportLine("dim", "      " + difference.describe("recorded", "called"))
                )
    if len(operations) > limit:
        lines.append(ReportLine("dim", f"  ... and {len(operations) - limit} more"))
    return lines


def _without_candidates(message: list[str]) -> list[str]:
    """A miss's message without its list of nearest calls, which the report shows
    itself (with each one's differing inputs) under "nearest recorded calls"."""
    kept: list[str] = []
    skipping = False
    for line in message:
        if line.startswith("Nearest recorded calls of "):
            skipping = True
        elif not (skipping and line.startswith("  ")):
            skipping = False
            kept.append(line)
    return kept


def describe_result(result: RunResult) -> list[ReportLine]:
    """Everything worth showing about a run, most important first."""
    lines = [ReportLine("ok" if result.ok else "error", headline(result))]
    if result.message:
        lines.append(ReportLine("warning", result.message))
    if result.runner:
        lines.append(ReportLine("dim", f"runner {result.runner}"))
    if result.counts:
        shown = ", ".join(
            f"{key.replace('_', ' ')} {value}" for key, value in result.counts.items()
        )
        lines.append(ReportLine("dim", shown))
    if result.ok and result.command != "promote":
        lines.append(ReportLine("title", "returned"))
        if result.return_value_portable:
            lines += [
                ReportLine("json", line) for line in format_json(result.return_value).splitlines()
            ]
        else:
            lines.append(ReportLine("text", f"{result.return_value} (not portable JSON)"))
    if result.case is not None:
        lines += [
            ReportLine("title", "case"),
            ReportLine("text", f"folder  {result.case.directory}"),
            ReportLine("text", f"sha256  {result.case.trace_sha256}"),
            ReportLine("text", f"test    {result.case.test_path}"),
            ReportLine("ok", f"run it: uv run pytest {result.case.directory}"),
        ]
    error = result.error
    if error is not None:
        lines.append(ReportLine("title", "error"))
        lines.append(ReportLine("error", f"{error.type}"))
        message = error.message.splitlines()
        if error.candidates:
            message = _without_candidates(message)
        lines += [ReportLine("text", line) for line in message]
        if error.identity is not None:
            lines.append(ReportLine("title", "missing call"))
            lines.append(
                ReportLine(
                    "text",
                    f"{error.identity.effect} occurrence {error.identity.occurrence} "
                    f"(fingerprint {error.identity.fingerprint[:12]})",
                )
            )
            if error.inputs is not None:
                lines.append(ReportLine("text", f"inputs {preview(error.inputs, 100)}"))
        if error.candidates:
            lines.append(ReportLine("title", "nearest recorded calls"))
            lines += _operation_lines(error.candidates, error.inputs)
        if error.operations:
            title = (
                "recorded copies of this identity"
                if error.identity is not None
                else "recorded operations never called"
            )
            lines.append(ReportLine("title", title))
            lines += _operation_lines(error.operations, None)
        if error.patch_ids:
            lines.append(ReportLine("title", "patches never applied"))
            lines += [ReportLine("text", f"  - {patch_id}") for patch_id in error.patch_ids]
        if error.exit_code is not None:
            lines.append(ReportLine("text", f"exit code {error.exit_code}"))
        for note in error.notes:
            lines.append(ReportLine("dim", note))
        if error.traceback:
            lines.append(ReportLine("title", "traceback"))
            lines += [ReportLine("code", line) for line in error.traceback.rstrip().splitlines()]
    stderr = result.stderr.rstrip()
    if stderr:
        every = stderr.splitlines()
        more = " (last lines)" if len(every) > STDERR_TAIL else ""
        lines.append(ReportLine("title", f"the child's stderr{more}"))
        lines += [ReportLine("code", line) for line in every[-STDERR_TAIL:]]
    return lines
