"""The records of a debugging session's state that the app and its controllers share,
and the status line that sums them up."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.text import Text

from toolreplay import Patch, terminal_safe_text
from toolreplay_tui.model.patches import PendingPatches
from toolreplay_tui.model.runreport import headline
from toolreplay_tui.model.runs import RunResult
from toolreplay_tui.model.trace_check import Integrity

__all__ = ["BackgroundState", "ForkRecord", "count_of", "describe_status"]


@dataclass(frozen=True, slots=True)
class BackgroundState:
    """What the background work on the trace has done: operations indexed, and the check."""

    count: int = 0
    indexed: bool = False
    index_progress: float = 0.0
    integrity: Integrity = field(default_factory=Integrity)

    def progress_text(self) -> str:
        """`indexing 42%` or `checking 42%`, for the header and what waits."""
        if not self.indexed:
            return f"indexing {self.index_progress:.0%}"
        return f"checking {self.integrity.progress:.0%}"


@dataclass(frozen=True, slots=True)
class ForkRecord:
    """A fork this session ran: its result, its branch and what it applied."""

    result: RunResult
    branch: Path
    patches: tuple[Patch, ...]
    runner: str


def count_of(number: int, noun: str) -> str:
    """`1 patch`, `3 patches`, `2 pending patches`."""
    return f"{number} {noun if number == 1 else noun + 'es' if noun.endswith('h') else noun + 's'}"


def describe_status(
    pending: PendingPatches,
    live_effects: Sequence[str],
    last_fork: ForkRecord | None,
    last_run: RunResult | None,
    *,
    can_diff: bool,
    path_label: Callable[[Path], str],
) -> Text:
    """The status line: the pending patches, the effects forks send live, and how the
    last fork (or run) went, with the keys that go on from there."""
    text = Text()
    count = len(pending)
    if count:
        noun = "patch" if count == 1 else "patches"
        text.append(f"{count} pending {noun}", style="bold yellow")
        if pending.dirty:
            text.append(" (unsaved: w saves them)", style="yellow")
        elif pending.saved_path is not None:
            saved = f" (saved in {path_label(pending.saved_path)})"
            text.append(terminal_safe_text(saved, "dim"))  # named after the trace
        text.append(" · f forks with them", style="dim")
    else:
        text.append("no pending patch: e edits the selected output", style="dim")
    if live_effects:
        live = ", ".join(live_effects)
        text.append(terminal_safe_text(f" · {live} live in forks (L lists it)", "bold cyan"))
    if last_fork is not None:
        result = last_fork.result
        text.append("  ·  ")
        text.append(terminal_safe_text(headline(result), "green" if result.ok else "red"))
        if can_diff:
            text.append(" · d compares", style="dim")
        if result.ok:
            text.append(" · p promotes", style="dim")
    elif last_run is not None:
        text.append("  ·  ")
        style = "green" if last_run.ok else "red"
        text.append(terminal_safe_text(headline(last_run), style))
    return text
