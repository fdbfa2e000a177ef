"""A refund agent on Claude: record its tool-using conversation, replay it with no
provider, fork it with the answer Claude should have given, and diff the two runs.

Run it with `uv run python examples/anthropic_refund.py`. Offline, and no API key is
needed: the recording is served by a local `MockTransport` (examples/local_anthropic)
answering like the Messages API, and replay and the fork use a client whose transport
fails on any request it is given, and counts them. Everything is written to a
temporary folder. It needs the Anthropic extra (`uv sync --extra anthropic`).

The incident: asked to refund order 8812, Claude called `issue_refund` at once, and
the application refunded it, although the order was already refunded. In the fork,
Claude answers in text instead (`reply(text=...)`), and the diff shows the refund
that would not have been issued.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root holds `examples`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anthropic  # after the path is set
import httpx2

import toolreplay
from examples.local_anthropic import API_KEY, MODEL, LocalAnthropic
from toolreplay.adapters.anthropic import instrument, reply

TOOLS: Any = [
    {
        "name": "issue_refund",
        "description": "Refund an order in full.",
        "input_schema": {"type": "object", "properties": {"order_id": {"type": "integer"}}},
    }
]


@toolreplay.effect("billing.refund.create")
def issue_refund(order_id: int) -> dict[str, Any]:
    """The side effect the agent causes (recorded, and replayed without running)."""
    return {"order_id": order_id, "status": "refunded"}


def refund_agent(client: Any) -> list[str]:
    """The application: one turn of Claude with a refund tool, acting on its tool use."""
    message = client.messages.create(
        model=MODEL,
        max_tokens=512,
        messages=[{"role": "user", "content": "Refund order 8812, it never arrived."}],
        tools=TOOLS,
    )
    done: list[str] = []
    for block in message.content:
        if block.type == "tool_use" and block.name == "issue_refund":
            done.append(f"refunded {issue_refund(int(block.input['order_id']))['order_id']}")
        elif block.type == "text":
            done.append(f"said: {block.text}")
    return done


class Refusing:
    """A transport handler that fails on any request, and counts them."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.calls += 1
        raise httpx2.ConnectError("no provider during replay", request=request)


def client_over(handler: Any) -> Any:
    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    return instrument(anthropic.Anthropic(api_key=API_KEY, http_client=http, max_retries=0))


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="toolreplay-anthropic-") as folder:
        trace, branch = Path(folder) / "refund.trp", Path(folder) / "fork.trp"
        with toolreplay.record(trace):
            print("recorded:", refund_agent(client_over(LocalAnthropic())))

        refusing = Refusing()
        with toolreplay.replay(trace):
            print("replayed:", refund_agent(client_over(refusing)))
        print("requests sent while replaying:", refusing.calls)

        patch = toolreplay.replace_output(
            effect="anthropic.messages.create",
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
