"""show, replay, fork, diff and promote given the URL of one trace in a real S3 API
(moto on loopback, in a child process), each command a real child process.

Every child has credential canaries as its secret key and session token (moto accepts
any); no output and no cached file may hold them.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

import toolreplay
from tests.support.hostile import SHOWN, hostile_trace, unsafe_characters
from tests.support.s3_server import (
    S3Server,
    running_s3_server,
    s3_client_options,
    s3_environment,
)
from toolreplay.cli.show import trace_summary

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "support" / "refund_app.py"
BUCKET = "traces"
PREFIX = "prod/date=2026-12-02/instance=web-1"
SECRET_CANARY = f"canary-secret-{secrets.token_hex(8)}"
TOKEN_CANARY = f"canary-token-{secrets.token_hex(8)}"


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with running_s3_server() as started:
        started.create_bucket(BUCKET)
        yield started


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    shutil.copy(APP, folder / "refund_app.py")
    return folder


@pytest.fixture
def cache_home(tmp_path: Path) -> Path:
    return tmp_path / "cache-home"


def upload(server: S3Server, name: str, data: bytes) -> str:
    """Put `data` at PREFIX/name; its URL."""
    client = boto3.client("s3", **s3_client_options(server))
    client.put_object(Bucket=BUCKET, Key=f"{PREFIX}/{name}", Body=data)
    return f"s3://{BUCKET}/{PREFIX}/{name}"


def cli(
    server: S3Server, cache_home: Path, cwd: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """`toolreplay ARGS` with the server's credentials, the canaries and a cache of its own."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AWS_", "REFUND_", "XDG_CACHE_HOME"))
    }
    environment |= s3_environment(server)
    environment |= {
        "AWS_SECRET_ACCESS_KEY": SECRET_CANARY,
        "AWS_SESSION_TOKEN": TOKEN_CANARY,
        "XDG_CACHE_HOME": str(cache_home),
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    result = subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        timeout=120,
        check=False,
    )
    for canary in (SECRET_CANARY, TOKEN_CANARY):
        assert canary not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result


def cached_files(cache_home: Path) -> list[Path]:
    objects = cache_home / "toolreplay" / "objects"
    return sorted(path for path in objects.rglob("*") if path.is_file())


def assert_no_canary_in(paths: list[Path]) -> None:
    for path in paths:
        data = path.read_bytes()
        assert SECRET_CANARY.encode() not in data, path
        assert TOKEN_CANARY.encode() not in data, path


def record(server: S3Server, cache_home: Path, workdir: Path, name: str) -> Path:
    result = cli(server, cache_home, workdir, "record", "-r", "refund_app:main", "-o", name)
    assert result.returncode == 0, result.stderr
    return workdir / name


def test_show_of_a_url_is_show_of_the_file(
    server: S3Server, cache_home: Path, workdir: Path
) -> None:
    local = record(server, cache_home, workdir, "incident.trp")
    url = upload(server, "show-equal.trp", local.read_bytes())

    for extra in ((), ("--limit", "0")):
        from_url = cli(server, cache_home, workdir, "show", url, *extra)
        from_file = cli(server, cache_home, workdir, "show", str(local), *extra)
        assert from_url.returncode == from_file.returncode == 0, from_url.stderr
        # The same lines, the trace named by the URL as given.
        assert from_url.stdout == from_file.stdout.replace(str(local), url)
        assert from_url.stdout.startswith(f"trace     {url}\n")

    as_json = cli(server, cache_home, workdir, "show", url, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    document: dict[str, Any] = json.loads(as_json.stdout)
    assert document == {**trace_summary(toolreplay.read_trace(local)), "path": url}

    (copy,) = cached_files(cache_home)
    assert copy.name == "show-equal.trp"  # recognisable in messages
    assert copy.read_bytes() == local.read_bytes()
    assert copy.stat().st_mode & 0o777 == 0o600
    for folder in (copy.parent, copy.parent.parent, copy.parent.parent.parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    assert_no_canary_in(cached_files(cache_home))


def test_replay_fork_diff_and_promote_from_a_url(
    server: S3Server, cache_home: Path, workdir: Path
) -> None:
    local = record(server, cache_home, workdir, "incident.trp")
    url = upload(server, "runs.trp", local.read_bytes())

    replayed = cli(server, cache_home, workdir, "replay", url, "--format", "json")
    assert replayed.returncode == 0, replayed.stderr
    replay_document = json.loads(replayed.stdout)
    assert replay_document["outcome"] == "ok"
    assert replay_document["paths"] == {"trace": url}
    assert replay_document["counts"] == {"operations_in_trace": 3, "operations_consumed": 3}

    patch = toolreplay.replace_output(
        effect="llm.refund.decide",
        inputs={"amount": 1200.0, "tier": "gold"},
        value={"decision": "manual_review", "reason": "over 1000"},
    )
    toolreplay.write_patches(workdir / "fix.json", [patch])
    forked = cli(server, cache_home, workdir, "fork", url, "-p", "fix.json", "-o", "branch.trp")
    assert forked.returncode == 0, forked.stderr
    assert f"forked {url} into branch.trp with refund_app:main" in forked.stdout
    assert f"compare: toolreplay diff {url} branch.trp" in forked.stdout
    # The branch is written where --output says (the current folder), never in the cache.
    branch = toolreplay.read_trace(workdir / "branch.trp")
    assert branch.header.source_trace_id == toolreplay.read_trace(local).header.trace_id
    assert [path.name for path in cached_files(cache_home)] == ["runs.trp"]

    differs = cli(server, cache_home, workdir, "diff", url, "branch.trp")
    assert differs.returncode == 0, differs.stderr
    assert differs.stdout == cli(
        server, cache_home, workdir, "diff", str(local), "branch.trp"
    ).stdout.replace(str(local), url)
    assert f"source  {url} (record, 3 operations, complete)" in differs.stdout
    both = cli(server, cache_home, workdir, "diff", url, url, "--fail-on-difference", "-f", "json")
    assert both.returncode == 0, both.stderr
    assert json.loads(both.stdout)["source"]["path"] == url

    promoted = cli(
        server,
        cache_home,
        workdir,
        "promote",
        url,
        "-o",
        "cases/refund",
        "-n",
        "refund_from_bucket",
        "-r",
        "refund_app:main",
        "--expect-json",
        '{"customer": "Ada", "amount": 1200.0, "outcome": "approved"}',
    )
    assert promoted.returncode == 0, promoted.stderr
    (copied,) = (workdir / "cases" / "refund").glob("trace-sha256-*.trp")
    assert copied.read_bytes() == local.read_bytes()
    assert_no_canary_in(cached_files(cache_home))


def test_a_hostile_trace_in_the_bucket_is_shown_escaped(
    server: S3Server, cache_home: Path, tmp_path: Path
) -> None:
    local = hostile_trace(tmp_path / "hostile.trp")
    url = upload(server, "hostile.trp", local.read_bytes())
    text = cli(server, cache_home, tmp_path, "show", url, "--limit", "0")
    assert text.returncode == 0, text.stderr
    assert unsafe_characters(text.stdout + text.stderr) == []
    assert SHOWN[:40] in text.stdout  # the escaped form, not the raw one
    as_json = cli(server, cache_home, tmp_path, "show", url, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert unsafe_characters(as_json.stdout) == []
    assert json.loads(as_json.stdout) == {
        **trace_summary(toolreplay.read_trace(local)),
        "path": url,
    }


def test_an_incomplete_trace_is_kept_and_shown_as_incomplete(
    server: S3Server, cache_home: Path, tmp_path: Path
) -> None:
    local = hostile_trace(tmp_path / "crashed.trp", "incomplete")
    url = upload(server, "crashed.trp", local.read_bytes())
    result = cli(server, cache_home, tmp_path, "show", url)
    assert result.returncode == 0, result.stderr
    assert "state     incomplete: " in result.stdout
    assert [path.name for path in cached_files(cache_home)] == ["crashed.trp"]


def test_a_changed_object_is_refused_and_nothing_is_cached(
    server: S3Server, cache_home: Path, tmp_path: Path
) -> None:
    local = hostile_trace(tmp_path / "tampered.trp", "tampered")
    url = upload(server, "tampered.trp", local.read_bytes())
    for command in (["show", url], ["replay", url], ["diff", url, url]):
        result = cli(server, cache_home, tmp_path, *command)
        assert result.returncode == 2, result.stderr
        assert result.stdout == ""
        assert f"{url}: refused, nothing was cached: line " in result.stderr
        assert "does not check against the footer it was written with (digest mismatch)" in (
            " ".join(result.stderr.split())
        )
        assert "changed after it was written or was damaged in transit" in result.stderr
    # No copy, and no temporary sibling either.
    assert list((cache_home / "toolreplay" / "objects").rglob("*")) == []


def test_a_missing_object_a_prefix_and_a_bad_url_are_refused_precisely(
    server: S3Server, cache_home: Path, tmp_path: Path
) -> None:
    missing = f"s3://{BUCKET}/{PREFIX}/no-such-trace.trp"
    result = cli(server, cache_home, tmp_path, "show", missing)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {missing}: cannot fetch the trace: not found (")
    prefix = f"s3://{BUCKET}/{PREFIX}"
    result = cli(server, cache_home, tmp_path, "show", prefix)
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"error: {prefix}: not a trace object (its name does not end in .trp)"
    )
    result = cli(server, cache_home, tmp_path, "show", "http://example.com/a.trp")
    assert result.returncode == 2
    assert "'http://example.com/a.trp' is not an object-storage location" in result.stderr
    fork = cli(
        server, cache_home, tmp_path, "fork", missing, "-p", "fix.json", "-o", "b.trp", "-f", "json"
    )
    assert fork.returncode == 2
    document = json.loads(fork.stdout)
    assert document["outcome"] == "invalid_arguments"
    assert document["error"]["type"] == "toolreplay.errors.ObjectStoreError"
    assert not (tmp_path / "b.trp").exists()
    assert cached_files(cache_home) == []


def test_a_cached_copy_is_used_without_the_store_and_a_stopped_store_is_named(
    server: S3Server, cache_home: Path, workdir: Path
) -> None:
    local = record(server, cache_home, workdir, "incident.trp")
    url = upload(server, "reused.trp", local.read_bytes())
    other = upload(server, "not-fetched-yet.trp", local.read_bytes())
    first = cli(server, cache_home, workdir, "show", url)
    assert first.returncode == 0, first.stderr
    server.stop()
    try:
        # No request at all: the store is down, and the copy still checks.
        again = cli(server, cache_home, workdir, "show", url)
        assert again.returncode == 0, again.stderr
        assert again.stdout == first.stdout
        down = cli(server, cache_home, workdir, "show", other)
        assert down.returncode == 2
        assert down.stderr.startswith(
            f"error: {other}: cannot fetch the trace: the store could not be reached or "
            "refused the request"
        )
        # A copy changed in the cache no longer checks: it is fetched again, and here
        # the store is down, so it says so rather than show the changed copy.
        (copy,) = cached_files(cache_home)
        copy.write_bytes(copy.read_bytes().replace(b"Ada", b"Eve"))
        changed = cli(server, cache_home, workdir, "show", url)
        assert changed.returncode == 2
        assert "cannot fetch the trace" in changed.stderr
    finally:
        server.start()
    refetched = cli(server, cache_home, workdir, "show", url)
    assert refetched.returncode == 0, refetched.stderr
    assert refetched.stdout == first.stdout
    assert_no_canary_in(cached_files(cache_home))
