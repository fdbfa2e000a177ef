"""Side by side: the source trace and a branch (or `--against`), first divergence first."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from toolreplay import DiffReport, ToolReplayError, diff, read_trace, terminal_safe_text
from toolreplay_tui.context import textual_app
from toolreplay_tui.model.diffrows import MARKER_LEGEND, DiffRows, describe_trace
from toolreplay_tui.screens.full_value import FullValueScreen, describe_aligned
from toolreplay_tui.widgets.diff_view import DiffView
from toolreplay_tui.widgets.key_footer import KeyFooter

__all__ = ["DiffScreen", "compare"]


def compare(source: Path, target: Path) -> tuple[DiffReport, DiffRows]:
    """The diff of the traces at `source` and `target`, as display rows (blocking)."""
    report = diff(read_trace(source), read_trace(target))
    return report, DiffRows(report)


class DiffScreen(Screen[None]):
    """The aligned rows of `toolreplay.diff` of two trace files, read and compared off the
    event loop."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_difference", "Next difference", id="diff.next"),
        Binding("N", "previous_difference", "Previous difference", id="diff.previous"),
        Binding("v", "full_row", "Full row", id="diff.full_row"),
        Binding("escape,q", "close", "Back", id="diff.close"),
    ]

    def __init__(
        self,
        source: Path,
        target: Path,
        *,
        source_label: str,
        target_label: str,
        computed: tuple[DiffReport, DiffRows] | None = None,
    ) -> None:
        """`computed`: the report and rows of this comparison, if already made (the app
        compares a fork's branch as soon as the fork ends)."""
        super().__init__()
        self.source = source
        self.target = target
        self.source_label = source_label
        self.target_label = target_label
        self.rows: DiffRows | None = None
        self._computed = computed

    def compose(self) -> ComposeResult:
        yield Static(id="diff-title")
        yield Static(id="diff-summary")
        yield Static(id="diff-header")
        yield DiffView(id="diff-view")
        with VerticalScroll(id="diff-fields-scroll"):
            yield Static(id="diff-fields")
        yield KeyFooter()

    @property
    def view(self) -> DiffView:
        return self.query_one("#diff-view", DiffView)

    def on_mount(self) -> None:
        self.query_one("#diff-title", Static).update(
            Text.assemble(
                ("comparing ", "dim"), self.source_label, (" with ", "dim"), self.target_label
            )
        )
        self.view.focus()
        if self._computed is not None:
            self._ready(*self._computed)
        else:
            self._compute()

    @work(thread=True, exclusive=True, group="diff")
    def _compute(self) -> None:
        try:
            report, rows = compare(self.source, self.target)
        except (ToolReplayError, OSError) as error:
            textual_app(self).call_from_thread(self._failed, str(error))
            return
        textual_app(self).call_from_thread(self._ready, report, rows)

    def _failed(self, message: str) -> None:
        self.query_one("#diff-summary", Static).update(
            terminal_safe_text(f"cannot compare: {message}", "bold red")
        )

    def _ready(self, report: DiffReport, rows: DiffRows) -> None:
        self.rows = rows
        self.query_one("#diff-title", Static).update(
            Group(
                Text.assemble(
                    ("source  ", "dim"),
                    terminal_safe_text(describe_trace(report.source, self.source_label)),
                ),
                Text.assemble(
                    ("target  ", "dim"),
                    terminal_safe_text(describe_trace(report.target, self.target_label)),
                ),
            )
        )
        summary = terminal_safe_text(rows.summary(), "bold")
        if rows.first_divergence is not None:
            summary.append(
                f" · first observable divergence at row {rows.first_divergence}",
                style="bold yellow",
            )
        summary.append(f"\n{MARKER_LEGEND}  P patch", style="dim")
        self.query_one("#diff-summary", Static).update(summary)
        self.query_one("#diff-header", Static).update(Text(self.view.header_text(), style="bold"))
        self.view.set_rows(rows)

    def on_resize(self) -> None:
        # The view's own size is known after this layout pass.
        self.call_after_refresh(self._relayout)

    def _relayout(self) -> None:
        if self.rows is None:
            return
        self.query_one("#diff-header", Static).update(Text(self.view.header_text(), style="bold"))
        self.query_one("#diff-fields", Static).update(self._fields(self.view.cursor))

    def on_diff_view_highlighted(self, event: DiffView.Highlighted) -> None:
        event.stop()
        self.query_one("#diff-fields", Static).update(self._fields(event.index))

    def _fields(self, index: int) -> RenderableType:
        rows = self.rows
        if rows is None:
            return ""
        title = terminal_safe_text(rows.row_description(index), "bold")
        number = rows.difference_number(index)
        if number is not None:
            title.append(f" · difference row {number} of {len(rows.difference_rows)}", style="dim")
        parts: list[RenderableType] = [title]
        fields = rows.fields(index)
        if fields and self.view.stacked:
            # Too narrow for three columns: each path over its two values.
            for field in fields:
                parts.append(terminal_safe_text(field.path, "bold"))
                source = terminal_safe_text(field.source, "red")
                parts.append(Text.assemble(("  source ", "dim"), source))
                target = terminal_safe_text(field.target, "green")
                parts.append(Text.assemble(("  target ", "dim"), target))
        elif fields:
            table = Table(box=None, pad_edge=False, expand=True, show_edge=False)
            table.add_column("JSON path", style="bold", ratio=4, overflow="fold")
            table.add_column("source", ratio=3, overflow="fold")
            table.add_column("target", ratio=3, overflow="fold")
            for field in fields:
                table.add_row(
                    terminal_safe_text(field.path),
                    terminal_safe_text(field.source, "red"),
                    terminal_safe_text(field.target, "green"),
                )
            parts.append(table)
        elif rows.alignment(index).differences:
            parts.append(Text("no field-level detail for this difference", style="dim"))
        attribution = rows.attribution(index)
        if attribution is not None:
            parts.append(terminal_safe_text(attribution, "bold cyan"))
        return Group(*parts)

    def action_next_difference(self) -> None:
        self.view.step_difference(forward=True)

    def action_previous_difference(self) -> None:
        self.view.step_difference(forward=False)

    def action_full_row(self) -> None:
        """`v`: both sides of the row under the cursor, nothing cut off."""
        if self.rows is not None and len(self.rows):
            alignment = self.rows.alignment(self.view.cursor)
            textual_app(self).push_screen(FullValueScreen(describe_aligned(alignment)))

    def action_close(self) -> None:
        self.dismiss(None)
