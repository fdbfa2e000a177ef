"""`fetched_trace`: the local cache of traces fetched from object storage, in process,
against a real S3 API (moto on loopback, in a child process) and a file:// folder; and
the reader's `check_digest` it vouches for a copy with."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

import toolreplay
import toolreplay.objectstore.cache as cache_module
from tests.support import crm
from tests.support.hostile import hostile_trace
from tests.support.s3_server import (
    S3Server,
    running_s3_server,
    s3_client_options,
    s3_environment,
)
from toolreplay.errors import ObjectStoreError, TraceFormatError
from toolreplay.objectstore import cache_folder, fetched_trace
from toolreplay.trace import check_digest, read_trace

BUCKET = "cache-tests"


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with running_s3_server() as started:
        started.create_bucket(BUCKET)
        yield started


@pytest.fixture
def s3_env(server: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's variables in this process, and a cache of the test's own; its folder."""
    for key in list(os.environ):
        if key.startswith("AWS_"):
            monkeypatch.delenv(key)
    for key, value in s3_environment(server).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "toolreplay" / "objects"


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "refund.trp"
    with toolreplay.record(path, metadata={"runner": "tests.support.crm:handle_refund"}):
        crm.handle_refund(42, 120.0)
    return path


def put(server: S3Server, key: str, data: bytes) -> str:
    boto3.client("s3", **s3_client_options(server)).put_object(Bucket=BUCKET, Key=key, Body=data)
    return f"s3://{BUCKET}/{key}"


def test_a_fetched_trace_reads_as_the_recorded_one(
    server: S3Server, s3_env: Path, recorded: Path
) -> None:
    url = put(server, "a/date=2026-12-02/instance=i-1/refund.trp", recorded.read_bytes())
    copy = fetched_trace(url)
    assert copy.parent.parent == s3_env == cache_folder()
    assert copy.name == "refund.trp"
    assert read_trace(copy).operations == read_trace(recorded).operations
    assert fetched_trace(url) == copy  # the same copy again


def test_an_object_over_the_limit_is_refused_before_it_is_read(
    server: S3Server, s3_env: Path, recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = put(server, "big/refund.trp", recorded.read_bytes())
    monkeypatch.setattr(cache_module, "MAX_TRACE_BYTES", 100)
    with pytest.raises(ObjectStoreError) as refused:
        fetched_trace(url)
    size = recorded.stat().st_size
    assert str(refused.value).startswith(
        f"{url}: the object is {size} bytes, more than the 100 bytes"
    )
    assert list(s3_env.rglob("*")) == []


def test_a_relative_xdg_cache_home_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_folder() == tmp_path / ".cache" / "toolreplay" / "objects"


def test_a_file_url_and_a_cache_folder_others_could_read(
    tmp_path: Path, recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "cache" / "toolreplay" / "objects").mkdir(parents=True, mode=0o755)
    os.chmod(tmp_path / "cache" / "toolreplay", 0o755)
    copy = fetched_trace(f"file://{recorded}")
    assert copy.read_bytes() == recorded.read_bytes()
    for folder in (copy.parent, cache_folder(), cache_folder().parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_a_url_naming_no_trace_object_is_refused(tmp_path: Path) -> None:
    for url, message in (
        ("s3://bucket/prefix/", "s3://bucket/prefix/: not a trace object"),
        ("s3://bucket", "s3://bucket: not a trace object"),
        ("gs://bucket/a/.trp", "gs://bucket/a/.trp: not a trace object"),
        (f"file://{tmp_path}", f"file://{tmp_path}: not a trace object"),
    ):
        with pytest.raises(ObjectStoreError) as refused:
            fetched_trace(url)
        assert str(refused.value).startswith(message)


def test_check_digest_vouches_for_complete_traces_only(tmp_path: Path, recorded: Path) -> None:
    data = recorded.read_bytes()
    assert check_digest(recorded, data) is True
    incomplete = hostile_trace(tmp_path / "incomplete.trp", "incomplete")
    assert check_digest(incomplete, incomplete.read_bytes()) is False
    without_footer = data[: data.rstrip(b"\n").rfind(b"\n") + 1]
    assert check_digest(recorded, without_footer) is False
    torn = without_footer + b'{"kind":"operation","logi'
    assert check_digest(recorded, torn) is False
    with pytest.raises(TraceFormatError) as changed:
        check_digest(recorded, data.replace(b"Ada", b"Eve"))
    assert "the footer digest" in str(changed.value)
    assert changed.value.line == data.count(b"\n")
    with pytest.raises(TraceFormatError) as crlf:
        check_digest(recorded, data.replace(b"\n", b"\r\n"))
    assert "converted to CRLF" in str(crlf.value)
    with pytest.raises(TraceFormatError) as not_a_trace:
        check_digest(recorded, b"not a trace\n")
    assert not_a_trace.value.line == 1


def test_credentials_in_a_url_are_refused_without_being_repeated() -> None:
    with pytest.raises(ObjectStoreError) as refused:
        fetched_trace("s3://AKIDCANARY:secret-canary@bucket/prefix/trace.trp")
    assert "a location holds no credentials" in str(refused.value)
    assert "canary" not in str(refused.value).lower()
