"""A process killed with a full spool (the store down): its traces are uploaded by the
next process to start on the spool, or by `toolreplay capture flush SPOOL`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.capture_service import (
    ROOT,
    Service,
    name_of,
    service_environment,
    spooled,
    wait_for,
)
from tests.support.s3_server import S3Server, running_s3_server

BUCKET = "traces"


def killed_with_a_full_spool(server: S3Server, env: dict[str, str]) -> set[str]:
    """Run a service while the store is down until its spool is full, then SIGKILL it;
    the names it acknowledged."""
    server.stop()
    service = Service(env, threads=4)
    lines = service.run(60)
    assert any(line["skipped"] == "spool full" for line in lines)
    service.kill()
    server.start()
    return service.kept


def test_the_next_process_uploads_a_killed_processs_spool(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    with running_s3_server() as server:
        server.create_bucket(BUCKET)
        env = service_environment(
            server, f"s3://{BUCKET}/killed", spool, TOOLREPLAY_CAPTURE_SPOOL_BYTES="16K"
        )
        left = killed_with_a_full_spool(server, env)
        assert {path.stem for path in spooled(spool)} == left  # nothing uploaded yet

        successor = Service(env, threads=2)
        successor.run(1)  # its first capture starts its uploader, which adopts the leftovers
        expected = left | successor.kept
        wait_for(
            lambda: {name_of(key) for key in server.objects(BUCKET)} == expected,
            "the killed process's traces",
        )
        successor.exit()
        assert not spooled(spool)
        # The killed process's folder went once empty; the successor's own is empty.
        assert len([folder for folder in spool.iterdir() if folder.is_dir()]) == 1
        instances = {key.split("/")[2] for key in server.objects(BUCKET)}
        assert len(instances) == 2  # each trace under the instance that captured it


def test_capture_flush_uploads_a_killed_processs_spool(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    with running_s3_server() as server:
        server.create_bucket(BUCKET)
        env = service_environment(
            server, f"s3://{BUCKET}/flushed", spool, TOOLREPLAY_CAPTURE_SPOOL_BYTES="16K"
        )
        left = killed_with_a_full_spool(server, env)

        flush = [sys.executable, "-m", "toolreplay", "capture", "flush", str(spool)]
        done = subprocess.run(flush, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"uploaded {len(left)} traces to s3://{BUCKET}/flushed\n"
        assert {name_of(key) for key in server.objects(BUCKET)} == left
        assert not spooled(spool)

        # Again: nothing left, nothing uploaded twice.
        again = subprocess.run(
            flush, env=env, cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert again.returncode == 0, again.stderr
        assert again.stdout == f"uploaded 0 traces to s3://{BUCKET}/flushed\n"
        assert len(server.objects(BUCKET)) == len(left)

        # Elsewhere with --to; and a store that is down is exit 1 with the reason.
        server.create_bucket("other")
        left = killed_with_a_full_spool(server, env)
        server.stop()
        down = subprocess.run(flush, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
        assert down.returncode == 1
        assert "cannot upload the captured traces" in down.stderr
        assert f"stay in {spool}" in down.stderr
        assert {path.stem for path in spooled(spool)} == left
        server.start()
        elsewhere = [*flush, "--to", "s3://other/moved"]
        moved = subprocess.run(
            elsewhere, env=env, cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert moved.returncode == 0, moved.stderr
        assert {name_of(key) for key in server.objects("other")} == left
        assert all(key.startswith("moved/date=") for key in server.objects("other"))


def test_capture_flush_refuses_what_it_cannot_use(tmp_path: Path) -> None:
    def flush(*arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "toolreplay", "capture", "flush", *arguments],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )

    missing = flush(str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert missing.stderr == f"error: {tmp_path / 'nowhere'}: no such spool folder\n"
    unrecorded = flush(str(tmp_path))
    assert unrecorded.returncode == 2
    assert "records no destination; give one with --to URL" in unrecorded.stderr
    bad = flush(str(tmp_path), "--to", "s3://user:secret@bucket/x")
    assert bad.returncode == 2
    assert "a location holds no credentials" in bad.stderr
    assert "secret" not in bad.stderr.replace("a location holds no credentials", "")


def test_capture_flush_counts_unfinished_requests_and_never_uploads_them(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    bucket = tmp_path / "bucket"
    (spool / "web-7").mkdir(parents=True)
    (spool / ".destination").write_text(f"file://{bucket}\n")
    name = "20261202T101500.000001Z-abcdefghijklmnop"
    kept = b'{"kind":"header"}\n'
    (spool / "web-7" / f"{name}.trp").write_bytes(kept)
    (spool / "web-7" / "20261202T101501.000001Z-bcdefghijklmnopq.trp.part").write_bytes(b"{")
    done = subprocess.run(
        [sys.executable, "-m", "toolreplay", "capture", "flush", str(spool)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"uploaded 1 trace to file://{bucket}; 1 unfinished .part file(s) left in the spool\n"
    )
    uploaded = bucket / "date=2026-12-02" / "instance=web-7" / f"{name}.trp"
    assert uploaded.read_bytes() == kept
    assert [path.name for path in (spool / "web-7").iterdir()] == [
        "20261202T101501.000001Z-bcdefghijklmnopq.trp.part"
    ]


def test_an_unreadable_trace_does_not_hold_up_the_others(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    bucket = tmp_path / "bucket"
    (spool / "web-8").mkdir(parents=True)
    (spool / ".destination").write_text(f"file://{bucket}\n")
    # A folder named as a trace: unreadable as a file whoever runs the test (root too).
    locked = spool / "web-8" / "20261202T101500.000001Z-abcdefghijklmnop.trp"
    locked.mkdir()
    (spool / "web-8" / "20261202T101501.000001Z-bcdefghijklmnopq.trp").write_bytes(b"{}\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolreplay", "capture", "flush", str(spool)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == f"uploaded 1 trace to file://{bucket}\n"
    assert done.stderr == (
        f"error: {spool}: 1 kept trace(s) could not be read (not a file, or its permissions) "
        "and stay in the spool\n"
    )
    assert [path.name for path in (spool / "web-8").iterdir()] == [locked.name]
