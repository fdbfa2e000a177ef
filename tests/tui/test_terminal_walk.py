"""The README's walk in a real 80x24 terminal (tmux): `toolreplay tui` on the bundled incident.

Pilot tests drive Textual's own driver; this one runs the installed command in a
pseudo-terminal, presses the README's keys as tmux sends them and reads the
screen a person would see, so that an 80x24 terminal shows the fork's result and
the promoted case's path, not only "finished in 1.8 s".
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.tui.terminal import TMUX, TmuxTerminal

ROOT = Path(__file__).resolve().parents[2]
INCIDENT = ROOT / "examples" / "incident" / "refund.trp"


def tui_command() -> list[str]:
    """The `toolreplay` console script next to this Python (`-m toolreplay` without it)."""
    script = Path(sys.executable).parent / "toolreplay"
    return [str(script), "tui"] if script.is_file() else [sys.executable, "-m", "toolreplay", "tui"]


@pytest.mark.skipif(TMUX is None, reason="needs tmux, the real terminal this test drives")
def test_the_readme_walk_at_80x24_shows_the_fork_result_and_the_case_path(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "refund.trp"
    shutil.copy(INCIDENT, trace)
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k and not k.startswith("TMUX")}
    env["PYTHONPATH"] = str(ROOT)  # the incident's runner lives in examples.incident
    env["TERM"] = "xterm-256color"

    with TmuxTerminal([*tui_command(), "refund.trp"], cwd=tmp_path, env=env) as term:
        term.wait_for("5 operations", "notify.customer")
        # j, j (the model call), tab (its output), s, approve, enter.
        term.keys("j", "j")
        term.wait_for("#2  openai.responses.create")
        term.keys("Tab")
        term.wait_for("Edit value")  # the footer: the output's values have the focus
        term.keys("s")
        term.wait_for("search the output")
        term.type("approve")
        term.keys("Enter")
        term.wait_until_gone("search the output")
        # The footer follows the focus: back on the values, enter edits.
        screen = term.wait_for("Edit value")
        assert '"text": "approve"' in screen
        # enter edits just that value: "manual_review", enter.
        term.keys("Enter")
        term.wait_for("esc Cancel edit")  # the one-line editor of that value
        term.type('"manual_review"')
        term.keys("Enter")
        term.wait_for("1 pending patch", '"text": "manual_review"')
        # f forks; it stops at the review queue, a call the recording never made.
        term.keys("f")
        term.wait_for("review.queue.add occurrence 0", "s supplies its output")
        term.keys("s")
        term.wait_for("Supply the output of review.queue.add")
        term.type('{"ticket": "rv_ord_1042", "queue": "refunds"}')
        term.keys("C-s")
        # It runs again and stops at the customer notice: s, ctrl+s keeps the recorded answer.
        term.wait_for("notify.customer occurrence 0", "s supplies its output")
        term.keys("s")
        term.wait_for("Supply the output of notify.customer")
        term.keys("C-s")
        fork = term.wait_for("fork succeeded")
        # The fork's result is on the 80x24 screen, not scrolled off it.
        assert '"decision": "manual_review"' in fork, fork
        assert '"review_ticket": "rv_ord_1042"' in fork, fork
        # d: the diff, at its first divergence, source stacked over target.
        term.keys("d")
        term.wait_for("first observable divergence")
        # The patch and supply messages are toasts for a few seconds and may cover the
        # rows' right half until they expire: wait for the rows, not a fixed moment.
        term.wait_for("source #2 openai.responses.create", "target #2 openai.responses.create")
        # escape, P promote at once; the case's path is on screen.
        term.keys("Escape")
        term.wait_until_gone("first observable divergence")
        term.keys("P")
        term.wait_for("run it: uv run pytest tests/cases/", timeout=120)
        cases = [path for path in (tmp_path / "tests" / "cases").iterdir() if path.is_dir()]
        assert len(cases) == 1
        case = cases[0].relative_to(tmp_path)
        # The case's folder, once the toasts that may cover the line have expired.
        term.wait_for(f"folder  {case}")

    assert (cases[0] / "case.json").is_file()
    assert INCIDENT.read_bytes() == trace.read_bytes()  # the copy the walk forked is intact
