"""The Agents SDK refund agent replayed with its trace exporter left on (a child process).

`python -m tests.adapters.traced_agent TRACE` replays TRACE (the test recorded it) with
the SDK's own `BackendSpanExporter` and `BatchTraceProcessor` exporting spans from their
background thread, as an application leaves them by default; only the endpoint points at
a counting server on loopback, standing in for the tracing API. It waits, inside the
replay, until the exporter has tried to send, then prints one JSON line: the agent's
output, the connections the server accepted while the replay was open, and the
session's refusals. Run in its own process so that the exporter's thread, and its flush
at exit, end with it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import toolreplay
from examples.local_openai import refusing
from examples.openai_agents_refund import QUESTION, client_of, grouped_run, refund_agent
from tests.support.counting_server import CountingServer


async def settle() -> Any:
    from agents import Runner, set_tracing_disabled

    agent = refund_agent(client_of(refusing()))  # replayed: the model is never reached
    set_tracing_disabled(False)  # the example turns tracing off; left on here
    result = await Runner.run(agent, QUESTION, run_config=grouped_run())
    return result.final_output


def main(trace: str) -> int:
    from agents import set_trace_processors
    from agents.tracing.processors import BackendSpanExporter, BatchTraceProcessor

    tracing_api = CountingServer()
    exporter = BackendSpanExporter(
        api_key="sk-test-tracing-0123456789",
        endpoint=f"http://{tracing_api.address}/v1/traces/ingest",
        base_delay=0.05,  # its retries, refused too, should not hold the exit up
    )
    set_trace_processors([BatchTraceProcessor(exporter, schedule_delay=0.05)])
    with toolreplay.replay(trace) as session:
        output = asyncio.run(settle())
        deadline = time.monotonic() + 20
        while not session.network_refusals and time.monotonic() < deadline:
            time.sleep(0.05)  # the exporter's thread wakes every 0.2 s
        accepted = tracing_api.accepted
    print(
        json.dumps(
            {
                "output": output,
                "accepted_during_replay": accepted,
                "refusals": [
                    {"destination": r.destination, "in_session": r.in_session, "thread": r.thread}
                    for r in session.network_refusals
                ],
                "tracing_api": tracing_api.address,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
