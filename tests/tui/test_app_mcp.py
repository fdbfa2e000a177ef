"""MCP tool calls in the debugger: the server, the tool, its arguments and every kind of content,
the raw JSON a key away, an edited result forked from the TUI with no server started."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

import toolreplay
from tests.support.hostile import EditableTrace, hostile, shown, unsafe_characters
from tests.tui.pilot import SIZE, loaded, make_app, pilot_test, settle, text_of, wait_for
from tests.tui.support import Project, child_env, cli

pytest.importorskip("mcp", reason="the MCP adapter's extra is not installed")

from tests.tui.mcp_app import RADAR_PNG, RADAR_WAV  # needs nothing but the check

APP_SOURCE = Path(__file__).parent / "mcp_app.py"
RUNNER = "tuimcp:main"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Project:
    folder = tmp_path_factory.mktemp("mcp-app")
    shutil.copy(APP_SOURCE, folder / "tuimcp.py")
    result = subprocess.run(
        [sys.executable, "-m", "toolreplay", "record", "--runner", RUNNER, "--output", "tools.trp"],
        cwd=folder,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return Project(folder, folder / "tools.trp")


@pytest.fixture
def project(recorded: Project, tmp_path: Path) -> Project:
    shutil.copy(recorded.root / "tuimcp.py", tmp_path / "tuimcp.py")
    shutil.copy(recorded.trace, tmp_path / recorded.trace.name)
    return Project(tmp_path, tmp_path / recorded.trace.name)


def position(project: Project, tool: str) -> int:
    """Where the call of `tool` is in the operation list (the trace's order)."""
    operations = toolreplay.read_trace(project.trace).operations
    return next(
        index
        for index, op in enumerate(operations)
        if op.effect == "mcp.weather.tools.call"
        and isinstance(op.inputs, dict)
        and op.inputs.get("name") == tool
    )


async def select(pilot: Pilot[Any], project: Project, tool: str) -> None:
    await loaded(pilot)
    await pilot.press(*["j"] * position(project, tool))
    await settle(pilot)


@pilot_test
async def test_a_tool_call_reads_as_what_it_is_with_the_raw_json_a_key_away(
    project: Project,
) -> None:
    app = make_app(project)
    async with app.run_test(size=(160, 60)) as pilot:
        await select(pilot, project, "forecast")
        info = text_of(app, "#detail-info")
        assert "MCP call    weather · tools/call · tool forecast · result" in info
        assert "city" in info
        assert "Oslo" in info
        assert '"summary": "Snow"' in info  # the structured content
        assert "$.result.structuredContent" in info  # where an edit patches it
        assert "$.result.content[0].text" in info
        await pilot.press("tab", "t")
        raw = text_of(app, "#detail-info")
        assert "inputs  (t shows the transcript)" in raw
        assert '"name": "forecast"' in raw
        await pilot.press("t")
        assert "tool forecast" in text_of(app, "#detail-info")


@pilot_test
async def test_the_list_previews_each_call_as_its_tool_arguments_and_answer(
    project: Project,
) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        rows = app.browse.operations.rows
        assert rows is not None
        previews = [rows.row(index, preview_width=100).preview for index in range(len(rows))]
        forecast = previews[position(project, "forecast")]  # its text block: JSON, one line
        assert forecast.startswith('weather · forecast(city="Oslo") → { "city": "Oslo",')
        assert previews[position(project, "radar")] == (
            'weather · radar(city="Oslo") → 1 audio, 1 image, 1 resource, 1 resource_link'
        )
        assert previews[position(project, "outage")].startswith(
            'weather · outage(region="north") → tool error: Error executing tool outage'
        )


def test_show_previews_each_call_as_its_tool_arguments_and_answer(project: Project) -> None:
    shown = cli(project.root, "show", project.trace.name)
    assert shown.returncode == 0, shown.stderr
    radar = next(line for line in shown.stdout.splitlines() if "radar(" in line)
    assert 'weather · radar(city="Oslo")' in radar
    assert "1 audio, 1 image, 1 resource, 1 resource_link" in radar
    assert "iVBOR" not in shown.stdout  # no image bytes in a preview


@pilot_test
async def test_images_audio_and_resources_are_shown_by_what_they_are(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=(160, 60)) as pilot:
        await select(pilot, project, "radar")
        info = text_of(app, "#detail-info")
        png = hashlib.sha256(RADAR_PNG).hexdigest()[:16]
        wav = hashlib.sha256(RADAR_WAV).hexdigest()[:16]
        assert f"image/png · {len(RADAR_PNG)} bytes · sha256 {png}…" in info
        assert f"audio/wav · {len(RADAR_WAV)} bytes · sha256 {wav}…" in info
        assert "weather://stations/oslo  text/plain" in info
        assert "Calm night." in info
        assert "weather://archive  (archive)" in info
        assert "iVBORw0KGgo" not in info  # the image's bytes are never drawn
        await select(pilot, project, "outage")
        failed = text_of(app, "#detail-info")
        assert "tool outage · tool error" in failed
        assert "the tool failed" in failed
        assert "the outage feed for north is down" in failed


@pilot_test
async def test_an_edited_tool_result_forks_from_the_tui_with_no_server(project: Project) -> None:
    app = make_app(project)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, project, "forecast")
        # The value view below: find the structured summary by its path, edit it in place.
        await pilot.press("tab", "s", *"$.result.structuredContent.summary", "enter")
        await pilot.press("enter", *'"Hail"', "enter")
        await settle(pilot)
        assert len(app.pending) == 1
        assert '"summary": "Hail"' in text_of(app, "#detail-info")  # the transcript shows it
        (project.root / "tuimcp.py").write_text(
            (project.root / "tuimcp.py")
            .read_text(encoding="utf-8")
            .replace("sys.executable, args=", '"/nonexistent/mcp-server", args='),
            encoding="utf-8",
        )  # a fork must start no server: this one could not
        await pilot.press("f")
        await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
        assert app.last_fork is not None
        result = app.last_fork.result
        assert result.ok, (result.error, result.stderr)
        assert isinstance(result.return_value, dict)
        assert result.return_value["forecast"] == {"city": "Oslo", "summary": "Hail", "high_c": -4}


@pilot_test
async def test_what_a_hostile_trace_puts_in_an_mcp_call_is_shown_escaped(project: Project) -> None:
    """Traces are untrusted: a tool's name, an argument, a media type, a resource's text and
    a notification carry every character a terminal acts on; none of it reaches the screen."""
    trace = EditableTrace.read(project.trace)
    radar = position(project, "radar")
    operation = trace.operations[radar]
    operation["inputs"] = {"name": hostile("tool"), "arguments": {"city": hostile("argument")}}
    result = operation["outcome"]["value"]["result"]
    result["content"][0]["mimeType"] = hostile("mime")
    result["content"][2]["resource"]["text"] = hostile("resource-text")
    operation["outcome"]["value"]["messages"] = [
        {"notification": "notifications/message", "params": {"level": "info", "data": "x"}},
        {"notification": hostile("notification"), "params": {"note": hostile("params")}},
    ]
    trace.write(project.trace, "complete")
    app = make_app(project)
    async with app.run_test(size=(160, 80)) as pilot:
        await loaded(pilot)
        await pilot.press(*["j"] * radar)
        await settle(pilot)
        info = text_of(app, "#detail-info")
        assert unsafe_characters(info) == []
        unwrapped = "".join(info.split())  # the pane folds long values over lines
        for name in ("tool", "argument", "mime", "resource-text"):
            assert shown(name) in unwrapped, name
        # A notification's method names its row, in a narrow column, and its params are
        # shown as JSON (which spells some controls its own way): their start, escaped.
        assert "<notification>\\u001b[2" in info  # the column's first line
        assert "<params>\\u001b[2J" in info


def test_a_radar_call(project: Project, snap_compare: Any) -> None:
    async def before(pilot: Pilot[Any]) -> None:
        await select(pilot, project, "radar")
        pilot.app.clear_notifications()

    assert snap_compare(make_app(project), terminal_size=SIZE, run_before=before)
