"""The output of the selected operation as JSON lines, navigable by JSON path.

Objects and arrays fold to one line (`space` at or inside one, `-` folds all,
`+` unfolds all); a search finds folded values too, and unfolds what hides them.
"""

from __future__ import annotations

import json
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message

from toolreplay import JsonValue, terminal_safe_text
from toolreplay.redaction import PLACEHOLDER_PATTERN
from toolreplay_tui.context import session, textual_app
from toolreplay_tui.model.folding import FoldedLines
from toolreplay_tui.model.jsonpaths import JsonPath, get_at, path_text
from toolreplay_tui.model.jsontext import format_json
from toolreplay_tui.widgets.cursor_list import CursorList, navigation_bindings

__all__ = ["ValueView"]


class ValueView(CursorList):
    """One line per JSON value (leaf, or opening/closing bracket); the cursor selects a path."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "cursor-list--cursor",
        "value-view--key",
        "value-view--string",
        "value-view--number",
        "value-view--literal",
        "value-view--punctuation",
        "value-view--folded",
        "value-view--redacted",
    }

    DEFAULT_CSS = """
    ValueView > .value-view--key { color: $primary-lighten-2; }
    ValueView > .value-view--string { color: $success; }
    ValueView > .value-view--number { color: $warning; }
    ValueView > .value-view--literal { color: $secondary; }
    ValueView > .value-view--punctuation { color: $text-muted; }
    ValueView > .value-view--folded { color: $text-muted; text-style: italic; }
    ValueView > .value-view--redacted { color: $error; text-style: italic; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *navigation_bindings("values"),
        Binding("enter,i", "edit_value", "Edit value", id="values.edit"),
        Binding("y", "copy_value", "Copy value", id="values.copy_value"),
        Binding("Y", "copy_path", "Copy path", id="values.copy_path"),
        Binding("space", "toggle_fold", "Fold/unfold", id="values.fold"),
        Binding("minus", "fold_all", "Fold all", key_display="-", show=False, id="values.fold_all"),
        Binding(
            "plus,equals_sign",
            "unfold_all",
            "Unfold all",
            key_display="+",
            show=False,
            id="values.unfold_all",
        ),
    ]

    class Selected(Message):
        """The cursor is on the value at `path`."""

        def __init__(self, path: JsonPath) -> None:
            super().__init__()
            self.path = path

    class EditRequested(Message):
        """`enter` on a value: edit it in place."""

        def __init__(self, path: JsonPath) -> None:
            super().__init__()
            self.path = path

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines = FoldedLines.nothing()

    @property
    def value(self) -> JsonValue:
        return self.lines.value

    def show(self, value: JsonValue, *, keep_path: bool = False) -> None:
        """Show `value`; with `keep_path` (the same operation), stay on the same path if it
        still exists and keep the folds."""
        previous = self.current_path if keep_path else None
        self.lines = FoldedLines(value, self.lines.folded if keep_path else None)
        cursor = 0
        if previous is not None:
            cursor = self.lines.position_of(previous) or 0
        elif len(self.lines) > 1:
            cursor = 1  # the first member, not the opening bracket
        self.rows_changed(cursor=cursor)

    def clear(self) -> None:
        self.lines = FoldedLines.nothing()
        self.rows_changed(cursor=0)

    @property
    def current_path(self) -> JsonPath | None:
        if not len(self.lines):
            return None
        return self.lines.line(min(self.cursor, len(self.lines) - 1)).path

    def search(self, query: str, *, forward: bool = True, from_start: bool = False) -> bool:
        """Move to the next line holding `query` (unfolding it); False when none does."""
        if not len(self.lines):
            return False
        found = self.lines.find(
            query, self.cursor, forward=forward, from_start=from_start and forward
        )
        if found is None:
            return False
        self.rows_changed(cursor=found)
        return True

    def row_count(self) -> int:
        return len(self.lines)

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"value-view--{name}")

    def render_row(self, position: int, width: int) -> Text:
        line = self.lines.line(position)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append("  " * line.depth)
        if isinstance(line.key, str):
            key = json.dumps(line.key, ensure_ascii=False)
            text.append(terminal_safe_text(key, self._style("key")))
            text.append(": ", style=self._style("punctuation"))
        if self.lines.is_folded(position):
            folded = self.lines.folded_text(position)
            brackets, _, size = folded.partition(" ")
            text.append(brackets, style=self._style("punctuation"))
            text.append(f"  {size}", style=self._style("folded"))
            return text
        body = line.text
        comma = body.endswith(",")
        core = body[:-1] if comma else body
        first = core[:1]
        if line.kind != "leaf" or core in ("{}", "[]"):
            kind = "punctuation"
        elif first == '"':
            kind = "string"
        elif first in ("t", "f", "n"):
            kind = "literal"
        else:
            kind = "number"
        if kind == "string" and "<redacted:" in core:
            self._append_redacted(text, core)
        else:
            text.append(terminal_safe_text(core, self._style(kind)))
        if comma:
            text.append(",", style=self._style("punctuation"))
        return text

    def _append_redacted(self, text: Text, core: str) -> None:
        """A string holding placeholders: each shown as `[redacted key ID]` in its own style.

        A whole placeholder is shown without its quotes: it is no text of the
        original, and the edit refuses to replace it with one (RFC 0007 §8).
        """
        whole = PLACEHOLDER_PATTERN.fullmatch(core[1:-1]) is not None
        position = 0 if not whole else 1
        end = len(core) if not whole else len(core) - 1
        for match in PLACEHOLDER_PATTERN.finditer(core, position, end):
            if match.start() > position:
                before = core[position : match.start()]
                text.append(terminal_safe_text(before, self._style("string")))
            key_id = match.group()[len("<redacted:") :].split(":", 1)[0]
            text.append(f"[redacted key {key_id}]", style=self._style("redacted"))
            position = match.end()
        if position < end:
            text.append(terminal_safe_text(core[position:end], self._style("string")))

    def cursor_changed(self, position: int) -> None:
        path = self.current_path
        if path is not None:
            self.post_message(self.Selected(path))

    def action_toggle_fold(self) -> None:
        if len(self.lines):
            self.rows_changed(cursor=self.lines.toggle(self.cursor))

    def action_fold_all(self) -> None:
        if len(self.lines):
            self.rows_changed(cursor=self.lines.fold_all(self.cursor))

    def action_unfold_all(self) -> None:
        if len(self.lines):
            self.rows_changed(cursor=self.lines.unfold_all(self.cursor))

    def action_edit_value(self) -> None:
        path = self.current_path
        if path is not None:
            self.post_message(self.EditRequested(path))

    def selected_text(self) -> str | None:
        """The selected value as it is copied: a string's own text, anything else as
        JSON on one line."""
        path = self.current_path
        if path is None:
            return None
        value = get_at(self.value, path)
        return value if isinstance(value, str) else format_json(value, indent=None)

    def _copy(self, text: str, what: str) -> None:
        # OSC 52: the terminal copies it, also over SSH.
        textual_app(self).copy_to_clipboard(text)
        size = f"{len(text)} character{'' if len(text) == 1 else 's'}"
        session(self).tell(f"copied {what} ({size})")

    def action_copy_value(self) -> None:
        """`y`: copy the selected value."""
        text, path = self.selected_text(), self.current_path
        if text is not None and path is not None:
            self._copy(text, f"the value at {path_text(path)}")

    def action_copy_path(self) -> None:
        """`Y`: copy the selected value's JSON path (`$.output[0].text`)."""
        path = self.current_path
        if path is not None:
            self._copy(path_text(path), f"the path {path_text(path)}")
