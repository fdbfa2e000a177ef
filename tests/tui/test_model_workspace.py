from __future__ import annotations

from pathlib import Path

from toolreplay_tui.model.workspace import Workspace, display_path


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
