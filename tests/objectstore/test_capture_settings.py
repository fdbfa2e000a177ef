"""Capture to a URL: settings in code and in the environment, the spool, file:// stores."""

from __future__ import annotations

import hashlib
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import toolreplay
from tests.support.capture_service import ROOT, wait_for
from toolreplay.capturing import ENVIRONMENT_VARIABLES
from toolreplay.capturing.upload import flush_spool
from toolreplay.errors import CaptureConfigError


@toolreplay.effect("crm.customer.get")
def customer(customer_id: int) -> dict[str, object]:
    return {"id": customer_id}


@pytest.fixture(autouse=True)
def _no_capture_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENVIRONMENT_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def served(capture: toolreplay.Capture, count: int) -> list[toolreplay.CapturedRequest]:
    requests: list[toolreplay.CapturedRequest] = []
    for number in range(count):
        with capture as request:
            customer(number)
        requests.append(request)
    return requests


def uploaded(bucket: Path) -> list[Path]:
    return sorted(bucket.rglob("*.trp"))


# --- in code -----------------------------------------------------------------------------


def test_retain_with_a_url_is_refused_pointing_to_the_lifecycle_rule() -> None:
    with pytest.raises(CaptureConfigError, match="lifecycle rule on age") as refused:
        toolreplay.capture("s3://traces/prod", retain=1000)
    assert "s3://traces/prod" in str(refused.value)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("s3://x/prefix", "is not a bucket name"),
        ("s3://traces/a/../b", "empty, '.' or '..' segment"),
        ("file://relative/folder", "file:///ABSOLUTE/FOLDER (three slashes)"),
        ("s3://traces/p?region=eu", "a location holds no credentials, query or fragment"),
    ],
)
def test_a_bad_url_in_code_is_refused_naming_the_problem(url: str, problem: str) -> None:
    with pytest.raises(CaptureConfigError, match=r"^capture\(directory\): ") as refused:
        toolreplay.capture(url)
    assert problem in str(refused.value)


def test_credentials_in_a_url_are_refused_without_being_repeated() -> None:
    with pytest.raises(CaptureConfigError) as refused:
        toolreplay.capture("s3://AKIDCANARY:secretcanary@traces/prod")
    assert "holds no credentials" in str(refused.value)
    assert "canary" not in str(refused.value).lower()


@pytest.mark.parametrize("spool_bytes", [0, -1, 1.5, True, "256M"])
def test_spool_bytes_must_be_a_positive_count(spool_bytes: object) -> None:
    with pytest.raises(CaptureConfigError, match=r"capture\(spool_bytes=...\): .*positive"):
        toolreplay.capture("s3://traces/prod", spool_bytes=spool_bytes)  # type: ignore[arg-type]


# --- a file:// destination, end to end -----------------------------------------------------


def test_a_file_destination_gets_each_kept_trace_under_date_and_instance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_INSTANCE", "web-1")
    bucket = tmp_path / "bucket"
    spool = tmp_path / "spool"
    capture = toolreplay.capture(f"file://{bucket}/refunds", spool=spool)
    requests = served(capture, 5)
    assert all(request.path is not None for request in requests)
    assert all(request.path.parent == spool / "web-1" for request in requests if request.path)
    wait_for(lambda: len(uploaded(bucket)) == 5, "the uploads")
    for request in requests:
        assert request.path is not None
        day = request.path.name[:4] + "-" + request.path.name[4:6] + "-" + request.path.name[6:8]
        object_path = bucket / "refunds" / f"date={day}" / "instance=web-1" / request.path.name
        assert object_path.is_file()
        assert toolreplay.read_trace(object_path).operations[0].effect == "crm.customer.get"
    wait_for(lambda: not list(spool.glob("*/*.trp")), "the spool to empty")
    assert (spool / ".destination").read_text() == f"file://{bucket}/refunds\n"
    assert stat.S_IMODE(spool.stat().st_mode) == 0o700
    assert stat.S_IMODE((spool / "web-1").stat().st_mode) == 0o700


def test_the_default_spool_is_per_user_and_per_destination(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    url = f"file://{tmp_path}/bucket"
    capture = toolreplay.capture(url)
    (request,) = served(capture, 1)
    digest = hashlib.sha256(url.encode()).hexdigest()[:16]
    spool = tmp_path / "cache" / "toolreplay" / "spool" / digest
    assert request.path is not None
    assert request.path.parent.parent == spool
    assert stat.S_IMODE(spool.stat().st_mode) == 0o700
    wait_for(lambda: len(uploaded(tmp_path / "bucket")) == 1, "the upload")


def test_a_spool_of_another_destination_is_not_used(tmp_path: Path) -> None:
    # In a child: the configuration problem is logged once per process.
    spool = tmp_path / "spool"
    script = (
        "import logging, sys, toolreplay\n"
        "logging.basicConfig(stream=sys.stdout, format='%(name)s: %(message)s')\n"
        "for where in ('first', 'second'):\n"
        f"    capture = toolreplay.capture(f'file://{tmp_path}/{{where}}', spool='{spool}')\n"
        "    with capture as request:\n"
        "        pass\n"
        "    print(where, request.skipped, request.path is not None)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    first, logged, second = done.stdout.splitlines()
    assert first == "first None True"
    assert second == "second config False"
    assert logged == (
        f"toolreplay.capture: Tool Replay capture: the spool {spool} holds traces for "
        f"file://{tmp_path}/first, not file://{tmp_path}/second: give each destination a "
        "spool of its own (spool=, TOOLREPLAY_CAPTURE_SPOOL). The request ran as usual; its "
        "trace was not kept. (Logged once per folder.)"
    )
    assert (spool / ".destination").read_text() == f"file://{tmp_path}/first\n"


# --- in the environment --------------------------------------------------------------------


def test_the_environment_sends_a_folder_capture_to_a_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bucket = tmp_path / "bucket"
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_DIR", f"file://{bucket}/env")
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_SPOOL", str(tmp_path / "spool"))
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_SPOOL_BYTES", "12K")
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_INSTANCE", "env-worker")
    capture = toolreplay.capture(tmp_path / "local")  # the operator's URL wins
    assert capture.settings.from_environment().spool_bytes == 12 * 1024
    requests = served(capture, 3)
    assert all(request.path is not None for request in requests)
    wait_for(lambda: len(uploaded(bucket)) == 3, "the uploads")
    assert {path.parent.name for path in uploaded(bucket)} == {"instance=env-worker"}
    assert not (tmp_path / "local").exists()

    # And a folder in the environment takes a URL in code back to a folder.
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_DIR", str(tmp_path / "local"))
    (request,) = served(toolreplay.capture(f"file://{bucket}/code"), 1)
    assert request.path is not None
    assert request.path.parent == tmp_path / "local"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TOOLREPLAY_CAPTURE_DIR", "s3://x/prefix"),
        ("TOOLREPLAY_CAPTURE_INSTANCE", "web 1"),
        ("TOOLREPLAY_CAPTURE_SPOOL_BYTES", "lots"),
        ("TOOLREPLAY_CAPTURE_SPOOL", " "),
    ],
)
def test_a_bad_variable_is_not_captured_and_logged_naming_it(
    tmp_path: Path, variable: str, value: str
) -> None:
    # In a child: the configuration problem is logged once per process.
    script = (
        "import logging, sys, toolreplay\n"
        "logging.basicConfig(stream=sys.stdout, format='%(name)s: %(message)s')\n"
        f"capture = toolreplay.capture('file://{tmp_path}/bucket')\n"
        "with capture as request:\n"
        "    pass\n"
        "print('skipped:', request.skipped)\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        variable: value,
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    lines = done.stdout.splitlines()
    assert lines[-1] == "skipped: config"
    (logged,) = lines[:-1]
    assert logged.startswith(
        f"toolreplay.capture: Tool Replay capture: the environment: {variable}: expected "
    )
    assert not list(tmp_path.rglob("*.trp"))


def test_retain_in_the_environment_is_ignored_for_a_url_and_logged_once(
    tmp_path: Path,
) -> None:
    script = (
        "import logging, sys, toolreplay\n"
        "logging.basicConfig(stream=sys.stdout, format='%(name)s: %(message)s')\n"
        f"capture = toolreplay.capture('file://{tmp_path}/bucket', spool='{tmp_path}/spool')\n"
        "for _ in range(3):\n"
        "    with capture as request:\n"
        "        pass\n"
        "    print('kept:', request.path is not None)\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "TOOLREPLAY_CAPTURE_RETAIN": "1",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    lines = done.stdout.splitlines()
    assert lines.count("kept: True") == 3
    logged = [line for line in lines if line.startswith("toolreplay.capture")]
    assert len(logged) == 1
    assert "retention is not applied" in logged[0]
    assert "lifecycle rule on age" in logged[0]
    assert len(uploaded(tmp_path / "bucket")) == 3  # the exit drain uploaded all, none deleted


def test_a_trace_uploaded_the_moment_it_is_kept_is_counted_and_not_reported_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The uploader may list the spool and take a trace as soon as its name appears. A
    # `toolreplay capture flush` running beside the service does the same, all the time,
    # which opens that window on every request rather than on a loaded machine only.
    bucket, spool = tmp_path / "bucket", tmp_path / "spool"
    capture = toolreplay.capture(f"file://{bucket}", spool=str(spool))
    served(capture, 1)  # the spool exists from here on
    stop = threading.Event()
    taken: list[int] = []  # traces each flush uploaded
    failures: list[str] = []

    def flushing() -> None:
        while not stop.is_set():
            result = flush_spool(spool)
            taken.append(result.uploaded)
            if result.failure is not None:
                failures.append(result.failure)

    flusher = threading.Thread(target=flushing)
    flusher.start()
    try:
        requests = served(capture, 300)
    finally:
        stop.set()
        flusher.join()

    assert not failures
    assert sum(taken) > 0  # the flush took traces from the spool beside the requests
    assert not [record.getMessage() for record in caplog.records]  # no kept trace called lost
    assert all(request.path is not None for request in requests)
    outbox = requests[-1]._outbox  # the process's outbox for this spool
    assert outbox is not None
    wait_for(lambda: len(uploaded(bucket)) == 301, "the uploads")
    wait_for(lambda: outbox.bytes_waiting == 0, "the spool's count to come back to 0")
