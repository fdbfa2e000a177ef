"""`write_atomically`: the exact mode asked (private by default), never touching the umask."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import pytest

from toolreplay.files import write_atomically


@pytest.fixture
def umask_022() -> Iterator[int]:
    previous = os.umask(0o022)
    try:
        yield 0o022
    finally:
        os.umask(previous)


def mode_of_a_file_another_thread_creates(folder: Path, name: str) -> int:
    """Create a file the ordinary way on a real other thread; its permission bits."""
    modes: list[int] = []

    def create() -> None:
        path = folder / name
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        modes.append(path.stat().st_mode & 0o777)
        path.unlink()

    thread = threading.Thread(target=create)
    thread.start()
    thread.join()
    return modes[0]


def test_a_thread_creating_a_file_meanwhile_gets_the_umask(tmp_path: Path, umask_022: int) -> None:
    # The file is made private without changing the process umask, which other
    # threads read whenever they create a file.
    # After every C call write_atomically makes (os.open, write, fsync, link, ...), while
    # it is in the middle of its work, another thread creates a file.
    others = tmp_path / "others"
    others.mkdir()
    seen: list[tuple[str, int]] = []

    def between_calls(frame: FrameType, event: str, arg: object) -> None:
        if event == "c_return":
            name = getattr(arg, "__name__", repr(arg))
            seen.append((name, mode_of_a_file_another_thread_creates(others, f"f{len(seen)}")))

    sys.setprofile(between_calls)
    try:
        write_atomically(tmp_path / "out.json", b"{}")
    finally:
        sys.setprofile(None)

    assert any(name == "fsync" for name, _ in seen)  # the hook did see the work
    assert [(name, oct(mode)) for name, mode in seen if mode != 0o644] == []
    assert (tmp_path / "out.json").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir() if p.name != "others"] == ["out.json"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002, 0o000])
@pytest.mark.parametrize("mode", [0o600, 0o644])
def test_the_file_gets_exactly_the_mode_asked_whatever_the_umask(
    tmp_path: Path, umask: int, mode: int
) -> None:
    previous = os.umask(umask)
    try:
        write_atomically(tmp_path / "new.json", b"{}", mode=mode)
        write_atomically(tmp_path / "new.json", b"[]", overwrite=True, mode=mode)
    finally:
        os.umask(previous)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == mode
    assert (tmp_path / "new.json").read_bytes() == b"[]"


def test_by_default_the_file_is_private_even_when_it_replaces_a_public_one(
    tmp_path: Path, umask_022: int
) -> None:
    target = tmp_path / "patches.json"
    target.write_bytes(b"old")
    target.chmod(0o644)
    write_atomically(target, b"{}", overwrite=True)
    assert target.stat().st_mode & 0o777 == 0o600


def test_an_existing_file_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    target = tmp_path / "taken.json"
    target.write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        write_atomically(target, b"{}")
    assert target.read_bytes() == b"mine"
    assert [p.name for p in tmp_path.iterdir()] == ["taken.json"]
