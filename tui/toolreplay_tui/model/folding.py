"""Folding the pretty lines of a JSON value: objects and arrays collapse to one line.

`FoldedLines` keeps every line of `json_lines(value)` and the set of folded
containers (by path, so folds survive an edit of the same value); the visible
lines are recomputed in one pass when a fold changes. A folded container shows
its opening line only, drawn as `{…}` or `[…]` with its size.
"""

from __future__ import annotations

from toolreplay.portable import JsonValue
from toolreplay_tui.model.jsonpaths import JsonLine, JsonPath, find_line, get_at, json_lines

__all__ = ["FoldedLines"]


class FoldedLines:
    """The lines of one value, some containers folded; positions count visible lines."""

    def __init__(self, value: JsonValue, folded: set[JsonPath] | None = None) -> None:
        self.value = value
        self.lines: list[JsonLine] = json_lines(value)
        # The closing line of each opening line, found with one stack pass.
        self._close: dict[int, int] = {}
        opened: list[int] = []
        for position, line in enumerate(self.lines):
            if line.kind == "open":
                opened.append(position)
            elif line.kind == "close":
                self._close[opened.pop()] = position
        self._open_at = {self.lines[start].path: start for start in self._close}
        self.folded: set[JsonPath] = {path for path in folded or () if path in self._open_at}
        self.visible: list[int] = []
        self._layout()

    @classmethod
    def nothing(cls) -> FoldedLines:
        """No value at all (no operation selected): no line."""
        empty = cls(None)
        empty.lines, empty.visible = [], []
        return empty

    def _layout(self) -> None:
        visible: list[int] = []
        position = 0
        while position < len(self.lines):
            visible.append(position)
            line = self.lines[position]
            if line.kind == "open" and line.path in self.folded:
                position = self._close[position] + 1
            else:
                position += 1
        self.visible = visible

    def __len__(self) -> int:
        return len(self.visible)

    def line(self, position: int) -> JsonLine:
        """The line drawn at visible `position`."""
        return self.lines[self.visible[position]]

    def is_folded(self, position: int) -> bool:
        line = self.line(position)
        return line.kind == "open" and line.path in self.folded

    def folded_text(self, position: int) -> str:
        """`{…} 3 keys,` / `[…] 2 items`: what a folded container's line shows after its key."""
        start = self.visible[position]
        line = self.lines[start]
        container = get_at(self.value, line.path)
        size = len(container) if isinstance(container, (dict, list)) else 0
        what = "key" if isinstance(container, dict) else "item"
        comma = "," if self.lines[self._close[start]].text.endswith(",") else ""
        brackets = "{…}" if isinstance(container, dict) else "[…]"
        return f"{brackets}{comma} {size} {what}{'' if size == 1 else 's'}"

    def position_of(self, path: JsonPath) -> int | None:
        """The visible position of the line standing for `path` (its opening line)."""
        for position, index in enumerate(self.visible):
            if self.lines[index].path == path and self.lines[index].kind != "close":
                return position
        return None

    def toggle(self, position: int) -> int:
        """Fold or unfold the container at `position` (a value inside one: fold that one).

        Returns the visible position of the container's line, where the cursor goes.
        """
        line = self.line(position)
        if line.kind == "open" and line.path in self.folded:
            self.folded.discard(line.path)
        else:
            path = line.path if line.kind != "leaf" else line.path[:-1]
            if line.kind == "leaf" and not line.path:
                return position  # a scalar value: nothing to fold
            self.folded.add(path)
        self._layout()
        found = self.position_of(line.path if line.kind != "leaf" else line.path[:-1])
        return position if found is None else found

    def fold_all(self, position: int) -> int:
        """Fold every container below the root; returns where the cursor's path went."""
        keep = self.line(position).path
        self.folded = {path for path in self._open_at if path}
        self._layout()
        return self._nearest(keep)

    def unfold_all(self, position: int) -> int:
        """Unfold everything; returns where the cursor's path went."""
        keep = self.line(position).path
        self.folded.clear()
        self._layout()
        return self._nearest(keep)

    def _nearest(self, path: JsonPath) -> int:
        """The visible line of `path`, or of its closest shown ancestor."""
        for length in range(len(path), -1, -1):
            found = self.position_of(path[:length])
            if found is not None:
                return found
        return 0

    def reveal(self, index: int) -> int:
        """Unfold whatever hides line `index` (of all lines); returns its visible position."""
        path = self.lines[index].path
        self.folded = {folded for folded in self.folded if path[: len(folded)] != folded}
        if self.lines[index].kind == "open":
            self.folded.discard(path)
        self._layout()
        return self.visible.index(index)

    def find(
        self, query: str, position: int, *, forward: bool = True, from_start: bool = False
    ) -> int | None:
        """The next (previous) line after visible `position` (`from_start`: the first line
        on) holding `query`, folded ones included and unfolded to show it; its visible
        position, or None."""
        start = -1 if from_start or not self.visible else self.visible[position]
        found = find_line(self.lines, query, start, forward=forward)
        return None if found is None else self.reveal(found)
