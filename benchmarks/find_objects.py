"""`toolreplay find s3://...` (DuckDB over the objects in a local S3 server) against the
local scanner over a copy of the same traces, in the same run.

    uv run python -m benchmarks.find_objects                  # 10,000 traces of 100 operations
    uv run python -m benchmarks.find_objects --traces 500

The traces are one real captured request of 100 effect calls (`toolreplay.capture`),
copied under fresh capture names over five days of `date=` prefixes; one in a hundred
is an incident whose `billing.refund.create` call failed. The S3 server is moto in a
child process (`tests/support/s3_server.py`). Each query is timed as the library call;
the table gives the ratio bucket / local, the bucket's time per object read, and how
many objects each search read with and without `--since`. For scale, the first line
gives what one plain GET at a time costs against the same server (the floor of any
reader that fetches each object). No target: the ratio is reported (issue 27).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import toolreplay
from tests.support.s3_server import running_s3_server, s3_environment
from toolreplay.capturing.names import new_trace_name


@toolreplay.effect("billing.refund.create")
def create_refund(order_id: int) -> dict[str, object]:
    if order_id < 0:
        raise TimeoutError("billing timed out")
    return {"refund_id": f"rf-{order_id}", "status": "issued"}


def _request(folder: Path, failing: bool) -> bytes:
    with toolreplay.capture(folder, metadata={"route": "/refund"}):
        for number in range(100):
            with contextlib.suppress(TimeoutError):
                create_refund(-1 if failing and number == 99 else number)
    (path,) = folder.rglob("*.trp")
    data = path.read_bytes()
    path.unlink()
    return data


def _timed(call: object) -> float:
    start = time.perf_counter()
    list(call)  # type: ignore[call-overload]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description="find over a bucket against a local copy")
    parser.add_argument("--traces", type=int, default=10_000)
    arguments = parser.parse_args()
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as work, running_s3_server() as server:
        server.create_bucket("traces")
        os.environ.update(s3_environment(server))
        import obstore
        from obstore.store import from_url

        ok, failing = _request(Path(work, "one"), False), _request(Path(work, "two"), True)
        store = from_url("s3://traces")
        local = Path(work, "copy")
        keys: list[str] = []
        for number in range(arguments.traces):
            started = now - timedelta(days=number % 5, seconds=number)
            key = f"date={started.date()}/instance=i-1/{new_trace_name(started)}.trp"
            body = failing if number % 100 == 7 else ok
            obstore.put(store, f"p/{key}", body)
            keys.append(f"p/{key}")
            (local / key).parent.mkdir(parents=True, exist_ok=True)
            (local / key).write_bytes(body)
        # The floor the server sets: one plain GET at a time, no search.
        sample = keys[:1000]
        start = time.perf_counter()
        for key in sample:
            bytes(obstore.get(store, key).bytes())
        plain_get_ms = (time.perf_counter() - start) / len(sample) * 1000
        start = time.perf_counter()
        import duckdb  # noqa: F401  (its import is part of the first search's cost)

        imported = time.perf_counter() - start
        since = now - timedelta(days=1)
        queries = [
            (
                "effect + outcome error",
                {"effect": "billing.refund.create", "where": ["$.outcome.status == error"]},
            ),
            (
                "same, --since 1 day",
                {
                    "effect": "billing.refund.create",
                    "where": ["$.outcome.status == error"],
                    "since": since,
                },
            ),
        ]
        print(
            f"{arguments.traces} traces of {len(ok)} bytes (100 operations); import duckdb "
            f"{imported:.3f} s; a plain GET one at a time {plain_get_ms:.2f} ms per object"
        )
        print(
            f"{'query':28} {'local s':>8} {'bucket s':>9} {'bucket/local':>12} "
            f"{'bucket ms/object':>16} {'keys':>6}"
        )
        for title, query in queries:
            local_search = toolreplay.find_traces(local, **query)
            remote_search = toolreplay.find_traces("s3://traces/p", **query)
            local_s, remote_s = _timed(local_search), _timed(remote_search)
            per_object = remote_s / max(remote_search.scanned, 1) * 1000
            print(
                f"{title:28} {local_s:8.3f} {remote_s:9.3f} {remote_s / local_s:12.1f} "
                f"{per_object:16.2f} {remote_search.scanned:6}"
            )


if __name__ == "__main__":
    sys.exit(main())
