"""Which object-store client the uploader, `find` and the cache use: obstore or s3fs.

    uv run --with s3fs python -m benchmarks.object_store_clients      # both, side by side
    uv run python -m benchmarks.object_store_clients --puts 100       # obstore alone

Against an S3 API on loopback (moto's server, in a child process: `tests/support/
s3_server.py`), each client uploads `--puts` objects of 2 KB (the size of a request's
trace), the two alternating in rounds of 25 so that both see the same moments of the
machine. Per upload: wall time, and CPU time of this process (`time.process_time`, all
threads: the uploader shares the application's process, so its CPU is the
application's). Also: the time to import each client in a fresh interpreter (best of
5), and the installed size of each with the packages it requires. s3fs is not a
dependency of Tool Replay: without it, only obstore's figures are printed.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from benchmarks.measure import environment, table
from tests.support.s3_server import running_s3_server, s3_environment

BUCKET = "clients"
BODY = b"x" * 2048
ROUND = 25


def _import_seconds(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    ]
    return min(runs)


def _installed_bytes(distribution: str) -> tuple[int, list[str]]:
    """The installed size of `distribution` and every distribution it requires."""
    seen: set[str] = set()
    pending = [distribution]
    total = 0
    while pending:
        name = re.split(r"[ ;<>=!\[~(]", pending.pop(), maxsplit=1)[0].lower()
        if name in seen:
            continue
        seen.add(name)
        try:
            found = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        total += sum(file.size or 0 for file in found.files or ())
        pending += [r for r in found.requires or () if "extra ==" not in r]
    return total, sorted(seen)


def _obstore_put(endpoint: str) -> Callable[[int], object]:
    import obstore
    from obstore.store import from_url

    store = from_url(f"s3://{BUCKET}")
    return lambda number: obstore.put(store, f"obstore/{number}.trp", BODY)


def _s3fs_put(endpoint: str) -> Callable[[int], object]:
    import s3fs  # pyright: ignore[reportMissingImports]

    files = s3fs.S3FileSystem(endpoint_url=endpoint)  # pyright: ignore[reportUnknownMemberType]
    return lambda number: files.pipe_file(f"{BUCKET}/s3fs/{number}.trp", BODY)  # pyright: ignore[reportUnknownMemberType, reportUnknownLambdaType]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--puts", type=int, default=500, help="uploads per client (500)")
    arguments = parser.parse_args(argv)
    clients = {"obstore": ("obstore.store", _obstore_put)}
    if importlib.util.find_spec("s3fs") is not None:
        clients["s3fs"] = ("s3fs", _s3fs_put)
    else:
        print("s3fs is not installed: run with `uv run --with s3fs` to compare\n")
    with running_s3_server() as server:
        server.create_bucket(BUCKET)
        os.environ.update(s3_environment(server))
        puts = {name: make(server.endpoint) for name, (_, make) in clients.items()}
        for put in puts.values():  # connections, credentials, first request
            put(-1)
        wall: dict[str, list[float]] = {name: [] for name in puts}
        cpu: dict[str, list[float]] = {name: [] for name in puts}
        for start in range(0, arguments.puts, ROUND):
            for name, put in puts.items():
                began, used = time.perf_counter(), time.process_time()
                for number in range(start, min(start + ROUND, arguments.puts)):
                    put(number)
                count = min(ROUND, arguments.puts - start)
                wall[name].append((time.perf_counter() - began) / count)
                cpu[name].append((time.process_time() - used) / count)
    rows: list[list[str]] = []
    for name, (module, _) in clients.items():
        size, closure = _installed_bytes(name)
        rows.append(
            [
                name,
                f"{statistics.median(wall[name]) * 1e3:.2f}",
                f"{statistics.median(cpu[name]) * 1e3:.2f}",
                f"{_import_seconds(module) * 1e3:.0f}",
                f"{size / 1e6:.1f}",
                str(len(closure)),
            ]
        )
    print(environment(*(f"{name} {importlib.metadata.version(name)}" for name in clients)))
    print(
        f"{arguments.puts} uploads of 2 KB each, alternating in rounds of {ROUND}; "
        "medians of the rounds\n"
    )
    headers = ["client", "put ms", "put CPU ms", "import ms", "installed MB", "distributions"]
    print("\n".join(table(headers, rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
