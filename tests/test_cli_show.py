"""`toolreplay show`, run as a real child process."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

import toolreplay
from tests.support import crm

SNAPSHOTS = Path(__file__).parent / "snapshots"


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "refund.trp"
    with toolreplay.record(path, metadata={"runner": "tests.support.crm:handle_refund"}):
        crm.handle_refund(42, 120.0)
        crm.handle_refund(7, 5000.0)
    return path


def test_show_text_is_plain_and_deterministic(recorded: Path) -> None:
    result = run_cli("show", str(recorded))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    trace_id = toolreplay.read_trace(recorded).header.trace_id
    text = result.stdout.replace(str(recorded), "TRACE").replace(trace_id, "ID")
    text = text.replace(f"toolreplay {toolreplay.__version__}", "toolreplay VERSION")
    assert "\x1b[" not in text
    assert text == (SNAPSHOTS / "show_refund.txt").read_text()


def test_show_json_is_only_json_with_every_operation(recorded: Path) -> None:
    result = run_cli("show", str(recorded), "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["format_version"] == 1
    assert document["trace_format_version"] == 5
    assert document["complete"] is True
    assert document["ending"] == {"status": "completed", "error_type": None, "message": None}
    assert document["metadata"] == {"runner": "tests.support.crm:handle_refund"}
    assert document["operation_count"] == 6
    failed = document["operations"][4]
    assert failed["outcome"]["status"] == "error"
    assert failed["outcome"]["error"]["type"] == "builtins.TimeoutError"
    assert failed["line"] == 6
    assert "kind" not in failed


def test_show_limits_long_listings(recorded: Path) -> None:
    result = run_cli("show", str(recorded), "--limit", "2")
    assert result.stdout.splitlines()[-1] == "... 4 more operations (--limit 0 lists all)"
    document = json.loads(run_cli("show", str(recorded), "-f", "json", "--limit", "1").stdout)
    assert len(document["operations"]) == 1
    assert document["operation_count"] == 6


def test_show_reports_an_incomplete_trace(recorded: Path) -> None:
    lines = recorded.read_text().splitlines()
    killed = recorded.with_name("killed.trp")
    killed.write_text("\n".join(lines[:3]) + "\n" + lines[3][:30])
    result = run_cli("show", str(killed))
    assert result.returncode == 0
    assert "state     incomplete: 2 operations and no footer" in result.stdout
    assert "a torn last line 4 was set aside" in result.stdout


def test_show_errors_go_to_stderr_with_a_nonzero_exit(tmp_path: Path) -> None:
    missing = run_cli("show", str(tmp_path / "missing.trp"))
    assert missing.returncode == 2  # as every command that cannot read its trace
    assert missing.stdout == ""
    assert missing.stderr.startswith("error: ")
    assert "no such trace file" in missing.stderr
    bad = tmp_path / "bad.trp"
    bad.write_text("not json\n")
    malformed = run_cli("show", str(bad))
    assert malformed.returncode == 2
    assert malformed.stdout == ""
    assert f"{bad}:1: not a Tool Replay trace" in malformed.stderr or "not valid JSON" in (
        malformed.stderr
    )
    usage = run_cli("show", str(bad), "--format", "xml")
    assert usage.returncode == 2
    assert "2 when it cannot be read" in " ".join(run_cli("show", "--help").stdout.split())


def run_in_terminal(args: list[str], env: dict[str, str]) -> str:
    controller, terminal = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "toolreplay", *args],
        stdout=terminal,
        stderr=terminal,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "200", **env},
    )
    os.close(terminal)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    child.wait(timeout=60)
    os.close(controller)
    return b"".join(chunks).decode()


def test_show_uses_rich_on_a_terminal_and_honours_no_color(recorded: Path) -> None:
    environment = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    styled = run_in_terminal(["show", str(recorded)], environment)
    assert "\x1b[1m" in styled  # bold labels on a terminal
    assert "crm.customer.get" in styled
    plain = run_in_terminal(["show", str(recorded)], {"NO_COLOR": "1"})
    assert "\x1b[3" not in plain  # no colour codes
    assert "crm.customer.get" in plain


def test_the_console_script_and_version(recorded: Path) -> None:
    script = Path(sys.executable).with_name("toolreplay")
    result = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.stdout == f"toolreplay {toolreplay.__version__}\n"
    assert run_cli().returncode in (0, 2)  # no arguments prints help
    assert "show" in run_cli("--help").stdout
