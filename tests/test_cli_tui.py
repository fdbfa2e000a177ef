"""`toolreplay tui`, run as a real child process: its refusals, and the lazy import of the UI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolreplay
from tests.support import crm

ROOT = Path(__file__).resolve().parent.parent


def run_python(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_python("-m", "toolreplay", *args)


def run_without_the_ui(*argv: str) -> subprocess.CompletedProcess[str]:
    """`toolreplay tui ...` in a child where `import toolreplay_tui` fails as if not installed."""
    code = (
        "import sys\n"
        "sys.modules['toolreplay_tui'] = None\n"
        "import toolreplay.cli\n"
        f"sys.argv = {json.dumps(['toolreplay', 'tui', *argv])}\n"
        "toolreplay.cli.main()\n"
    )
    return run_python("-c", code)


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "refund.trp"
    with toolreplay.record(path, metadata={"runner": "tests.support.crm:handle_refund"}):
        crm.handle_refund(42, 120.0)
    return path


def test_a_missing_trace_is_refused_before_the_ui_is_imported(tmp_path: Path) -> None:
    missing = tmp_path / "missing.trp"
    result = run_cli("tui", str(missing))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == f"error: {missing}: no such trace file\n"
    # Refused before the import: the same message when the UI is not installed.
    assert run_without_the_ui(str(missing)).stderr == result.stderr


def test_a_directory_against_trace_or_a_missing_against_trace_is_refused(
    recorded: Path, tmp_path: Path
) -> None:
    directory = run_cli("tui", str(recorded), "--against", str(tmp_path))
    assert directory.returncode == 2
    assert directory.stderr == f"error: --against {tmp_path}: is a directory, not a trace file\n"
    other = tmp_path / "other.trp"
    against = run_cli("tui", str(recorded), "--against", str(other))
    assert against.returncode == 2
    assert against.stdout == ""
    assert against.stderr == f"error: --against {other}: no such trace file\n"


def test_help_describes_the_command() -> None:
    result = run_cli("tui", "--help")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "toolreplay tui [OPTIONS]" in text
    assert "TRACE" in text
    assert "--runner" in text
    assert "MODULE:CALLABLE" in text
    assert "--against" in text
    assert "uv sync --all-extras" in text
    assert "tui" in " ".join(run_cli("--help").stdout.split())


def test_without_the_ui_installed_it_says_how_to_install_it(recorded: Path) -> None:
    result = run_without_the_ui(str(recorded))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: the terminal UI is not installed")
    assert "uv sync --all-extras" in result.stderr
    assert 'pip install "toolreplay[tui]"' in result.stderr
    assert "Traceback" not in result.stderr


def test_without_textual_it_says_how_to_install_it(recorded: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['textual'] = None\n"
        "import toolreplay.cli\n"
        f"sys.argv = {json.dumps(['toolreplay', 'tui', str(recorded)])}\n"
        "toolreplay.cli.main()\n"
    )
    result = run_python("-c", code)
    assert result.returncode == 2
    assert result.stderr.startswith(
        "error: the terminal UI is not installed (no module named 'textual'); "
    )
    assert 'pip install "toolreplay[tui]"' in result.stderr


def test_importing_the_cli_imports_neither_textual_nor_the_ui() -> None:
    code = (
        "import sys\n"
        "import toolreplay, toolreplay.cli, toolreplay.cli.tui\n"
        "print(sorted(m for m in sys.modules if m.partition('.')[0] in "
        "('textual', 'toolreplay_tui')))\n"
    )
    result = run_python("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[]\n"


def test_the_help_of_every_command_does_not_import_textual() -> None:
    code = (
        "import sys\n"
        "import toolreplay.cli\n"
        "for argv in (['toolreplay', '--help'], ['toolreplay', 'tui', '--help']):\n"
        "    sys.argv = argv\n"
        "    try:\n"
        "        toolreplay.cli.main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('textual' in sys.modules, 'toolreplay_tui' in sys.modules, file=sys.stderr)\n"
    )
    result = run_python("-c", code)
    assert result.stderr.strip().splitlines()[-1] == "False False"


def test_it_hands_the_trace_runner_and_against_trace_to_the_ui(recorded: Path) -> None:
    # A stand-in for the UI package: the command must call run(trace, runner, against,
    # workdir=...).
    code = (
        "import sys, types\n"
        "fake = types.ModuleType('toolreplay_tui')\n"
        "fake.run = lambda *args, workdir: print(repr(args + (workdir,)))\n"
        "sys.modules['toolreplay_tui'] = fake\n"
        "import toolreplay.cli\n"
        "sys.argv = sys.argv[1:]\n"
        "toolreplay.cli.main()\n"
    )
    full = run_python(
        "-c",
        code,
        "toolreplay",
        "tui",
        str(recorded),
        "-r",
        "app:main",
        "--against",
        str(recorded),
        "--workdir",
        "work",
    )
    assert full.returncode == 0, full.stderr
    assert full.stdout == f"({recorded!r}, 'app:main', {recorded!r}, {Path('work')!r})\n"
    bare = run_python("-c", code, "toolreplay", "tui", str(recorded))
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout == f"({recorded!r}, None, None, None)\n"
    # A folder goes to the UI as it is: the UI's picker lists its traces.
    folder = run_python("-c", code, "toolreplay", "tui", str(recorded.parent))
    assert folder.returncode == 0, folder.stderr
    assert folder.stdout == f"({recorded.parent!r}, None, None, None)\n"
