"""Folding JSON lines: what is shown, where the cursor goes, and that search unfolds."""

from __future__ import annotations

from toolreplay_tui.model.folding import FoldedLines

from toolreplay import JsonValue

VALUE: JsonValue = {
    "status": 200,
    "headers": {"x-request-id": "req_1", "content-type": "application/json"},
    "body": {"output": [{"text": "approve"}, {"text": "done"}], "id": "resp_1"},
}


def shown(lines: FoldedLines) -> list[str]:
    rendered: list[str] = []
    for position in range(len(lines)):
        line = lines.line(position)
        if lines.is_folded(position):
            label = "" if not isinstance(line.key, str) else f'"{line.key}": '
            rendered.append("  " * line.depth + label + lines.folded_text(position))
        else:
            rendered.append(line.render())
    return rendered


def test_nothing_is_folded_at_first_and_every_line_shows() -> None:
    lines = FoldedLines(VALUE)
    assert len(lines) == len(lines.lines) == 18
    assert not any(lines.is_folded(position) for position in range(len(lines)))


def test_space_on_an_object_folds_it_to_one_line_with_its_size_and_comma() -> None:
    lines = FoldedLines(VALUE)
    headers = lines.position_of(("headers",))
    assert headers == 2
    assert lines.toggle(headers) == headers
    assert shown(lines)[:4] == [
        "{",
        '  "status": 200,',
        '  "headers": {…}, 2 keys',
        '  "body": {',
    ]
    assert len(lines) == 15
    assert lines.toggle(headers) == headers  # and back
    assert len(lines) == 18


def test_space_inside_a_container_folds_that_container_and_moves_to_it() -> None:
    lines = FoldedLines(VALUE)
    text = lines.position_of(("body", "output", 1, "text"))
    assert text is not None
    item = lines.toggle(text)
    assert lines.line(item).path == ("body", "output", 1)
    assert shown(lines)[item] == "      {…} 1 key"
    # On a closing bracket: the container it closes.
    close = next(p for p in range(len(lines)) if lines.line(p).kind == "close")
    closed = lines.line(close).path
    assert closed == ("headers",)
    assert lines.line(lines.toggle(close)).path == closed
    assert lines.is_folded(lines.position_of(closed) or 0)


def test_fold_all_keeps_the_top_level_and_unfold_all_restores_everything() -> None:
    lines = FoldedLines(VALUE)
    request_id = lines.position_of(("headers", "x-request-id"))
    assert request_id is not None
    cursor = lines.fold_all(request_id)
    assert lines.line(cursor).path == ("headers",)  # the nearest shown ancestor
    assert shown(lines) == [
        "{",
        '  "status": 200,',
        '  "headers": {…}, 2 keys',
        '  "body": {…} 2 keys',
        "}",
    ]
    cursor = lines.unfold_all(cursor)
    assert lines.line(cursor).path == ("headers",)
    assert len(lines) == 18


def test_a_search_finds_folded_values_and_unfolds_only_what_hides_them() -> None:
    lines = FoldedLines(VALUE)
    lines.fold_all(0)
    found = lines.find("approve", 0)
    assert found is not None
    assert lines.line(found).path == ("body", "output", 0, "text")
    assert ("headers",) in lines.folded  # untouched
    assert ("body", "output", 1) in lines.folded
    assert lines.find("no such text", 0) is None
    assert lines.find("status", 0, from_start=True) == 1


def test_folds_survive_a_new_value_with_the_same_paths_and_drop_the_others() -> None:
    lines = FoldedLines(VALUE)
    lines.toggle(lines.position_of(("headers",)) or 0)
    changed = FoldedLines({"headers": {"a": 1}, "other": [1]}, lines.folded | {("gone",)})
    assert changed.folded == {("headers",)}
    assert shown(changed)[1] == '  "headers": {…}, 1 key'


def test_a_scalar_cannot_fold_and_nothing_shows_no_line() -> None:
    scalar = FoldedLines("just text")
    assert scalar.toggle(0) == 0
    assert len(scalar) == 1
    assert len(FoldedLines.nothing()) == 0
