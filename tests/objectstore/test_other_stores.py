"""Capture, find and open against Azure Blob Storage (Azurite's blob service on loopback,
in a child process started by the test), through the standard environment only
(`AZURE_STORAGE_USE_EMULATOR`, `AZURITE_BLOB_STORAGE_URL`): the same end-to-end path
the S3 tests take, for `az://`.

Google Cloud Storage is not here: obstore's GCS client speaks the XML API, which
`gcp-storage-emulator` serves only in part (no HEAD, no `GET /bucket?list-type=2`
listing, no ETag on an upload's answer, no Last-Modified on a download's); see
RFC 0008 §6.1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support.azure_server import (
    ACCOUNT_KEY,
    INSTALL,
    AzureServer,
    azure_environment,
    azurite_command,
    running_azurite,
)
from tests.support.capture_service import ROOT, Service, name_of, service_environment, wait_for

CONTAINER = "traces"
# Absolute, so that both searches of a query get the same moment.
SINCE = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
DESTINATION = f"az://{CONTAINER}/svc"
KEY = re.compile(
    r"svc/date=[0-9]{4}-[0-9]{2}-[0-9]{2}/instance=(?P<instance>[A-Za-z0-9._-]+)/"
    r"[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[a-z2-7]{16}\.trp"
)
QUERIES: list[list[str]] = [
    [],
    ["--effect", "billing.refund.create"],
    ["--effect", "billing.refund.create", "--where", "$.outcome.status == error"],
    ["--where", "$.inputs.customer_id < 3"],
    ["--since", SINCE, "--where", "$.outcome.status == error"],
]


@pytest.fixture(scope="module")
def server() -> Iterator[AzureServer]:
    command = azurite_command()
    if command is None:
        pytest.skip(f"azurite-blob is not on PATH: install it with `{INSTALL}` (.ci/run does)")
    with running_azurite(command) as started:
        started.create_container(CONTAINER)
        yield started


def _environment(server: AzureServer, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("AZURE")}
    env |= azure_environment(server) | {"NO_PROXY": "127.0.0.1,localhost"} | extra
    return env


def _toolreplay(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def _found(env: dict[str, str], where: str, query: list[str]) -> dict[str, Any]:
    done = _toolreplay(env, "find", where, *query, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    document = json.loads(done.stdout)
    del document["directory"]
    return document


def test_capture_find_and_show_through_azure_blob_storage(
    server: AzureServer, tmp_path: Path
) -> None:
    spool = tmp_path / "spool"
    service_env = service_environment(None, DESTINATION, spool) | azure_environment(server)
    service = Service(service_env, threads=4)
    lines = service.run(12)
    _, stderr = service.exit()
    kept = service.kept
    assert len(kept) == 12, stderr
    assert any("error" in line for line in lines)  # some requests raised, as the app says

    # Every trace uploaded once, under date=/instance=, and nothing left in the spool.
    wait_for(lambda: len(server.objects(CONTAINER)) >= len(kept), "the uploads")
    objects = server.objects(CONTAINER)
    assert {name_of(key) for key in objects} == kept
    assert all(KEY.fullmatch(key) for key in objects), sorted(objects)
    assert not list(spool.glob("*/*.trp"))

    # find over the container gives what find over a local copy gives.
    local = tmp_path / "copy"
    for key, data in objects.items():
        path = local / key.removeprefix("svc/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    env = _environment(server, XDG_CACHE_HOME=str(tmp_path / "cache"))
    for query in QUERIES:
        remote = _found(env, DESTINATION, query)
        assert remote == _found(env, str(local), query), query
        assert remote["scanned"] == len(kept)
    matched = _found(env, DESTINATION, ["--effect", "billing.refund.create"])["traces"]
    assert len(matched) == len(kept)
    failed = _found(env, DESTINATION, QUERIES[2])["traces"]
    assert 0 < len(failed) == sum("error" in line for line in lines)

    # show one trace by its URL: fetched into the cache, then read as a local file.
    key = sorted(objects)[0]
    url = f"az://{CONTAINER}/{key}"
    shown = _toolreplay(env, "show", url)
    assert shown.returncode == 0, shown.stderr
    assert "billing.refund.create" in shown.stdout
    assert name_of(key) in shown.stdout
    # The emulator's account key (obstore signs every request with it) is nowhere.
    outputs = [stderr, service.stdout, shown.stdout, shown.stderr]
    assert not [text for text in outputs if ACCOUNT_KEY in text]
    assert not [key for key, data in objects.items() if ACCOUNT_KEY.encode() in data]
    cached = list((tmp_path / "cache" / "toolreplay" / "objects").glob("*/*.trp"))
    assert [path.read_bytes() for path in cached] == [objects[key]]
