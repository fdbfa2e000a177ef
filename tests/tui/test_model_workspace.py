from __future__ import annotations

from pathlib import Path

import pytest
from toolreplay_tui.model.workspace import Workspace, display_path

import toolreplay


def test_the_working_folder_sits_next_to_the_trace(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "refund.trp")
    assert workspace.root == tmp_path / ".toolreplay"
    assert not workspace.root.exists()
    assert workspace.ensure().is_dir()
    custom = Workspace(tmp_path / "refund.trp", tmp_path / "elsewhere")
    assert custom.root == tmp_path / "elsewhere"


def test_paths_are_numbered_and_never_taken(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "refund incident.trp")
    workspace.ensure()
    first = workspace.fork_paths()
    assert first.branch.name == "refund-incident-fork-1.trp"
    assert first.patches.name == "refund-incident-fork-1.patches.json"
    first.patches.write_text("x")  # either file of a number takes the number
    second = workspace.fork_paths()
    assert second.number == 2
    assert not second.branch.exists()
    assert workspace.patch_file_path().name == "refund-incident-patches-1.json"


def test_write_text_creates_a_new_file_every_time(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "refund.trp")
    one = workspace.write_text("expected", ".json", "1")
    two = workspace.write_text("expected", ".json", "2")
    assert (one.name, two.name) == ("refund-expected-1.json", "refund-expected-2.json")
    assert one.read_text() == "1"
    assert two.read_text() == "2"
    assert workspace.latest("expected", ".json") == two


def test_write_new_skips_a_file_that_appears_meanwhile(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "refund.trp")
    calls: list[Path] = []

    def write(path: Path) -> Path:
        calls.append(path)
        if len(calls) == 1:
            path.write_text("someone else's")  # appeared between choosing and writing
            raise FileExistsError(path)
        path.write_text("ours")
        return path

    written = workspace.write_new("patches", ".json", write)
    assert written.name == "refund-patches-2.json"
    assert calls[0].read_text() == "someone else's"


def test_display_path_is_relative_inside_the_base(tmp_path: Path) -> None:
    assert display_path(tmp_path / "a" / "b.trp", tmp_path) == "a/b.trp"
    assert display_path(Path("/elsewhere/x.trp"), tmp_path) == "/elsewhere/x.trp"


def test_write_new_takes_the_next_number_when_a_library_error_says_taken(
    tmp_path: Path,
) -> None:
    # write_patches reports a taken path as PatchFileError raised from FileExistsError.
    workspace = Workspace(tmp_path / "refund.trp")
    patch = toolreplay.replace_output(effect="llm.decide", inputs={"q": 1}, value="review")
    calls: list[Path] = []

    def write(path: Path) -> Path:
        calls.append(path)
        if len(calls) == 1:
            path.write_text("someone else's")  # appeared between choosing and writing
        return toolreplay.write_patches(path, [patch])

    written = workspace.write_new("patches", ".json", write)
    assert [p.name for p in calls] == ["refund-patches-1.json", "refund-patches-2.json"]
    assert written == calls[1]
    assert calls[0].read_text() == "someone else's"
    assert toolreplay.read_patches(written) == [patch]


def test_write_new_lets_any_other_error_through(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "refund.trp")

    def write(path: Path) -> Path:
        return toolreplay.write_patches(path / "inside-a-missing-folder.json", [])

    with pytest.raises(toolreplay.PatchFileError, match="does not exist"):
        workspace.write_new("patches", ".json", write)
