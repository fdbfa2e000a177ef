"""Capture from a fleet into a real S3 API (moto on loopback): 4 processes x 8 threads,
every kept trace uploaded once, readable, under date=/instance= keys."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolreplay
from tests.support.capture_service import Service, name_of, service_environment, spooled, wait_for
from tests.support.s3_server import S3Server, running_s3_server
from toolreplay.capturing import captured_at

BUCKET = "traces"
KEY = re.compile(
    r"fleet/date=(?P<day>[0-9]{4}-[0-9]{2}-[0-9]{2})/instance=(?P<instance>[A-Za-z0-9._-]+)/"
    r"(?P<name>[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[a-z2-7]{16})\.trp"
)


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with running_s3_server() as started:
        started.create_bucket(BUCKET)
        yield started


def test_four_processes_of_eight_threads_upload_every_kept_trace(
    server: S3Server, tmp_path: Path
) -> None:
    spool = tmp_path / "spool"
    env = service_environment(server, f"s3://{BUCKET}/fleet", spool)
    services = [Service(env, threads=8) for _ in range(4)]
    for service in services:
        service.run(48)
    kept = set[str]().union(*(service.kept for service in services))
    assert len(kept) == 4 * 48  # every request kept: the store was up throughout
    wait_for(lambda: len(server.objects(BUCKET)) >= len(kept), "the uploads")
    for service in services:
        service.exit()

    objects = server.objects(BUCKET)
    assert len(objects) == len(kept)  # each trace once: no process uploaded another's
    keys = {key: KEY.fullmatch(key) for key in objects}
    assert all(keys.values()), [key for key, match in keys.items() if match is None]
    assert {name_of(key) for key in objects} == kept
    instances = {match["instance"] for match in keys.values() if match}
    assert len(instances) == 4  # one per process
    assert not spooled(spool)  # nothing left waiting

    for key, data in objects.items():
        match = keys[key]
        assert match is not None
        started = captured_at(match["name"])
        assert started is not None
        assert started.date().isoformat() == match["day"]
        path = tmp_path / "downloaded" / f"{match['name']}.trp"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        trace = toolreplay.read_trace(path)
        assert trace.complete
        assert [operation.effect for operation in trace.operations] == [
            "crm.customer.get",
            "billing.refund.create",
        ]
        assert trace.header.metadata["service"] == "refunds"
        assert trace.header.metadata["capture"]["name"] == match["name"]  # type: ignore[index]

    # Within an instance, names sort as the requests started.
    for instance in instances:
        names = [m["name"] for m in keys.values() if m and m["instance"] == instance]
        by_start = sorted(names, key=lambda name: (captured_at(name), name))
        assert sorted(names) == by_start
