"""Capture to object storage (uploader on) against capture to a local folder, per request.

    uv run python -m benchmarks.capture_upload                    # 2,000 requests of each
    uv run python -m benchmarks.capture_upload --requests 200

A small captured handler (three effects, a trace of about 1.5 KB) is decorated twice:
once by `toolreplay.capture("s3://bench/traces")`, whose traces go to the spool and
are uploaded by the background thread to an S3 API on loopback (moto's server, in a
child process, so that its request handling does not share this interpreter), and
once by `toolreplay.capture(FOLDER)`. The two are called alternately, request by
request, each request timed with `time.perf_counter`, so that both see the same
machine and the same uploader running beside them; the medians are compared. The
folder capture is also timed alone first, before the process has any uploader, which
shows what the uploader's thread costs the requests of the whole process. The local
folder is emptied every 10 requests, untimed, as the uploader empties the spool.
Target: the request path with the uploader on costs at most 1.1x the local capture
(`s3 / local` of the medians). The process exits 0 either way.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import toolreplay
from benchmarks.measure import (
    TARGETS_HEADING,
    environment,
    gc_paused,
    progress,
    table,
    target_line,
    total_run_time,
    us_unit,
)
from tests.support.s3_server import running_s3_server, s3_environment

TARGET_RATIO = 1.1
WARM_UP = 50
BUCKET = "bench"


@toolreplay.effect("crm.customer.get")
def customer(customer_id: int) -> dict[str, object]:
    return {"id": customer_id, "tier": "gold" if customer_id % 3 else "silver"}


@toolreplay.effect("billing.balance.get")
def balance(customer_id: int) -> dict[str, object]:
    return {"customer_id": customer_id, "balance": customer_id * 7 % 500}


@toolreplay.effect("billing.refund.create")
def refund(customer_id: int, amount: int) -> dict[str, object]:
    return {"refund_id": f"r-{customer_id}", "amount": amount}


def handle(customer_id: int) -> dict[str, object]:
    found = customer(customer_id)
    owed = balance(customer_id)
    made = refund(customer_id, int(str(owed["balance"])) // 10)
    return {"tier": found["tier"], "refund": made["refund_id"]}


def _timed(handler: Callable[[int], object], request: int) -> float:
    start = time.perf_counter()
    handler(request)
    return time.perf_counter() - start


def _waiting(spool: Path) -> int:
    return sum(1 for _ in spool.glob("*/*.trp"))


def _tidy(local: Path, request: int) -> None:
    """Every 10 requests, untimed: empty the local folder, as the uploader empties the
    spool, so that both write into a folder of a few files (not one of thousands)."""
    if request % 10 == 9:
        for path in local.glob("*.trp"):
            path.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--requests", type=int, default=2000, help="requests of each variant (default 2000)"
    )
    arguments = parser.parse_args(argv)
    began = time.perf_counter()
    for name in [name for name in os.environ if name.startswith("TOOLREPLAY_CAPTURE_")]:
        del os.environ[name]
    progress("starting the S3 server (moto, child process)")
    with (
        running_s3_server() as server,
        tempfile.TemporaryDirectory(prefix="toolreplay-capture-upload-") as temporary,
    ):
        server.create_bucket(BUCKET)
        os.environ.update(s3_environment(server))
        folder = Path(temporary)
        to_folder = toolreplay.capture(folder / "local")(handle)
        for request in range(WARM_UP):
            to_folder(request)
        # Before any capture to s3: no uploader thread in the process yet.
        progress(f"timing {arguments.requests} requests to a folder, no uploader")
        alone_times: list[float] = []
        cpu = time.process_time()
        with gc_paused():
            for request in range(arguments.requests):
                alone_times.append(_timed(to_folder, request))
                _tidy(folder / "local", request)
        request_cpu = (time.process_time() - cpu) / arguments.requests
        to_s3 = toolreplay.capture(f"s3://{BUCKET}/traces", spool=folder / "spool")(handle)
        for request in range(WARM_UP):  # the spool, the uploader, obstore's import
            to_s3(request)
        s3_times: list[float] = []
        local_times: list[float] = []
        progress(f"timing {arguments.requests} requests of each, alternately")
        with gc_paused():
            for request in range(WARM_UP, WARM_UP + arguments.requests):
                s3_times.append(_timed(to_s3, request))
                local_times.append(_timed(to_folder, request))
                _tidy(folder / "local", request)
        expected = WARM_UP + arguments.requests
        # The backlog the uploader still has: its CPU per trace is this process's CPU
        # while it uploads them (the main thread only looks at the spool meanwhile).
        backlog = _waiting(folder / "spool")
        cpu, waited = time.process_time(), time.perf_counter()
        while _waiting(folder / "spool") and time.perf_counter() - waited < 120:
            time.sleep(0.05)
        drained = time.perf_counter() - waited
        upload_cpu = (time.process_time() - cpu) / backlog if backlog >= 20 else None
        uploaded = len(server.keys(BUCKET))

    unit = us_unit()
    rows: list[list[str]] = []
    for label, times in (
        ("capture to s3 (uploader on)", s3_times),
        ("capture to a folder, alternating", local_times),
        ("capture to a folder, no uploader", alone_times),
    ):
        ordered = sorted(times)
        rows.append(
            [
                label,
                f"{statistics.median(ordered) * 1e6:.0f}",
                f"{ordered[int(len(ordered) * 0.9)] * 1e6:.0f}",
                f"{statistics.fmean(ordered) * 1e6:.0f}",
            ]
        )
    ratio = statistics.median(s3_times) / statistics.median(local_times)
    alone_ratio = statistics.median(s3_times) / statistics.median(alone_times)
    print(environment(f"obstore {version('obstore')}", f"moto {version('moto')}", cpus=True))
    print(f"{arguments.requests} requests of each, alternating; per-request wall time")
    print()
    for line in table(["variant", f"median {unit}", f"p90 {unit}", f"mean {unit}"], rows):
        print(line)
    print()
    print(f"median s3 / local (alternating): {ratio:.2f}")
    print(
        f"median s3 / local with no uploader in the process: {alone_ratio:.2f} "
        "(the S3 server shares this machine's cores while it receives the uploads)"
    )
    print(
        f"uploaded {uploaded} of {expected} traces; {backlog} were still in the spool when "
        f"the requests ended, uploaded {drained:.1f} s later"
    )
    print(f"CPU of a captured request (folder, no uploader): {request_cpu * 1e6:.0f} {unit}")
    if upload_cpu is not None:
        print(f"CPU of the uploader per trace, in this process: {upload_cpu * 1e6:.0f} {unit}")
    print()
    print(TARGETS_HEADING)
    print(
        target_line(
            ratio <= TARGET_RATIO,
            f"request path with the uploader on <= {TARGET_RATIO}x a local capture "
            f"(median s3 / local {ratio:.2f})",
        )
    )
    print(total_run_time(time.perf_counter() - began))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
