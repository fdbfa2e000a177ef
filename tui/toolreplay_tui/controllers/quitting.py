"""Quitting: asked first while patches are unsaved; no child and no background work
outlives the session; the exit status says whether the trace could be opened and
passed its integrity check (the reason, on screen before, is printed again)."""

from __future__ import annotations

from rich.text import Text

from toolreplay import terminal_safe_text
from toolreplay_tui.controllers.host import Host
from toolreplay_tui.controllers.loading import TraceLoading
from toolreplay_tui.controllers.patches import PatchesController
from toolreplay_tui.controllers.runs import Runs
from toolreplay_tui.screens.dialogs import ConfirmScreen

__all__ = ["CANNOT_OPEN_EXIT_CODE", "Quitting"]

CANNOT_OPEN_EXIT_CODE = 2
"""The exit status after the trace could not be opened (the reason was on screen)."""


class Quitting:
    """Ends the session."""

    def __init__(
        self, host: Host, loading: TraceLoading, patches: PatchesController, runs: Runs
    ) -> None:
        self.host = host
        self.loading = loading
        self.patches = patches
        self.runs = runs

    def request(self) -> None:
        """Quit, asking first when pending patches are not saved."""
        pending = self.patches.pending
        if not (pending.dirty and len(pending)):
            self.now()
            return
        count = len(pending)
        noun = "patch is" if count == 1 else "patches are"

        def answered(quit_anyway: bool | None) -> None:
            if quit_anyway:
                self.now()

        self.host.push_screen(
            ConfirmScreen(
                f"{count} pending {noun} not saved (w saves them). Quit anyway?",
                yes="quit without saving",
                no="stay",
            ),
            answered,
        )

    def now(self) -> None:
        """Quit without asking: status 2 when the trace could not be opened or failed its
        integrity check."""
        self.runs.cancel()
        self.loading.stop()
        self.patches.forget_unsaved()  # the user decided about them: saved, or quit without
        host = self.host
        integrity = host.background.integrity
        if host.load_error is not None:
            host.exit(
                return_code=CANNOT_OPEN_EXIT_CODE,
                message=terminal_safe_text(
                    f"toolreplay tui: cannot open the trace: {host.load_error}", "red"
                ),
            )
        elif integrity.state == "failed":
            host.exit(
                return_code=CANNOT_OPEN_EXIT_CODE,
                message=Text(
                    f"toolreplay tui: the trace failed its integrity check: {integrity.problem}",
                    style="red",
                ),
            )
        else:
            host.exit()
