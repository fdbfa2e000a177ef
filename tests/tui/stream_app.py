"""A refund answer the application reads as a stream, for the debugger's streamed-edit tests.

The tests copy this file into a temporary folder as `tuistream.py` and record it there
in a child process. The application reads the Responses stream as the SDK gives it:
the text its deltas add up to, and the final response's text; a consistent stream
makes them equal.
"""

from __future__ import annotations

import openai

from examples.local_openai import HTTP, LocalOpenAI
from toolreplay import JsonValue
from toolreplay.adapters.openai import instrument

ANSWER = "Approved: the refund of 1200 dollars is on its way today."


def main() -> dict[str, JsonValue]:
    transport = HTTP.MockTransport(LocalOpenAI(ANSWER, deltas=5))
    client = instrument(
        openai.OpenAI(api_key="sk-tui-stream", http_client=HTTP.Client(transport=transport))
    )
    with client.responses.stream(model="gpt-5-mini", input="Refund order 8812?") as stream:
        deltas = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        final = stream.get_final_response().output_text
    return {"deltas": deltas, "final": final}
