"""The command line's own surface: help, version and usage errors, in real child processes."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

import toolreplay
from toolreplay.cli.app import _COMMANDS

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
    "capture",
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
    assert result.stdout.startswith("Usage: toolreplay [OPTIONS] COMMAND [ARGS]...\n")
    listed = result.stdout.split("Commands:\n", 1)[1]
    names = [
        line.split()[0] for line in listed.splitlines() if line.startswith("  ") and line[2] != " "
    ]
    assert names[: len(COMMANDS)] == COMMANDS
    assert (
        "  find     List the traces in LOCATION (a folder or bucket) that match, newest" in listed
    )
    assert "Run `toolreplay COMMAND --help`" in listed
    # Its own options, completion's included.
    for option in ("  --version", "  --install-completion", "  --show-completion", "-h, --help"):
        assert option in result.stdout


def test_no_arguments_prints_the_help_and_exits_2() -> None:
    result = run_cli()
    assert result.returncode == 2
    assert result.stdout == run_cli("--help").stdout
    assert result.stderr == ""


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_help_with_its_exit_statuses(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Usage: toolreplay {command} [OPTIONS]")
    summary = _COMMANDS[command][1]
    assert len(summary) <= 79  # one line of a narrow terminal, as `app._COMMANDS` says
    # The summary is the help's first paragraph (wrapped at the help's width).
    assert " ".join(result.stdout.split("\n\n")[1].split()) == summary
    assert "Exit" in result.stdout
    assert "-h, --help" in result.stdout
    assert run_cli(command, "-h").stdout == result.stdout
    assert result.stderr == ""


def test_a_command_after_a_double_dash_runs(tmp_path: Path) -> None:
    result = run_cli("--", "find", str(tmp_path))
    assert result.returncode == 1, result.stderr  # an empty folder: nothing matched
    assert result.stdout == "0 of 0 traces scanned matched\n"


USAGE_ERRORS = {
    # name: (arguments, the usage line's command, the error line)
    "unknown command": (["nope"], "toolreplay", "No such command 'nope'."),
    "a mistyped command": (
        ["shw", "t.trp"],
        "toolreplay",
        "No such command 'shw'. Did you mean 'show'?",
    ),
    "unknown option before any command": (["--bogus"], "toolreplay", "No such option: --bogus"),
    "unknown option": (["find", ".", "--bogus"], "toolreplay find", "No such option: --bogus"),
    "an abbreviated option": (
        ["find", ".", "--lim", "2"],
        "toolreplay find",
        "No such option: --lim (Possible options: --limit)",
    ),
    "an option without its value": (
        ["find", ".", "--limit"],
        "toolreplay find",
        "Option '--limit' requires an argument.",
    ),
    "missing argument": (["find"], "toolreplay find", "Missing argument 'LOCATION'."),
    "missing required option": (
        ["migrate", "old.trp"],
        "toolreplay migrate",
        "Missing option '--output' / '-o'.",
    ),
    "an extra argument": (
        ["diff", "a.trp", "b.trp", "c.trp"],
        "toolreplay diff",
        "Got unexpected extra argument(s) (c.trp)",
    ),
    "bad choice for --format": (
        ["find", ".", "--format", "xml"],
        "toolreplay find",
        "Invalid value for '--format' / '-f': invalid choice: 'xml' (choose from 'text', 'json')",
    ),
    "bad choice for --secrets": (
        ["record", "-r", "app:main", "-o", "t.trp", "--secrets", "loud"],
        "toolreplay record",
        "Invalid value for '--secrets': invalid choice: 'loud' "
        "(choose from 'error', 'warn', 'abandon', 'off')",
    ),
    "bad choice for --network": (
        ["replay", "t.trp", "--network", "open"],
        "toolreplay replay",
        "Invalid value for '--network': invalid choice: 'open' (choose from 'block', 'allow')",
    ),
    "--limit below its minimum": (
        ["find", ".", "--limit", "0"],
        "toolreplay find",
        "Invalid value for '--limit': 0 is less than the minimum, 1",
    ),
    "show --limit below its minimum": (
        ["show", "t.trp", "--limit", "-1"],
        "toolreplay show",
        "Invalid value for '--limit': -1 is less than the minimum, 0",
    ),
    "non-integer --limit": (
        ["find", ".", "--limit", "many"],
        "toolreplay find",
        "Invalid value for '--limit': 'many' is not a whole number",
    ),
    "non-integer --live-limit": (
        ["fork", "t.trp", "-p", "p.json", "-o", "b.trp", "--live-limit", "1.5"],
        "toolreplay fork",
        "Invalid value for '--live-limit': '1.5' is not a whole number",
    ),
    "malformed --pattern": (
        ["scan", ".", "--pattern", "no-equals-sign"],
        "toolreplay scan",
        "Invalid value for '--pattern': 'no-equals-sign': write NAME=REGEX, "
        "such as national-id='\\d{3}-\\d{2}-\\d{4}'",
    ),
    "malformed --rule": (
        ["redact", "in.trp", "out.trp", "--rule", "email"],
        "toolreplay redact",
        "Invalid value for '--rule': 'email': write a JSON path ('$..email') "
        "or EFFECT:PATH ('crm.customer.get:$.card.number')",
    ),
}


@pytest.mark.parametrize("kind", USAGE_ERRORS)
def test_usage_errors_exit_2_naming_the_argument_and_the_value(kind: str, tmp_path: Path) -> None:
    arguments, program, message = USAGE_ERRORS[kind]
    result = run_cli(*arguments, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    usage, hint, blank, error = result.stderr.splitlines()
    assert usage.startswith(f"Usage: {program} [OPTIONS]")
    assert hint == f"Try '{program} --help' for help."
    assert blank == ""
    assert error == f"Error: {message}"
    assert list(tmp_path.iterdir()) == []  # nothing was written


def test_an_unknown_option_before_the_command_is_toolreplays_not_the_commands() -> None:
    # argparse handed `--bogus` to `show`, whose error blamed `show`.
    result = run_cli("--bogus", "show", "x.trp")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "Usage: toolreplay [OPTIONS] COMMAND [ARGS]...",
        "Try 'toolreplay --help' for help.",
        "",
        "Error: No such option: --bogus",
    ]


def test_a_command_option_before_the_command_says_where_it_goes() -> None:
    result = run_cli("--format", "json", "show", "x.trp")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1] == (
        "Error: No such option: --format. It is an option of `toolreplay show`: "
        "give it after the command's name."
    )


def test_a_missing_verify_path_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("verify", "missing", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("Usage: toolreplay verify [OPTIONS] {PATH}...\n")
    assert result.stderr.endswith("Error: Invalid value for 'PATH': missing does not exist\n")


def in_terminal(*args: str) -> str:
    """What `toolreplay ARGS` writes to a real (pseudo-)terminal, 100 columns wide."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    child = subprocess.Popen(
        [sys.executable, "-m", "toolreplay", *args],
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
        env={**environment, "TERM": "xterm-256color"},
    )
    os.close(terminal)
    received = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        received += chunk
    child.wait(timeout=60)
    os.close(controller)
    return received.decode()


def unstyled(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_help_and_usage_errors_are_drawn_by_rich_on_a_terminal_only() -> None:
    shown = in_terminal("find", "--help")
    assert "\x1b[1;36m-\x1b[0m\x1b[1;36m-limit" in shown  # an option's name, styled
    assert "╭─ Options" in unstyled(shown)
    assert "╭" not in run_cli("find", "--help").stdout  # a pipe gets plain text

    error = in_terminal("show", "x.trp", "--limit", "\x1b[2J")
    assert "╭─ Error" in unstyled(error)
    assert "Try 'toolreplay show --help' for help." in unstyled(error)
    # What was typed is quoted escaped, never sent to the terminal as it came.
    assert "'\\x1b[2J' is not a whole number" in error
    assert "\x1b[2J" not in error
