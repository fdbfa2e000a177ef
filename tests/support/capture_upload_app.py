"""A small service captured to object storage, run as a child process by the tests.

    python -m tests.support.capture_upload_app THREADS

It reads commands on stdin, one a line, and answers each with one line on stdout:

- `run N`: handle requests N at a time over THREADS worker threads (request ids
  continue from the last run); prints `ran` and, per request, a JSON line
  `{"id", "result" | "error", "name", "kept", "skipped"}` before it: `kept` is
  whether the capture acknowledged the trace (`CapturedRequest.path` set);
- `exit`: ends the process normally (the uploader then drains for a moment).

The destination comes from `TOOLREPLAY_CAPTURE_DIR` (the operator's way); with
`TOOLREPLAY_CAPTURE_DISABLED=1` the same service runs uncaptured, for comparing
results. Every line the `toolreplay.capture` logger emits goes to stderr prefixed
`CAPTURE-LOG: `, so a test can count them.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import toolreplay
from toolreplay import JsonValue

LOG_PREFIX = "CAPTURE-LOG: "
capture = toolreplay.capture(metadata={"service": "refunds"})


@toolreplay.effect("crm.customer.get")
def customer(customer_id: int) -> dict[str, JsonValue]:
    return {"id": customer_id, "tier": ["gold", "silver", "bronze"][customer_id % 3]}


@toolreplay.effect("billing.refund.create")
def refund(customer_id: int, amount: int) -> dict[str, JsonValue]:
    if amount > 90:
        raise ValueError(f"refund of {amount} needs approval")
    return {"refund_id": f"r-{customer_id}", "amount": amount}


def handle(request_id: int) -> dict[str, JsonValue]:
    """One request: two effects; requests whose amount is over 90 raise."""
    found = customer(request_id)
    amount = (request_id * 37) % 100
    made = refund(request_id, amount)
    return {"tier": found["tier"], "refund": made["refund_id"]}


def serve(request_id: int) -> dict[str, JsonValue]:
    line: dict[str, JsonValue] = {"id": request_id}
    with capture as request:
        try:
            line["result"] = handle(request_id)
        except ValueError as error:
            line["error"] = f"{type(error).__name__}: {error}"
    line["name"] = request.name
    line["kept"] = request.path is not None
    line["skipped"] = request.skipped
    return line


class _ToStderr(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(LOG_PREFIX + record.getMessage().replace("\n", " ") + "\n")
        sys.stderr.flush()


def main() -> None:
    logger = logging.getLogger("toolreplay.capture")
    logger.addHandler(_ToStderr())
    logger.propagate = False
    threads = int(sys.argv[1])
    next_id = 0
    lock = threading.Lock()
    with ThreadPoolExecutor(threads) as pool:
        for command in sys.stdin:
            word, _, count = command.strip().partition(" ")
            if word == "exit":
                break
            assert word == "run", command
            with lock:
                ids = range(next_id, next_id + int(count))
                next_id += int(count)
            for line in pool.map(serve, ids):
                sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.write("ran\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
