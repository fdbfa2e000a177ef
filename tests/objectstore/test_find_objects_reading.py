"""How `find` over a bucket reads the objects: in batches fetched only as the matches
are taken, an object deleted after the listing skipped, a store that goes away ending
the search. The bucket is a real S3 API on loopback (moto, in a child process)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import obstore
import pytest
from obstore.store import from_url

import toolreplay
from tests.support.s3_server import S3Server, running_s3_server, s3_environment
from toolreplay.capturing.names import new_trace_name
from toolreplay.errors import ObjectStoreError
from toolreplay.search.objects import ObjectTraceSearch

BUCKET = "reading"
PREFIX = "svc"
URL = f"s3://{BUCKET}/{PREFIX}"
NOW = datetime.now(UTC)
TRACES = 150  # three batches: 64, then the 86 left (the second may hold 128)


@toolreplay.effect("billing.refund.create")
def create_refund(order_id: int) -> dict[str, object]:
    if order_id % 2:
        raise TimeoutError("billing timed out")
    return {"refund_id": f"rf-{order_id}"}


def _body(folder: Path, order_id: int) -> bytes:
    with (
        toolreplay.capture(folder, metadata={"order": order_id}),
        contextlib.suppress(TimeoutError),
    ):
        create_refund(order_id)
    (path,) = folder.rglob("*.trp")
    data = path.read_bytes()
    path.unlink()
    return data


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with running_s3_server() as started:
        started.create_bucket(BUCKET)
        yield started


@pytest.fixture(autouse=True)
def _environment(server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in s3_environment(server).items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def copies(tmp_path: Path) -> Path:
    """TRACES traces (one in three failed) under PREFIX, and the same in a local folder."""
    bodies = {failed: _body(tmp_path / "spool", 1 if failed else 2) for failed in (False, True)}
    store = from_url(f"s3://{BUCKET}")
    for listed in obstore.list(store, PREFIX).collect():
        obstore.delete(store, listed["path"])
    local = tmp_path / "copy"
    for number in range(TRACES):
        started = NOW - timedelta(days=number % 3, seconds=number)
        relative = f"date={started.date()}/instance=i-1/{new_trace_name(started)}.trp"
        body = bodies[number % 3 == 0]
        obstore.put(store, f"{PREFIX}/{relative}", body)
        (local / relative).parent.mkdir(parents=True, exist_ok=True)
        (local / relative).write_bytes(body)
    return local


def _counting_gets(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    fetched: list[str] = []
    real_get = obstore.get_async

    async def counting_get(store: Any, path: str, **options: Any) -> Any:
        fetched.append(path)
        return await real_get(store, path, **options)

    monkeypatch.setattr(obstore, "get_async", counting_get)  # the store's client, not ours
    return fetched


def test_batches_give_the_local_answers_and_a_limit_stops_the_fetching(
    copies: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query: dict[str, Any] = {
        "effect": "billing.refund.create",
        "where": ["$.outcome.status == error"],
    }
    fetched = _counting_gets(monkeypatch)
    remote = toolreplay.find_traces(URL, **query)
    matches = iter(remote)
    first = next(matches)
    assert len(fetched) == 64  # the first batch only
    assert remote.scanned == 1  # the newest trace failed: counted as the local scan counts
    rest = list(matches)
    assert len(fetched) == TRACES  # every object once, none twice
    assert len(set(fetched)) == TRACES
    local = toolreplay.find_traces(copies, **query)
    assert [found.to_dict(Path()) for found in [first, *rest]] == [
        found.to_dict(copies) for found in local
    ]
    assert len(rest) + 1 == TRACES // 3
    assert remote.scanned == local.scanned == TRACES


def test_an_object_deleted_after_the_listing_is_skipped_and_the_others_are_searched(
    copies: Path,
) -> None:
    search = toolreplay.find_traces(URL, where=["$.metadata.order == 1"])
    assert isinstance(search, ObjectTraceSearch)
    files = search.selected_files()
    gone = files[3][1]
    obstore.delete(from_url(f"s3://{BUCKET}"), gone)
    found = list(search.scan(files))
    assert [(str(path), reason) for path, reason in search.unreadable] == [
        (gone.removeprefix(f"{PREFIX}/"), "it was deleted after the listing (not found)")
    ]
    assert search.scanned == TRACES - 1
    assert len(found) == TRACES // 3 - 1  # today's traces (the first 50) all failed


def test_a_store_gone_after_the_listing_ends_the_search_without_its_text(
    copies: Path, server: S3Server
) -> None:
    search = toolreplay.find_traces(URL)
    assert isinstance(search, ObjectTraceSearch)
    files = search.selected_files()
    server.stop()
    try:
        with pytest.raises(ObjectStoreError) as raised:
            list(search.scan(files))
    finally:
        server.start()
    message = str(raised.value)
    named, _, rest = message.partition(": cannot read the trace: ")
    assert named in {f"s3://{BUCKET}/{key}" for _, key in files[:64]}  # the first batch's
    assert rest.startswith("the store could not be reached or refused the request")
    assert os.environ["AWS_ACCESS_KEY_ID"] not in message
    assert "127.0.0.1" not in message


def test_a_key_the_client_cannot_name_leaves_out_its_folder_only(
    server: S3Server, tmp_path: Path
) -> None:
    """A key holding control characters (anyone with write access may put one) fails
    obstore's listing; the search then lists level by level, skips that folder with the
    reason, and still finds the traces of the other folders."""
    import boto3

    from tests.support.s3_server import s3_client_options

    prefix = "hostile-keys"
    client = boto3.client("s3", **s3_client_options(server))
    body = _body(tmp_path / "spool", 2)
    day = NOW.date()
    good = f"{prefix}/date={day}/instance=good/{new_trace_name(NOW)}.trp"
    client.put_object(Bucket=BUCKET, Key=good, Body=body)
    client.put_object(
        Bucket=BUCKET,
        Key=f"{prefix}/date={day}/instance=bad/x\x1b]0;pwned\x07\x1b[31m.trp",
        Body=body,
    )
    for since in (None, NOW - timedelta(hours=1)):
        search = toolreplay.find_traces(f"s3://{BUCKET}/{prefix}", since=since)
        assert [str(found.path) for found in search] == [good.removeprefix(f"{prefix}/")]
        ((path, reason),) = search.unreadable
        assert str(path) == f"date={day}/instance=bad"
        assert reason.startswith("a key in this folder is not a valid object path")


def test_an_object_over_the_size_limit_is_skipped_unread(
    copies: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trace is fetched whole into memory, so one past the limit a trace may have when
    read from a bucket (1 GiB; lowered here) is skipped with its size, never fetched."""
    from toolreplay.objectstore import cache

    monkeypatch.setattr(cache, "MAX_TRACE_BYTES", 100)
    search = toolreplay.find_traces(URL)
    assert list(search) == []
    assert search.scanned == 0
    assert len(search.unreadable) == TRACES
    assert all("over the 100 a trace is read whole" in reason for _, reason in search.unreadable)
