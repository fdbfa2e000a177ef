"""Editing outputs into pending patches: in place, in the editor, in $EDITOR; save and load."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import TextArea
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.dialogs import ConfirmScreen, PromptScreen
from toolreplay_tui.screens.editor import EditorScreen

import toolreplay
from tests.support.traces import write_trace
from tests.tui.pilot import SIZE, loaded, make_app, pilot_test, said, text_of
from tests.tui.support import DECIDE_INPUTS, Project
from toolreplay import Raised

RECORDED = {"decision": "approve", "reason": "gold customer", "confidence": 0.93}


def decide_patch(app: ToolReplayApp) -> toolreplay.OutputPatch | None:
    trace = app.trace
    assert trace is not None
    patch = app.pending.get(trace.operations[2].identity)
    assert patch is None or isinstance(patch, toolreplay.OutputPatch)
    return patch


@pilot_test
async def test_edit_one_value_in_place(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "tab", "enter")
        field = app.screen.query_one("#value-input")
        assert field.has_focus
        await pilot.press(*'"manual_review"', "enter")
        patch = decide_patch(app)
        assert patch is not None
        assert patch.value == {**RECORDED, "decision": "manual_review"}  # the rest is kept
        expected = toolreplay.replace_output(
            effect="llm.refund.decide", inputs=DECIDE_INPUTS, value=patch.value
        )
        assert patch.patch_id == expected.patch_id
        assert app.browse.operations.rows is not None
        assert app.browse.operations.rows.row(2, app.pending).marker == "pending"
        assert "replaces the recorded output" in text_of(app, "#detail-info")
        assert "1 pending patch (unsaved" in text_of(app, "#status")
        # A second edit builds on the pending value.
        await pilot.press("j", "enter", *'"over the limit"', "enter")
        patch = decide_patch(app)
        assert patch is not None
        assert patch.value == {
            "decision": "manual_review",
            "reason": "over the limit",
            "confidence": 0.93,
        }
        await pilot.press("x")
        assert decide_patch(app) is None
        assert "removed patch" in said(app)


@pilot_test
async def test_an_invalid_value_keeps_the_input_and_says_why(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "tab", "enter", *"manual_review", "enter")
        assert decide_patch(app) is None
        field = app.screen.query_one("#value-input")
        assert field.has_focus
        assert "not valid JSON" in text_of(app, "#value-error")
        await pilot.press("escape")
        assert not field.display
        assert decide_patch(app) is None


@pilot_test
async def test_editor_with_invalid_then_valid_json(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "e")
        assert isinstance(app.screen, EditorScreen)
        area = app.screen.query_one(TextArea)
        assert (
            area.text
            == '{\n  "decision": "approve",\n  "reason": "gold customer",\n  "confidence": 0.93\n}'
        )
        await pilot.press("delete", "ctrl+s")  # drop the opening brace
        assert isinstance(app.screen, EditorScreen)  # the buffer is kept
        problem = text_of(app, "#editor-problem")
        assert "not saved: line 2, column 13: not valid JSON: Extra data" in problem
        assert area.cursor_location == (1, 12)  # on the problem
        assert decide_patch(app) is None
        await pilot.press("ctrl+z")  # the brace is back
        await pilot.press("ctrl+home" if False else "up", "down", "end", "left", "left")
        await pilot.press(*["backspace"] * len("approve"), *"manual_review", "ctrl+s")
        assert not isinstance(app.screen, EditorScreen)
        patch = decide_patch(app)
        assert patch is not None
        assert patch.value == {**RECORDED, "decision": "manual_review"}


@pilot_test
async def test_escape_asks_before_dropping_changes(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "e", "escape")  # nothing changed: no question
        assert not isinstance(app.screen, EditorScreen)
        await pilot.press("e", "x", "escape")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert isinstance(app.screen, EditorScreen)
        await pilot.press("escape", "y")
        assert not isinstance(app.screen, EditorScreen)
        assert decide_patch(app) is None


@pilot_test
async def test_edit_in_the_external_editor(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "fake_editor.py"
    script.write_text(
        "import json, sys\n"
        "path = sys.argv[1]\n"
        "value = json.load(open(path))\n"
        "value['decision'] = 'deny'\n"
        "json.dump(value, open(path, 'w'))\n",
        encoding="utf-8",
    )
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "E")
        patch = decide_patch(app)
        assert patch is not None
        assert patch.value == {**RECORDED, "decision": "deny"}


@pilot_test
async def test_external_editor_output_that_is_not_json_opens_the_editor(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "bad_editor.py"
    script.write_text("import sys\nopen(sys.argv[1], 'w').write('{oops')\n", encoding="utf-8")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "E")
        assert isinstance(app.screen, EditorScreen)
        assert app.screen.query_one(TextArea).text == "{oops"
        assert "not valid JSON" in text_of(app, "#editor-problem")


@pilot_test
async def test_save_and_load_a_patch_file(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "tab", "enter", *'"deny"', "enter", "w")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("enter")
        saved = project.root / ".toolreplay" / "refund-patches-1.json"
        assert saved.is_file()
        assert not app.pending.dirty
        assert [p.patch_id for p in toolreplay.read_patches(saved)] == [
            p.patch_id for p in app.pending
        ]
        await pilot.press("x")
        assert len(app.pending) == 0
        await pilot.press("o")  # nothing pending would be lost: no question
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("enter")  # proposes the file saved last
        assert len(app.pending) == 1
        assert not app.pending.dirty
        assert "loaded 1 patch from" in said(app)
        await pilot.press("enter", *'"approve"', "enter")  # an unsaved change
        await pilot.press("o")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert app.pending.dirty
        await pilot.press("w", "enter")  # a second save never overwrites the first
        assert (project.root / ".toolreplay" / "refund-patches-2.json").is_file()
        assert len(toolreplay.read_patches(saved)) == 1


@pilot_test
async def test_a_recorded_failure_is_patched_into_a_return(tmp_path: Path) -> None:
    trace = write_trace(
        tmp_path / "failing.trp",
        [
            (
                "billing.refund.create",
                {"amount": 1200.0},
                Raised("builtins.TimeoutError", "slow", ["slow"]),
            )
        ],
    )
    app = make_app(Project(tmp_path, trace))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        info = text_of(app, "#detail-info")
        assert "builtins.TimeoutError: slow" in info
        assert "recorded error" in text_of(app, "#detail-path")
        await pilot.press("tab", "enter")  # a failure has no value to edit in place
        assert "this call raised: press e" in said(app)
        await pilot.press("e")
        assert isinstance(app.screen, EditorScreen)
        assert app.screen.query_one(TextArea).text == "null"
        await pilot.press("ctrl+s")  # null is a value: the call will return None
        assert app.trace is not None
        patch = app.pending.get(app.trace.operations[0].identity)
        assert isinstance(patch, toolreplay.OutputPatch)
        assert patch.value is None
