"""A refund agent on Gemini: record its function-calling conversation, replay it with no
provider, fork it with the answer Gemini should have given, and diff the two runs.

Run it with `uv run python examples/gemini_refund.py`. Offline, and no API key is
needed: the recording is served by a local `MockTransport` (examples/local_gemini)
answering like the Gemini API, and replay and the fork use a client whose transport
fails on any request it is given, and counts them. Everything is written to a
temporary folder. It needs the Google Gen AI extra (`uv sync --extra google-genai`).

The incident: asked to refund order 8812, Gemini called `issue_refund` at once, and the
application refunded it, although the order was already refunded. In the fork, Gemini
answers in text instead (`reply(text=...)`), and the diff shows the refund that would
not have been issued.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root holds `examples`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # after the path is set
from google import genai
from google.genai import types

import toolreplay
from examples.local_gemini import API_KEY, MODEL, LocalGemini
from toolreplay.adapters.google_genai import instrument, reply

CONFIG = types.GenerateContentConfig(
    system_instruction="You are the refunds agent of an online shop.",
    tools=[
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name="issue_refund",
                    description="Refund an order in full.",
                    parameters_json_schema={
                        "type": "object",
                        "properties": {"order_id": {"type": "integer"}},
                    },
                )
            ]
        )
    ],
)


@toolreplay.effect("billing.refund.create")
def issue_refund(order_id: int) -> dict[str, Any]:
    """The side effect the agent causes (recorded, and replayed without running)."""
    return {"order_id": order_id, "status": "refunded"}


def refund_agent(client: Any) -> list[str]:
    """The application: one turn of Gemini with a refund function, acting on its calls."""
    response = client.models.generate_content(
        model=MODEL, contents="Refund order 8812, it never arrived.", config=CONFIG
    )
    done: list[str] = []
    for part in response.candidates[0].content.parts:
        call = part.function_call
        if call is not None and call.name == "issue_refund":
            done.append(f"refunded {issue_refund(int(call.args['order_id']))['order_id']}")
        elif part.text:
            done.append(f"said: {part.text}")
    return done


class Refusing:
    """A transport handler that fails on any request, and counts them."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        raise httpx.ConnectError("no provider during replay", request=request)


def client_over(handler: Any) -> Any:
    transport = httpx.MockTransport(handler)
    options = types.HttpOptions(
        httpx_client=httpx.Client(transport=transport),
        httpx_async_client=httpx.AsyncClient(transport=transport),
    )
    return instrument(genai.Client(api_key=API_KEY, http_options=options))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="toolreplay-gemini-") as folder:
        trace, branch = Path(folder) / "refund.trp", Path(folder) / "fork.trp"
        with toolreplay.record(trace):
            print("recorded:", refund_agent(client_over(LocalGemini())))

        refusing = Refusing()
        with toolreplay.replay(trace):
            print("replayed:", refund_agent(client_over(refusing)))
        print("requests sent while replaying:", refusing.calls)

        patch = toolreplay.replace_output(
            effect="google_genai.models.generate_content",
            at=0,
            value=reply(text="Order 8812 was already refunded on May 2; nothing to do."),
        )
        # The refund the recording holds is not asked for again: allow that.
        with toolreplay.fork(trace, branch, patches=[patch], unobserved="allow"):
            print("forked:  ", refund_agent(client_over(refusing)))
        print("requests sent while forking:", refusing.calls)
        print(toolreplay.diff(trace, branch).render_text())


if __name__ == "__main__":
    main()
