"""`toolreplay find` against `grep -c` over the same folder of captured traces.

    uv run python -m benchmarks.find                       # 10,000 traces of 100 operations
    uv run python -m benchmarks.find --traces 200 --repeats 1

The folder is what production capture leaves: traces named as `toolreplay.capture`
names them, each one request of 100 effect calls. A handful of distinct
requests are recorded for real (`toolreplay.capture`), then copied under fresh
names until the folder holds `--traces` files; one request in a hundred is an
incident whose `billing.refund.create` call failed. Each query is timed as the
library call (`toolreplay.find_traces`, in this process) and as the command (the
`toolreplay` script, a child process, so Python's and the command line's start-up
count), beside `grep -c`
over the same files for the bytes the query looks for.
Targets: find at least half as fast as grep, i.e. `find s / grep s` and
`command s / grep s` at most 2.0.

The command runs as an installed one does, with its modules' bytecode cached
(written by the warm-up run even where `PYTHONDONTWRITEBYTECODE` is set here):
otherwise every run would compile the command line's sources again.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import toolreplay
from benchmarks.measure import (
    TARGETS_HEADING,
    add_repeats,
    environment,
    progress,
    repeats_line,
    skip_line,
    table,
    target_line,
    time_action,
    total_run_time,
)
from toolreplay.capturing.names import new_trace_name

OPERATIONS = 100
DISTINCT_REQUESTS = 20
INCIDENT_EVERY = 100
TARGET_RATIO = 2.0


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, object]:
    return {
        "id": customer_id,
        "name": f"Customer {customer_id}",
        "tier": ["free", "pro", "enterprise"][customer_id % 3],
        "email": f"customer{customer_id}@example.com",
    }


@toolreplay.effect("orders.list")
def list_orders(customer_id: int, page: int) -> dict[str, object]:
    return {
        "page": page,
        "orders": [
            {"order_id": customer_id * 1000 + page * 10 + i, "total": 12.5 * i, "state": "paid"}
            for i in range(3)
        ],
    }


@toolreplay.effect("billing.refund.create")
def create_refund(order_id: int, amount: float) -> dict[str, object]:
    if order_id % 7 == 3:
        raise TimeoutError("billing timed out after 30s")
    return {"refund_id": f"rf-{order_id}", "amount": amount, "status": "issued"}


def handle(request_id: str, customer_id: int, incident: bool) -> None:
    get_customer(customer_id)
    for page in range(OPERATIONS - 2):
        list_orders(customer_id, page)
    if incident:  # the one request in a hundred that refunds, and fails
        with contextlib.suppress(TimeoutError):
            create_refund(3, 25.0)
    else:
        list_orders(customer_id, OPERATIONS)


def build_folder(folder: Path, traces: int) -> int:
    """`traces` captured requests in `folder`; the total bytes."""
    templates = folder / "templates"
    capture = toolreplay.capture(
        templates, metadata=lambda request_id, customer_id, incident: {"request_id": request_id}
    )
    captured = capture(handle)
    for index in range(DISTINCT_REQUESTS):
        captured(f"template-{index}", index, incident=index == 0)
    sources = sorted(templates.iterdir())
    incident, normal = sources[0], sources[1:]
    shelf = folder / "traces"
    shelf.mkdir()
    total = 0
    for index in range(traces):
        source = incident if index % INCIDENT_EVERY == 0 else normal[index % len(normal)]
        target = shelf / (new_trace_name(_moment(index)) + ".trp")
        shutil.copyfile(source, target)
        total += target.stat().st_size
    shutil.rmtree(templates)
    return total


def _moment(index: int) -> datetime:
    """Requests spread over a day, 8 seconds apart."""
    return datetime(2026, 12, 1, tzinfo=UTC) + timedelta(seconds=8 * index)


QUERIES: list[tuple[str, str, list[str], bytes]] = [
    # label, --effect, --where, the bytes grep looks for
    (
        "effect",
        "billing.refund.create",
        [],
        b'"namespace":"billing","name":"refund.create"',
    ),
    (
        "effect + where",
        "billing.refund.create",
        ['$.outcome.error.type == "builtins.TimeoutError"'],
        b'"namespace":"billing","name":"refund.create"',
    ),
    ("where input", "crm.customer.get", ["$.inputs.customer_id == 7"], b'"customer_id":7'),
]


def command_line() -> list[str]:
    """The installed `toolreplay` script beside this interpreter, else `python -m toolreplay`."""
    script = Path(sys.executable).with_name("toolreplay")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "toolreplay"]


def load_average() -> str:
    """ "load average 1.23 (2 CPUs)" where the system tells it."""
    try:
        one_minute = os.getloadavg()[0]
    except (AttributeError, OSError):
        return "load average unknown"
    return f"load average {one_minute:.2f} ({os.cpu_count()} CPUs)"


def main() -> None:
    parser = argparse.ArgumentParser(description="toolreplay find against grep -c")
    parser.add_argument("--traces", type=int, default=10_000, help="traces in the folder")
    add_repeats(parser)
    arguments = parser.parse_args()
    started = time.perf_counter()
    grep = shutil.which("grep")
    print(environment(cpus=True))
    # The command as installed: its bytecode cached once, by the warm-up run.
    command_environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        progress(f"capturing and copying {arguments.traces} traces ...")
        total = build_folder(folder, arguments.traces)
        shelf = folder / "traces"
        files = sorted(str(path) for path in shelf.iterdir())
        print(
            f"{arguments.traces} traces of {OPERATIONS} operations, {total / 1e6:.1f} MB, "
            f"1 in {INCIDENT_EVERY} an incident"
        )
        print(f"at the start: {load_average()}")
        rows: list[list[str]] = []
        ratios: list[float] = []
        command_ratios: list[float] = []
        for label, effect, where, needle in QUERIES:
            progress(f"query {label} ...")
            found: list[int] = []

            def library(
                effect: str = effect,
                where: list[str] = where,
                found: list[int] = found,
            ) -> None:
                search = toolreplay.find_traces(shelf, effect=effect, where=where)
                found.append(sum(1 for _ in search))

            command = [*command_line(), "find", str(shelf), "-e", effect]
            for condition in where:
                command += ["-w", condition]

            def cli(command: list[str] = command) -> None:
                subprocess.run(
                    command, stdout=subprocess.DEVNULL, check=True, env=command_environment
                )

            # The command must find what the library finds, or its timing means nothing.
            listed = subprocess.run(
                command, capture_output=True, text=True, check=True, env=command_environment
            )
            library()
            summary = listed.stdout.splitlines()[-1]
            if not summary.startswith(f"{found[-1]} of {arguments.traces} "):
                raise SystemExit(f"toolreplay find disagrees with the library: {summary}")

            grep_command = [grep or "grep", "-c", "-F", "-e", needle.decode(), "--", *files]

            def grep_c(grep_command: list[str] = grep_command) -> None:
                subprocess.run(grep_command, stdout=subprocess.DEVNULL, check=False)

            variants: dict[str, Callable[[], None]] = {
                "library": library,
                "command": cli,
            }
            if grep is not None:
                variants["grep"] = grep_c
            best = {name: float("inf") for name in variants}
            for variant in variants.values():  # warm the page cache and imports
                variant()
            for _ in range(arguments.repeats):
                for name, variant in variants.items():
                    best[name] = min(best[name], time_action(variant))
            grep_s = best.get("grep")
            ratio = best["library"] / grep_s if grep_s else None
            command_ratio = best["command"] / grep_s if grep_s else None
            if ratio is not None and command_ratio is not None:
                ratios.append(ratio)
                command_ratios.append(command_ratio)
            rows.append(
                [
                    label,
                    str(found[-1]),
                    f"{best['library']:.3f}",
                    f"{best['command']:.3f}",
                    "-" if grep_s is None else f"{grep_s:.3f}",
                    "-" if ratio is None else f"{ratio:.2f}",
                    "-" if command_ratio is None else f"{command_ratio:.2f}",
                ]
            )
        headers = ["query", "matches", "find s", "command s", "grep -c s"]
        print("\n".join(table([*headers, "find/grep", "command/grep"], rows)))
        print(repeats_line([(arguments.traces, arguments.repeats)], "query"))
        print(f"at the end: {load_average()}; command: {' '.join(command_line())} find ...")
        print(TARGETS_HEADING)
        if ratios:
            worst = max(ratios)
            print(
                target_line(
                    worst <= TARGET_RATIO,
                    f"find at least half as fast as grep -c: find/grep <= {TARGET_RATIO} "
                    f"(worst {worst:.2f})",
                )
            )
            worst_command = max(command_ratios)
            print(
                target_line(
                    worst_command <= TARGET_RATIO,
                    "the command at least half as fast as grep -c, start-up included: "
                    f"command/grep <= {TARGET_RATIO} (worst {worst_command:.2f})",
                )
            )
        else:
            print(skip_line("find against grep -c: grep is not installed"))
    print(total_run_time(time.perf_counter() - started))


if __name__ == "__main__":
    main()
