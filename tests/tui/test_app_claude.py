"""Claude calls in the debugger: the transcript of `anthropic.messages.create` (system
prompt, messages, thinking, tool uses with their input, tool results, the answer, usage),
a JSON answer's values with the path an edit patches, a streamed answer read as the
message its events add up to, the raw JSON a key away, and a fork from the TUI."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.pilot import SIZE, loaded, make_app, pilot_test, settle, text_of, wait_for
from tests.tui.support import Project, child_env

pytest.importorskip("anthropic", reason="the Anthropic adapter's extra is not installed")

from examples.local_anthropic import API_KEY
from tests.tui.claude_app import ADMIN_KEY, QUESTION, SYSTEM  # needs the SDK

ROOT = Path(__file__).resolve().parents[2]
APP_SOURCE = Path(__file__).parent / "claude_app.py"
RUNNER = "tuiclaude:main"
ANSWER = "The carrier lost it: {'order_id': 8812, 'status': 'lost in transit'}. I will refund it."


def environment() -> dict[str, str]:
    env = child_env()
    env["PYTHONPATH"] = str(ROOT)  # the app imports the fake API from examples/
    return env


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Project:
    folder = tmp_path_factory.mktemp("claude-app")
    shutil.copy(APP_SOURCE, folder / "tuiclaude.py")
    result = subprocess.run(
        [sys.executable, "-m", "toolreplay", "record", "--runner", RUNNER, "--output", "c.trp"],
        cwd=folder,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return Project(folder, folder / "c.trp")


@pytest.fixture
def project(recorded: Project, tmp_path: Path) -> Project:
    shutil.copy(recorded.root / "tuiclaude.py", tmp_path / "tuiclaude.py")
    shutil.copy(recorded.trace, tmp_path / recorded.trace.name)
    return Project(tmp_path, tmp_path / recorded.trace.name)


async def at(pilot: Pilot[Any], row: int) -> str:
    """The detail pane's text with operation `row` selected."""
    app = await loaded(pilot)
    await pilot.press("g", *["j"] * row)
    await settle(pilot)
    return text_of(app, "#detail-info")


def lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


@pilot_test
async def test_a_claude_call_reads_as_a_transcript_with_the_raw_json_a_key_away(
    project: Project,
) -> None:
    app = make_app(project, env=environment())
    async with app.run_test(size=(160, 60)) as pilot:
        info = await at(pilot, 0)
        assert "anthropic.messages.create" in info
        assert "model call  messages · claude-sonnet-4-6 · status 200" in info
        assert "tools       lookup_order" in info
        shown = lines(info)
        assert f"system {SYSTEM}" in shown
        assert f"user {QUESTION}" in shown
        # The answer: thinking, text, the tool use and its input, each with its path.
        assert "thinking The order number is given, so I can look it up." in shown
        assert "$.body.content[0].thinking" in info
        assert "assistant Let me check that order." in shown
        assert "$.body.content[1].text" in info
        assert "→ lookup_order {" in shown
        assert '"order_id": 8812' in info
        assert "$.body.content[2].input" in info
        assert "usage 31 in (0 cache read, 0 cache write) · 17 out" in shown

        # The raw JSON a key away, and back.
        await pilot.press("tab", "t")
        raw = text_of(app, "#detail-info")
        assert "inputs  (t shows the transcript)" in raw
        assert '"method": "POST"' in raw
        assert '"anthropic-version"' in raw
        await pilot.press("t")
        assert "→ lookup_order" in text_of(app, "#detail-info")


@pilot_test
async def test_tool_results_the_answer_and_a_streamed_answer(project: Project) -> None:
    app = make_app(project, env=environment())
    async with app.run_test(size=(160, 60)) as pilot:
        shown = lines(await at(pilot, 2))
        # The request carries the conversation so far: the earlier turn's thinking and
        # tool use, then the tool's result, named after the tool use it answers.
        assert "thinking The order number is given, so I can look it up." in shown
        assert "→ lookup_order {" in shown
        assert "← lookup_order {'order_id': 8812, 'status': 'lost in transit'}" in shown
        assert f"assistant {ANSWER}" in shown
        streamed = await at(pilot, 3)
        assert "status 200 · streamed in" in streamed
        shown = lines(streamed)
        assert "assistant Let me check that order." in shown
        assert "→ lookup_order {" in shown
        assert "$.body" not in streamed  # a stream's values are spread over its events


@pilot_test
async def test_a_fork_editing_claudes_answer_works_from_the_tui(project: Project) -> None:
    app = make_app(project, env=environment())
    async with app.run_test(size=SIZE) as pilot:
        await at(pilot, 2)
        # `tab` into the raw output, `s` to search it, `enter` to edit the value found.
        await pilot.press("tab", "s", *"The carrier", "enter", "enter")
        await pilot.press(*'"Found it: it is on its way."', "enter")
        await settle(pilot)
        assert len(app.pending) == 1
        assert "Found it: it is on its way." in text_of(app, "#detail-info")
        await pilot.press("f")
        await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
        assert app.last_fork is not None
        result = app.last_fork.result
        assert result.ok, (result.error, result.stderr)
        assert isinstance(result.return_value, dict)
        assert result.return_value["answer"] == "Found it: it is on its way."
    # The debugger's work folder (the branch, the patch file) and the traces hold no
    # credential the application sent (its own source, which holds them, aside).
    written = [
        path
        for path in project.root.rglob("*")
        if path.is_file() and path.suffix != ".py" and "__pycache__" not in path.parts
    ]
    assert any(".toolreplay" in path.parts for path in written)
    for path in written:
        content = path.read_bytes()
        for secret in (API_KEY, ADMIN_KEY):
            for form in (secret.encode(), base64.b64encode(secret.encode())):
                assert form not in content, (path, secret)


def test_a_claude_transcript(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await at(pilot, 0)
        pilot.app.clear_notifications()

    assert snap_compare(make_app(project, env=environment()), terminal_size=SIZE, run_before=before)
