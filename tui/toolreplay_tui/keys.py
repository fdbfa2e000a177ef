"""Every key of the debugger, by where it works: what help (`?`) lists."""

from __future__ import annotations

from collections.abc import Sequence

from textual.binding import Binding, BindingType

from toolreplay_tui.model.commandline import COMMANDS
from toolreplay_tui.screens.browse import BrowseScreen
from toolreplay_tui.screens.diff import DiffScreen
from toolreplay_tui.screens.editor import EditorScreen
from toolreplay_tui.screens.help import HelpSection
from toolreplay_tui.screens.patches import PatchesScreen
from toolreplay_tui.screens.promote import ExpectedValueBox, PromoteScreen
from toolreplay_tui.screens.reply import ReplyPreviewScreen, ToolPickerScreen
from toolreplay_tui.screens.run import RunScreen
from toolreplay_tui.widgets.detail import DetailPane, ValueInput
from toolreplay_tui.widgets.diff_view import DiffView
from toolreplay_tui.widgets.operation_list import OperationList
from toolreplay_tui.widgets.scroll_box import ScrollBox
from toolreplay_tui.widgets.value_view import ValueView

__all__ = ["help_sections"]


def help_sections(everywhere: Sequence[BindingType]) -> list[HelpSection]:
    """The sections of help: each screen's and widget's keys, `everywhere` (the app's
    own, with the palette's) and the `:` commands."""
    commands = [Binding(syntax, "command_line", what) for syntax, what in COMMANDS]
    return [
        ("Operation list", OperationList.BINDINGS),
        ("Browse", BrowseScreen.BINDINGS),
        (
            "Output values (detail pane)",
            [*ValueView.BINDINGS, *ValueInput.BINDINGS, *DetailPane.BINDINGS],
        ),
        ("Everywhere", everywhere),
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
