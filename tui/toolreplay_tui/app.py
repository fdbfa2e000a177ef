"""`ToolReplayApp`: the state of one debugging session, and the actions that change it.

The screens render; this class holds the trace, the pending patches and the last
runs, and starts every child process. It never runs the application itself and
never reimplements replay, fork, diff or promote: runs go through the command
line (`toolreplay_tui.model.runs`), comparisons through `toolreplay.diff`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.filter import LineFilter
from textual.geometry import Size
from textual.reactive import var
from textual.screen import Screen, SystemModalScreen
from textual.timer import Timer
from textual.widgets import Input, TextArea
from textual.worker import WorkerFailed

from toolreplay import (
    DiffReport,
    ErrorPatch,
    JsonValue,
    NonPortableValueError,
    Operation,
    OperationIdentity,
    OutputPatch,
    Patch,
    PatchError,
    Raised,
    RedactedValueEditError,
    ToolReplayError,
    TraceFormatError,
    terminal_safe,
    terminal_safe_text,
)
from toolreplay.files import source_conflict, write_atomically
from toolreplay.protocol import prepare_reading
from toolreplay.redaction.files import scan_file
from toolreplay.runners import RUNNER_PATTERN
from toolreplay_tui.commands import BindingCommands
from toolreplay_tui.external_editor import edit_externally
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
from toolreplay_tui.model.answers import check_recipe, patched_output
from toolreplay_tui.model.columns import shown_width
from toolreplay_tui.model.commandline import (
    COMMANDS,
    Command,
    FilterEffect,
    JumpTo,
    Quit,
    SavePatches,
    SetTheme,
    ShowHelp,
    ShowMessages,
)
from toolreplay_tui.model.diffrows import DiffRows
from toolreplay_tui.model.jsontext import format_json, parse_portable
from toolreplay_tui.model.new_call import (
    NewModelCall,
    ReplyPreview,
    new_model_call,
    position_in_source,
    preview,
)
from toolreplay_tui.model.patches import PatchKey, PendingPatches, describe_target
from toolreplay_tui.model.promotion import promote_defaults
from toolreplay_tui.model.rows import OperationRows, megabytes
from toolreplay_tui.model.runreport import headline
from toolreplay_tui.model.runs import (
    DEFAULT_TIMEOUT,
    RunClient,
    RunHandle,
    RunRequest,
    RunResult,
    WarmRunner,
)
from toolreplay_tui.model.stops import UnrecordedCall, unrecorded_call
from toolreplay_tui.model.trace_file import Integrity, LargeLine, LargeOutput, TraceFile
from toolreplay_tui.model.workspace import Workspace, display_path
from toolreplay_tui.screens.browse import BrowseScreen
from toolreplay_tui.screens.command_line import CommandLineScreen
from toolreplay_tui.screens.dialogs import ConfirmScreen, PromptScreen
from toolreplay_tui.screens.diff import DiffScreen, compare
from toolreplay_tui.screens.editor import Edited, EditorScreen
from toolreplay_tui.screens.help import HelpScreen, HelpSection
from toolreplay_tui.screens.message_log import LoggedMessage, MessageLogScreen
from toolreplay_tui.screens.patches import PatchesScreen
from toolreplay_tui.screens.promote import ExpectedValueBox, PromoteScreen
from toolreplay_tui.screens.reply import ReplyPreviewScreen, ToolPickerScreen
from toolreplay_tui.screens.run import NextStep, RunScreen
from toolreplay_tui.terminal_filter import TERMINAL_SAFE
from toolreplay_tui.widgets.detail import DetailPane, ValueInput, output_of
from toolreplay_tui.widgets.diff_view import DiffView
from toolreplay_tui.widgets.operation_list import OperationList
from toolreplay_tui.widgets.scroll_box import ScrollBox
from toolreplay_tui.widgets.value_view import ValueView

__all__ = [
    "BACKGROUND_POLL",
    "CANNOT_OPEN_EXIT_CODE",
    "CRASH_EXIT_CODE",
    "BackgroundState",
    "ForkRecord",
    "ToolReplayApp",
]

CANNOT_OPEN_EXIT_CODE = 2
"""The exit status after the trace could not be opened (the reason was on screen)."""
CRASH_EXIT_CODE = 1
"""The exit status after the UI crashed (Textual's own; the traceback is saved to a file)."""
BACKGROUND_POLL = 0.1
"""Seconds between looks at the background work on the trace (progress in the header)."""
START_GC_THRESHOLD = 100_000
"""Objects allocated between collections of the youngest generation until the first frame
(Python's default is 700): the start allocates a few hundred thousand that all live on,
and collecting them fifty times over took a tenth of the time to the first rows."""


def _error_problem(value: str) -> str | None:
    type_name, colon, message = value.partition(":")
    if not colon or not type_name.strip() or " " in type_name.strip():
        return "write it as Type: message, e.g. TimeoutError: the queue timed out"
    return None if message.strip() else "give a message after the colon"


def _suffix(occurrence: int) -> int:
    """Cells of an occurrence suffix in the operation list (`#2`; none for the first)."""
    return len(str(occurrence)) + 1 if occurrence else 0


def _wants_json(model: NewModelCall) -> bool:
    """Whether the request asks for a JSON answer (structured output)."""
    body = model.call.inputs.get("body")
    request = body if isinstance(body, dict) else {}
    form = request.get("text") if model.api == "responses" else request
    found = (
        form.get("format" if model.api == "responses" else "response_format")
        if isinstance(form, dict)
        else None
    )
    return isinstance(found, dict) and found.get("type") in ("json_schema", "json_object")


def _size(large: LargeOutput | LargeLine) -> int:
    return large.value_size if isinstance(large, LargeOutput) else large.size


def _count(number: int, noun: str) -> str:
    return f"{number} {noun if number == 1 else noun + 'es' if noun.endswith('h') else noun + 's'}"


@dataclass(frozen=True, slots=True)
class BackgroundState:
    """What the background work on the trace has done: operations indexed, and the check."""

    count: int = 0
    indexed: bool = False
    index_progress: float = 0.0
    integrity: Integrity = field(default_factory=Integrity)


@dataclass(frozen=True, slots=True)
class ForkRecord:
    """A fork this session ran: its result, its branch and what it applied."""

    result: RunResult
    branch: Path
    patches: tuple[Patch, ...]
    runner: str


class ToolReplayApp(App[None]):
    """The incident debugger for one trace.

    Screens watch `trace`, `load_error`, `runner` and `notice` (set anew on every
    change of the session's state) and tell the app what to change with the
    messages of `toolreplay_tui.messages`.
    """

    trace: var[TraceFile | None] = var[TraceFile | None](None, always_update=True)
    """The trace, once its header and first screen are read (indexed and checked then
    in a worker thread: `background` says how far)."""
    background: var[BackgroundState] = var(lambda: BackgroundState(), always_update=True)
    """How far indexing and the integrity check are; set while they run, and once after."""
    load_error: var[str | None] = var[str | None](None)
    """Why the trace cannot be opened, if it cannot."""
    runner: var[str | None] = var[str | None](None)
    """The `module:callable` given (or asked for), overriding the trace header's."""
    notice: var[Notice] = var(Notice(), always_update=True)
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
        self._gc_thresholds: tuple[int, int, int] | None = gc.get_threshold()
        gc.set_threshold(START_GC_THRESHOLD, *self._gc_thresholds[1:])
        super().__init__()
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.trace_file = self._absolute(Path(trace))
        self.against = None if against is None else self._absolute(Path(against))
        self.workspace = Workspace(
            self.trace_file, None if workdir is None else self._absolute(Path(workdir))
        )
        self.runner = runner
        self._runner_given = runner is not None  # with --runner (else the trace's, or asked)
        # Forks and replays fork a warm child that has imported the command line, and the
        # application once a run asked for has imported it: opening a trace runs nothing.
        self.warm = WarmRunner(python=python, cwd=self.cwd, env=env) if warm_runs else None
        self.runs = RunClient(
            python=python, cwd=self.cwd, env=env, timeout=run_timeout, warm=self.warm
        )
        self.blink_cursors = blink_cursors
        # The models a run's JSON document is read with (pydantic), imported before the
        # app runs: imported as the first run ends, they stalled the interface.
        prepare_reading()
        self.pending = PendingPatches()
        self.rows: OperationRows | None = None
        self.effect_width = 6
        self.last_fork: ForkRecord | None = None
        self.last_run: RunResult | None = None
        self.last_promote: RunResult | None = None
        self.last_stop: UnrecordedCall | None = None
        self.live_effects: list[str] = []
        """Effects whose calls the source does not hold go live in the next forks (`a` at a
        new model call): the adapter sends them through the application's own client."""
        self._outputs: dict[tuple[str, OperationIdentity], tuple[JsonValue, str | None]] = {}
        self._fork_context: tuple[Path, tuple[Patch, ...], str] | None = None
        # The last fork's branch compared with the source, made as soon as it ended.
        self._fork_diff: tuple[Path, DiffReport, DiffRows] | None = None
        self._runs: list[RunHandle] = []
        self.notification_timeout = notification_timeout
        self.message_log: list[LoggedMessage] = []
        self.crash_report: Path | None = None
        self._autosaved = 0  # the pending patches' revision last kept in the work folder
        self._owns_unsaved = False  # this session wrote (or restored) the unsaved file
        self._after_check: tuple[str, Callable[[], None]] | None = None
        self._poll: Timer | None = None  # watches the background work while it runs
        self.browse = BrowseScreen()

    def _absolute(self, path: Path) -> Path:
        return path if path.is_absolute() else self.cwd / path

    def path_label(self, path: Path) -> str:
        """A path as the user reads it: relative to the working directory when inside it."""
        return display_path(path, self.cwd)

    @property
    def trace_label(self) -> str:
        return self.path_label(self.trace_file)

    def runner_spec(self) -> str | None:
        if self.runner:
            return self.runner
        return None if self.trace is None else self.trace.header.runner

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
        # The header and the first screen of operations are read here, at once (a few
        # milliseconds whatever the size); the rest is indexed and checked in a thread.
        try:
            trace = TraceFile.open(self.trace_file)
        except (ToolReplayError, OSError) as error:
            self._load_failed(str(error))
            return
        first = [trace.entry(index) for index in range(min(len(trace), 200))]
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
        self.rows, self.effect_width = OperationRows(trace), max(6, longest)
        self.trace = trace  # last: watchers read the rows
        self._restore_unsaved()
        self.background = BackgroundState(len(trace), trace.indexed, trace.index_progress)
        self.refresh_bindings()
        self._warm_up()
        # What the first frame does not show waits for it: the first rows come sooner.
        self.call_after_refresh(self._start_background, trace)

    def _restore_gc(self) -> None:
        """Collect garbage as usual again, once the first frame is drawn (or cannot be)."""
        if self._gc_thresholds is not None:
            gc.set_threshold(*self._gc_thresholds)
            self._gc_thresholds = None

    def _start_background(self, trace: TraceFile) -> None:
        """After the first frame: collect garbage as usual, index and check the trace,
        and open the comparison `--against` asked for."""
        self._restore_gc()
        self._poll = self.set_interval(BACKGROUND_POLL, self._poll_background)
        self._index_and_check(trace)
        if self.against is not None:
            self.action_diff()  # `--against`: the comparison is what was asked for

    def _load_failed(self, message: str) -> None:
        self._restore_gc()
        self.load_error = message
        self.tell(
            f"cannot open {self.trace_label}: {message} (q quits, exit status "
            f"{CANNOT_OPEN_EXIT_CODE})",
            error=True,
        )

    @work(thread=True, exclusive=True, group="load")
    def _index_and_check(self, trace: TraceFile) -> None:
        trace.check_elsewhere()  # stops soon after `stop_background` closes the trace

    def _poll_background(self) -> None:
        """Publish the background work's progress; once it is done, stop and run what waited."""
        trace = self.trace
        if trace is None:
            return
        state = BackgroundState(len(trace), trace.indexed, trace.index_progress, trace.integrity)
        if state != self.background:
            self.background = state
        if state.integrity.state == "checking":
            return
        if self._poll is not None:
            self._poll.stop()
        if state.integrity.state == "ok":
            self._prepare_warm(list(trace.effects))
        waiting, self._after_check = self._after_check, None
        if waiting is None:
            return
        what, then = waiting
        if state.integrity.state == "ok":
            then()
        else:
            self._changed(f"cannot {what}: {state.integrity.problem}", error=True)

    def _when_checked(self, what: str, then: Callable[[], None]) -> None:
        """Run `then` (an action needing the whole trace) once the integrity check passed.

        Until then the status line says what waits, and a later request replaces it.
        """
        trace = self.trace
        if trace is None:
            return
        integrity = trace.integrity
        if integrity.state == "ok":
            then()
        elif integrity.state == "failed":
            self._changed(f"cannot {what}: {integrity.problem}", error=True)
        else:
            self._after_check = (what, then)
            self._changed(
                f"{what} waits for the trace's integrity check "
                f"({self.check_progress_text()}); it starts when the check passes"
            )

    def check_progress_text(self) -> str:
        """`indexing 42%` or `checking 42%`, for the header and what waits."""
        state = self.background
        if not state.indexed:
            return f"indexing {state.index_progress:.0%}"
        return f"checking {state.integrity.progress:.0%}"

    @work(thread=True, exclusive=True, group="warm")
    def _warm_up(self) -> None:
        """Start the warm runner (in a thread), so that forks start fast. It imports the
        command line only: no runner is imported or called before a run is asked for."""
        warm = self.warm
        if warm is not None:
            with contextlib.suppress(OSError):  # runs go cold when it cannot start
                warm.warm_up()

    @work(thread=True, exclusive=False, group="warm")
    def _prepare_warm(self, effects: list[str]) -> None:
        """Let the warm runner import Tool Replay's adapters for the trace's effects (an
        OpenAI trace: the SDK), once the trace is checked; nothing of the application."""
        warm = self.warm
        if warm is not None:
            with contextlib.suppress(OSError):
                warm.warm_up()
                warm.prepare(self.trace_file, effects)

    # --- status ----------------------------------------------------------------------

    def status_text(self) -> Text:
        text = Text()
        count = len(self.pending)
        if count:
            noun = "patch" if count == 1 else "patches"
            text.append(f"{count} pending {noun}", style="bold yellow")
            if self.pending.dirty:
                text.append(" (unsaved: w saves them)", style="yellow")
            elif self.pending.saved_path is not None:
                saved = f" (saved in {self.path_label(self.pending.saved_path)})"
                text.append(terminal_safe_text(saved, "dim"))  # named after the trace
            text.append(" · f forks with them", style="dim")
        else:
            text.append("no pending patch: e edits the selected output", style="dim")
        if self.live_effects:
            live = ", ".join(self.live_effects)
            text.append(terminal_safe_text(f" · {live} live in forks (L lists it)", "bold cyan"))
        if self.last_fork is not None:
            result = self.last_fork.result
            text.append("  ·  ")
            text.append(terminal_safe_text(headline(result), "green" if result.ok else "red"))
            if self.can_diff():
                text.append(" · d compares", style="dim")
            if result.ok:
                text.append(" · p promotes", style="dim")
        elif self.last_run is not None:
            text.append("  ·  ")
            style = "green" if self.last_run.ok else "red"
            text.append(terminal_safe_text(headline(self.last_run), style))
        return text

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

    def keep_unsaved(self) -> Path | None:
        """Keep the pending patches in the work folder whenever they changed (removed when
        there are none), before anything else happens: a crash then loses none, and the
        next session on this trace restores them. The path, when patches are kept."""
        path = self.workspace.unsaved_patches_path()
        pending = self.pending
        if pending.revision != self._autosaved:
            try:
                if len(pending):
                    self.workspace.ensure()
                    pending.write_copy(path, overwrite=True)
                    self._owns_unsaved = True
                elif self._owns_unsaved:
                    path.unlink(missing_ok=True)
            except (OSError, PatchError) as error:
                self.tell(f"cannot keep the pending patches in {path}: {error}", error=True)
                return None
            self._autosaved = pending.revision
        return path if len(pending) and self._owns_unsaved else None

    def _restore_unsaved(self) -> None:
        """Restore the patches an earlier session left unsaved (it crashed, or was killed),
        as the trace opens, before anything can change the pending set."""
        path = self.workspace.unsaved_patches_path()
        if not path.is_file():
            return
        label = self.path_label(path)
        try:
            restored = self.pending.restore(path)
        except PatchError as error:
            self.tell(f"cannot restore the unsaved patches in {label}: {error}", error=True)
            return
        self._owns_unsaved = True
        self._autosaved = self.pending.revision
        message = (
            f"restored {_count(len(restored.loaded), 'pending patch')} an earlier session "
            f"left unsaved (kept in {label}); w saves them"
        )
        if restored.skipped:
            message += "; skipped " + "; ".join(skipped.reason for skipped in restored.skipped)
        self._changed(message, error=bool(restored.skipped))

    def _changed(self, message: str | None = None, *, error: bool = False) -> None:
        self.keep_unsaved()
        self.notice = Notice(message, error)
        if message is not None:
            self.tell(message, error=error)
        self.refresh_bindings()

    # --- patches ---------------------------------------------------------------------

    def set_patch(self, operation: Operation, value: JsonValue) -> Patch | None:
        try:
            patch = self.pending.set(operation, value)
        except (PatchError, NonPortableValueError, RedactedValueEditError) as error:
            self._changed(str(error), error=True)
            return None
        self._changed(
            f"pending patch {patch.patch_id} on #{operation.logical_id} {operation.effect}"
        )
        return patch

    def on_patch_edited(self, message: PatchEdited) -> None:
        self.set_patch(message.operation, message.value)

    def on_patch_removal_requested(self, message: PatchRemovalRequested) -> None:
        removed = self.pending.remove(message.identity)
        if removed is None:
            self._changed("no pending patch on this operation", error=True)
        else:
            self._changed(f"removed patch {removed.patch_id} (u brings it back)")

    def action_undo(self) -> None:
        """`u`: take back the last change to the pending patches, of any kind."""
        undone = self.pending.undo()
        if undone is None:
            self._changed(
                "nothing to undo: the pending patches are as the session began", error=True
            )
        else:
            self._changed(f"undone: {undone}")

    def action_patches(self) -> None:
        """`L`: every pending patch, of every kind, in one list."""
        self.push_screen(PatchesScreen())
        self._changed()

    def on_patch_change_requested(self, message: PatchChangeRequested) -> None:
        key = message.key
        patch = None if key is None else self.pending.get(key)
        if message.change == "undo":
            self.action_undo()
        elif message.change == "remove" and key is not None and patch is not None:
            self.pending.remove(key)
            self._changed(f"removed patch {patch.patch_id} (u brings it back)")
        elif message.change == "edit" and key is not None and patch is not None:
            self._edit_patch(key, patch)

    def on_live_removal_requested(self, message: LiveRemovalRequested) -> None:
        if message.effect in self.live_effects:
            self.live_effects.remove(message.effect)
            self._changed(
                f"{message.effect} is no longer live: the next fork stops at its new calls"
            )

    def _edit_patch(self, key: PatchKey, patch: Patch) -> None:
        """Edit a pending patch's outcome in place (its kind, target and place stay)."""
        if isinstance(patch, ErrorPatch):
            shown = patch.error_type.removeprefix("builtins.")

            def failed(value: str | None) -> None:
                if value:
                    self._put_error(key, value)

            self.push_screen(
                PromptScreen(
                    f"{describe_target(patch)} raises (Type: message):",
                    f"{shown}: {patch.message}",
                    check=_error_problem,
                ),
                failed,
            )
            return
        what = f"the {patch.recipe}(...) of" if patch.recipe else "the patched output of"

        def edited(result: Edited | None) -> None:
            if result is None:
                return
            try:
                changed = OutputPatch(
                    patch.namespace,
                    patch.name,
                    patch.inputs,
                    patch.occurrence,
                    result.value,
                    patch.kind,
                    patch.recipe,  # a reply(...) or edit(...) stays one: its spec is edited
                    patch.at,
                )
                check_recipe(changed)
                self.pending.put(changed, key)
            except (PatchError, NonPortableValueError) as error:
                self._changed(str(error), error=True)
                return
            self._changed(f"changed the {patch.kind} patch on {describe_target(changed)}")

        self.push_screen(
            EditorScreen(
                None,
                format_json(patch.value),
                heading=f"Edit {what} {describe_target(patch)}",
            ),
            edited,
        )

    def _put_error(self, key: PatchKey, error: str) -> None:
        try:
            made = self.pending.fail_instead(key, error)
        except (PatchError, NonPortableValueError) as problem:
            self._changed(str(problem), error=True)
            return
        self._changed(f"pending patch {made.patch_id}: {describe_target(made)} raises {error}")

    def patched_output(
        self, operation: Operation, patch: Patch | None
    ) -> tuple[JsonValue, str | None]:
        """What `operation` gives with its pending patch (a recipe resolved as the fork
        will resolve it), and why a recipe could not be resolved here (then its spec)."""
        if patch is None or not isinstance(patch, OutputPatch) or patch.recipe is None:
            return output_of(operation, patch), None
        key = (patch.patch_id, operation.identity)
        known = self._outputs.get(key)
        if known is None:
            try:
                assert self.trace is not None
                known = (patched_output(operation, patch, self.trace), None)
            except (PatchError, NonPortableValueError) as error:
                known = (patch.value, f"its {patch.recipe}(...) cannot be shown resolved: {error}")
            if len(self._outputs) > 256:
                self._outputs.clear()
            self._outputs[key] = known
        return known

    def child_environment(self) -> Mapping[str, str]:
        """The environment the children (replays, forks, promotes) run with."""
        return self.runs.env if self.runs.env is not None else os.environ

    # --- supplying the call a fork stopped at -----------------------------------------

    def supply_output(self, call: UnrecordedCall) -> None:
        """Open the editor on the call's output; saving supplies it and forks again."""

        def edited(result: Edited | None) -> None:
            if result is None:
                self._changed("stopped: the fork was not run again")
                return
            try:
                patch = self.pending.supply(call.effect, call.inputs, call.occurrence, result.value)
            except (PatchError, NonPortableValueError) as error:
                self._changed(str(error), error=True)
                return
            self._changed(f"supplied {call.effect}: pending patch {patch.patch_id}")
            self._with_runner(self._start_fork)

        start = f"#{call.nearest_id}'s recorded output" if call.nearest_id is not None else "null"
        self.push_screen(
            EditorScreen(
                None,
                call.editor_text(),
                heading=(
                    f"Supply the output of {call.effect} occurrence {call.occurrence}, a call "
                    f"the recording never made (starting from {start})"
                ),
                select_all=call.nearest_id is None,  # typing replaces the `null`
            ),
            edited,
        )

    def supply_error(self, call: UnrecordedCall) -> None:
        """Ask for `Type: message`; the call then raises it, and the fork runs again."""

        def answered(value: str | None) -> None:
            if not value:
                self._changed("stopped: the fork was not run again")
                return
            try:
                patch = self.pending.supply_failure(
                    call.effect, call.inputs, call.occurrence, value
                )
            except (PatchError, NonPortableValueError) as error:
                self._changed(str(error), error=True)
                return
            self._changed(f"supplied an error for {call.effect}: pending patch {patch.patch_id}")
            self._with_runner(self._start_fork)

        self.push_screen(
            PromptScreen(
                f"{call.effect} occurrence {call.occurrence} raises (Type: message; TimeoutError, "
                "ConnectionError… are raised as themselves, other names as ReplayedEffectError):",
                f"TimeoutError: {call.effect} timed out",
                check=_error_problem,
            ),
            answered,
        )

    # --- answering a model call a fork stopped at --------------------------------------

    def ask_live(self, model: NewModelCall) -> None:
        """`a`: fork again with the model call's effect live (its new calls are sent
        through the application's own client); it stays live until removed (L, x)."""
        if model.effect not in self.live_effects:
            self.live_effects.append(model.effect)
        self._changed(f"{model.effect} goes live in this fork and the next ones (L lists it)")
        self._with_runner(self._start_fork)

    def answer_text(self, model: NewModelCall) -> None:
        """`t`: a line of text, shown as the reply the fork will send, then forked."""
        made: dict[str, tuple[OutputPatch, ReplyPreview]] = {}

        def check(value: str) -> str | None:
            try:
                patch = model.text_reply(value)
                made[value] = (patch, self._preview(model, patch))
            except (PatchError, NonPortableValueError) as error:
                return str(error)
            return None

        def typed(value: str | None) -> None:
            if value is None or value not in made:
                self._changed("stopped: the fork was not run again")
                return
            patch, shown = made[value]
            self._offer_reply(model, patch, shown, "Answer with this text")

        wants = " (the request asks for JSON: type the JSON text)" if _wants_json(model) else ""
        self.push_screen(
            PromptScreen(
                f"The model's answer to this {model.effect} call, one line{wants}:",
                placeholder="what the model says",
                check=check,
            ),
            typed,
        )

    def call_tool(self, model: NewModelCall) -> None:
        """`c`: pick one of the request's tools, write its arguments (JSON), see the reply."""
        if not model.tools:
            self._changed(f"this {model.effect} request offers no function tool", error=True)
            return

        def picked(name: str | None) -> None:
            if name is None:
                self._changed("stopped: the fork was not run again")
                return
            self._edit_arguments(model, name, model.arguments_template(name), None)

        self.push_screen(ToolPickerScreen(model.effect, model.tools), picked)

    def _edit_arguments(
        self, model: NewModelCall, name: str, text: str, problem: str | None
    ) -> None:
        def edited(result: Edited | None) -> None:
            if result is None:
                self._changed("stopped: the fork was not run again")
                return
            arguments = format_json(result.value)
            try:
                patch = model.tool_reply(name, arguments)
                shown = self._preview(model, patch)
            except (PatchError, NonPortableValueError) as error:
                self._edit_arguments(model, name, arguments, f"not used: {error}")
                return
            self._offer_reply(model, patch, shown, f"Answer with a call of {name}")

        self.push_screen(
            EditorScreen(
                None,
                text,
                heading=f"The arguments the model calls {name} with (a JSON object)",
                problem=problem,
                save_label="uses these arguments (the reply is shown next)",
            ),
            edited,
        )

    def reuse_answer(self, model: NewModelCall) -> None:
        """`r`: the nearest recorded answer of this endpoint, shown, then forked."""
        patch = model.reuse_reply()
        answer = model.recorded_answer()
        if patch is None or answer is None:
            self._changed("no recorded answer of this endpoint fits the request", error=True)
            return
        try:
            shown = self._preview(model, patch)
        except (PatchError, NonPortableValueError) as error:
            self._changed(str(error), error=True)
            return
        self._offer_reply(
            model, patch, shown, f"Answer with the recorded answer of #{answer.logical_id}"
        )

    def _preview(self, model: NewModelCall, patch: OutputPatch) -> ReplyPreview:
        """The reply `patch` gives the call, as the fork will resolve it."""
        assert self.trace is not None
        fork = self.last_fork
        near = position_in_source(fork.branch) if fork is not None else None
        return preview(model, patch, self.trace, near)

    def _offer_reply(
        self, model: NewModelCall, patch: OutputPatch, shown: ReplyPreview, heading: str
    ) -> None:
        number = self.pending.next_calls(model.effect) + 1

        def answered(accept: bool | None) -> None:
            if not accept:
                self._changed("stopped: nothing was added, the fork was not run again")
                return
            self.pending.put(patch)
            self._changed(
                f"pending patch {patch.patch_id} answers new call #{number} of {model.effect}"
            )
            self._with_runner(self._start_fork)

        described = f"{patch.patch_id}  supplied output  next new call #{number} of {model.effect}"
        self.push_screen(
            ReplyPreviewScreen(
                f"{heading}: the fork answers {model.effect} with", shown, described
            ),
            answered,
        )

    def on_large_value_requested(self, message: LargeValueRequested) -> None:
        """`s` or `E` on a value too large to show whole."""
        if message.action == "save":
            self.save_large_value(message.large)
        else:
            self.edit_large_externally(message.large)

    def save_large_value(self, large: LargeOutput | LargeLine) -> None:
        """Ask where to save a large value's text (as its trace line holds it), then write
        it to that new file (private: it comes from a trace)."""

        def chosen(value: str | None) -> None:
            if not value or self.trace is None:
                return
            path = self._absolute(Path(value))
            problem = source_conflict(path, [self.trace_file])
            if problem is not None:
                self._changed(
                    f"{self.path_label(path)} {problem}: the trace being debugged is never "
                    "written; choose another file",
                    error=True,
                )
                return
            try:
                if path.parent == self.workspace.root:
                    self.workspace.ensure()
                write_atomically(path, self.trace.value_text(large))
            except OSError as error:
                self._changed(
                    f"cannot save the value to {self.path_label(path)}: {error}", error=True
                )
                return
            self._changed(f"saved the value ({megabytes(_size(large))}) to {self.path_label(path)}")

        suggestion = self.path_label(self.workspace.next_path("value", ".json"))
        self.push_screen(PromptScreen("Save the value to a new file:", suggestion), chosen)

    def edit_large_externally(self, large: LargeOutput | LargeLine) -> None:
        """`E` on a large output: edit its text in `$EDITOR`; a change becomes a pending
        patch (the recorded operation is decoded in full for it, only then)."""
        trace = self.trace
        if trace is None:
            return
        if isinstance(large, LargeLine):
            self._changed(
                "this line is not laid out as an operation line is written, so its output "
                "cannot be patched here: v shows it, s there saves it",
                error=True,
            )
            return
        start = trace.value_text(large).decode("utf-8", errors="replace")
        edit = edit_externally(self, self.workspace, start, self.path_label)
        if edit.text is None:
            self._changed(edit.problem, error=True)
            return
        if edit.text.strip() == start.strip():
            self._changed("the editor left the output unchanged")
            return
        parsed = parse_portable(edit.text, what="the output")
        if parsed.problem is not None:
            self._changed(f"not saved: {parsed.problem.describe()}", error=True)
            return
        try:
            operation = trace.operation(large.index)
        except TraceFormatError as error:
            self._changed(str(error), error=True)
            return
        self.set_patch(operation, parsed.value)

    def on_output_edit_requested(self, message: OutputEditRequested) -> None:
        if message.external:
            self.edit_output_externally(message.operation)
        else:
            self.edit_output(message.operation)

    def _editable_text(self, operation: Operation) -> str:
        """What an editor starts from: the pending output (a recipe resolved) or the
        recorded one (`null` for a call that raised and has no patch yet)."""
        patch = self.pending.get(operation.identity)
        if patch is None and isinstance(operation.outcome, Raised):
            return "null"
        return format_json(self.patched_output(operation, patch)[0])

    def on_patch_made(self, message: PatchMade) -> None:
        """A view made a patch (an edit of a streamed answer): pend it."""
        patch = message.patch
        self.pending.put(patch, message.operation.identity)
        what = (
            f"{patch.recipe}(...)" if isinstance(patch, OutputPatch) and patch.recipe else "patch"
        )
        self._changed(
            f"pending {what} {patch.patch_id} on #{message.operation.logical_id} "
            f"{message.operation.effect}: the stream's events are rewritten to agree"
        )

    def edit_output(
        self, operation: Operation, text: str | None = None, problem: str | None = None
    ) -> None:
        if text is None:
            text = self._editable_text(operation)

        def edited(result: Edited | None) -> None:
            if result is not None:
                self.set_patch(operation, result.value)

        self.push_screen(EditorScreen(operation, text, problem=problem), edited)

    def edit_output_externally(self, operation: Operation) -> None:
        """`E`: edit the output in `$VISUAL`/`$EDITOR`, the app suspended meanwhile."""
        start = self._editable_text(operation)
        edit = edit_externally(self, self.workspace, start, self.path_label)
        if edit.text is None:
            self._changed(edit.problem, error=True)
            return
        if edit.text.strip() == start.strip():
            self._changed("the editor left the output unchanged")
            return
        parsed = parse_portable(edit.text, what="the output")
        if parsed.problem is not None:
            # Keep what was typed: finish it in the built-in editor.
            self.edit_output(operation, edit.text, f"not saved: {parsed.problem.describe()}")
            return
        self.set_patch(operation, parsed.value)

    def action_save_patches(self) -> None:
        if not len(self.pending):
            self._changed("no pending patch to save", error=True)
            return

        def chosen(value: str | None) -> None:
            if value:
                self.save_patches_to(value)

        suggestion = self.path_label(self.workspace.patch_file_path())
        self.push_screen(
            PromptScreen("Save the pending patches to a new patch file:", suggestion), chosen
        )

    def save_patches_to(self, value: str | None) -> bool:
        """Save the pending patches to the new file `value` (relative to the working
        directory; None: the next free patch file in the work folder)."""
        if not len(self.pending):
            self._changed("no pending patch to save", error=True)
            return False
        path = self.workspace.patch_file_path() if value is None else self._absolute(Path(value))
        problem = source_conflict(path, [self.trace_file])
        if problem is not None:
            self._changed(
                f"{self.path_label(path)} {problem}: the trace being debugged is never "
                "written; save the patches to another file",
                error=True,
            )
            return False
        try:
            if path.parent == self.workspace.root:
                self.workspace.ensure()
            written = self.pending.save(path)
        except PatchError as error:
            self._changed(str(error), error=True)
            return False
        self._changed(f"saved {_count(len(self.pending), 'patch')} to {self.path_label(written)}")
        return True

    def action_load_patches(self) -> None:
        self._when_checked("load patches", self._load_patches)

    def _load_patches(self) -> None:
        def chosen(value: str | None) -> None:
            if not value or self.trace is None:
                return
            try:
                loaded = self.pending.load(self._absolute(Path(value)), self.trace)
            except PatchError as error:
                self._changed(str(error), error=True)
                return
            message = (
                f"loaded {_count(len(loaded.loaded), 'patch')} from {self.path_label(loaded.path)}"
            )
            if loaded.skipped:
                message += "; skipped " + "; ".join(skipped.reason for skipped in loaded.skipped)
            self._changed(message, error=bool(loaded.skipped))

        def ask() -> None:
            latest = self.pending.saved_path or self.workspace.latest("patches", ".json")
            self.push_screen(
                PromptScreen(
                    "Load patches from a patch file (they replace the pending ones):",
                    "" if latest is None else self.path_label(latest),
                ),
                chosen,
            )

        if self.pending.dirty and len(self.pending):
            self.push_screen(
                ConfirmScreen("Loading replaces the unsaved pending patches. Go on?"),
                lambda yes: ask() if yes else None,
            )
        else:
            ask()

    # --- runs ------------------------------------------------------------------------

    def on_run_started(self, message: RunStarted) -> None:
        """Remember a started run, so that quitting kills its child."""
        self._runs = [run for run in self._runs if not run.finished]
        self._runs.append(message.handle)

    def cancel_runs(self) -> None:
        for handle in self._runs:
            handle.cancel()
        self._runs.clear()
        if self.warm is not None:
            self.warm.close()

    def on_unmount(self) -> None:
        self.cancel_runs()  # no child outlives the debugger
        self.stop_background()

    def stop_background(self) -> None:
        """Stop indexing, checking and filtering the trace (their threads end within a chunk)."""
        if self.trace is not None:
            self.trace.close()

    def runner_source(self) -> str:
        """Where the runner a run calls comes from, for the run screen."""
        if self.runner:
            return "given with --runner" if self._runner_given else "typed when asked"
        return "named by the trace's header"

    def _with_runner(self, then: Callable[[str], None]) -> None:
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
                self.runner = value
                then(value)

        self.push_screen(
            PromptScreen(
                f"{question} Which no-argument entry point runs the application?",
                placeholder="module:callable",
                check=check,
            ),
            chosen,
        )

    def action_fork(self) -> None:
        if self.trace is None:
            return
        self._when_checked("fork", self._fork)

    def _fork(self) -> None:
        if not len(self.pending) and not self.live_effects:
            self._changed(
                "no pending patch to fork with: e (or enter on a value) changes an output; "
                "r replays strictly",
                error=True,
            )
            return
        self._with_runner(self._start_fork)

    def _start_fork(self, runner: str) -> None:
        patches = tuple(self.pending)
        try:
            self.workspace.ensure()
            paths = self.workspace.fork_paths()
            self.pending.write_copy(paths.patches)
        except (OSError, PatchError) as error:
            self._changed(f"cannot write the fork's patch file: {error}", error=True)
            return
        live = tuple(self.live_effects)
        request = self.runs.fork(
            self.trace_file, paths.patches, paths.branch, runner=runner, live=live
        )
        self._fork_context = (paths.branch, patches, runner)
        noun = "patch" if len(patches) == 1 else "patches"
        asked = f", {', '.join(live)} live" if live else ""
        title = (
            f"fork {self.trace_label} with {len(patches)} {noun}{asked} into "
            f"{self.path_label(paths.branch)}: calls the runner {runner} "
            f"({self.runner_source()})"
        )
        self.push_screen(RunScreen(request, title), self._after_run)

    def action_replay(self) -> None:
        self._when_checked("replay", self._replay)

    def _replay(self) -> None:
        def start(runner: str) -> None:
            request = self.runs.replay(self.trace_file, runner=runner)
            self.push_screen(
                RunScreen(
                    request,
                    f"strict replay of {self.trace_label}: calls the runner {runner} "
                    f"({self.runner_source()})",
                ),
                self._after_run,
            )

        self._with_runner(start)

    def on_run_finished(self, message: RunFinished) -> None:
        """A replay or fork ended."""
        request, result = message.request, message.result
        self.last_run = result
        if request.command == "fork" and self._fork_context is not None:
            branch, patches, runner = self._fork_context
            self.last_fork = ForkRecord(result, branch, patches, result.runner or runner)
            self._fork_diff = None
            if result.ok and self.trace is not None:
                self._compare_fork(self.trace_file, branch)
        self.last_stop = unrecorded_call(result)
        # The run screen shows the result; the log keeps it for later.
        self.tell(headline(result), error=not result.ok, toast=False)
        self._changed()

    @work(thread=True, exclusive=True, group="fork-diff")
    def _compare_fork(self, source: Path, branch: Path) -> None:
        """Compare a fork's branch now, off the event loop: `d` then shows it at once."""
        try:
            report, rows = compare(source, branch)
        except (ToolReplayError, OSError):
            return  # the diff screen computes it again and shows the error
        self.call_from_thread(self._compared_fork, branch, report, rows)

    def _compared_fork(self, branch: Path, report: DiffReport, rows: DiffRows) -> None:
        fork = self.last_fork
        if fork is not None and fork.branch == branch:
            self._fork_diff = (branch, report, rows)

    def _after_run(self, then: NextStep | None) -> None:
        """The run screen closed, with the next step the user chose there."""
        if then == "diff":
            self.action_diff()
        elif then == "promote":
            self.action_promote()
        elif then == "promote_now":
            self.action_promote_now()
        elif then == "supply_output" and self.last_stop is not None:
            self.supply_output(self.last_stop)
        elif then == "supply_error" and self.last_stop is not None:
            self.supply_error(self.last_stop)
        elif then is not None and self.last_stop is not None:
            model = new_model_call(self.last_stop)
            steps = {
                "ask_live": self.ask_live,
                "answer_text": self.answer_text,
                "call_tool": self.call_tool,
                "reuse_answer": self.reuse_answer,
            }
            if model is not None and then in steps:
                steps[then](model)

    def can_diff(self) -> bool:
        fork = self.last_fork
        if fork is not None and fork.branch.is_file():
            return True
        return self.against is not None

    def can_promote(self) -> bool:
        return self.last_fork is not None and self.last_fork.result.ok

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

    def action_diff(self) -> None:
        self._when_checked("diff", self._diff)

    def _diff(self) -> None:
        fork = self.last_fork
        if fork is not None and fork.branch.is_file():
            target = fork.branch
        elif self.against is not None:
            target = self.against
        else:
            self._changed(
                "nothing to compare yet: f forks, or start with --against OTHER.trp", error=True
            )
            return
        computed = self._fork_diff
        self.push_screen(
            DiffScreen(
                self.trace_file,
                target,
                source_label=self.trace_label,
                target_label=self.path_label(target),
                computed=computed[1:] if computed is not None and computed[0] == target else None,
            )
        )

    def action_promote(self) -> None:
        fork = self.last_fork
        if fork is None or not fork.result.ok:
            self._changed("promote needs a fork that succeeded: f forks", error=True)
            return
        defaults = promote_defaults(
            self.trace_file,
            fork.patches,
            fork.runner,
            fork.result.return_value,
            portable=fork.result.return_value_portable,
        )
        try:  # what `promote` refuses unless told otherwise, shown in the form first
            findings = scan_file(fork.branch)
        except ToolReplayError:
            findings = []  # an unreadable branch: the promote command says why
        self.push_screen(
            PromoteScreen(fork.branch, self.path_label(fork.branch), defaults, findings)
        )

    def action_promote_now(self) -> None:
        """`P`: promote the fork with the form's defaults, no questions; the run screen
        shows the result and the case's folder."""
        fork = self.last_fork
        if fork is None or not fork.result.ok:
            self._changed("promote needs a fork that succeeded: f forks", error=True)
            return
        if not fork.result.return_value_portable:
            self._changed(
                "the fork's return value is not portable JSON: p opens the form to give the "
                "expected value",
                error=True,
            )
            return
        defaults = promote_defaults(
            self.trace_file, fork.patches, fork.runner, fork.result.return_value
        )
        request = self.promote_request(
            fork.branch,
            Path(defaults.folder),
            defaults.name,
            defaults.runner,
            fork.result.return_value,
        )
        if request is not None:
            self.push_screen(
                RunScreen(request, f"promote {self.path_label(fork.branch)} to {defaults.folder}"),
                self._after_run,
            )

    def promote_request(
        self,
        branch: Path,
        folder: Path,
        name: str,
        runner: str,
        expected: JsonValue,
        *,
        allow_secret_findings: bool = False,
    ) -> RunRequest | None:
        """The promote command for the form, its expected value written to a new file."""
        try:
            expect_file = self.workspace.write_text(
                "expected", ".json", format_json(expected) + "\n"
            )
        except OSError as error:
            self._changed(f"cannot write the expected value: {error}", error=True)
            return None
        return self.runs.promote(
            branch,
            folder,
            name=name,
            runner=runner,
            expect_file=expect_file,
            allow_secret_findings=allow_secret_findings,
        )

    def on_promote_finished(self, message: PromoteFinished) -> None:
        result = message.result
        self.last_promote = result
        if result.ok and result.case is not None:
            self._changed(f"promoted to {result.case.directory}")
        else:
            self._changed(headline(result), error=True)

    # --- help and quitting -----------------------------------------------------------

    def help_sections(self) -> list[HelpSection]:
        commands = [Binding(syntax, "command_line", what) for syntax, what in COMMANDS]
        return [
            ("Operation list", OperationList.BINDINGS),
            ("Browse", BrowseScreen.BINDINGS),
            (
                "Output values (detail pane)",
                [*ValueView.BINDINGS, *ValueInput.BINDINGS, *DetailPane.BINDINGS],
            ),
            ("Everywhere", [*self.BINDINGS, self.PALETTE_BINDING]),
            (": commands", commands),
            ("Output editor", EditorScreen.BINDINGS),
            ("Running a fork or replay (a, t, c, r: at a new model call)", RunScreen.BINDINGS),
            ("Calling a tool: the request's tools", ToolPickerScreen.BINDINGS),
            ("The reply a new model call gets, before the fork", ReplyPreviewScreen.BINDINGS),
            ("Run results, the promote form and this help", ScrollBox.BINDINGS),
            ("Diff", [*DiffScreen.BINDINGS, *DiffView.BINDINGS]),
            ("Promote form", [*PromoteScreen.BINDINGS, *ExpectedValueBox.BINDINGS]),
            ("Pending patches list", PatchesScreen.BINDINGS),
        ]

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.help_sections()))

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
                self._changed(
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
                self.quit_now()
            else:
                self.action_request_quit()
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
            self._changed(f"no theme named {name!r}; the themes are {names}", error=True)
            return
        self.theme = name
        self._changed(f"theme {name}")

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's palette commands, less its Quit (which would not ask about unsaved
        patches) and Keys (`?` lists every key); `BindingCommands` adds every action."""
        # Textual types `screen` as an unparametrised Screen.
        inherited = super().get_system_commands(screen)  # pyright: ignore[reportUnknownMemberType]
        for command in inherited:
            if command.title not in ("Quit", "Keys"):
                yield command

    def quit_now(self) -> None:
        """Quit without asking: status 2 when the trace could not be opened or failed its
        integrity check (the reason was on screen, and is printed again)."""
        self.cancel_runs()
        self.stop_background()
        if self._owns_unsaved:  # the user decided about them: saved, or quit without
            self.workspace.unsaved_patches_path().unlink(missing_ok=True)
        integrity = self.background.integrity
        if self.load_error is not None:
            self.exit(
                return_code=CANNOT_OPEN_EXIT_CODE,
                message=terminal_safe_text(
                    f"toolreplay tui: cannot open the trace: {self.load_error}", "red"
                ),
            )
        elif integrity.state == "failed":
            self.exit(
                return_code=CANNOT_OPEN_EXIT_CODE,
                message=Text(
                    f"toolreplay tui: the trace failed its integrity check: {integrity.problem}",
                    style="red",
                ),
            )
        else:
            self.exit()

    def action_request_quit(self) -> None:
        if self.pending.dirty and len(self.pending):
            count = len(self.pending)
            noun = "patch is" if count == 1 else "patches are"

            def answered(quit_anyway: bool | None) -> None:
                if quit_anyway:
                    self.quit_now()

            self.push_screen(
                ConfirmScreen(
                    f"{count} pending {noun} not saved (w saves them). Quit anyway?",
                    yes="quit without saving",
                    no="stay",
                ),
                answered,
            )
            return
        self.quit_now()

    # --- crashes ---------------------------------------------------------------------

    def _handle_exception(self, error: Exception) -> None:
        """An unhandled exception: the traceback goes to a file, its path is printed
        after the terminal is restored, and the app exits with `CRASH_EXIT_CODE`."""
        kept = self.keep_unsaved()
        self.crash_report = self._write_crash_report(error)
        where = (
            f"the traceback is in {self.crash_report}"
            if self.crash_report is not None
            else "the traceback could not be saved"
        )
        if kept is not None:
            count = len(self.pending)
            where += (
                f"; {_count(count, 'pending patch')} {'is' if count == 1 else 'are'} kept in "
                f"{kept} and restored when you open this trace again"
            )
        self._exit_renderables.append(
            terminal_safe_text(
                f"toolreplay tui crashed ({type(error).__name__}: {error}); {where}", "bold red"
            )
        )
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        # Textual's report would print each frame's local variables, which may hold
        # the children's environment (API keys): the message above says where the
        # traceback (without locals) is.
        self.bell()
        self._close_messages_no_wait()

    def _write_crash_report(self, error: BaseException) -> Path | None:
        # A worker's failure wraps what the worker raised, traceback and all.
        original = error.error if isinstance(error, WorkerFailed) else error
        text = "".join(traceback.format_exception(original))
        try:
            return self.workspace.write_text("crash", ".txt", text)
        except OSError:
            return None
