"""Shell completion of `toolreplay`, driven through a real bash: the script Typer writes,
bash's own `complete` registration, and the `_TOOLREPLAY_COMPLETE=complete_bash` requests
it sends the `toolreplay` console script for each TAB."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(sys.executable).parent
"""The environment's scripts folder, which holds the `toolreplay` console script."""

COMPLETE = """
complete -p toolreplay
tab() {  # what bash does on TAB: fill COMP_WORDS and COMP_CWORD, call the function
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
    _toolreplay_completion toolreplay
    echo "${COMPREPLY[*]}"
}
tab toolreplay ''
tab toolreplay s
tab toolreplay --
tab toolreplay find --l
tab toolreplay find . --format ''
tab toolreplay record --secrets ''
tab toolreplay replay t.trp --network a
"""

COMPLETED = [
    "complete -o default -F _toolreplay_completion toolreplay",
    "show record replay fork diff promote verify tui migrate find capture scan redact schema",
    "show scan schema",
    "--version --install-completion --show-completion --help",
    "--limit",
    "text json",
    "error warn abandon off",
    "allow",
]


def bash(script: str, *, home: Path, interactive: bool = False) -> subprocess.CompletedProcess[str]:
    """`script` in a new bash (reading `home`'s .bashrc only when `interactive`), with the
    environment's scripts first on PATH, as an activated environment has them."""
    assert (SCRIPTS / "toolreplay").is_file(), "the toolreplay console script is not installed"
    startup = ["-i"] if interactive else ["--norc", "--noprofile"]
    # `; exit $?` keeps bash the parent of the command (no exec of a last command), so
    # Typer's shell detection sees bash.
    return subprocess.run(
        ["bash", *startup, "-c", f"{script}\nexit $?"],
        env={**os.environ, "HOME": str(home), "PATH": f"{SCRIPTS}{os.pathsep}{os.environ['PATH']}"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def test_bash_completes_commands_options_and_choices(home: Path) -> None:
    result = bash(f'eval "$(toolreplay --show-completion)"\n{COMPLETE}', home=home)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == COMPLETED
    assert list(home.iterdir()) == []  # showing the script installs nothing


def test_install_completion_writes_the_script_into_home(home: Path) -> None:
    installed = bash("toolreplay --install-completion bash", home=home)
    assert installed.returncode == 0, installed.stderr
    script = home / ".bash_completions" / "toolreplay.sh"
    assert installed.stdout.splitlines()[0] == f"bash completion installed in {script}"
    shown = bash("toolreplay --show-completion", home=home)
    assert script.read_text() == shown.stdout.rstrip("\n")
    assert f"source '{script}'" in (home / ".bashrc").read_text().splitlines()
    # A new interactive bash reads .bashrc, and so completes `toolreplay`.
    result = bash(COMPLETE, home=home, interactive=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == COMPLETED
