"""Driving `tests/support/capture_upload_app.py` in child processes, and reading a bucket."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.support.capture_upload_app import LOG_PREFIX
from tests.support.s3_server import S3Server, s3_environment

ROOT = Path(__file__).resolve().parents[2]


def service_environment(
    server: S3Server | None, destination: str, spool: Path, **extra: str
) -> dict[str, str]:
    """The environment of a captured service: this one without AWS_ or capture settings,
    the server's standard variables, and the capture's destination and spool."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AWS_", "TOOLREPLAY_")) and "PROXY" not in key.upper()
    }
    if server is not None:
        env.update(s3_environment(server))
    env.update(
        TOOLREPLAY_CAPTURE_DIR=destination,
        TOOLREPLAY_CAPTURE_SPOOL=str(spool),
        NO_PROXY="127.0.0.1,localhost",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


class Service:
    """One child process of the captured service."""

    def __init__(self, env: Mapping[str, str], threads: int = 8) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.capture_upload_app", str(threads)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(env),
            cwd=ROOT,
        )
        self.lines: list[dict[str, Any]] = []
        self.stdout = ""

    def run(self, count: int) -> list[dict[str, Any]]:
        """Handle `count` requests; their lines (see the app's doc)."""
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(f"run {count}\n")
        self.process.stdin.flush()
        found: list[dict[str, Any]] = []
        while True:
            line = self.process.stdout.readline()
            assert line, (
                f"the service ended early: {self.process.stderr and self.process.stderr.read()}"
            )
            self.stdout += line
            if line == "ran\n":
                break
            found.append(json.loads(line))
        self.lines += found
        return found

    def exit(self) -> tuple[str, str]:
        """End the process normally; its remaining stdout and stderr."""
        out, err = self.process.communicate("exit\n", timeout=60)
        assert self.process.returncode == 0, err
        self.stdout += out
        return self.stdout, err

    def kill(self) -> str:
        """SIGKILL the process; its stderr."""
        self.process.kill()
        _, err = self.process.communicate(timeout=60)
        return err

    @property
    def kept(self) -> set[str]:
        """The names of the traces the capture acknowledged (kept into the spool)."""
        return {line["name"] for line in self.lines if line["kept"]}


def capture_log_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(LOG_PREFIX)]


def name_of(key: str) -> str:
    return key.rsplit("/", 1)[-1].removesuffix(".trp")


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def spooled(spool: Path) -> list[Path]:
    """The kept traces waiting in a spool (any instance folder)."""
    return sorted(spool.glob("*/*.trp"))
