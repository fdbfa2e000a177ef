"""A hostile trace in a real terminal: what the debugger, the picker and the commands write.

Each scenario runs in its own tmux pane (`LoggedTerminal`), which logs every byte the
command writes and, like a terminal set up for it, lets an escape sequence set the
pane's title or write the clipboard (`set-clipboard on`). The traces are those of
`tests/test_hostile_traces.py` (every character class in every field). After the walk,
nothing that came from the trace may be live in the log: no OSC at all (Textual's own
pointer-shape OSC 22 aside), so no title (the pane's title never says `pwned`) and no
clipboard write (tmux holds no buffer, 0 OSC 52 in the log); no clear-screen CSI; no
raw byte of any other class (C1 CSI, DEL, NUL, bidi, zero-width, tags...). And the
screen shows the trace's text escaped (`\\u001b]52;c;...`), its markup as typed.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import unicodedata
from pathlib import Path

import pytest

from tests.support.hostile import (
    CHARACTER_CLASSES,
    CLIPBOARD,
    FIELDS,
    FILE_NAME,
    EditableTrace,
    hostile,
    hostile_trace,
)
from tests.tui.terminal import TMUX, LoggedTerminal

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(TMUX is None, reason="needs tmux, the real terminal it drives")

# Textual sets the mouse pointer's shape (OSC 22, ended by BEL): its own, not the trace's.
TEXTUAL_OSC = re.compile(rb"\x1b\]22;[\w-]*(\x07|\x1b\\)")
# What the terminal itself emits around a line (ESC and BEL are checked as sequences).
LAYOUT = "\x1b\x07\r\n\t"


def toolreplay() -> list[str]:
    script = Path(sys.executable).parent / "toolreplay"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "toolreplay"]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k and not k.startswith("TMUX")}
    env["PYTHONPATH"] = str(ROOT)
    env["TERM"] = "xterm-256color"
    return env


def traces(folder: Path) -> tuple[Path, Path]:
    """The hostile trace (named as an attacker names it) and a changed copy to diff with."""
    source = hostile_trace(folder / FILE_NAME, fields=FIELDS)
    changed = EditableTrace.read(source)
    changed.operations[0]["outcome"]["value"]["name"] = hostile("changed-output")
    return source, changed.write(folder / "changed.trp", "complete")


def assert_nothing_from_the_trace_reached(term: LoggedTerminal) -> None:
    raw = term.raw()
    assert raw, "nothing was logged: the check would prove nothing"
    assert raw.count(b"\x1b]52") == 0, "an OSC 52 clipboard write reached the terminal"
    own = TEXTUAL_OSC.sub(b"", raw)
    live = re.findall(rb"\x1b\][^\x07\x1b]{0,40}", own)
    assert live == [], f"OSC sequences reached the terminal: {live}"
    assert b"\x07" not in own, "a BEL reached the terminal"
    assert b"\x1b[2J" not in raw, "the trace's clear-screen CSI reached the terminal"
    for name, (payload, _) in CHARACTER_CLASSES.items():
        for char in payload:
            if unicodedata.category(char).startswith("C") and char not in LAYOUT:
                count = raw.count(char.encode("utf-8", "surrogatepass"))
                assert count == 0, f"{name}: U+{ord(char):04X} reached the terminal {count}x"
    assert "pwned" not in term.title()
    assert term.clipboard() == "", f"the clipboard was written: {term.clipboard()!r}"


def test_the_check_catches_a_sequence_that_does_reach_the_terminal(tmp_path: Path) -> None:
    # The same checks, on a command that does print the trace's text raw: they fail.
    printing = ["sh", "-c", f"printf '\\033]0;pwned\\007\\033]52;c;{CLIPBOARD}\\007x'; sleep 30"]
    log = tmp_path / "raw.log"
    with LoggedTerminal(printing, cwd=tmp_path, env=environment(), log=log) as term:
        term.wait_for("x")
        with pytest.raises(AssertionError, match="OSC 52"):
            assert_nothing_from_the_trace_reached(term)
        assert "pwned" in term.title()
        assert term.clipboard() != ""


def test_the_debugger_shows_a_hostile_trace_escaped_and_emits_none_of_it(tmp_path: Path) -> None:
    source, changed = traces(tmp_path)
    command = [*toolreplay(), "tui", source.name, "--against", changed.name]
    log = tmp_path / "raw.log"
    with LoggedTerminal(
        command, cwd=tmp_path, env=environment(), log=log, width=120, height=40
    ) as term:
        # --against opens the diff first: effects, the changed output, the attempted call.
        screen = term.wait_for("first observable divergence", "<effect-namespace>\\u001b[2J")
        assert "review.<attempted-effect>\\u001b[2J" in screen
        assert "<ending-error-type>\\u001b[2J\\u001b]0;pwned\\u0007\\u001b]52;c;" in screen
        assert "[red]r[/red][link=https://e" in screen  # markup, as typed
        term.keys("Escape")
        # The header: the file name, how it ended, the runner.
        screen = term.wait_for("5 operations", "<runner>\\u001b[2J")
        assert "<file-name>\\u001b[2J" in screen
        # The detail of the first operation: the effect, its output.
        term.wait_for("<effect-namespace>\\u001b[2J", "<output-value>\\u001b[2J")
        # The failed call: its error in the detail pane, then whole in the full view (v).
        term.keys("j", "j", "j")
        term.wait_for("raised", "<error-type>\\u001b[2J")
        term.keys("Tab")
        term.wait_for("(focused)")  # `v` shows the focused pane's value: wait for the focus
        term.keys("v")
        term.wait_for("#3 billing.refund.create  output")
        term.keys("Escape")
        term.wait_until_gone("#3 billing.refund.create  output")
        term.keys("q")
        term.wait_until_dead()
        assert_nothing_from_the_trace_reached(term)


def test_the_picker_lists_hostile_traces_escaped_and_emits_none_of_them(tmp_path: Path) -> None:
    folder = tmp_path / "captured"
    folder.mkdir()
    traces(folder)
    shutil.copy(folder / FILE_NAME, folder / "plain.trp")
    log = tmp_path / "raw.log"
    with LoggedTerminal(
        [*toolreplay(), "tui", str(folder)],
        cwd=tmp_path,
        env=environment(),
        log=log,
        width=250,
        height=30,
    ) as term:
        screen = term.wait_for("Traces in", "3 traces", "plain.trp")
        # Every column is bounded (a longer cell ends in `…`): what shows is escaped.
        assert "<file-name>\\u001b[2J" in screen
        assert "\\u001b]0;pwned\\u0007\\u001b]52;c;" in screen  # the metadata's first field
        assert "raised <ending-error-type>\\u00" in screen
        term.keys("Enter")  # opens the newest: a hostile one
        term.wait_for("5 operations", "<runner>\\u001b[2J")
        term.keys("q")
        term.wait_until_dead()
        assert_nothing_from_the_trace_reached(term)


def test_the_commands_in_a_real_terminal_print_a_hostile_trace_escaped(tmp_path: Path) -> None:
    # On a terminal the commands draw with Rich: its markup must not read the trace's.
    source, _ = traces(tmp_path)
    source.rename(tmp_path / "hostile.trp")  # a plain name for the shell (find shows names)
    run = " ".join(toolreplay())
    script = (
        f"{run} show hostile.trp; {run} find . --limit 1; "
        f"{run} diff hostile.trp changed.trp; echo the-end; sleep 60"
    )
    log = tmp_path / "raw.log"
    with LoggedTerminal(
        ["sh", "-c", script], cwd=tmp_path, env=environment(), log=log, width=250, height=60
    ) as term:
        screen = term.wait_for("the-end")
        assert "<trace-id>\\u001b[2J\\u001b]0;pwned\\u0007\\u001b]52;c;" in screen
        assert "[red]r[/red][link=https://evil.example/x]l[/link]" in screen
        assert "<ending-error-type>\\u001b[2J" in screen
        assert_nothing_from_the_trace_reached(term)
