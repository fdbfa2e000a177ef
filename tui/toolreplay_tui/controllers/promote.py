"""Promote: the last fork that succeeded becomes a regression case, through the form
(`p`) or at once with its defaults (`P`); `toolreplay promote` does the work."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolreplay import ToolReplayError
from toolreplay.redaction.files import scan_file
from toolreplay_tui.controllers.host import Host
from toolreplay_tui.controllers.runs import Runs
from toolreplay_tui.model.jsontext import format_json
from toolreplay_tui.model.promotion import promote_defaults
from toolreplay_tui.model.runreport import headline
from toolreplay_tui.model.runs import RunRequest, RunResult
from toolreplay_tui.screens.promote import PromoteForm, PromoteScreen
from toolreplay_tui.screens.run import NextStep, RunScreen

__all__ = ["Promotion"]

NEEDS_A_FORK = "promote needs a fork that succeeded: f forks"


class Promotion:
    """Owns the last promote's result."""

    def __init__(
        self, host: Host, runs: Runs, *, after_run: Callable[[NextStep | None], None]
    ) -> None:
        self.host = host
        self.runs = runs
        self.after_run = after_run
        self.last_promote: RunResult | None = None

    def open_form(self) -> None:
        """`p`: the promote form, prefilled from the last fork."""
        fork = self.runs.last_fork
        if fork is None or not fork.result.ok:
            self.host.changed(NEEDS_A_FORK, error=True)
            return
        defaults = promote_defaults(
            self.host.trace_file,
            fork.patches,
            fork.runner,
            fork.result.return_value,
            portable=fork.result.return_value_portable,
        )
        try:  # what `promote` refuses unless told otherwise, shown in the form first
            findings = scan_file(fork.branch)
        except ToolReplayError:
            findings = []  # an unreadable branch: the promote command says why
        self.host.push_screen(
            PromoteScreen(
                fork.branch, self.host.path_label(fork.branch), defaults, self.request, findings
            )
        )

    def promote_now(self) -> None:
        """`P`: promote the fork with the form's defaults, no questions; the run screen
        shows the result and the case's folder."""
        host = self.host
        fork = self.runs.last_fork
        if fork is None or not fork.result.ok:
            host.changed(NEEDS_A_FORK, error=True)
            return
        if not fork.result.return_value_portable:
            host.changed(
                "the fork's return value is not portable JSON: p opens the form to give the "
                "expected value",
                error=True,
            )
            return
        defaults = promote_defaults(
            host.trace_file, fork.patches, fork.runner, fork.result.return_value
        )
        request = self.request(
            PromoteForm(
                fork.branch,
                Path(defaults.folder),
                defaults.name,
                defaults.runner,
                fork.result.return_value,
            )
        )
        if request is not None:
            host.push_screen(
                RunScreen(request, f"promote {host.path_label(fork.branch)} to {defaults.folder}"),
                self.after_run,
            )

    def request(self, form: PromoteForm) -> RunRequest | None:
        """The promote command for `form`, its expected value written to a new file."""
        try:
            expect_file = self.host.workspace.write_text(
                "expected", ".json", format_json(form.expected) + "\n"
            )
        except OSError as error:
            self.host.changed(f"cannot write the expected value: {error}", error=True)
            return None
        return self.runs.client.promote(
            form.branch,
            form.folder,
            name=form.name,
            runner=form.runner,
            expect_file=expect_file,
            allow_secret_findings=form.allow_secret_findings,
        )

    def finished(self, result: RunResult) -> None:
        """A promote ended (from the form, or `P`)."""
        self.last_promote = result
        if result.ok and result.case is not None:
            self.host.changed(f"promoted to {result.case.directory}")
        else:
            self.host.changed(headline(result), error=True)
