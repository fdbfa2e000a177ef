"""Record the bundled incident: `python -m examples.incident.record [--output PATH] [--overwrite]`.

Run it from the repository root. The model's answer comes from a local
transport that serves the Responses API body the model sent on the day of the
incident, so recording needs no key and no network; the trace is written by
Tool Replay's own recording code, with the runner in its header.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import toolreplay
from examples.incident import app
from examples.local_openai import HTTP, message_item, response_body

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "refund.trp"
REQUEST_ID = "req_7f3a9c2e51d84b06"


def incident_body() -> dict[str, Any]:
    """The Responses API body as the provider sent it: the model says "approve"."""
    return response_body(
        "approve",
        output=[
            {"type": "reasoning", "id": "rs_68c1f0a9b1d48190a2c6e0f4d7b3a815", "summary": []},
            message_item("approve", item_id="msg_68c1f0aa0c3c8190a9e1b5d2c7f46e02"),
        ],
        id="resp_68c1f0a94e2c8190b7d5a3e1f6c24d1a",
        created_at=1764400123,
        completed_at=1764400124,
        max_output_tokens=64,
        usage={
            "input_tokens": 71,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 80,
        },
    )


def incident_transport() -> Any:
    """A local transport that answers `POST /responses` as the provider did."""

    def answer(request: Any) -> Any:
        if request.method != "POST" or not request.url.path.endswith("/responses"):
            return HTTP.Response(404, json={"error": {"message": "not found"}})
        return HTTP.Response(200, json=incident_body(), headers={"x-request-id": REQUEST_ID})

    return HTTP.MockTransport(answer)


def record(output: Path, *, overwrite: bool = False) -> dict[str, toolreplay.JsonValue]:
    """Record the incident to `output`; returns what the application decided."""
    client = app.openai_client(incident_transport())
    with toolreplay.record(output, overwrite=overwrite, metadata={"runner": app.RUNNER}):
        return app.decide_refund(client)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m examples.incident.record",
        description="Record the bundled incident to a trace.",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help="the trace to write (default: examples/incident/refund.trp)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an existing trace at --output"
    )
    arguments = parser.parse_args(argv)
    try:
        outcome = record(arguments.output, overwrite=arguments.overwrite)
    except toolreplay.TraceExistsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    operations = len(toolreplay.read_trace(arguments.output))
    print(
        f"recorded {operations} operations to {arguments.output}; decision: {outcome['decision']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
