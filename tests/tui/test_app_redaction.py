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

from tests.support import canary_app
from tests.tui.pilot import SIZE, loaded, make_app, pilot_test, wait_for
from tests.tui.support import Project

KEY = "tui-test-redaction-key-0123456789"


def canary_project(root: Path) -> tuple[Project, dict[str, str], list[bytes]]:
    carriers, secret_bytes = canary_app.make_canaries()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLREPLAY_", "CANARY_"))}
    env |= {
        "CANARY_SECRETS": json.dumps(carriers),
        "CANARY_REDACT": "1",
        "TOOLREPLAY_REDACTION_KEY": KEY,
        "PYTHONDONTWRITEBYTECODE": "1",
    }
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
