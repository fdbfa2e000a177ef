"""What the command line imports to run a command: that command's module and what it
needs, never the terminal UI (Textual), the OpenAI SDK, MCP or pydantic, and for
`--version` not even the command parser. Each probe is a real child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "sequential-v3.trp"

PROBE = (
    "import atexit, os, sys\n"
    "def report():\n"
    "    with open(os.environ['MODULES_REPORT'], 'w') as file:\n"
    "        file.write('\\n'.join(sorted(sys.modules)))\n"
    "atexit.register(report)\n"
    "from toolreplay.cli import main\n"
    "main(sys.argv[1:])\n"
)
"""Runs `toolreplay ARGV`, then writes every imported module's name to MODULES_REPORT."""

COMMAND_MODULES = {
    f"toolreplay.cli.{name}"
    for name in ("show", "run", "diff", "cases", "tui", "migrate", "find", "privacy")
}

NEVER = {"textual", "toolreplay_tui", "openai", "mcp", "pydantic", "pydantic_core", "httpx"}
"""Imported by no command that does not need them (`tui` needs the first two)."""


def imported(*argv: str, env: dict[str, str] | None = None, tmp_path: Path) -> set[str]:
    report = tmp_path / "modules.txt"
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        env={**os.environ, **(env or {}), "MODULES_REPORT": str(report)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    return set(report.read_text().split())


def roots(modules: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in modules}


def test_version_imports_no_parser(tmp_path: Path) -> None:
    loaded = imported("--version", tmp_path=tmp_path)
    assert "toolreplay.cli" in loaded
    assert sorted(roots(loaded) & {"typer", "rich", *NEVER}) == []
    assert sorted(name for name in loaded if name.startswith("toolreplay.")) == [
        "toolreplay._lazy",
        "toolreplay._version",
        "toolreplay.cli",
    ]


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["show", str(FIXTURE)], "toolreplay.cli.show"),
        (["show", str(FIXTURE), "--format", "json", "--limit", "1"], "toolreplay.cli.show"),
        (["find", str(FIXTURE.parent), "--effect", "crm.customer.get"], "toolreplay.cli.find"),
    ],
)
def test_a_command_imports_its_module_and_nothing_of_the_others(
    argv: list[str], module: str, tmp_path: Path
) -> None:
    loaded = imported(*argv, tmp_path=tmp_path)
    assert module in loaded
    assert "typer" in roots(loaded)
    assert sorted(loaded & (COMMAND_MODULES - {module})) == []
    assert sorted(roots(loaded) & NEVER) == []
    assert "rich" not in roots(loaded)  # output to a pipe is plain text, without Rich
    assert "toolreplay.runtime" not in loaded  # reading traces needs no session


def test_completing_a_command_name_imports_no_command(tmp_path: Path) -> None:
    completion = {
        "_TOOLREPLAY_COMPLETE": "complete_bash",
        "COMP_WORDS": "toolreplay ",
        "COMP_CWORD": "1",
    }
    loaded = imported(env=completion, tmp_path=tmp_path)
    assert sorted(loaded & COMMAND_MODULES) == []
    assert sorted(roots(loaded) & NEVER) == []
