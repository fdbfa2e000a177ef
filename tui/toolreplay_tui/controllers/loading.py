"""Opening the trace: its header and first screen at once, then indexing and the
integrity check in the background (their progress published to the header), and the
actions that need the whole trace held until the check has passed."""

from __future__ import annotations

import gc
from collections.abc import Callable

from textual.timer import Timer

from toolreplay import Operation, ToolReplayError
from toolreplay_tui.controllers.host import Host
from toolreplay_tui.model.columns import shown_width
from toolreplay_tui.model.rows import OperationRows
from toolreplay_tui.model.trace_file import LargeOutput, TraceFile
from toolreplay_tui.state import BackgroundState

__all__ = [
    "BACKGROUND_POLL",
    "FIRST_ROWS",
    "START_GC_THRESHOLD",
    "TraceLoading",
    "collect_less_until_shown",
]

BACKGROUND_POLL = 0.1
"""Seconds between looks at the background work on the trace (progress in the header)."""
START_GC_THRESHOLD = 100_000
"""Objects allocated between collections of the youngest generation until the first frame
(Python's default is 700): the start allocates a few hundred thousand that all live on,
and collecting them fifty times over took a tenth of the time to the first rows."""
FIRST_ROWS = 200
"""The operations whose effect names size the list's effect column at first."""


def collect_less_until_shown() -> tuple[int, int, int]:
    """Raise the youngest generation's collection threshold (`START_GC_THRESHOLD`) until
    the first frame is drawn; the thresholds as they were, for `TraceLoading`."""
    thresholds = gc.get_threshold()
    gc.set_threshold(START_GC_THRESHOLD, *thresholds[1:])
    return thresholds


def _suffix(occurrence: int) -> int:
    """Cells of an occurrence suffix in the operation list (`#2`; none for the first)."""
    return len(str(occurrence)) + 1 if occurrence else 0


class TraceLoading:
    """Sets the host's `trace`, `rows`, `background` and `load_error`."""

    def __init__(
        self,
        host: Host,
        *,
        gc_thresholds: tuple[int, int, int],
        on_checked: Callable[[TraceFile], None],
    ) -> None:
        """`gc_thresholds`: as `collect_less_until_shown` found them, restored once the
        first frame is drawn; `on_checked(trace)`: the trace passed its integrity check."""
        self.host = host
        self._on_checked = on_checked
        self._gc_thresholds: tuple[int, int, int] | None = gc_thresholds
        self._after_check: tuple[str, Callable[[], None]] | None = None
        self._poll: Timer | None = None  # watches the background work while it runs

    def open(self) -> TraceFile | None:
        """Read the trace's header and first screen of operations (a few milliseconds,
        whatever its size); None when it cannot be opened (`load_error` says why)."""
        host = self.host
        try:
            trace = TraceFile.open(host.trace_file)
        except (ToolReplayError, OSError) as error:
            self.restore_gc()
            host.load_error = str(error)
            return None
        first = [trace.entry(index) for index in range(min(len(trace), FIRST_ROWS))]
        # Room for the longest effect name of the first screen, as shown, and its
        # occurrence suffix (`#2`; none for a first occurrence).
        longest = max(
            (
                shown_width(op.effect) + _suffix(op.identity.occurrence)
                for op in first
                if isinstance(op, (Operation, LargeOutput))
            ),
            default=0,
        )
        host.rows, host.effect_width = OperationRows(trace), max(6, longest)
        host.trace = trace  # last: watchers read the rows
        return trace

    def start_background(self, trace: TraceFile) -> None:
        """After the first frame: collect garbage as usual, index and check the trace."""
        self.restore_gc()
        self._poll = self.host.set_interval(BACKGROUND_POLL, self._poll_background)

        def index_and_check() -> None:
            trace.check_elsewhere()  # stops soon after `stop` closes the trace

        self.host.run_worker(
            index_and_check, name="index_and_check", group="load", exclusive=True, thread=True
        )

    def restore_gc(self) -> None:
        """Collect garbage as usual again, once the first frame is drawn (or cannot be)."""
        if self._gc_thresholds is not None:
            gc.set_threshold(*self._gc_thresholds)
            self._gc_thresholds = None

    def _poll_background(self) -> None:
        """Publish the background work's progress; once it is done, stop and run what waited."""
        host = self.host
        trace = host.trace
        if trace is None:
            return
        state = BackgroundState(len(trace), trace.indexed, trace.index_progress, trace.integrity)
        if state != host.background:
            host.background = state
        if state.integrity.state == "checking":
            return
        if self._poll is not None:
            self._poll.stop()
        if state.integrity.state == "ok":
            self._on_checked(trace)
        waiting, self._after_check = self._after_check, None
        if waiting is None:
            return
        what, then = waiting
        if state.integrity.state == "ok":
            then()
        else:
            host.changed(f"cannot {what}: {state.integrity.problem}", error=True)

    def when_checked(self, what: str, then: Callable[[], None]) -> None:
        """Run `then` (an action needing the whole trace) once the integrity check passed.

        Until then the status line says what waits, and a later request replaces it.
        """
        host = self.host
        trace = host.trace
        if trace is None:
            return
        integrity = trace.integrity
        if integrity.state == "ok":
            then()
        elif integrity.state == "failed":
            host.changed(f"cannot {what}: {integrity.problem}", error=True)
        else:
            self._after_check = (what, then)
            host.changed(
                f"{what} waits for the trace's integrity check "
                f"({host.background.progress_text()}); it starts when the check passes"
            )

    def stop(self) -> None:
        """Stop indexing, checking and filtering the trace (their threads end within a chunk)."""
        trace = self.host.trace
        if trace is not None:
            trace.close()
