"""The debugger on a redacted trace: placeholders shown as redacted, never edited into
text, and a fork whose private work folder holds no canary byte (RFC 0007)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from textual.widgets import Checkbox
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.screens.promote import PromoteScreen

from tests.support import canary_app
from tests.tui.pilot import SIZE, loaded, make_app, pilot_test, said, text_of, wait_for
from tests.tui.support import Project

KEY = "tui-test-redaction-key-0123456789"


def canary_project(
    root: Path, kinds: tuple[str, ...] | None = None, *, redact: bool = True
) -> tuple[Project, dict[str, str], list[bytes]]:
    """The canary application recorded in `root`: with its redaction rules, or (`redact`
    False) with only its effect's own rule, the other secrets written as they are
    (`TOOLREPLAY_SECRETS=warn`)."""
    carriers, secret_bytes = canary_app.make_canaries()
    if kinds is not None:
        carriers = {kind: carriers[kind] for kind in kinds}
        secret_bytes = {kind: secret_bytes[kind] for kind in kinds}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLREPLAY_", "CANARY_"))}
    env |= {
        "CANARY_SECRETS": json.dumps(carriers),
        "TOOLREPLAY_REDACTION_KEY": KEY,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env |= {"CANARY_REDACT": "1"} if redact else {"TOOLREPLAY_SECRETS": "warn"}
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(canary_app.__file__, root / "canary_app.py")
    recorded = subprocess.run(
        [sys.executable, "-m", "toolreplay", "record", "-r", "canary_app:main", "-o", "c.trp"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert recorded.returncode == 0, recorded.stderr
    secrets = [value.encode() for values in secret_bytes.values() for value in values]
    return Project(root, root / "c.trp"), env, secrets


@pilot_test
async def test_placeholders_are_shown_redacted_refused_as_edits_and_never_leak(
    tmp_path: Path,
) -> None:
    project, env, secrets = canary_project(tmp_path / "app")
    kinds = len(json.loads(env["CANARY_SECRETS"]))
    app = make_app(project, env=env)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        # The first vault.secret.fetch: its output's value is a placeholder.
        await pilot.press("g", *["j"] * kinds, "tab", "j")
        values = app.browse.detail.values
        line = values.render_row(values.cursor, 120).plain
        assert '"value": [redacted key ' in line
        assert "<redacted:" not in line

        await pilot.press("enter", *'"typed over"', "enter")
        assert len(app.pending) == 0
        assert app.notice.error
        assert "$.value is redacted" in (app.notice.text or "")

        # A field that is not redacted can be patched, and the fork runs.
        await pilot.press("shift+tab", "G", "tab", "enter", *'"deny"', "enter")
        assert len(app.pending) == 1
        await pilot.press("f")
        await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
        assert app.last_fork is not None
        result = app.last_fork.result
        assert result.ok, (result.error, result.stderr)

    work = project.root / ".toolreplay"
    assert stat.S_IMODE(work.stat().st_mode) == 0o700
    files = sorted(path for path in work.iterdir() if path.is_file())
    assert {path.suffix for path in files} == {".json", ".trp"}
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        data = path.read_bytes()
        assert [secret for secret in secrets if secret in data] == [], path


def screen_text(app: ToolReplayApp) -> str:
    """What the promote screen shows: its findings, its box, its run report, the messages,
    and the whole screen as a screenshot's text."""
    parts = [said(app), app.export_screenshot().replace("&#160;", " ")]
    for selector in ("#promote-findings", "#run-report"):
        if app.screen.query(selector):
            parts.append(text_of(app, selector))
    parts.extend(str(box.label) for box in app.screen.query(Checkbox))
    return "\n".join(parts)


@pilot_test
async def test_a_flagged_fork_is_promoted_only_when_the_box_is_checked(tmp_path: Path) -> None:
    project, env, secrets = canary_project(
        tmp_path / "app", ("card-number", "openai-api-key"), redact=False
    )
    app = make_app(project, env=env)
    cases = project.root / "tests" / "cases"
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot)
        await pilot.press("G", "tab", "enter", *'"deny"', "enter")  # policy.access.decide
        await pilot.press("f")
        await wait_for(pilot, lambda: app.last_fork is not None, what="the fork")
        assert app.last_fork is not None
        assert app.last_fork.result.ok, (app.last_fork.result.error, app.last_fork.result.stderr)

        await pilot.press("p")
        assert isinstance(app.screen, PromoteScreen)
        promote = app.screen
        findings = text_of(app, "#promote-findings")
        assert "The secret scanner flags this trace" in findings
        # Each finding by effect, part, JSON path and rule; never by value.
        assert "vault.secret.fetch output at $.value: card-number" in findings
        assert "vault.secret.fetch output at $.note: openai-api-key" in findings
        assert "vault.secret.rotate error at $.message: openai-api-key" in findings
        assert "vault.secret.check" not in findings  # its own rule redacted $.secret
        box = promote.query_one("#promote-allow-secrets", Checkbox)
        assert not box.value  # refused by default
        await pilot.press("tab", "tab", "tab", "tab")
        assert app.focused is box
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.last_promote is not None, what="the refusal")
        assert app.last_promote is not None
        assert not app.last_promote.ok
        assert app.last_promote.error is not None
        assert app.last_promote.error.type == "toolreplay.errors.SecretInTraceError"
        assert "card-number" in text_of(app, "#run-report")
        assert not cases.exists() or not any(cases.iterdir())  # nothing was written
        refused_text = screen_text(app)
        # The screenshot's text is searchable: what the form shows is found in it.
        assert "promote anyway" in app.export_screenshot().replace("&#160;", " ")

        app.last_promote = None
        box.focus()
        await pilot.press("space")
        assert box.value
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.last_promote is not None, what="the promotion")
        assert app.last_promote is not None
        assert app.last_promote.ok, app.last_promote.error
        assert app.last_promote.case is not None
        assert (project.root / app.last_promote.case.directory / "case.json").is_file()
        promoted_text = screen_text(app)

    for shown in (refused_text, promoted_text):
        assert [secret for secret in secrets if secret.decode() in shown] == []
