"""`find` over a bucket (DuckDB over the objects in place) against `find` over a local copy
of the same traces (the local scanner): the same queries give the same answers, through the
library and through the command. The bucket is a real S3 API on loopback (moto, in a child
process)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import obstore
import pytest
from obstore.store import from_url

import toolreplay
from tests.support.s3_server import S3Server, running_s3_server, s3_environment
from toolreplay.capturing.names import new_trace_name

BUCKET = "traces"
PREFIX = "svc/refunds"
URL = f"s3://{BUCKET}/{PREFIX}"
NOW = datetime.now(UTC)
HOSTILE = "\x1b]0;owned\x07\x1b[31mred"


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, object]:
    return {"id": customer_id, "email": f"c{customer_id}@example.com", "tier": "pro"}


@toolreplay.effect("billing.refund.create")
def create_refund(order_id: int, amount: float, note: str) -> dict[str, object]:
    if amount > 1000:
        raise TimeoutError("billing timed out")
    return {"refund_id": f"rf-{order_id}", "status": "issued", "tags": ["auto", note]}


def handle(request_id: str, customer_id: int, amount: float) -> str:
    get_customer(customer_id)
    try:
        create_refund(customer_id * 10, amount, note=f'say "hi" {request_id} é')
    except TimeoutError:
        return "retry later"
    if customer_id == 5:
        raise ValueError("the handler itself failed")
    return "refunded"


def _traces(work: Path) -> dict[str, bytes]:
    """Relative key -> bytes: captured and recorded traces over five days, a trace whose
    last line is torn, a trace with hostile metadata, and an object that is not a trace."""
    spool = work / "spool"
    capture = toolreplay.capture(
        spool,
        metadata=lambda request_id, customer_id, amount: {
            "request_id": request_id,
            "customer": customer_id,
        },
    )
    captured = capture(handle)
    for number, (customer_id, amount) in enumerate(
        [(1, 20.0), (2, 5000.0), (3, 30.0), (4, 7000.0), (5, 10.0), (6, 45.5)]
    ):
        with contextlib.suppress(ValueError):
            captured(f"r-{number}", customer_id, amount)
    with toolreplay.capture(spool, metadata={"request_id": "r-get", "note": HOSTILE}):
        get_customer(9)
    with toolreplay.record(work / "by-hand.trp", metadata={"who": "dev", "request_id": "r-rec"}):
        create_refund(70, 1.0, note="manual")
        get_customer(70)
    bodies = [path.read_bytes() for path in sorted(spool.rglob("*.trp"))]
    bodies.append((work / "by-hand.trp").read_bytes())
    lines = bodies[0].splitlines(keepends=True)
    torn = b"".join(lines[:-2]) + lines[-2][: len(lines[-2]) // 2]  # footer gone, a line cut
    bodies.append(torn)
    objects: dict[str, bytes] = {}
    for number, body in enumerate(bodies):
        started = NOW - timedelta(days=number % 5, minutes=number)
        day = started.date().isoformat()
        objects[f"date={day}/instance=i-{number % 2}/{new_trace_name(started)}.trp"] = body
    objects[f"date={NOW.date().isoformat()}/instance=i-0/notes.trp"] = b"my notes\n"
    return objects


@pytest.fixture(scope="module")
def server() -> Iterator[S3Server]:
    with running_s3_server() as started:
        started.create_bucket(BUCKET)
        yield started


@pytest.fixture(scope="module")
def copies(server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The traces in the bucket under PREFIX, and the same objects in a local folder."""
    work = tmp_path_factory.mktemp("find-objects")
    objects = _traces(work)
    local = work / "copy"
    os.environ.update(s3_environment(server))  # the library reads the standard variables
    store = from_url(f"s3://{BUCKET}")
    for relative, body in objects.items():
        obstore.put(store, f"{PREFIX}/{relative}", body)
        (local / relative).parent.mkdir(parents=True, exist_ok=True)
        (local / relative).write_bytes(body)
    return local


@pytest.fixture(autouse=True)
def _environment(server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in s3_environment(server).items():
        monkeypatch.setenv(name, value)


QUERIES: list[dict[str, Any]] = [
    {},
    {"effect": "billing.refund.create"},
    {"effect": "crm.customer.get", "where": ["$.inputs.customer_id == 4"]},
    {"where": ["$.inputs.amount > 1000"]},
    {"where": ["$.inputs.amount <= 30"]},
    {"where": ["$.inputs.note contains hi"]},
    {"where": ['$.inputs.note contains "\\"hi\\" r-1 é"']},
    {"where": ["$.outcome.value.email matches ^c[2-4]@"]},
    {"where": ["$.outcome.value.tags contains auto"]},
    {"effect": "billing.refund.create", "where": ["$.outcome.status == error"]},
    {"where": ["$.outcome.error.type == TimeoutError"]},
    {"where": ["$.outcome.status != ok"]},
    {"where": ["$.outcome.value.refund_id exists"]},
    {"where": ["$.metadata.request_id == r-rec"]},
    {"where": ["$.metadata.customer >= 3", "$.ending.status == completed"]},
    {"where": ["$.ending.status == raised"]},
    {"effect": "crm.customer.get", "where": ["$.ending.status exists"]},
    {"since": "2d"},
    {"since": (NOW - timedelta(days=3)).isoformat(), "until": (NOW - timedelta(days=1))},
    {"effect": "billing.refund.create", "since": "4d", "where": ["$.inputs.amount < 100"]},
]


def _relative_skips(search: toolreplay.TraceSearch, root: Path) -> list[tuple[str, str]]:
    return sorted(
        (os.path.relpath(path, root) if path.is_absolute() else str(path), reason)
        for path, reason in search.unreadable
    )


@pytest.mark.parametrize("query", QUERIES, ids=[f"query{number}" for number in range(len(QUERIES))])
def test_the_bucket_and_a_local_copy_give_the_same_answers(
    copies: Path, query: dict[str, Any]
) -> None:
    local = toolreplay.find_traces(copies, **query)
    remote = toolreplay.find_traces(URL, **query)
    local_traces = [found.to_dict(copies) for found in local]
    remote_traces = [found.to_dict(Path()) for found in remote]
    assert remote_traces == local_traces
    assert remote.scanned == local.scanned
    assert _relative_skips(remote, Path()) == _relative_skips(local, copies)


def test_the_answers_are_not_empty_and_cover_what_the_queries_are_about(copies: Path) -> None:
    """The comparison above means something: matches, torn and non-trace files are there."""
    everything = list(toolreplay.find_traces(URL))
    assert len(everything) == 9  # seven captured, one recorded, one torn
    assert sum(not found.complete for found in everything) == 1  # the torn trace
    errors = toolreplay.find_traces(
        URL, effect="billing.refund.create", where=["$.outcome.status == error"]
    )
    assert sorted(str(found.metadata["request_id"]) for found in errors) == ["r-1", "r-3"]
    skipped = toolreplay.find_traces(URL)
    list(skipped)
    assert [(str(path), reason) for path, reason in skipped.unreadable] == [
        (
            f"date={NOW.date().isoformat()}/instance=i-0/notes.trp",
            "it does not start with a trace header",
        )
    ]


def run_find(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", "find", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--effect", "billing.refund.create", "-w", "$.outcome.status == error"],
        ["-w", "$.inputs.amount > 1000", "--since", (NOW - timedelta(days=3)).isoformat()],
        ["-w", "$.metadata.request_id == nobody"],
        ["--limit", "3"],
    ],
)
def test_the_command_prints_the_same_document_for_the_bucket_and_the_copy(
    copies: Path, args: list[str]
) -> None:
    local = run_find(str(copies), *args, "--format", "json")
    remote = run_find(URL, *args, "--format", "json")
    assert remote.returncode == local.returncode, remote.stderr
    local_document, remote_document = json.loads(local.stdout), json.loads(remote.stdout)
    assert remote_document.pop("directory") == URL
    assert local_document.pop("directory") == str(copies)
    assert remote_document == local_document


def test_the_command_prints_hostile_metadata_through_the_terminal_safety_rule(
    copies: Path,
) -> None:
    result = run_find(URL, "-w", "$.metadata.request_id == r-get")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout
    assert "red" in result.stdout
    assert result.stdout == run_find(str(copies), "-w", "$.metadata.request_id == r-get").stdout


def _days_from(first: date, last: date) -> list[str]:
    """Every day from `first` to `last`, both included, as `YYYY-MM-DD`."""
    return [(first + timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]


def test_since_lists_only_the_date_prefixes_in_range(
    copies: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed: list[str | None] = []
    real_list = obstore.list

    def counting_list(store: Any, prefix: str | None = None, **options: Any) -> Any:
        listed.append(prefix)
        return real_list(store, prefix, **options)

    monkeypatch.setattr(obstore, "list", counting_list)  # the store's client, not ours
    since = NOW - timedelta(days=1)
    # The listing runs to today as the call reads it; a run that crosses midnight (UTC)
    # after NOW was set lists one more day, and did once in CI.
    today_before = datetime.now(UTC).date()
    found = list(toolreplay.find_traces(URL, since=since, where=["$.inputs.amount > 1000"]))
    today_after = datetime.now(UTC).date()
    listed_days = sorted(str(prefix).removeprefix(f"{PREFIX}/date=") for prefix in listed)
    assert listed_days in [
        _days_from(since.date(), today_before),
        _days_from(since.date(), today_after),
    ]
    days = set(listed_days)
    # r-3 (7000, four days ago in this layout) would match: its prefix was never listed.
    everything = list(toolreplay.find_traces(URL, where=["$.inputs.amount > 1000"]))
    assert len(everything) > len(found)
    assert all(found_trace.path.parts[0][len("date=") :] in days for found_trace in found)


def test_a_store_that_cannot_be_reached_is_exit_2_without_its_text(
    copies: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "toolreplay", "find", "s3://no-such-bucket/x"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1", "AWS_MAX_ATTEMPTS": "1"},
    )
    assert result.returncode == 2
    assert "s3://no-such-bucket/x: cannot list the traces" in result.stderr
    assert "test-access-key-id" not in result.stderr
    assert "<Error>" not in result.stderr


def test_a_missing_local_folder_is_still_refused_as_a_folder(tmp_path: Path) -> None:
    result = run_find(str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert "does not exist" in result.stderr
