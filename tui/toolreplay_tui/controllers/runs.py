"""Runs: replays and forks in child processes, the runner they call, the warm runner
that starts them fast, the effects forks send live, and what the last ones gave (the
fork's branch compared with the source as soon as it ends)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from toolreplay import DiffReport, Patch, PatchError, ToolReplayError
from toolreplay.protocol import prepare_reading
from toolreplay.runners import RUNNER_PATTERN
from toolreplay_tui.controllers.host import Host
from toolreplay_tui.controllers.patches import PatchesController
from toolreplay_tui.model.diffrows import DiffRows
from toolreplay_tui.model.runreport import headline
from toolreplay_tui.model.runs import RunClient, RunHandle, RunRequest, RunResult, WarmRunner
from toolreplay_tui.model.stops import UnrecordedCall, unrecorded_call
from toolreplay_tui.screens.dialogs import PromptScreen
from toolreplay_tui.screens.diff import DiffScreen, compare
from toolreplay_tui.screens.run import NextStep, RunScreen
from toolreplay_tui.state import ForkRecord

__all__ = ["Runs"]

WhenChecked = Callable[[str, Callable[[], None]], None]
"""`when_checked(what, then)`: run `then` once the trace passed its integrity check."""


class Runs:
    """Starts every child process of the session, and remembers how the last ones went."""

    def __init__(
        self,
        host: Host,
        patches: PatchesController,
        client: RunClient,
        *,
        warm: WarmRunner | None,
        runner_given: bool,
        when_checked: WhenChecked,
        after_run: Callable[[NextStep | None], None],
    ) -> None:
        """`after_run(step)`: the run screen closed with the next step chosen there."""
        self.host = host
        self.patches = patches
        self.client = client
        self.warm = warm
        self._runner_given = runner_given  # with --runner (else the trace's, or asked)
        self._when_checked = when_checked
        self.after_run = after_run
        self.last_fork: ForkRecord | None = None
        self.last_run: RunResult | None = None
        self.last_stop: UnrecordedCall | None = None
        self.live_effects: list[str] = []
        """Effects whose calls the source does not hold go live in the next forks (`a` at a
        new model call): the adapter sends them through the application's own client."""
        self._fork_context: tuple[Path, tuple[Patch, ...], str] | None = None
        # The last fork's branch compared with the source, made as soon as it ended.
        self._fork_diff: tuple[Path, DiffReport, DiffRows] | None = None
        self._handles: list[RunHandle] = []
        # The models a run's JSON document is read with (pydantic), imported before the
        # app runs: imported as the first run ends, they stalled the interface.
        prepare_reading()

    # --- the warm runner ---------------------------------------------------------------

    def warm_up(self) -> None:
        """Start the warm runner (in a thread), so that forks start fast. It imports the
        command line only: no runner is imported or called before a run is asked for."""
        warm = self.warm
        if warm is None:
            return

        def start() -> None:
            with contextlib.suppress(OSError):  # runs go cold when it cannot start
                warm.warm_up()

        self.host.run_worker(start, name="warm_up", group="warm", exclusive=True, thread=True)

    def prepare_warm(self, effects: list[str]) -> None:
        """Let the warm runner import Tool Replay's adapters for the trace's effects (an
        OpenAI trace: the SDK), once the trace is checked; nothing of the application."""
        warm, trace_file = self.warm, self.host.trace_file
        if warm is None:
            return

        def prepare() -> None:
            with contextlib.suppress(OSError):
                warm.warm_up()
                warm.prepare(trace_file, effects)

        self.host.run_worker(prepare, name="prepare_warm", group="warm", thread=True)

    # --- children ----------------------------------------------------------------------

    def started(self, handle: RunHandle) -> None:
        """Remember a started run, so that quitting kills its child."""
        self._handles = [run for run in self._handles if not run.finished]
        self._handles.append(handle)

    def cancel(self) -> None:
        """Kill every child still running, and the warm runner."""
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()
        if self.warm is not None:
            self.warm.close()

    # --- the runner --------------------------------------------------------------------

    def runner_spec(self) -> str | None:
        """The runner a run calls: the one given (or typed), else the trace header's."""
        host = self.host
        if host.runner:
            return host.runner
        return None if host.trace is None else host.trace.header.runner

    def runner_source(self) -> str:
        """Where the runner a run calls comes from, for the run screen."""
        if self.host.runner:
            return "given with --runner" if self._runner_given else "typed when asked"
        return "named by the trace's header"

    def with_runner(self, then: Callable[[str], None]) -> None:
        """Call `then` with the runner a run calls: the one given or the trace's, if it is
        `module:callable`; else ask for one. Nothing is called before a run is asked for."""
        spec = self.runner_spec()
        if spec is not None and RUNNER_PATTERN.fullmatch(spec):
            then(spec)
            return
        question = "The trace records no runner."
        if spec is not None:  # a trace can name anything: shown escaped, never run
            question = f"The runner {spec!a} ({self.runner_source()}) is not module:callable."

        def check(value: str) -> str | None:
            if RUNNER_PATTERN.fullmatch(value):
                return None
            return "give it as module:callable, e.g. myapp.incidents:refund"

        def chosen(value: str | None) -> None:
            if value:
                self.host.runner = value
                then(value)

        self.host.push_screen(
            PromptScreen(
                f"{question} Which no-argument entry point runs the application?",
                placeholder="module:callable",
                check=check,
            ),
            chosen,
        )

    # --- forks and replays -------------------------------------------------------------

    def go_live(self, effect: str) -> None:
        """Forks send the new calls of `effect` through the application's client."""
        if effect not in self.live_effects:
            self.live_effects.append(effect)

    def stop_live(self, effect: str) -> None:
        """From the patches list: forks no longer send new calls of `effect` live."""
        if effect in self.live_effects:
            self.live_effects.remove(effect)
            self.host.changed(f"{effect} is no longer live: the next fork stops at its new calls")

    def fork(self) -> None:
        """`f`: fork with the pending patches (once the trace is checked)."""
        if self.host.trace is None:
            return
        self._when_checked("fork", self._fork)

    def _fork(self) -> None:
        if not len(self.patches.pending) and not self.live_effects:
            self.host.changed(
                "no pending patch to fork with: e (or enter on a value) changes an output; "
                "r replays strictly",
                error=True,
            )
            return
        self.with_runner(self.start_fork)

    def fork_again(self) -> None:
        """Fork again at once (a new call was just answered), asking for a runner if needed."""
        self.with_runner(self.start_fork)

    def start_fork(self, runner: str) -> None:
        host = self.host
        pending = self.patches.pending
        patches = tuple(pending)
        try:
            host.workspace.ensure()
            paths = host.workspace.fork_paths()
            pending.write_copy(paths.patches)
        except (OSError, PatchError) as error:
            host.changed(f"cannot write the fork's patch file: {error}", error=True)
            return
        live = tuple(self.live_effects)
        request = self.client.fork(
            host.trace_file, paths.patches, paths.branch, runner=runner, live=live
        )
        self._fork_context = (paths.branch, patches, runner)
        noun = "patch" if len(patches) == 1 else "patches"
        asked = f", {', '.join(live)} live" if live else ""
        title = (
            f"fork {host.trace_label} with {len(patches)} {noun}{asked} into "
            f"{host.path_label(paths.branch)}: calls the runner {runner} "
            f"({self.runner_source()})"
        )
        host.push_screen(RunScreen(request, title), self.after_run)

    def replay(self) -> None:
        """`r`: replay the trace strictly (once it is checked)."""
        self._when_checked("replay", self._replay)

    def _replay(self) -> None:
        host = self.host

        def start(runner: str) -> None:
            request = self.client.replay(host.trace_file, runner=runner)
            host.push_screen(
                RunScreen(
                    request,
                    f"strict replay of {host.trace_label}: calls the runner {runner} "
                    f"({self.runner_source()})",
                ),
                self.after_run,
            )

        self.with_runner(start)

    def finished(self, request: RunRequest, result: RunResult) -> None:
        """A replay or fork ended."""
        host = self.host
        self.last_run = result
        if request.command == "fork" and self._fork_context is not None:
            branch, patches, runner = self._fork_context
            self.last_fork = ForkRecord(result, branch, patches, result.runner or runner)
            self._fork_diff = None
            if result.ok and host.trace is not None:
                self._compare_fork(host.trace_file, branch)
        self.last_stop = unrecorded_call(result)
        # The run screen shows the result; the log keeps it for later.
        host.tell(headline(result), error=not result.ok, toast=False)
        host.changed()

    def _compare_fork(self, source: Path, branch: Path) -> None:
        """Compare a fork's branch now, off the event loop: `d` then shows it at once."""

        def work() -> None:
            try:
                report, rows = compare(source, branch)
            except (ToolReplayError, OSError):
                return  # the diff screen computes it again and shows the error
            self.host.call_from_thread(self._compared_fork, branch, report, rows)

        self.host.run_worker(
            work, name="compare_fork", group="fork-diff", exclusive=True, thread=True
        )

    def _compared_fork(self, branch: Path, report: DiffReport, rows: DiffRows) -> None:
        fork = self.last_fork
        if fork is not None and fork.branch == branch:
            self._fork_diff = (branch, report, rows)

    # --- comparing -----------------------------------------------------------------------

    def can_diff(self) -> bool:
        fork = self.last_fork
        if fork is not None and fork.branch.is_file():
            return True
        return self.host.against is not None

    def can_promote(self) -> bool:
        return self.last_fork is not None and self.last_fork.result.ok

    def diff(self) -> None:
        """`d`: the last fork's branch (else `--against`) compared with the source."""
        self._when_checked("diff", self._diff)

    def _diff(self) -> None:
        host = self.host
        fork = self.last_fork
        if fork is not None and fork.branch.is_file():
            target = fork.branch
        elif host.against is not None:
            target = host.against
        else:
            host.changed(
                "nothing to compare yet: f forks, or start with --against OTHER.trp", error=True
            )
            return
        computed = self._fork_diff
        host.push_screen(
            DiffScreen(
                host.trace_file,
                target,
                source_label=host.trace_label,
                target_label=host.path_label(target),
                computed=computed[1:] if computed is not None and computed[0] == target else None,
            )
        )
