"""The pending patches: set, removed, edited, undone, saved, loaded, and kept in the
work folder whenever they change (a crash loses none; the next session restores them)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolreplay import (
    ErrorPatch,
    JsonValue,
    NonPortableValueError,
    Operation,
    OperationIdentity,
    OutputPatch,
    Patch,
    PatchError,
    RedactedValueEditError,
)
from toolreplay_tui.controllers.host import Host, overwrites_debugged_trace
from toolreplay_tui.model.answers import check_recipe, patched_output
from toolreplay_tui.model.jsontext import format_json
from toolreplay_tui.model.patches import (
    LoadedPatches,
    PatchKey,
    PendingPatches,
    describe_target,
)
from toolreplay_tui.screens.dialogs import ConfirmScreen, PromptScreen
from toolreplay_tui.screens.editor import Edited, EditorScreen
from toolreplay_tui.screens.patches import PatchesScreen
from toolreplay_tui.state import count_of
from toolreplay_tui.widgets.detail import output_of

__all__ = ["PatchesController", "error_problem"]

OUTPUTS_CACHED = 256
"""Resolved recipe outputs kept for the detail pane (cleared whole past this many)."""


def error_problem(value: str) -> str | None:
    """Why `value` is not `Type: message` (None when it is)."""
    type_name, colon, message = value.partition(":")
    if not colon or not type_name.strip() or " " in type_name.strip():
        return "write it as Type: message, e.g. TimeoutError: the queue timed out"
    return None if message.strip() else "give a message after the colon"


def _report_loaded(host: Host, message: str, loaded: LoadedPatches) -> None:
    """Say that patches were loaded (`message`), naming those skipped and why."""
    if loaded.skipped:
        message += "; skipped " + "; ".join(skipped.reason for skipped in loaded.skipped)
    host.changed(message, error=bool(loaded.skipped))


class PatchesController:
    """Owns `pending`; every change ends with `host.changed`, which keeps them."""

    def __init__(self, host: Host, when_checked: Callable[[str, Callable[[], None]], None]) -> None:
        """`when_checked(what, then)` runs `then` once the trace passed its check."""
        self.host = host
        self.pending = PendingPatches()
        self._when_checked = when_checked
        self._outputs: dict[tuple[str, OperationIdentity], tuple[JsonValue, str | None]] = {}
        self._autosaved = 0  # the pending patches' revision last kept in the work folder
        self._owns_unsaved = False  # this session wrote (or restored) the unsaved file

    # --- kept in the work folder -------------------------------------------------------

    def keep_unsaved(self) -> Path | None:
        """Keep the pending patches in the work folder whenever they changed (removed when
        there are none), before anything else happens: a crash then loses none, and the
        next session on this trace restores them. The path, when patches are kept."""
        host, pending = self.host, self.pending
        path = host.workspace.unsaved_patches_path()
        if pending.revision != self._autosaved:
            try:
                if len(pending):
                    host.workspace.ensure()
                    pending.write_copy(path, overwrite=True)
                    self._owns_unsaved = True
                elif self._owns_unsaved:
                    path.unlink(missing_ok=True)
            except (OSError, PatchError) as error:
                host.tell(f"cannot keep the pending patches in {path}: {error}", error=True)
                return None
            self._autosaved = pending.revision
        return path if len(pending) and self._owns_unsaved else None

    def restore_unsaved(self) -> None:
        """Restore the patches an earlier session left unsaved (it crashed, or was killed),
        as the trace opens, before anything can change the pending set."""
        host = self.host
        path = host.workspace.unsaved_patches_path()
        if not path.is_file():
            return
        label = host.path_label(path)
        try:
            restored = self.pending.restore(path)
        except PatchError as error:
            host.tell(f"cannot restore the unsaved patches in {label}: {error}", error=True)
            return
        self._owns_unsaved = True
        self._autosaved = self.pending.revision
        _report_loaded(
            host,
            f"restored {count_of(len(restored.loaded), 'pending patch')} an earlier session "
            f"left unsaved (kept in {label}); w saves them",
            restored,
        )

    def forget_unsaved(self) -> None:
        """The user decided about the pending patches (saved, or quit without): the copy
        this session kept goes."""
        if self._owns_unsaved:
            self.host.workspace.unsaved_patches_path().unlink(missing_ok=True)

    # --- changes -----------------------------------------------------------------------

    def set_patch(self, operation: Operation, value: JsonValue) -> Patch | None:
        """Make `operation` return `value` in the next forks."""
        try:
            patch = self.pending.set(operation, value)
        except (PatchError, NonPortableValueError, RedactedValueEditError) as error:
            self.host.changed(str(error), error=True)
            return None
        self.host.changed(
            f"pending patch {patch.patch_id} on #{operation.logical_id} {operation.effect}"
        )
        return patch

    def put_made(self, operation: Operation, patch: Patch) -> None:
        """A view made `patch` for `operation` (an edit of a streamed answer): pend it."""
        self.pending.put(patch, operation.identity)
        what = (
            f"{patch.recipe}(...)" if isinstance(patch, OutputPatch) and patch.recipe else "patch"
        )
        self.host.changed(
            f"pending {what} {patch.patch_id} on #{operation.logical_id} "
            f"{operation.effect}: the stream's events are rewritten to agree"
        )

    def remove(self, identity: OperationIdentity) -> None:
        """Drop the pending patch on the call `identity`."""
        removed = self.pending.remove(identity)
        if removed is None:
            self.host.changed("no pending patch on this operation", error=True)
        else:
            self.host.changed(f"removed patch {removed.patch_id} (u brings it back)")

    def undo(self) -> None:
        """`u`: take back the last change to the pending patches, of any kind."""
        undone = self.pending.undo()
        if undone is None:
            self.host.changed(
                "nothing to undo: the pending patches are as the session began", error=True
            )
        else:
            self.host.changed(f"undone: {undone}")

    def show_list(self) -> None:
        """`L`: every pending patch, of every kind, in one list."""
        self.host.push_screen(PatchesScreen())
        self.host.changed()

    def change(self, change: str, key: PatchKey | None) -> None:
        """From the patches list: `edit` or `remove` the patch under `key`, or `undo`."""
        patch = None if key is None else self.pending.get(key)
        if change == "undo":
            self.undo()
        elif change == "remove" and key is not None and patch is not None:
            self.pending.remove(key)
            self.host.changed(f"removed patch {patch.patch_id} (u brings it back)")
        elif change == "edit" and key is not None and patch is not None:
            self._edit(key, patch)

    def _edit(self, key: PatchKey, patch: Patch) -> None:
        """Edit a pending patch's outcome in place (its kind, target and place stay)."""
        host = self.host
        if isinstance(patch, ErrorPatch):
            shown = patch.error_type.removeprefix("builtins.")

            def failed(value: str | None) -> None:
                if value:
                    self._put_error(key, value)

            host.push_screen(
                PromptScreen(
                    f"{describe_target(patch)} raises (Type: message):",
                    f"{shown}: {patch.message}",
                    check=error_problem,
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
                host.changed(str(error), error=True)
                return
            host.changed(f"changed the {patch.kind} patch on {describe_target(changed)}")

        host.push_screen(
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
            self.host.changed(str(problem), error=True)
            return
        self.host.changed(f"pending patch {made.patch_id}: {describe_target(made)} raises {error}")

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
                trace = self.host.trace
                assert trace is not None
                known = (patched_output(operation, patch, trace), None)
            except (PatchError, NonPortableValueError) as error:
                known = (patch.value, f"its {patch.recipe}(...) cannot be shown resolved: {error}")
            if len(self._outputs) > OUTPUTS_CACHED:
                self._outputs.clear()
            self._outputs[key] = known
        return known

    # --- patch files -------------------------------------------------------------------

    def ask_save(self) -> None:
        """`w`: ask for a new patch file, then save the pending patches to it."""
        if not len(self.pending):
            self.host.changed("no pending patch to save", error=True)
            return

        def chosen(value: str | None) -> None:
            if value:
                self.save_to(value)

        suggestion = self.host.path_label(self.host.workspace.patch_file_path())
        self.host.push_screen(
            PromptScreen("Save the pending patches to a new patch file:", suggestion), chosen
        )

    def save_to(self, value: str | None) -> bool:
        """Save the pending patches to the new file `value` (relative to the working
        directory; None: the next free patch file in the work folder)."""
        host = self.host
        if not len(self.pending):
            host.changed("no pending patch to save", error=True)
            return False
        workspace = host.workspace
        path = workspace.patch_file_path() if value is None else host.absolute(Path(value))
        if overwrites_debugged_trace(host, path, instead="save the patches to another file"):
            return False
        try:
            if path.parent == workspace.root:
                workspace.ensure()
            written = self.pending.save(path)
        except PatchError as error:
            host.changed(str(error), error=True)
            return False
        host.changed(f"saved {count_of(len(self.pending), 'patch')} to {host.path_label(written)}")
        return True

    def ask_load(self) -> None:
        """`o`: load a patch file (once the trace is checked), replacing the pending ones."""
        self._when_checked("load patches", self._load)

    def _load(self) -> None:
        host = self.host

        def chosen(value: str | None) -> None:
            trace = host.trace
            if not value or trace is None:
                return
            try:
                loaded = self.pending.load(host.absolute(Path(value)), trace)
            except PatchError as error:
                host.changed(str(error), error=True)
                return
            _report_loaded(
                host,
                f"loaded {count_of(len(loaded.loaded), 'patch')} from "
                f"{host.path_label(loaded.path)}",
                loaded,
            )

        def ask() -> None:
            latest = self.pending.saved_path or host.workspace.latest("patches", ".json")
            host.push_screen(
                PromptScreen(
                    "Load patches from a patch file (they replace the pending ones):",
                    "" if latest is None else host.path_label(latest),
                ),
                chosen,
            )

        if self.pending.dirty and len(self.pending):
            host.push_screen(
                ConfirmScreen("Loading replaces the unsaved pending patches. Go on?"),
                lambda yes: ask() if yes else None,
            )
        else:
            ask()
