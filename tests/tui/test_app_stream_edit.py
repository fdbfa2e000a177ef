"""One value of a streamed answer, edited in the detail pane, changes the whole stream.

The application reads a Responses stream through the real SDK: the text of its deltas
and its final response. Editing the final response's text (where the transcript points)
makes the pending patch an `edit(...)` of the answer, and the fork serves a stream whose
deltas, done events and final response all say the new text.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from toolreplay_tui.app import ToolReplayApp

import toolreplay
from tests.tui.agent_project import agent_env
from tests.tui.pilot import SIZE, loaded, pilot_test, text_of, wait_for
from tests.tui.support import Project, cli

APP = Path(__file__).parent / "stream_app.py"
NEW = "Held for review: refunds above 1000 dollars need a second look."


def record_stream(folder: Path) -> Project:
    shutil.copy(APP, folder / "tuistream.py")
    env = agent_env()
    env["PYTHONPATH"] += f":{folder}"
    result = cli(folder, "record", "--runner", "tuistream:main", "--output", "s.trp", env=env)
    assert result.returncode == 0, result.stderr
    return Project(folder, folder / "s.trp")


@pilot_test
async def test_editing_the_final_text_of_a_stream_rewrites_every_event_consistently(
    tmp_path: Path,
) -> None:
    project = record_stream(tmp_path)
    recorded = toolreplay.read_trace(project.trace).operations[0]
    stream: Any = recorded.outcome.value  # type: ignore[union-attr]  # a stream's events
    events = stream["events"]
    last = len(events) - 1
    path = f"$.events[{last}].data.response.output[0].content[0].text"
    env = agent_env()
    env["PYTHONPATH"] += f":{tmp_path}"
    app = ToolReplayApp(project.trace, cwd=tmp_path, env=env, blink_cursors=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        # The value the transcript points at, edited in place.
        await pilot.press("tab", "s", *path, "enter", "enter", *f'"{NEW}"', "enter")
        patch = app.pending.get(recorded.identity)
        assert isinstance(patch, toolreplay.OutputPatch)
        assert (patch.recipe, patch.value) == ("edit", {"$.output[0].content[0].text": NEW})
        assert "edit(...)" in text_of(app, "#detail-info")
        # The pane shows the stream as the fork will serve it: the deltas carry the text.
        shown = app.browse.detail.output
        deltas = [
            e["data"]["delta"]
            for e in shown["events"]  # type: ignore[index, union-attr]  # a stream
            if e.get("event") == "response.output_text.delta"  # type: ignore[union-attr]
        ]
        assert "".join(deltas) == NEW
        before = app.last_fork
        await pilot.press("f")
        await wait_for(pilot, lambda: app.last_fork is not before, what="the fork")
        assert app.last_fork is not None
        assert app.last_fork.result.ok, app.last_fork.result.stderr
        # The SDK accumulated the edited answer from the deltas and the final response alike.
        assert app.last_fork.result.return_value == {"deltas": NEW, "final": NEW}
