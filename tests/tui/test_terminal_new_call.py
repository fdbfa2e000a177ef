"""The what-if at a new model call in a real terminal (tmux), on the bundled agent example.

`toolreplay tui` runs the installed command in a pseudo-terminal; the keys are typed as
a person types them. The order lookup's total is changed, the fork stops at the model
request that carries it (a call the recording never made), the model is answered with a
call of one of its tools (the reply shown first), billing's new call is answered, and
the corrected run is promoted into a case that passes under pytest with nothing but the
trace.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from tests.adapters.real_clients import needs_openai_3
from tests.support.case_pytest import case_pytest
from tests.tui.agent_project import AgentProject, agent_env
from tests.tui.terminal import TMUX, TmuxTerminal
from tests.tui.test_terminal_walk import tui_command

pytestmark = [
    needs_openai_3,
    pytest.mark.skipif(TMUX is None, reason="needs tmux, the real terminal this test drives"),
]


def edit_line(term: TmuxTerminal, down: int, old: str, new: str) -> None:
    """In the editor: `down` lines down, to the line's end, `old` erased, `new` typed; a
    key at a time, as a person types (a burst of editing keys at a busy application
    reaches it out of step)."""
    time.sleep(1)  # the editor takes keys once focused, a moment after it shows
    for key in ["Down"] * down + ["End"] + ["BSpace"] * len(old):
        term.keys(key)
        time.sleep(0.2)
    term.type(new)


def test_the_whole_what_if_at_a_new_model_call_in_a_real_terminal(agent: AgentProject) -> None:
    env = {k: v for k, v in agent_env().items() if not k.startswith("TMUX")}
    env["TERM"] = "xterm-256color"
    with TmuxTerminal(
        [*tui_command(), "agent.trp"], cwd=agent.root, env=env, width=120, height=40
    ) as term:
        term.wait_for("4 operations", "billing.refund.issue")
        # The lookup's total: j (its row), tab (its output), s 1200 enter (the value),
        # enter (edit it), 250.0 enter.
        term.keys("j", "Tab", "s")
        term.wait_for("search the output")
        term.type("1200")
        term.keys("Enter")
        term.wait_until_gone("search the output")
        term.keys("Enter")
        term.wait_for("esc Cancel edit", "edit $.total")
        # The field selects its value once focused, a moment after it shows: type then.
        time.sleep(1)
        term.type("250.0")
        term.keys("Enter")
        term.wait_for("1 pending patch", '"total": 250.0')
        # f: the fork stops at the model request that carries the new total.
        term.keys("f")
        term.wait_for("The fork stopped at a call the recording never made", "c calls one")
        # c: the request's tools; down, enter: issue_refund; its arguments, as JSON.
        term.keys("c")
        term.wait_for("Which tool does the model call?", "issue_refund")
        term.keys("Down", "Enter")
        term.wait_for("The arguments the model calls issue_refund with", '"amount": 1200.0')
        # They start from the recording's: the amount's line, 1200.0 becomes 250.0.
        edit_line(term, 2, "1200.0", "250.0")
        term.wait_for('"amount": 250.0')
        term.keys("C-s")
        # The reply is shown before anything runs: enter forks with it.
        reply = term.wait_for("Fork with this answer", "→ issue_refund")
        assert '"amount": 250.0' in reply, reply
        term.keys("Enter")
        # Billing is asked for 250, a new call too (the agent catches its miss): s answers.
        term.wait_for("billing.refund.issue occurrence 0", "then raised TypeError")
        term.keys("s")
        # The editor starts from billing's recorded receipt: its amount becomes 250.0.
        term.wait_for("Supply the output of billing.refund.issue", '"amount": 1200.0')
        edit_line(term, 3, "1200.0", "250.0")
        term.wait_for('"amount": 250.0')
        term.keys("C-s")
        fork = term.wait_for("fork succeeded", timeout=120)
        assert '"billing": "issued"' in fork, fork
        # P promotes the corrected run at once; the case's folder is on screen.
        term.keys("Escape")
        term.wait_until_gone("fork succeeded")
        term.keys("P")
        term.wait_for("run it: uv run pytest tests/cases/", timeout=180)

    (case,) = [path for path in (agent.root / "tests" / "cases").iterdir() if path.is_dir()]
    result = subprocess.run(
        case_pytest(str(case)),
        cwd=agent.root,
        env=agent_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
