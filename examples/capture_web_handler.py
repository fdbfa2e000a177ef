"""Capture every request of a small web service, then find the one that failed and replay it.

Run it with `uv run python examples/capture_web_handler.py`. A standard library
WSGI server (`wsgiref`) answers on 127.0.0.1; each request is captured into its
own trace in a temporary capture folder, with its request id in the header, and
the customers' email addresses redacted before anything is written. One refund
times out at the billing service. Afterwards, `toolreplay find` names the
request that failed, and replaying its trace reproduces the 500 answer offline,
without calling the CRM or billing again. No network beyond the loopback
interface, no API key.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import toolreplay

live_calls = 0

# Emails are replaced by keyed placeholders before anything is fingerprinted or written.
# The key lives outside the traces: in production, TOOLREPLAY_REDACTION_KEY.
REDACTION = toolreplay.RedactionPolicy(
    paths=["$..email"],
    key=os.environ.get("TOOLREPLAY_REDACTION_KEY") or secrets.token_hex(16),
)


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, toolreplay.JsonValue]:
    """Stands in for the CRM: it answers with personal data."""
    global live_calls
    live_calls += 1
    return {"id": customer_id, "email": f"customer{customer_id}@example.com", "tier": "pro"}


@toolreplay.effect("billing.refund.create")
def create_refund(customer_id: int, amount: float) -> dict[str, toolreplay.JsonValue]:
    """Stands in for billing, which times out on large refunds today."""
    global live_calls
    live_calls += 1
    if amount > 1000:
        raise TimeoutError("billing did not answer within 30s")
    return {"refund_id": f"rf-{customer_id}", "amount": amount}


def refund(request_id: str, customer_id: int, amount: float) -> tuple[int, dict[str, Any]]:
    """The application: a status and a JSON body. It never knows it is captured."""
    customer = get_customer(customer_id)
    if customer["tier"] == "suspended":
        return 403, {"request_id": request_id, "error": "account suspended"}
    try:
        created = create_refund(customer_id, amount)
    except TimeoutError as error:
        return 500, {"request_id": request_id, "error": str(error)}
    return 200, {"request_id": request_id, "refund": created}


def make_app(capture_folder: Path) -> Callable[..., Iterable[bytes]]:
    """The WSGI application; every refund request is captured into `capture_folder`."""
    capture = toolreplay.capture(
        capture_folder,
        metadata=lambda request_id, customer_id, amount: {
            "request_id": request_id,
            "route": "/refund",
        },
        retain=1000,  # the folder keeps the newest 1,000 requests
        redaction=REDACTION,
    )
    captured_refund = capture(refund)

    def app(environ: dict[str, Any], start_response: Callable[..., object]) -> Iterable[bytes]:
        query = dict(
            part.split("=", 1) for part in environ.get("QUERY_STRING", "").split("&") if part
        )
        status, body = captured_refund(
            environ.get("HTTP_X_REQUEST_ID", "unknown"),
            int(query["customer"]),
            float(query["amount"]),
        )
        reason = "OK" if status == 200 else "Internal Server Error"
        start_response(f"{status} {reason}", [("Content-Type", "application/json")])
        return [json.dumps(body).encode()]

    return app


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log on stderr: the example prints what matters."""


def serve(folder: Path) -> list[tuple[str, int]]:
    """Start the server, send five requests, stop; the request ids and statuses."""
    server: WSGIServer = make_server("127.0.0.1", 0, make_app(folder), handler_class=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    answers: list[tuple[str, int]] = []
    try:
        for number, (customer, amount) in enumerate(
            [(1, 20.0), (2, 35.5), (3, 4200.0), (4, 12.0), (5, 99.0)], start=1
        ):
            connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=10)
            request_id = f"req-{number:04d}"
            connection.request(
                "POST",
                f"/refund?customer={customer}&amount={amount}",
                headers={"X-Request-Id": request_id},
            )
            response = connection.getresponse()
            response.read()
            connection.close()
            answers.append((request_id, response.status))
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    return answers


def main() -> None:
    global live_calls
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "captured"
        for request_id, status in serve(folder):
            print(f"{request_id}: HTTP {status}")
        captured = sorted(folder.glob("*.trp"))
        print(f"{len(captured)} requests captured in {folder.name}/")
        assert not any(b"@example.com" in path.read_bytes() for path in captured)
        print("no email address in any trace: they are redacted")

        # Find the incident: the request whose refund call failed.
        command = [
            sys.executable,
            "-m",
            "toolreplay",
            "find",
            str(folder),
            "--effect",
            "billing.refund.create",
            "--where",
            "$.outcome.status == error",
        ]
        print(
            "$ toolreplay find captured --effect billing.refund.create "
            "--where '$.outcome.status == error'"
        )
        found = subprocess.run(command, capture_output=True, text=True, check=True)
        print(found.stdout.rstrip())

        (incident,) = toolreplay.find_traces(
            folder, effect="billing.refund.create", where=["$.outcome.status == error"]
        )
        request_id = incident.metadata["request_id"]
        print(f"incident: {request_id}, {incident.path.name}")

        # Replay it: the recorded answers come back, no service is called.
        trace = toolreplay.read_trace(incident.path)
        inputs = trace.operations[1].inputs  # the refund call: what the request asked for
        live_calls = 0
        email = trace.operations[0].outcome.value["email"]  # type: ignore[union-attr, index]
        print(f"  the customer's email, as recorded: {str(email)[:22]}...")
        with toolreplay.replay(trace, redaction=REDACTION):
            status, body = refund(
                str(request_id), int(str(inputs["customer_id"])), float(str(inputs["amount"]))
            )
        print(f"replayed {request_id}: HTTP {status} {body['error']!r}")
        print(f"  live calls while replaying: {live_calls}")
        assert status == 500
        assert live_calls == 0


if __name__ == "__main__":
    main()
