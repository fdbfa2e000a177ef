"""`toolreplay tui`, run as a real child process: its refusals, the lazy import of the UI,
and its exit status in a real terminal (a pseudo-terminal the test types into)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
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
    assert "Usage: toolreplay tui [OPTIONS] {TRACE}" in text
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


_ESCAPES = re.compile(
    r"\x1b(\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])"
)


def _screen_text(raw: bytes) -> str:
    """What a terminal shows, roughly: the output without its escape sequences."""
    return _ESCAPES.sub("", raw.decode("utf-8", "replace"))


def run_in_terminal(
    argv: list[str], *, wait_for: str, keys: bytes, cwd: Path, timeout: float = 90.0
) -> tuple[int, str]:
    """Run `argv` in a 250x40 pseudo-terminal; once the screen shows `wait_for`, type
    `keys`; return the exit status and everything the terminal received (escapes removed)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 250, 0, 0))
    environment = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "250", "LINES": "40"}
    for name in ("NO_COLOR", "TEXTUAL"):
        environment.pop(name, None)
    child = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=environment
    )
    os.close(slave)
    received = b""
    typed = False
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                received += chunk
            if not typed and wait_for in _screen_text(received):
                time.sleep(0.5)  # let it settle: keys typed while drawing are kept anyway
                os.write(master, keys)
                typed = True
            if child.poll() is not None and not ready:
                break
        status = child.wait(timeout=max(deadline - time.monotonic(), 1.0))
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        os.close(master)
    assert typed, f"the screen never showed {wait_for!r}: {_screen_text(received)[-2000:]}"
    return status, _screen_text(received)


def test_a_trace_that_cannot_be_opened_exits_2_after_showing_why(tmp_path: Path) -> None:
    broken = tmp_path / "broken.trp"
    broken.write_text("this is not a trace\n", encoding="utf-8")
    status, shown = run_in_terminal(
        [sys.executable, "-m", "toolreplay", "tui", str(broken)],
        wait_for="cannot be opened",
        keys=b"q",
        cwd=tmp_path,
    )
    assert status == 2, shown[-2000:]
    flat = " ".join(shown.split())
    assert f"toolreplay tui: cannot open the trace: {broken}:1: not valid JSON" in flat
    assert "Traceback" not in flat


def test_a_normal_quit_exits_0(recorded: Path) -> None:
    status, shown = run_in_terminal(
        [sys.executable, "-m", "toolreplay", "tui", str(recorded)],
        wait_for="complete",
        keys=b"q",
        cwd=recorded.parent,
    )
    assert status == 0, shown[-2000:]


def test_a_crash_of_the_ui_exits_1_and_names_the_saved_traceback(recorded: Path) -> None:
    # No bug is known to crash the UI, so this child breaks one action on purpose: `?`
    # raises. What is tested is what follows: the status, the message and the file.
    code = (
        "import sys\n"
        "from toolreplay_tui.app import ToolReplayApp\n"
        "def broken_help(self):\n"
        "    raise RuntimeError('injected fault in the help key')\n"
        "ToolReplayApp.action_help = broken_help\n"
        "import toolreplay.cli\n"
        f"sys.argv = {json.dumps(['toolreplay', 'tui', str(recorded)])}\n"
        "toolreplay.cli.main()\n"
    )
    status, shown = run_in_terminal(
        [sys.executable, "-c", code], wait_for="complete", keys=b"?", cwd=recorded.parent
    )
    assert status == 1, shown[-2000:]
    report = recorded.parent / ".toolreplay" / "refund-crash-1.txt"
    flat = " ".join(shown.split())
    assert (
        "toolreplay tui crashed (RuntimeError: injected fault in the help key); "
        f"the traceback is in {report}" in flat
    )
    saved = report.read_text(encoding="utf-8")
    assert saved.startswith("Traceback (most recent call last):")
    assert "RuntimeError: injected fault in the help key" in saved
