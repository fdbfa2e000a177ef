"""Values too large to show whole (`LargeOutput`, `LargeLine`): saved to a file as the
trace holds them, or edited in the user's editor into a pending patch."""

from __future__ import annotations

from pathlib import Path

from toolreplay import TraceFormatError
from toolreplay.files import write_atomically
from toolreplay_tui.controllers.editing import edited_output
from toolreplay_tui.controllers.host import Host, overwrites_debugged_trace
from toolreplay_tui.controllers.patches import PatchesController
from toolreplay_tui.model.rows import megabytes
from toolreplay_tui.model.trace_file import LargeLine, LargeOutput, text_size
from toolreplay_tui.screens.dialogs import PromptScreen

__all__ = ["LargeValues"]


class LargeValues:
    """`s` and `E` on a value too large to show whole."""

    def __init__(self, host: Host, patches: PatchesController) -> None:
        self.host = host
        self.patches = patches

    def request(self, large: LargeOutput | LargeLine, action: str) -> None:
        """`save` it to a file, or `edit` it in `$EDITOR`."""
        if action == "save":
            self.save(large)
        else:
            self.edit_externally(large)

    def save(self, large: LargeOutput | LargeLine) -> None:
        """Ask where to save a large value's text (as its trace line holds it), then write
        it to that new file (private: it comes from a trace)."""
        host = self.host

        def chosen(value: str | None) -> None:
            trace = host.trace
            if not value or trace is None:
                return
            path = host.absolute(Path(value))
            if overwrites_debugged_trace(host, path, instead="choose another file"):
                return
            try:
                if path.parent == host.workspace.root:
                    host.workspace.ensure()
                write_atomically(path, trace.value_text(large))
            except OSError as error:
                host.changed(
                    f"cannot save the value to {host.path_label(path)}: {error}", error=True
                )
                return
            host.changed(
                f"saved the value ({megabytes(text_size(large))}) to {host.path_label(path)}"
            )

        suggestion = host.path_label(host.workspace.next_path("value", ".json"))
        host.push_screen(PromptScreen("Save the value to a new file:", suggestion), chosen)

    def edit_externally(self, large: LargeOutput | LargeLine) -> None:
        """`E` on a large output: edit its text in `$EDITOR`; a change becomes a pending
        patch (the recorded operation is decoded in full for it, only then)."""
        host = self.host
        trace = host.trace
        if trace is None:
            return
        if isinstance(large, LargeLine):
            host.changed(
                "this line is not laid out as an operation line is written, so its output "
                "cannot be patched here: v shows it, s there saves it",
                error=True,
            )
            return
        edit = edited_output(host, trace.value_text(large).decode("utf-8", errors="replace"))
        if edit is None:
            return
        _, parsed = edit
        if parsed.problem is not None:
            host.changed(f"not saved: {parsed.problem.describe()}", error=True)
            return
        try:
            operation = trace.operation(large.index)
        except TraceFormatError as error:
            host.changed(str(error), error=True)
            return
        self.patches.set_patch(operation, parsed.value)
