"""A child-process run in progress (spinner and elapsed time), then its result."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Static

from toolreplay import terminal_safe_text
from toolreplay_tui.context import textual_app
from toolreplay_tui.messages import RunStarted
from toolreplay_tui.model.runreport import ReportLine, describe_result
from toolreplay_tui.model.runs import RunHandle, RunRequest, RunResult

__all__ = ["RunPanel", "render_report"]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_STYLES = {
    "title": "bold underline",
    "ok": "bold green",
    "error": "bold red",
    "warning": "bold yellow",
    "text": "",
    "dim": "dim",
    "json": "cyan",
    "code": "dim",
}


def render_report(lines: list[ReportLine]) -> RenderableType:
    # A report quotes the run's output and errors, so the trace's values: escaped.
    return Group(*(terminal_safe_text(line.text, _STYLES[line.style], keep="\n") for line in lines))


class RunPanel(Vertical):
    """Runs one `RunRequest` in a worker thread; shows progress, then the report.

    It grows with the report: the screen holding it scrolls (a `ScrollBox`).
    """

    class Finished(Message):
        """The run ended (successfully or not, cancelled or timed out included)."""

        def __init__(self, panel: RunPanel, result: RunResult) -> None:
            super().__init__()
            self.panel = panel
            self.result = result

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.handle: RunHandle | None = None
        self.result: RunResult | None = None
        self._timer: Timer | None = None
        self._frame = 0
        self._label = ""

    def compose(self) -> ComposeResult:
        yield Static(id="run-status")
        yield Static(id="run-report")

    @property
    def running(self) -> bool:
        return self.handle is not None and self.result is None

    def start(self, request: RunRequest, label: str) -> None:
        """Start the child process; `label` says what runs (`fork refund.trp`)."""
        self.handle = RunHandle(request)
        self.post_message(RunStarted(self.handle))
        self.result = None
        self._label = label
        self._frame = 0
        self.query_one("#run-report", Static).update("")
        self._tick()
        self._timer = self.set_interval(0.1, self._tick)
        self._wait(self.handle)

    def cancel(self) -> None:
        if self.handle is not None and self.result is None:
            self.handle.cancel()

    def on_unmount(self) -> None:
        self.cancel()  # a closed panel never leaves its child running

    def _tick(self) -> None:
        handle = self.handle
        if handle is None or self.result is not None:
            return
        self._frame += 1
        spinner = _SPINNER[self._frame % len(_SPINNER)]
        status = Text.assemble(
            terminal_safe_text(f"{spinner} running {self._label}", "bold"),
            f"  {handle.elapsed():.1f} s",
            ("  (escape or ctrl+c cancels and kills it", "dim"),
            (f"; timeout {handle.request.timeout:g} s)", "dim"),
        )
        self.query_one("#run-status", Static).update(status)

    @work(thread=True, exclusive=True, group="run")
    def _wait(self, handle: RunHandle) -> None:
        result = handle.wait()
        textual_app(self).call_from_thread(self._finished, handle, result)

    def _finished(self, handle: RunHandle, result: RunResult) -> None:
        if handle is not self.handle:
            return
        self.result = result
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.query_one("#run-status", Static).update(
            Text(f"finished in {result.elapsed:.1f} s", style="dim") if result.elapsed else ""
        )
        self.query_one("#run-report", Static).update(render_report(describe_result(result)))
        self.post_message(self.Finished(self, result))
