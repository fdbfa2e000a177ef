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

import httpx

import toolreplay
from examples.incident import app

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "refund.trp"
REQUEST_ID = "req_7f3a9c2e51d84b06"


def incident_body() -> dict[str, Any]:
    """The Responses API body as the provider sent it: the model says "approve"."""
    return {
        "id": "resp_68c1f0a94e2c8190b7d5a3e1f6c24d1a",
        "object": "response",
        "created_at": 1764400123,
        "status": "completed",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": 64,
        "model": "gpt-5-mini-2025-08-07",
        "output": [
            {"type": "reasoning", "id": "rs_68c1f0a9b1d48190a2c6e0f4d7b3a815", "summary": []},
            {
                "type": "message",
                "id": "msg_68c1f0aa0c3c8190a9e1b5d2c7f46e02",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "approve", "annotations": []}],
            },
        ],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "minimal", "summary": None},
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": 71,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 80,
        },
        "user": None,
        "metadata": {},
    }


def incident_transport() -> httpx.MockTransport:
    """A local transport that answers `POST /responses` as the provider did."""

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/responses"):
            return httpx.Response(404, json={"error": {"message": "not found"}})
        return httpx.Response(200, json=incident_body(), headers={"x-request-id": REQUEST_ID})

    return httpx.MockTransport(answer)


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
