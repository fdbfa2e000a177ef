"""The browse screen's top line: the trace, its format, how many operations, whether it
is complete and checked (how far indexing and the check are, while they run), how it
was recorded, and the runner a run calls."""

from __future__ import annotations

from rich.text import Text

from toolreplay import terminal_safe_text
from toolreplay_tui.context import DebugSession
from toolreplay_tui.model.trace_file import TraceFile

__all__ = ["describe_header"]


def describe_header(debug: DebugSession, trace: TraceFile) -> Text:
    """`refund.trp · format v3 · 3 operations · complete · checked · record · runner m:f`.

    While the trace is indexed or checked, says how far; a failed check in red.
    """
    state = debug.background
    text = Text()
    text.append(terminal_safe_text(debug.trace_label, "bold"))
    text.append(f"  ·  format v{trace.header.format_version}  ·  ")
    expected = trace.expected_count
    if state.indexed:
        text.append(f"{state.count:,} operations")
    elif expected is not None:
        text.append(f"{expected:,} operations")
        text.append(f" ({state.count:,} indexed)", style="dim")
    else:
        text.append(f"{state.count:,}+ operations")
    text.append("  ·  ")
    footer = trace.footer
    if footer is None:
        text.append("incomplete (no footer: the recording did not close)", style="bold yellow")
    elif footer.ending.status == "raised":
        ended = f"complete, ended with {footer.ending.error_type}"
        text.append(terminal_safe_text(ended, "yellow"))
    else:
        text.append("complete", style="green")
    text.append("  ·  ")
    integrity = state.integrity
    if integrity.state == "checking":
        text.append(f"{state.progress_text()}…", style="bold cyan")
    elif integrity.state == "ok":
        text.append("checked", style="green")
    else:
        text.append(terminal_safe_text(f"integrity check failed: {integrity.problem}", "bold red"))
    text.append(f"  ·  {trace.header.mode}")
    if trace.header.source_trace_id is not None:
        text.append(" (a fork's branch)")
    text.append("  ·  runner ")
    runner = debug.runner_spec()
    text.append(terminal_safe_text(runner or "(none: f will ask)", "bold" if runner else "dim"))
    return text
