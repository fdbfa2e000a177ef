"""`ToolReplayApp`: one debugging session, composed of its state and its controllers.

The app holds what screens watch (the trace, how far the background work is, why
the trace cannot be opened, the runner, the last change) and the session's paths;
each controller (`toolreplay_tui.controllers`) owns one part of the rest and the
actions that change it. The app hands every message screens post, every action a
key names and every `:` command to the controller that owns it, and keeps crashes
to itself. Screens and widgets see it as a `toolreplay_tui.context.DebugSession`.

Nothing here runs the application or reimplements replay, fork, diff or promote:
runs go through the command line (`toolreplay_tui.model.runs`), comparisons
through `toolreplay.diff`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.filter import LineFilter
from textual.geometry import Size
from textual.reactive import var
from textual.screen import Screen, SystemModalScreen
from textual.widgets import Input, TextArea

from toolreplay import JsonValue, Operation, Patch, terminal_safe
from toolreplay_tui.commands import BindingCommands
from toolreplay_tui.controllers.editing import OutputEditing
from toolreplay_tui.controllers.large_values import LargeValues
from toolreplay_tui.controllers.loading import TraceLoading, collect_less_until_shown
from toolreplay_tui.controllers.new_calls import NewCallAnswers
from toolreplay_tui.controllers.patches import PatchesController
from toolreplay_tui.controllers.promote import Promotion
from toolreplay_tui.controllers.quitting import CANNOT_OPEN_EXIT_CODE, Quitting
from toolreplay_tui.controllers.runs import Runs
from toolreplay_tui.crash import crash_message, write_crash_report
from toolreplay_tui.keys import help_sections
from toolreplay_tui.messages import (
    LargeValueRequested,
    LiveRemovalRequested,
    Notice,
    OutputEditRequested,
    PatchChangeRequested,
    PatchEdited,
    PatchMade,
    PatchRemovalRequested,
    PromoteFinished,
    RunFinished,
    RunStarted,
)
from toolreplay_tui.model.commandline import (
    Command,
    FilterEffect,
    JumpTo,
    Quit,
    SavePatches,
    SetTheme,
    ShowHelp,
    ShowMessages,
)
from toolreplay_tui.model.patches import PendingPatches
from toolreplay_tui.model.rows import OperationRows
from toolreplay_tui.model.runs import DEFAULT_TIMEOUT, RunClient, RunResult, WarmRunner
from toolreplay_tui.model.trace_file import TraceFile
from toolreplay_tui.model.workspace import Workspace, display_path
from toolreplay_tui.screens.browse import BrowseScreen
from toolreplay_tui.screens.command_line import CommandLineScreen
from toolreplay_tui.screens.help import HelpScreen
from toolreplay_tui.screens.message_log import LoggedMessage, MessageLogScreen
from toolreplay_tui.screens.run import NextStep
from toolreplay_tui.state import BackgroundState, ForkRecord, describe_status
from toolreplay_tui.terminal_filter import TERMINAL_SAFE

__all__ = ["CANNOT_OPEN_EXIT_CODE", "CRASH_EXIT_CODE", "ToolReplayApp"]

CRASH_EXIT_CODE = 1
"""The exit status after the UI crashed (Textual's own; the traceback is saved to a file)."""


class ToolReplayApp(App[None]):
    """The incident debugger for one trace.

    Screens watch `trace`, `load_error`, `background`, `runner` and `notice` (set
    anew on every change of the session's state) and tell the app what to change
    with the messages of `toolreplay_tui.messages`.
    """

    if TYPE_CHECKING:
        # Pyright cannot match Textual's reactive descriptors with the attributes of a
        # protocol (`DebugSession`, `Host`): it is told the values they hold.
        trace: TraceFile | None
        background: BackgroundState
        load_error: str | None
        runner: str | None
        notice: Notice
    else:
        trace = var(None, always_update=True)
        """The trace, once its header and first screen are read (indexed and checked then
        in a worker thread: `background` says how far)."""
        background = var(BackgroundState, always_update=True)
        """How far indexing and the integrity check are; set while they run, and once after."""
        load_error = var(None)
        """Why the trace cannot be opened, if it cannot."""
        runner = var(None)
        """The `module:callable` given (or asked for), overriding the trace header's."""
        notice = var(Notice(), always_update=True)
        """What changed last: screens repaint and show its text in their status line."""

    CSS_PATH = "app.tcss"
    TITLE = "Tool Replay"
    COMMANDS = App.COMMANDS | {BindingCommands}
    COMMAND_PALETTE_DISPLAY = "^p"
    # Screens get -narrow/-wide and -short/-tall, which app.tcss lays out for 80x24.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # noqa: RUF012 (Textual types it so)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]  # noqa: RUF012

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?", id="app.help"),
        Binding(
            "colon",
            "command_line",
            "Command line",
            key_display=":",
            show=False,  # the footer has no room; help and the palette list it
            id="app.command_line",
        ),
        Binding("m", "messages", "Messages", show=False, id="app.messages"),
        # Not a priority binding: the run screen's ctrl+c cancels the run first.
        Binding("ctrl+c", "request_quit", "Quit", show=False, id="app.interrupt"),
        Binding("ctrl+q", "request_quit", "Quit", show=False, priority=True, id="app.quit"),
    ]
    PALETTE_BINDING = Binding("ctrl+p", "command_palette", "Command palette (every action)")
    """How help lists the palette's key (Textual binds it itself)."""

    def get_line_filters(self) -> Sequence[LineFilter]:
        # The last guard: no character a terminal acts on is drawn, whatever draws it.
        return [*super().get_line_filters(), TERMINAL_SAFE]

    def __init__(
        self,
        trace: str | os.PathLike[str],
        *,
        runner: str | None = None,
        against: str | os.PathLike[str] | None = None,
        workdir: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        python: str | None = None,
        run_timeout: float = DEFAULT_TIMEOUT,
        blink_cursors: bool = True,
        warm_runs: bool = True,
        notification_timeout: float = 6.0,
    ) -> None:
        """`notification_timeout`: seconds a message stays on screen (errors twice
        that); every message stays in the message log (`m`)."""
        gc_thresholds = collect_less_until_shown()
        super().__init__()
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.trace_file = self.absolute(Path(trace))
        self.against = None if against is None else self.absolute(Path(against))
        self.workspace = Workspace(
            self.trace_file, None if workdir is None else self.absolute(Path(workdir))
        )
        self.runner = runner
        self.blink_cursors = blink_cursors
        self.notification_timeout = notification_timeout
        self.rows: OperationRows | None = None
        self.effect_width = 6
        self.message_log: list[LoggedMessage] = []
        self.crash_report: Path | None = None
        # Forks and replays fork a warm child that has imported the command line, and the
        # application once a run asked for has imported it: opening a trace runs nothing.
        warm = WarmRunner(python=python, cwd=self.cwd, env=env) if warm_runs else None
        client = RunClient(python=python, cwd=self.cwd, env=env, timeout=run_timeout, warm=warm)
        self.loading = TraceLoading(self, gc_thresholds=gc_thresholds, on_checked=self._checked)
        self.patches = PatchesController(self, self.loading.when_checked)
        self.editing = OutputEditing(self, self.patches)
        self.large_values = LargeValues(self, self.patches)
        self.runs = Runs(
            self,
            self.patches,
            client,
            warm=warm,
            runner_given=runner is not None,
            when_checked=self.loading.when_checked,
            after_run=self._after_run,
        )
        self.new_calls = NewCallAnswers(self, self.patches, self.runs)
        self.promotion = Promotion(self, self.runs, after_run=self._after_run)
        self.quitting = Quitting(self, self.loading, self.patches, self.runs)
        self.browse = BrowseScreen()

    # --- the session, as screens and tests read it -----------------------------------

    def absolute(self, path: Path) -> Path:
        return path if path.is_absolute() else self.cwd / path

    def path_label(self, path: Path) -> str:
        """A path as the user reads it: relative to the working directory when inside it."""
        return display_path(path, self.cwd)

    @property
    def trace_label(self) -> str:
        return self.path_label(self.trace_file)

    @property
    def pending(self) -> PendingPatches:
        return self.patches.pending

    @property
    def live_effects(self) -> Sequence[str]:
        return self.runs.live_effects

    @property
    def warm(self) -> WarmRunner | None:
        return self.runs.warm

    @property
    def last_fork(self) -> ForkRecord | None:
        return self.runs.last_fork

    @property
    def last_run(self) -> RunResult | None:
        return self.runs.last_run

    @property
    def last_promote(self) -> RunResult | None:
        return self.promotion.last_promote

    @last_promote.setter
    def last_promote(self, result: RunResult | None) -> None:
        self.promotion.last_promote = result  # cleared to wait for the next

    def runner_spec(self) -> str | None:
        return self.runs.runner_spec()

    def can_diff(self) -> bool:
        return self.runs.can_diff()

    def can_promote(self) -> bool:
        return self.runs.can_promote()

    def patched_output(
        self, operation: Operation, patch: Patch | None
    ) -> tuple[JsonValue, str | None]:
        return self.patches.patched_output(operation, patch)

    def set_patch(self, operation: Operation, value: JsonValue) -> Patch | None:
        return self.patches.set_patch(operation, value)

    def save_patches_to(self, value: str | None) -> bool:
        return self.patches.save_to(value)

    def status_text(self) -> Text:
        return describe_status(
            self.pending,
            self.live_effects,
            self.last_fork,
            self.last_run,
            can_diff=self.can_diff(),
            path_label=self.path_label,
        )

    def tell(self, message: str, *, error: bool = False, toast: bool = True) -> None:
        """Say `message`: a notification that expires (errors stay twice as long),
        kept in the message log; `toast=False` only logs it (it is shown elsewhere)."""
        self.message_log.append(LoggedMessage(datetime.now(), message, error))
        if toast:
            self.notify(
                terminal_safe(message, keep="\n"),  # it may quote the trace
                severity="error" if error else "information",
                timeout=self.notification_timeout * (2 if error else 1),
                markup=False,
            )

    def changed(self, message: str | None = None, *, error: bool = False) -> None:
        self.patches.keep_unsaved()
        self.notice = Notice(message, error)
        if message is not None:
            self.tell(message, error=error)
        self.refresh_bindings()

    # --- start-up --------------------------------------------------------------------

    def get_default_screen(self) -> Screen[None]:
        # Its breakpoint classes now, before its widgets are styled: set on its first
        # resize instead, they would restyle every widget once more before the first frame.
        self.browse.add_class(*self.breakpoint_classes(self.size))
        return self.browse

    def breakpoint_classes(self, size: Size) -> list[str]:
        """The classes Textual gives a screen of `size` (`HORIZONTAL_BREAKPOINTS` and
        `VERTICAL_BREAKPOINTS`: the last one reached in each dimension)."""
        classes: list[str] = []
        for dimension, breakpoints in (
            (size.width, self.HORIZONTAL_BREAKPOINTS or []),
            (size.height, self.VERTICAL_BREAKPOINTS or []),
        ):
            reached = [name for threshold, name in sorted(breakpoints) if dimension >= threshold]
            classes.extend(reached[-1:])
        return classes

    def on_mount(self) -> None:
        trace = self.loading.open()
        if trace is None:
            self.tell(
                f"cannot open {self.trace_label}: {self.load_error} (q quits, exit status "
                f"{CANNOT_OPEN_EXIT_CODE})",
                error=True,
            )
            return
        self.patches.restore_unsaved()
        self.background = BackgroundState(len(trace), trace.indexed, trace.index_progress)
        self.refresh_bindings()
        self.runs.warm_up()
        # What the first frame does not show waits for it: the first rows come sooner.
        self.call_after_refresh(self._start_background, trace)

    def _start_background(self, trace: TraceFile) -> None:
        self.loading.start_background(trace)
        if self.against is not None:
            self.action_diff()  # `--against`: the comparison is what was asked for

    def _checked(self, trace: TraceFile) -> None:
        self.runs.prepare_warm(list(trace.effects))

    def on_unmount(self) -> None:
        self.runs.cancel()  # no child outlives the debugger
        self.loading.stop()

    # --- messages from screens, to the controller that owns what they change ----------

    def on_patch_edited(self, message: PatchEdited) -> None:
        self.patches.set_patch(message.operation, message.value)

    def on_patch_made(self, message: PatchMade) -> None:
        self.patches.put_made(message.operation, message.patch)

    def on_patch_removal_requested(self, message: PatchRemovalRequested) -> None:
        self.patches.remove(message.identity)

    def on_patch_change_requested(self, message: PatchChangeRequested) -> None:
        self.patches.change(message.change, message.key)

    def on_live_removal_requested(self, message: LiveRemovalRequested) -> None:
        self.runs.stop_live(message.effect)

    def on_output_edit_requested(self, message: OutputEditRequested) -> None:
        if message.external:
            self.editing.edit_externally(message.operation)
        else:
            self.editing.edit(message.operation)

    def on_large_value_requested(self, message: LargeValueRequested) -> None:
        self.large_values.request(message.large, message.action)

    def on_run_started(self, message: RunStarted) -> None:
        self.runs.started(message.handle)

    def on_run_finished(self, message: RunFinished) -> None:
        self.runs.finished(message.request, message.result)

    def on_promote_finished(self, message: PromoteFinished) -> None:
        self.promotion.finished(message.result)

    def _after_run(self, then: NextStep | None) -> None:
        """The run screen closed, with the next step the user chose there."""
        stop = self.runs.last_stop
        if then == "diff":
            self.action_diff()
        elif then == "promote":
            self.action_promote()
        elif then == "promote_now":
            self.action_promote_now()
        elif then is not None and stop is not None:
            self.new_calls.answer(then, stop)

    # --- actions (the keys' names: bindings and the palette run them) -----------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # `?` and `:` are typed into a text field: the footer does not offer them there.
        # (The screen under the palette, not the palette's own field, decides.)
        screen = next(
            (s for s in reversed(self.screen_stack) if not isinstance(s, SystemModalScreen)),
            self.screen,
        )
        if action in ("help", "command_line") and isinstance(screen.focused, (Input, TextArea)):
            return False
        if action in ("promote", "promote_now"):
            return True if self.can_promote() else None
        if action == "diff":
            return True if self.can_diff() else None
        if action in ("fork", "replay", "load_patches"):
            return True if self.trace is not None else None
        if action == "save_patches":
            return True if len(self.pending) else None
        return True

    def action_undo(self) -> None:
        self.patches.undo()

    def action_patches(self) -> None:
        self.patches.show_list()

    def action_save_patches(self) -> None:
        self.patches.ask_save()

    def action_load_patches(self) -> None:
        self.patches.ask_load()

    def action_fork(self) -> None:
        self.runs.fork()

    def action_replay(self) -> None:
        self.runs.replay()

    def action_diff(self) -> None:
        self.runs.diff()

    def action_promote(self) -> None:
        self.promotion.open_form()

    def action_promote_now(self) -> None:
        self.promotion.promote_now()

    # --- help and the command line ---------------------------------------------------

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(help_sections([*self.BINDINGS, self.PALETTE_BINDING])))

    def action_messages(self) -> None:
        """`m`: every message of this session, newest last."""
        if not isinstance(self.screen, MessageLogScreen):
            self.push_screen(MessageLogScreen(self.message_log))

    def action_command_line(self) -> None:
        """`:`: type a command (`:123`, `:effect NAME`, `:w`, `:q`…)."""
        if isinstance(self.screen, CommandLineScreen):
            return

        def typed(command: Command | None) -> None:
            if command is not None:
                self.run_command(command)

        self.push_screen(CommandLineScreen(), typed)

    def run_command(self, command: Command) -> None:
        """Do what a `:` command asks."""
        if isinstance(command, (JumpTo, FilterEffect)):
            if self.screen is not self.browse:
                self.changed(
                    "jumps and effect filters work in the operation list: escape back to it first",
                    error=True,
                )
            elif isinstance(command, JumpTo):
                self.browse.jump_to(command.logical_id)
            else:
                self.browse.filter_effect(command.name)
        elif isinstance(command, SavePatches):
            self.save_patches_to(command.path)
        elif isinstance(command, Quit):
            if command.force:
                self.quitting.now()
            else:
                self.quitting.request()
        elif isinstance(command, SetTheme):
            self.set_theme(command.name)
        elif isinstance(command, ShowMessages):
            self.action_messages()
        elif isinstance(command, ShowHelp):  # pyright: ignore[reportUnnecessaryIsInstance]
            self.action_help()

    def set_theme(self, name: str) -> None:
        """Switch to Textual's theme `name`; an unknown name is refused, listing them."""
        if name not in self.available_themes:
            names = ", ".join(sorted(self.available_themes))
            self.changed(f"no theme named {name!r}; the themes are {names}", error=True)
            return
        self.theme = name
        self.changed(f"theme {name}")

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's palette commands, less its Quit (which would not ask about unsaved
        patches) and Keys (`?` lists every key); `BindingCommands` adds every action."""
        # Textual types `screen` as an unparametrised Screen.
        inherited = super().get_system_commands(screen)  # pyright: ignore[reportUnknownMemberType]
        for command in inherited:
            if command.title not in ("Quit", "Keys"):
                yield command

    # --- quitting and crashes ----------------------------------------------------------

    def action_request_quit(self) -> None:
        self.quitting.request()

    def _handle_exception(self, error: Exception) -> None:
        """An unhandled exception: the traceback goes to a file, its path is printed
        after the terminal is restored, and the app exits with `CRASH_EXIT_CODE`."""
        kept = self.patches.keep_unsaved()
        self.crash_report = write_crash_report(self.workspace, error)
        self._exit_renderables.append(
            crash_message(error, self.crash_report, kept, len(self.pending))
        )
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        # Textual's report would print each frame's local variables, which may hold
        # the children's environment (API keys): the message above says where the
        # traceback (without locals) is.
        self.bell()
        self._close_messages_no_wait()
