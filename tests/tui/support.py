"""Shared set-up of the debugger's tests: a real application and a real recorded trace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import toolreplay

APP_SOURCE = Path(__file__).parent / "incident_app.py"
APP_MODULE = "tuiapp"
RUNNER = f"{APP_MODULE}:main"
# A run killed at its timeout on a loaded machine may not have reached the runner yet:
# timeout tests try these in turn until the child says it got there (sleepy_started).
RUN_TIMEOUTS = (1.5, 4.0, 10.0, 25.0)
DECIDE_INPUTS = {"amount": 1200.0, "tier": "gold"}


@dataclass(frozen=True)
class Project:
    """A folder holding the application module and its recorded incident trace."""

    root: Path
    trace: Path


def child_env() -> dict[str, str]:
    """The environment of child processes: this one's, minus anything that redirects Python."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONSTARTUP",)}


def cli(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=cwd,
        env=child_env() if env is None else env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def record_incident(folder: Path, name: str = "refund.trp") -> Project:
    """Write the application into `folder` and record its trace there, in a child process."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(APP_SOURCE, folder / f"{APP_MODULE}.py")
    result = cli(folder, "record", "--runner", RUNNER, "--output", name, "--format", "json")
    assert result.returncode == 0, result.stderr
    return Project(folder, folder / name)


def copy_project(template: Project, folder: Path) -> Project:
    """A fresh copy of a recorded project (recording once per session saves time)."""
    shutil.copy(template.root / f"{APP_MODULE}.py", folder / f"{APP_MODULE}.py")
    shutil.copy(template.trace, folder / template.trace.name)
    return Project(folder, folder / template.trace.name)


def verify_promoted(project: Project, folder: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`toolreplay.verify_case` on a promoted folder, in this process; returns the case name.

    The case's runner imports the application module from the project folder, as
    pytest run from that folder would.
    """
    monkeypatch.syspath_prepend(str(project.root))
    monkeypatch.delitem(sys.modules, APP_MODULE, raising=False)
    verified = toolreplay.verify_case(folder)
    monkeypatch.delitem(sys.modules, APP_MODULE, raising=False)
    return verified.manifest.name


def sleepy_started(root: Path, pid: int | None = None) -> bool:
    """Whether incident_app.sleepy reached its runner in process `pid` (None: in any)."""
    if pid is not None:
        return (root / f"sleepy.started.{pid}").exists()
    return any(root.glob("sleepy.started.*"))
