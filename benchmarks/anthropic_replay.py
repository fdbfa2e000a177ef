"""Anthropic adapter benchmark: replay and record against the bare SDK, in CPU time.

Run with `uv run python -m benchmarks.anthropic_replay` (see benchmarks/README.md).
Two workloads, each N distinct calls:

- `messages+tool`: `messages.create` with a tool, answered by a tool use;
- `stream50`: `messages.stream(...)` read to its end through `text_stream`, 50 events.

How each is measured (the floor, replay, record) is `benchmarks/sdk_replay.py`'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from importlib.metadata import version as distribution_version
from typing import Any

import anthropic
import httpx2

from benchmarks import sdk_replay
from benchmarks.sdk_replay import Workload
from examples.local_anthropic import API_KEY, MODEL, sse
from toolreplay.adapters.anthropic import instrument

__all__ = ["main"]

TOOLS: Any = [{"name": "issue_refund", "input_schema": {"type": "object"}}]
_ORDER = re.compile(rb"order (\d+)")


def _message(i: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": f"msg_bench{i:08d}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6-20260217",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 40, "output_tokens": 30},
    }


def _tool_body(i: int) -> bytes:
    use = {"type": "tool_use", "id": f"toolu_{i:08d}", "name": "issue_refund",
           "input": {"order_id": i, "reason": "lost in transit"}}  # fmt: skip
    text = {"type": "text", "text": f"Refunding order {i}."}
    return json.dumps(_message(i, [text, use], "tool_use")).encode()


def _stream_body(i: int) -> bytes:
    final = _message(i, [], "end_turn")
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**final, "stop_reason": None}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}}
        for word in (f"w{i}.{k} " for k in range(45))
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 30}},
        {"type": "message_stop"},
    ]  # fmt: skip
    assert len(events) == 50
    return sse(events)


def _ask(i: int) -> Any:
    return [{"role": "user", "content": f"Refund order {i}, it never arrived."}]


def _call_tool(client: Any, i: int) -> object:
    message = client.messages.create(model=MODEL, max_tokens=256, messages=_ask(i), tools=TOOLS)
    return message.content[-1].input


def _call_stream(client: Any, i: int) -> object:
    with client.messages.stream(model=MODEL, max_tokens=256, messages=_ask(i)) as stream:
        return "".join(stream.text_stream)


WORKLOADS = (
    Workload("messages+tool", _tool_body, "application/json", _call_tool),
    Workload("stream50", _stream_body, "text/event-stream; charset=utf-8", _call_stream),
)


def _client(handler: Callable[[Any], Any]) -> anthropic.Anthropic:
    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    return anthropic.Anthropic(api_key=API_KEY, http_client=http, max_retries=0)


def bare_client(workload: Workload, bodies: list[bytes]) -> anthropic.Anthropic:
    headers = {"content-type": workload.media_type, "request-id": "req_bench"}

    def handle(request: Any) -> Any:
        found = _ORDER.search(request.content)
        assert found is not None
        return httpx2.Response(200, content=bodies[int(found.group(1))], headers=headers)

    return _client(handle)


def refusing_client() -> anthropic.Anthropic:
    def refuse(request: Any) -> Any:
        raise AssertionError(f"a replayed call reached the transport: {request.url}")

    return _client(refuse)


ANTHROPIC = sdk_replay.Adapter(
    name="Anthropic",
    bare_client=bare_client,
    refusing_client=refusing_client,
    instrument=instrument,
    environment=lambda: (
        f"anthropic {distribution_version('anthropic')}",
        f"httpx2 {distribution_version('httpx2')}",
    ),
    workloads=WORKLOADS,
)


def main(argv: Sequence[str] | None = None) -> int:
    return sdk_replay.main(ANTHROPIC, "anthropic_replay", argv)


if __name__ == "__main__":
    raise SystemExit(main())
