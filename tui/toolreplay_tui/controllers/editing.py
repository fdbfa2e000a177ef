"""Editing a recorded output into a pending patch: in the built-in editor, or in the
user's own (`$VISUAL`/`$EDITOR`, the app suspended meanwhile)."""

from __future__ import annotations

from toolreplay import Operation, Raised
from toolreplay_tui.controllers.host import Host
from toolreplay_tui.controllers.patches import PatchesController
from toolreplay_tui.external_editor import edit_externally
from toolreplay_tui.model.jsontext import ParsedJson, format_json, parse_portable
from toolreplay_tui.screens.editor import Edited, EditorScreen

__all__ = ["OutputEditing", "edited_output"]


def edited_output(host: Host, start: str) -> tuple[str, ParsedJson] | None:
    """Let the user edit an output's text `start` in their own editor: what they typed
    and it read as JSON, or None when there is nothing to patch (the editor failed or
    changed nothing; the debugger said which)."""
    edit = edit_externally(host, host.workspace, start, host.path_label)
    if edit.text is None:
        host.changed(edit.problem, error=True)
        return None
    if edit.text.strip() == start.strip():
        host.changed("the editor left the output unchanged")
        return None
    return edit.text, parse_portable(edit.text, what="the output")


class OutputEditing:
    """`e` and `E` on an operation: what is saved becomes its pending patch."""

    def __init__(self, host: Host, patches: PatchesController) -> None:
        self.host = host
        self.patches = patches

    def editable_text(self, operation: Operation) -> str:
        """What an editor starts from: the pending output (a recipe resolved) or the
        recorded one (`null` for a call that raised and has no patch yet)."""
        patch = self.patches.pending.get(operation.identity)
        if patch is None and isinstance(operation.outcome, Raised):
            return "null"
        return format_json(self.patches.patched_output(operation, patch)[0])

    def edit(
        self, operation: Operation, text: str | None = None, problem: str | None = None
    ) -> None:
        """`e`: the built-in editor, starting from `text` (by default the editable text)."""
        if text is None:
            text = self.editable_text(operation)

        def edited(result: Edited | None) -> None:
            if result is not None:
                self.patches.set_patch(operation, result.value)

        self.host.push_screen(EditorScreen(operation, text, problem=problem), edited)

    def edit_externally(self, operation: Operation) -> None:
        """`E`: edit the output in `$VISUAL`/`$EDITOR`, the app suspended meanwhile."""
        edit = edited_output(self.host, self.editable_text(operation))
        if edit is None:
            return
        text, parsed = edit
        if parsed.problem is not None:
            # Keep what was typed: finish it in the built-in editor.
            self.edit(operation, text, f"not saved: {parsed.problem.describe()}")
            return
        self.patches.set_patch(operation, parsed.value)
