"""Opening a trace runs none of the code it names: not its runner's import, not its call.

Audit of issue 26: the warm runner's probe replayed the trace through its runner as soon
as the debugger opened it, so a trace whose runner was `tempfile:mkdtemp` created a folder
with no key pressed. Here a trace names `tempfile:mkdtemp` (its folder is the test's
TMPDIR) and another names a module of the test's own that leaves a marker file when it is
imported and another when it is called. Opening either and quitting creates nothing,
with Pilot and in a real terminal (tmux); asking for a run (`r`) then calls the runner,
which proves the markers would have shown a call.
"""

from __future__ import annotations

import os
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import pytest
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.run import RunScreen

import toolreplay
from tests.tui.pilot import SIZE, pilot_test, text_of, wait_for
from tests.tui.terminal import TMUX, TmuxTerminal
from tests.tui.test_terminal_walk import tui_command
from toolreplay.trace.writer import write_whole_trace

MARKER_APP = textwrap.dedent(
    """
    import pathlib

    pathlib.Path(__file__).with_name("imported.marker").write_text("imported")

    def run():
        pathlib.Path(__file__).with_name("called.marker").write_text("called")
        return "ran"
    """
)


INCIDENT = Path(__file__).resolve().parents[2] / "examples" / "incident" / "refund.trp"


def _trace(folder: Path, runner: str, *, openai: bool = False) -> Path:
    """A recording whose header names `runner`: empty, or the bundled incident's
    operations (OpenAI calls among them, which the warm runner prepares the SDK for)."""
    trace = folder / "t.trp"
    if not openai:
        with toolreplay.record(trace, metadata={"runner": runner}):
            pass
        return trace
    incident = toolreplay.read_trace(INCIDENT)
    assert incident.footer is not None
    write_whole_trace(
        trace,
        replace(incident.header, metadata={"runner": runner}),
        incident.operations,
        incident.footer.ending,
        overwrite=False,
        what="trace",
    )
    return trace


def _folder(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A working folder holding the marker module, and an environment whose TMPDIR is
    its own empty folder."""
    (tmp_path / "markerapp.py").write_text(MARKER_APP)
    temporary = tmp_path / "tmpdir"
    temporary.mkdir()
    env = {k: v for k, v in os.environ.items() if "API_KEY" not in k and not k.startswith("TMUX")}
    env["TMPDIR"] = str(temporary)
    env["PYTHONPATH"] = str(tmp_path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return temporary, env


def _created(tmp_path: Path, temporary: Path) -> list[str]:
    """What a call of either runner would have left."""
    made = [p.name for p in temporary.iterdir() if not p.name.startswith("toolreplay-")]
    return made + [p.name for p in tmp_path.glob("*.marker")]


async def _open_and_quit(app: ToolReplayApp) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(
            pilot,
            lambda: (
                app.background.integrity.state == "ok"
                and not [w for w in app.workers if w.group == "warm" and not w.is_finished]
            ),
            what="the trace checked and the warm runner started",
        )
        assert app.warm is not None
        assert app.warm.starts == 1
        await pilot.pause(1.0)  # a probe, were there one, would run by now
        await pilot.press("q")


@pytest.mark.parametrize("openai", [False, True], ids=["empty", "openai calls"])
@pytest.mark.parametrize("runner", ["tempfile:mkdtemp", "markerapp:run"])
@pilot_test
async def test_opening_and_quitting_calls_nothing(
    tmp_path: Path, runner: str, openai: bool
) -> None:
    temporary, env = _folder(tmp_path)
    trace = _trace(tmp_path, runner, openai=openai)
    for given in (None, runner):  # the trace's runner, and the same given with --runner
        app = ToolReplayApp(trace, runner=given, cwd=tmp_path, env=env, blink_cursors=False)
        await _open_and_quit(app)
        assert _created(tmp_path, temporary) == []


@pilot_test
async def test_a_run_asked_for_calls_the_runner_it_names(tmp_path: Path) -> None:
    temporary, env = _folder(tmp_path)
    trace = _trace(tmp_path, "markerapp:run")
    app = ToolReplayApp(trace, cwd=tmp_path, env=env, blink_cursors=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.background.integrity.state == "ok", what="checked")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RunScreen), what="the run screen")
        title = text_of(app, "#run-title")
        assert "calls the runner markerapp:run (named by the trace's header)" in title
        await wait_for(pilot, lambda: app.last_run is not None, what="the replay")
        assert app.last_run is not None
        assert app.last_run.ok, app.last_run
    assert sorted(_created(tmp_path, temporary)) == ["called.marker", "imported.marker"]


@pilot_test
async def test_a_runner_that_is_not_module_callable_is_never_run(tmp_path: Path) -> None:
    temporary, env = _folder(tmp_path)
    header_runner = "markerapp:run\x00; rm -rf /"
    trace = _trace(tmp_path, header_runner)
    app = ToolReplayApp(trace, cwd=tmp_path, env=env, blink_cursors=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.background.integrity.state == "ok", what="checked")
        await pilot.press("r")
        await wait_for(pilot, lambda: bool(app.screen.query(".dialog-question")), what="prompt")
        question = text_of(app, ".dialog-question")
        assert "The runner 'markerapp:run\\x00; rm -rf /' (named by the trace's header) is not" in (
            question.replace("\n", " ")
        )
        await pilot.press("escape")
        await pilot.press("q")
    assert app.return_code in (None, 0)
    assert _created(tmp_path, temporary) == []


@pytest.mark.skipif(TMUX is None, reason="needs tmux, the real terminal this test drives")
@pytest.mark.parametrize("runner", ["tempfile:mkdtemp", "markerapp:run"])
def test_opening_in_a_real_terminal_calls_nothing(tmp_path: Path, runner: str) -> None:
    temporary, env = _folder(tmp_path)
    env["TERM"] = "xterm-256color"
    _trace(tmp_path, runner)
    for extra in ([], ["--runner", runner]):
        with TmuxTerminal([*tui_command(), "t.trp", *extra], cwd=tmp_path, env=env) as term:
            term.wait_for("t.trp", "checked", f"runner {runner}")
            time.sleep(3.0)  # the warm runner starts meanwhile; a probe would have run
            term.keys("q")
            term.wait_until_gone("checked")
        assert _created(tmp_path, temporary) == []
