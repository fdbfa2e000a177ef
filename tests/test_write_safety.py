"""Commands that write never write over what they read, and a kill at any step of writing
leaves the destination complete or absent, with nothing git would pick up.

Audit of issue 26: `toolreplay redact r.trp ./r.trp --rule '$.i' --overwrite` exited 0
saying "r.trp is unchanged" while r.trp held placeholders; `migrate X --output X
--overwrite` replaced its source; `promote --output cases/c0/nested` was accepted though
pytest never runs it; a kill at promote's final rename left an empty destination folder
beside its staging folder (a retry said "already exists"), and killed promotions left
staging folders that `git add` picked up; two concurrent `record --overwrite` to one path
both reported success. Every command runs as a real child process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import toolreplay
from tests.support.case_app import EXPECTED, App, run_cli
from tests.support.killing import run_killed_at
from toolreplay.files import remove_abandoned, source_conflict

LEGACY = Path(__file__).parent / "adapters" / "data" / "legacy_refund.trp"
KEY = "k" * 32  # a redaction key (TOOLREPLAY_REDACTION_KEY), test only
GIT = shutil.which("git") or "git"  # skipped below where it is not installed
OVER = ("--overwrite",)
needs_git = pytest.mark.skipif(
    shutil.which("git") is None, reason="git is not installed: what git adds is checked"
)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- the shared check ----------------------------------------------------------------------


def test_source_conflict_names_every_way_to_reach_the_source(tmp_path: Path) -> None:
    source = tmp_path / "r.trp"
    source.write_text("recorded")
    (tmp_path / "link.trp").symlink_to(source)
    os.link(source, tmp_path / "hard.trp")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "back").symlink_to(tmp_path, target_is_directory=True)
    cases = {
        source: f"is the source {source} itself",
        tmp_path / "." / "r.trp": f"is the source {source} itself",
        tmp_path / "sub" / ".." / "r.trp": f"is the source {source} itself",
        tmp_path / "sub" / "back" / "r.trp": f"is the source {source} itself",
        tmp_path / "link.trp": f"is a symbolic link to the source {source}",
        tmp_path / "hard.trp": f"is a hard link to the source {source} (the same file)",
        tmp_path: f"is a folder that holds the source {source}",
        tmp_path / "new.trp": None,
        tmp_path / "sub": None,
    }
    for destination, expected in cases.items():
        assert source_conflict(destination, [source]) == expected, destination
    assert source_conflict(tmp_path / "r.trp", [tmp_path / "missing.trp"]) is None


# --- redact, migrate, fork, promote onto their source: refused, nothing written -----------


def _legacy_project(tmp_path: Path) -> Path:
    shutil.copy(LEGACY, tmp_path / "r.trp")
    return tmp_path


SPELLINGS: dict[str, Callable[[Path], str]] = {
    "the same path": lambda root: "r.trp",
    "./ in front": lambda root: "./r.trp",
    "an absolute path": lambda root: str(root / "r.trp"),
    "a symbolic link": lambda root: (root / "link.trp").symlink_to(root / "r.trp") or "link.trp",
    "a hard link": lambda root: os.link(root / "r.trp", root / "hard.trp") or "hard.trp",
    "the folder holding it": lambda root: ".",
}


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("command", ["redact", "migrate"])
def test_redact_and_migrate_refuse_to_write_over_their_source(
    tmp_path: Path, command: str, spelling: str
) -> None:
    root = _legacy_project(tmp_path)
    output = SPELLINGS[spelling](root)
    before = digest(root / "r.trp")
    if command == "redact":
        arguments = ["redact", "r.trp", output, "--rule", "$..customer_id", "--overwrite"]
    else:
        arguments = ["migrate", "r.trp", "--output", output, "--overwrite"]
    result = subprocess.run(
        [sys.executable, "-m", "toolreplay", *arguments],
        cwd=root,
        env={**os.environ, "TOOLREPLAY_REDACTION_KEY": KEY},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert "never writes over the trace it reads" in result.stderr
    assert "unchanged" not in result.stderr
    assert digest(root / "r.trp") == before
    assert not [p for p in root.iterdir() if p.name.endswith(".tmp")]


def test_the_audit_redact_case_exits_2_and_leaves_the_source(tmp_path: Path) -> None:
    source = tmp_path / "r.trp"
    with toolreplay.record(source):
        pass
    before = source.read_bytes()
    result = subprocess.run(
        [sys.executable, "-m", "toolreplay", "redact", "r.trp", "./r.trp", "--rule", "$.i", *OVER],
        cwd=tmp_path,
        env={**os.environ, "TOOLREPLAY_REDACTION_KEY": KEY},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr == (
        "error: r.trp is the source r.trp itself: a redaction never writes over the trace "
        "it reads; give the redacted copy another path\n"
    )
    assert source.read_bytes() == before


def test_fork_and_promote_refuse_links_to_their_source(app: App, tmp_path: Path) -> None:
    trace = app.record(tmp_path / "incident.trp")
    app.forget_import()
    os.link(trace, tmp_path / "hard.trp")
    (tmp_path / "link.trp").symlink_to(trace)
    patches = toolreplay.write_patches(
        tmp_path / "p.json",
        [
            toolreplay.replace_output(
                effect="crm.customer.get", inputs={"customer_id": 42}, value={}
            )
        ],
    )
    for branch, phrase in (("hard.trp", "is a hard link to"), ("link.trp", "symbolic link")):
        result = run_cli(app, tmp_path, "fork", "incident.trp", "-p", patches.name, "-o", branch)
        assert result.returncode == 2
        assert "would overwrite its own source trace" in result.stderr
        assert phrase in result.stderr
    promoted = run_cli(
        app,
        tmp_path,
        "promote",
        "incident.trp",
        "-o",
        ".",
        "-n",
        "c",
        "-r",
        app.runner(),
        "--expect-json",
        "1",
    )
    assert promoted.returncode == 2
    assert "is a folder that holds the source incident.trp" in promoted.stderr
    assert not app.marker.exists()  # refused before the application was imported


# --- promote: only where pytest and verify run the case -------------------------------------


def test_a_case_inside_a_case_or_a_skipped_folder_is_refused(app: App, tmp_path: Path) -> None:
    trace = app.record(tmp_path / "incident.trp")
    toolreplay.promote(
        trace, tmp_path / "cases" / "c0", name="c0", runner=app.runner(), expected=EXPECTED
    )
    app.forget_import()
    for output, phrase in (
        ("cases/c0/nested", "is inside the case folder"),
        ("cases/c0/deeper/nested", "is inside the case folder"),
        ("cases/.hidden", "matches its default norecursedirs pattern '.*' (verify skips it too)"),
        (".cases/c1", "'.*'"),
        ("build/cases/c1", "'build'"),
        ("node_modules/c1", "'node_modules'"),
    ):
        result = run_cli(
            app,
            tmp_path,
            "promote",
            "incident.trp",
            "-o",
            output,
            "-n",
            "n",
            "-r",
            app.runner(),
            "--expect-json",
            "1",
        )
        assert result.returncode == 2, (output, result.stderr)
        assert phrase in result.stderr, result.stderr
        assert not (tmp_path / output).exists()
    assert sorted(p.name for p in (tmp_path / "cases" / "c0").iterdir()) == [
        "case.json",
        "test_case.py",
        f"trace-sha256-{digest(trace)}.trp",
    ]
    assert not (tmp_path / "build").exists()
    assert not app.marker.exists()  # every refusal came before the application's import
    verified = run_cli(app, tmp_path, "verify", "cases", "--format", "json")
    assert [case["name"] for case in json.loads(verified.stdout)["cases"]] == ["c0"]


# --- kills at every step ------------------------------------------------------------------


def _git_init(root: Path) -> None:
    assert GIT is not None
    for command in (
        ["init", "-q"],
        ["config", "user.email", "t@e.st"],
        ["config", "user.name", "t"],
    ):
        subprocess.run([GIT, *command], cwd=root, check=True, capture_output=True)


def _untracked(root: Path) -> list[str]:
    """What `git add .` would add: every untracked file git does not ignore."""
    assert GIT is not None
    listed = subprocess.run(
        [GIT, "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(line[3:] for line in listed.splitlines())


def _case_files(root: Path, trace: Path) -> list[str]:
    return sorted(
        f"cases/refund/{name}"
        for name in ("case.json", "test_case.py", f"trace-sha256-{digest(trace)}.trp")
    )


@needs_git
def test_promote_killed_at_each_step_publishes_all_or_nothing(app: App, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    _git_init(root)
    trace = app.record(root / "incident.trp")
    (root / ".gitignore").write_text("*.imported\n")
    subprocess.run([GIT, "add", "."], cwd=root, check=True)
    subprocess.run([GIT, "commit", "-qm", "x"], cwd=root, check=True)
    app.forget_import()
    arguments = ["promote", "incident.trp", "-o", "cases/refund", "-n", "refund"]
    arguments += ["-r", app.runner(), "--expect-json", json.dumps(EXPECTED)]
    env = {**os.environ, "PYTHONPATH": str(app.folder)}
    case = root / "cases" / "refund"
    published = _case_files(root, trace)

    whole = run_killed_at(arguments, root=root, cwd=root, env=env, kill_at=None)
    assert whole.exit_code == 0, whole.stderr
    assert any(step.startswith("os.rename") for step in whole.steps)
    assert _untracked(root) == published
    shutil.rmtree(root / "cases")
    for kill_at in range(1, len(whole.steps) + 1):
        killed = run_killed_at(arguments, root=root, cwd=root, env=env, kill_at=kill_at)
        step = killed.steps[-1]
        assert killed.exit_code is None, (step, killed.stderr)
        # Complete or absent, and git would add the case's three files or nothing.
        if case.exists():
            assert sorted(f"cases/refund/{p.name}" for p in case.iterdir()) == published, step
            toolreplay.read_case_manifest(case)
            assert _untracked(root) == published, step
        else:
            assert _untracked(root) == [], step
        # A retry is never blocked, and cleans up what the kill left.
        retry = run_cli(app, root, *arguments)
        if retry.returncode != 0:
            assert "already exists" in retry.stderr, (step, retry.stderr)
        else:
            assert "promoted" in retry.stdout
        assert sorted(p.name for p in (root / "cases").iterdir()) == ["refund"], step
        assert _untracked(root) == published, step
        shutil.rmtree(root / "cases")
    assert digest(root / "incident.trp") == digest(trace)


@needs_git
@pytest.mark.parametrize("command", ["redact", "migrate"])
def test_redact_and_migrate_killed_at_each_step_write_all_or_nothing(
    tmp_path: Path, command: str
) -> None:
    root = _legacy_project(tmp_path)
    _git_init(root)
    subprocess.run([GIT, "add", "."], cwd=root, check=True)
    subprocess.run([GIT, "commit", "-qm", "x"], cwd=root, check=True)
    source = digest(root / "r.trp")
    if command == "redact":
        arguments = ["redact", "r.trp", "out.trp", "--rule", "$..customer_id"]
    else:
        arguments = ["migrate", "r.trp", "--output", "out.trp"]
    env = {**os.environ, "TOOLREPLAY_REDACTION_KEY": KEY}
    expected: tuple[toolreplay.Operation, ...] | None = None
    for overwrite in (False, True):
        if overwrite:
            arguments.append("--overwrite")  # over the copy the last run left
        whole = run_killed_at(arguments, root=root, cwd=root, env=env, kill_at=None)
        assert whole.exit_code == 0, whole.stderr
        written = toolreplay.read_trace(root / "out.trp").operations
        assert expected is None or written == expected
        expected = written
        for kill_at in range(1, len(whole.steps) + 1):
            if not overwrite:
                (root / "out.trp").unlink()
            killed = run_killed_at(arguments, root=root, cwd=root, env=env, kill_at=kill_at)
            assert killed.exit_code is None, killed.stderr
            step = killed.steps[-1]
            if (root / "out.trp").exists():  # the old copy (overwrite) or the new one, whole
                assert toolreplay.read_trace(root / "out.trp").operations == expected, step
            retry = run_cli_env(root, env, *arguments)
            if retry.returncode != 0:
                assert "already exists" in retry.stderr, (step, retry.stderr)
            assert toolreplay.read_trace(root / "out.trp").operations == expected
            assert _untracked(root) == ["out.trp"], step  # no temporary file is left
    assert digest(root / "r.trp") == source


def run_cli_env(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# --- record --overwrite with a concurrent writer ------------------------------------------

SLOW_APP = textwrap.dedent(
    """
    import pathlib, time
    import toolreplay

    @toolreplay.effect("clock.tick")
    def tick(n: int) -> int:
        return n

    def run() -> int:
        tick(1)
        pathlib.Path("started").write_text("")
        while not pathlib.Path("go").exists():
            time.sleep(0.01)
        tick(2)
        return 2

    def quick() -> int:
        return tick(7)
    """
)


def test_a_second_record_overwrite_while_one_records_fails_explicitly(tmp_path: Path) -> None:
    (tmp_path / "slowapp.py").write_text(SLOW_APP)
    (tmp_path / "t.trp").write_text("an old trace to overwrite\n")
    command = [sys.executable, "-m", "toolreplay", "record", "-o", "t.trp", "--overwrite"]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    first = subprocess.Popen(
        [*command, "-r", "slowapp:run"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first recording never started"
            time.sleep(0.01)
        second = run_cli_env(
            tmp_path, env, "record", "-o", "t.trp", "--overwrite", "-r", "slowapp:quick"
        )
        assert second.returncode == 2, second.stdout + second.stderr
        assert "another process is writing this trace right now" in second.stderr
        (tmp_path / "go").write_text("")
        out, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, out + err
    trace = toolreplay.read_trace(tmp_path / "t.trp")  # the first recording, whole
    assert trace.complete
    assert [op.inputs for op in trace.operations] == [{"n": 1}, {"n": 2}]
    again = run_cli_env(
        tmp_path, env, "record", "-o", "t.trp", "--overwrite", "-r", "slowapp:quick"
    )
    assert again.returncode == 0, again.stderr  # once it is done, overwriting is allowed
    assert [op.inputs for op in toolreplay.read_trace(tmp_path / "t.trp").operations] == [{"n": 7}]


# --- claims ------------------------------------------------------------------------------

HOLDER = """
import fcntl, os, sys, time
descriptor = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(descriptor, fcntl.LOCK_EX)
print("claimed", flush=True)
time.sleep(120)
"""


def test_a_leftover_is_removed_only_once_its_writer_is_gone(tmp_path: Path) -> None:
    leftover = tmp_path / ".out.trp.0123456789ab.tmp"
    pattern = re.compile(r"\.out\.trp\.[0-9a-f]{12}\.tmp")
    writer = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(leftover)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "claimed\n"
        assert remove_abandoned(tmp_path, pattern) == []  # still being written
        assert leftover.exists()
    finally:
        writer.kill()
        writer.wait()
    assert remove_abandoned(tmp_path, pattern) == [leftover]  # its writer was killed
    assert not leftover.exists()
    (tmp_path / "out.trp").write_text("not matched")
    assert remove_abandoned(tmp_path, pattern) == []
    assert (tmp_path / "out.trp").exists()
