"""The command line's own surface: help, version and usage errors, in real child processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolreplay

COMMANDS = [
    "show",
    "record",
    "replay",
    "fork",
    "diff",
    "promote",
    "verify",
    "tui",
    "migrate",
    "find",
    "scan",
    "redact",
    "schema",
]


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "100"},
    )


def test_version() -> None:
    result = run_cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"toolreplay {toolreplay.__version__}\n"


def test_help_lists_every_command_in_order_with_its_summary() -> None:
    result = run_cli("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: toolreplay [-h] [--version] COMMAND [ARGUMENTS ...]")
    listed = result.stdout.split("commands:\n", 1)[1]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ")]
    assert names == COMMANDS
    assert "  find     List the traces in DIRECTORY that match, newest first" in listed
    assert "Run `toolreplay COMMAND --help`" in listed


def test_no_arguments_prints_the_help_and_exits_2() -> None:
    result = run_cli()
    assert result.returncode == 2
    assert result.stdout == run_cli("--help").stdout
    assert result.stderr == ""


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_help_with_its_exit_statuses(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: toolreplay {command} [-h]")
    summary = result.stdout.split("\n\n")[1]
    assert "\n" not in summary
    assert len(summary) <= 79  # one line of a narrow terminal, as `Command.summary` says
    assert "Exit" in result.stdout
    assert result.stderr == ""


def test_a_command_after_a_double_dash_runs(tmp_path: Path) -> None:
    result = run_cli("--", "find", str(tmp_path))
    assert result.returncode == 1, result.stderr  # an empty folder: nothing matched
    assert result.stdout == "0 of 0 traces scanned matched\n"


USAGE_ERRORS = {
    # name: (arguments, the line argparse prints after the usage)
    "unknown command": (
        ["nope"],
        "toolreplay: error: argument COMMAND: invalid choice: 'nope' (choose from 'show', ",
    ),
    "unknown option before any command": (
        ["--bogus"],
        "toolreplay: error: the following arguments are required: COMMAND",
    ),
    "unknown option": (
        ["find", ".", "--bogus"],
        "toolreplay find: error: unrecognized arguments: --bogus",
    ),
    "an abbreviated option": (
        ["find", ".", "--lim", "2"],
        "toolreplay find: error: unrecognized arguments: --lim 2",
    ),
    "missing argument": (
        ["find"],
        "toolreplay find: error: the following arguments are required: DIRECTORY",
    ),
    "missing required option": (
        ["migrate", "old.trp"],
        "toolreplay migrate: error: the following arguments are required: --output/-o",
    ),
    "bad choice for --format": (
        ["find", ".", "--format", "xml"],
        "toolreplay find: error: argument --format/-f: invalid choice: 'xml' "
        "(choose from 'text', 'json')",
    ),
    "bad choice for --secrets": (
        ["record", "-r", "app:main", "-o", "t.trp", "--secrets", "loud"],
        "toolreplay record: error: argument --secrets: invalid choice: 'loud' "
        "(choose from 'error', 'warn', 'abandon', 'off')",
    ),
    "--limit below its minimum": (
        ["find", ".", "--limit", "0"],
        "toolreplay find: error: argument --limit: 0 is less than the minimum, 1",
    ),
    "show --limit below its minimum": (
        ["show", "t.trp", "--limit", "-1"],
        "toolreplay show: error: argument --limit: -1 is less than the minimum, 0",
    ),
    "non-integer --limit": (
        ["find", ".", "--limit", "many"],
        "toolreplay find: error: argument --limit: 'many' is not a whole number",
    ),
    "malformed --pattern": (
        ["scan", ".", "--pattern", "no-equals-sign"],
        "toolreplay scan: error: argument --pattern: 'no-equals-sign': write NAME=REGEX, "
        "such as national-id='\\d{3}-\\d{2}-\\d{4}'",
    ),
    "malformed --rule": (
        ["redact", "in.trp", "out.trp", "--rule", "email"],
        "toolreplay redact: error: argument --rule: 'email': write a JSON path ('$..email') "
        "or EFFECT:PATH ('crm.customer.get:$.card.number')",
    ),
}


@pytest.mark.parametrize("kind", USAGE_ERRORS)
def test_usage_errors_exit_2_naming_the_argument_and_the_value(kind: str, tmp_path: Path) -> None:
    arguments, message = USAGE_ERRORS[kind]
    result = run_cli(*arguments, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0].startswith("usage: toolreplay")
    assert lines[-1].startswith(message), result.stderr
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_a_missing_verify_path_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("verify", "missing", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("usage: toolreplay verify [-h]")
    assert result.stderr.endswith(
        "toolreplay verify: error: argument PATH: missing does not exist\n"
    )
