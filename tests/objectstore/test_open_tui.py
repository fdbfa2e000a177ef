"""`toolreplay tui URL`: the debugger opened on one trace of a real S3 API (moto on
loopback), through the real command line, in a pseudo-terminal; where its work folder
goes; and a missing object."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

import toolreplay
from tests.support import crm
from tests.support.s3_server import (
    S3Server,
    running_s3_server,
    s3_client_options,
    s3_environment,
)
from tests.test_cli_tui import run_in_terminal

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "tui-traces"
KEY = "prod/date=2026-12-02/instance=web-1/refund.trp"
URL = f"s3://{BUCKET}/{KEY}"

# A stand-in for the UI package that prints what the command hands it.
FAKE_UI = (
    "import sys, types\n"
    "fake = types.ModuleType('toolreplay_tui')\n"
    "fake.run = lambda *args, workdir: print(repr(args + (workdir,)))\n"
    "sys.modules['toolreplay_tui'] = fake\n"
    "import toolreplay.cli\n"
    "sys.argv = sys.argv[1:]\n"
    "toolreplay.cli.main()\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    path = tmp_path_factory.mktemp("recorded") / "refund.trp"
    with toolreplay.record(path, metadata={"runner": "tests.support.crm:handle_refund"}):
        crm.handle_refund(42, 120.0)
    with running_s3_server() as started:
        started.create_bucket(BUCKET)
        client = boto3.client("s3", **s3_client_options(started))
        client.put_object(Bucket=BUCKET, Key=KEY, Body=path.read_bytes())
        yield started


@pytest.fixture
def environment(server: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's variables and a cache of the test's own, for the children; the cache."""
    for key in list(os.environ):
        if key.startswith("AWS_"):
            monkeypatch.delenv(key)
    for key, value in s3_environment(server).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    return tmp_path / "cache" / "toolreplay" / "objects"


def run_python(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )


def test_the_debugger_opens_a_trace_url_and_quits(environment: Path, tmp_path: Path) -> None:
    status, shown = run_in_terminal(
        [sys.executable, "-m", "toolreplay", "tui", URL],
        wait_for="complete",
        keys=b"q",
        cwd=tmp_path,
    )
    assert status == 0, shown[-2000:]
    assert "refund.trp" in shown
    (copy,) = (path for path in environment.rglob("*") if path.is_file())
    assert copy.name == "refund.trp"


def test_the_ui_gets_the_cached_copy_and_a_work_folder_in_the_current_one(
    environment: Path, tmp_path: Path
) -> None:
    bare = run_python("-c", FAKE_UI, "toolreplay", "tui", URL, cwd=tmp_path)
    assert bare.returncode == 0, bare.stderr
    (copy,) = (path for path in environment.rglob("*") if path.is_file())
    assert bare.stdout == f"({copy!r}, None, None, {Path('.toolreplay')!r})\n"
    given = run_python(
        "-c", FAKE_UI, "toolreplay", "tui", URL, "--against", URL, "--workdir", "w", cwd=tmp_path
    )
    assert given.returncode == 0, given.stderr
    assert given.stdout == f"({copy!r}, None, {copy!r}, {Path('w')!r})\n"


def test_a_missing_object_is_named(environment: Path, tmp_path: Path) -> None:
    # A prefix (no `.trp`) opens the picker instead: tests/tui/test_picker_objects.py.
    missing = f"s3://{BUCKET}/prod/missing.trp"
    result = run_python("-m", "toolreplay", "tui", missing, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {missing}: cannot fetch the trace: not found (")
