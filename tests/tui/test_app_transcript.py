"""Model calls in the debugger: a transcript to read, the raw body to patch, a fork that works."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.pilot import SIZE, loaded, make_app, pilot_test, settle, text_of, wait_for
from tests.tui.support import Project, child_env

pytest.importorskip("openai")

ROOT = Path(__file__).resolve().parents[2]
APP_SOURCE = Path(__file__).parent / "openai_app.py"
RUNNER = "tuiopenai:main"


def environment() -> dict[str, str]:
    env = child_env()
    env["PYTHONPATH"] = str(ROOT)  # the app imports the fake API from examples/
    return env


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Project:
    folder = tmp_path_factory.mktemp("openai-app")
    shutil.copy(APP_SOURCE, folder / "tuiopenai.py")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolreplay",
            "record",
            "--runner",
            RUNNER,
            "--output",
            "triage.trp",
        ],
        cwd=folder,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return Project(folder, folder / "triage.trp")


@pytest.fixture
def project(recorded: Project, tmp_path: Path) -> Project:
    shutil.copy(recorded.root / "tuiopenai.py", tmp_path / "tuiopenai.py")
    shutil.copy(recorded.trace, tmp_path / recorded.trace.name)
    return Project(tmp_path, tmp_path / recorded.trace.name)


async def edit(pilot: Pilot[Any], find: str, value: str) -> None:
    """`tab` into the raw output, search for `find`, `enter` to edit it, type `value`."""
    press = pilot.press
    await press("tab", "slash", *find, "enter", "enter")
    await press(*value, "enter")  # the editor starts with the old value selected


@pilot_test
async def test_a_model_call_reads_as_a_transcript_with_the_raw_inputs_a_key_away(
    project: Project,
) -> None:
    app = make_app(project, env=environment())
    async with app.run_test(size=(160, 60)) as pilot:
        await loaded(pilot)
        info = text_of(app, "#detail-info")
        assert "openai.responses.create" in info
        assert "model call  responses · gpt-5-mini · status 200" in info
        assert "tools       route_refund" in info
        assert "Route refunds. Above $1,000" in info  # the instructions
        assert "Customer 42 asks for a refund" in info  # the user's message
        assert "→ route_refund" in info
        assert '"decision": "approve"' in info
        assert "$.body.output[0].arguments" in info  # where an edit patches it
        assert "usage" in info
        await pilot.press("tab", "t")
        raw = text_of(app, "#detail-info")
        assert "inputs  (t shows the transcript)" in raw
        assert '"method": "POST"' in raw
        await pilot.press("t")
        assert "→ route_refund" in text_of(app, "#detail-info")


@pilot_test
async def test_a_fork_patching_a_function_calls_arguments_works_from_the_tui(
    project: Project,
) -> None:
    app = make_app(project, env=environment())
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        patched = '"{\\"order_id\\":8812,\\"decision\\":\\"manual_review\\"}"'
        await edit(pilot, "decision", patched)
        await settle(pilot)
        assert len(app.pending) == 1
        # The transcript shows the pending patch's arguments.
        assert '"decision": "manual_review"' in text_of(app, "#detail-info")
        await pilot.press("f")
        await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
        assert app.last_fork is not None
        result = app.last_fork.result
        assert result.ok, (result.error, result.stderr)
        assert isinstance(result.return_value, dict)
        assert result.return_value["outcome"] == "manual_review"
        assert result.return_value["letter"] == "Dear customer, your refund is approved."


@pilot_test
async def test_a_fork_patching_a_models_text_works_from_the_tui(project: Project) -> None:
    app = make_app(project, env=environment())
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("j")  # the second model call: the customer's letter
        await settle(pilot)
        assert "Dear customer, your refund is approved." in text_of(app, "#detail-info")
        await edit(pilot, "Dear customer", '"Dear customer, your refund is in review."')
        await settle(pilot)
        await pilot.press("f")
        await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
        assert app.last_fork is not None
        result = app.last_fork.result
        assert result.ok, (result.error, result.stderr)
        assert isinstance(result.return_value, dict)
        assert result.return_value == {
            "order": 8812,
            "outcome": "refunded",
            "letter": "Dear customer, your refund is in review.",
        }
