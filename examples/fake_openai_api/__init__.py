"""A local stand-in for the OpenAI API, so agent examples and tests run offline.

`FakeOpenAIAPI` answers `POST /v1/responses` and `POST /v1/chat/completions` the way
the real API does (same body shapes, the same server-sent events when the request says
`"stream": true`), following a script: a number of tool-call turns, then a final
message. It decides which turn a request is at from the tool outputs the request
carries (Responses `function_call_output` items, Chat Completions `tool` messages), so
it needs no state, and an agent framework driving it cannot tell it from the real
service. It serves through the SDK's own in-process transport (`Any`
under openai 2.x, `httpx2.MockTransport` under 3.x): nothing listens on a socket.

`refusing_transport()` is the other half of an offline test: a transport that fails
on every request and counts them, for replays that must not reach any provider.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import openai

__all__ = [
    "FakeOpenAIAPI",
    "RefusingTransport",
    "ToolCall",
    "http_module",
    "refusing_transport",
]

MODEL = "gpt-5-mini-2025-08-07"
CREATED = 1764547200


def http_module() -> ModuleType:
    """The HTTP library the installed SDK line speaks: `httpx` (2.x) or `httpx2` (3.x)."""
    major = int(openai.__version__.split(".", 1)[0])
    return importlib.import_module("httpx2" if major >= 3 else "httpx")


@dataclass(frozen=True)
class ToolCall:
    """One function call the scripted model makes."""

    name: str
    arguments: dict[str, Any]

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments, separators=(",", ":"))


FinalText = Callable[[list[str]], str]


@dataclass
class FakeOpenAIAPI:
    """A scripted model: `turns` of tool calls (several in a turn are parallel calls),
    then a final message whose text `final_text` makes from every tool output seen.

    `requests` holds each request body received, in order.
    """

    turns: Sequence[Sequence[ToolCall]]
    final_text: FinalText
    requests: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    # --- transports -------------------------------------------------------------------

    def transport(self) -> Any:
        """A synchronous in-process transport answering like the API."""
        return http_module().MockTransport(self.handle)

    def async_transport(self) -> Any:
        """The same for async clients (MockTransport serves both)."""
        return http_module().MockTransport(self.handle)

    def client(self) -> openai.OpenAI:
        http = http_module()
        return openai.OpenAI(
            api_key="sk-fake-api",
            http_client=http.Client(transport=self.transport()),
            max_retries=0,
        )

    def async_client(self) -> openai.AsyncOpenAI:
        http = http_module()
        return openai.AsyncOpenAI(
            api_key="sk-fake-api",
            http_client=http.AsyncClient(transport=self.async_transport()),
            max_retries=0,
        )

    # --- answering --------------------------------------------------------------------

    def handle(self, request: Any) -> Any:
        http = http_module()
        body: dict[str, Any] = json.loads(request.content or b"{}")
        self.requests.append(body)
        path = request.url.path
        if request.method == "POST" and path.endswith("/responses"):
            outputs = [
                str(item.get("output"))
                for item in _list(body.get("input"))
                if item.get("type") == "function_call_output"
            ]
            turn = self._turn(outputs)
            if turn is None:
                return _error(http, f"{len(outputs)} tool outputs match no turn of the script")
            index, calls = turn
            text = "" if calls else self.final_text(outputs)
            response = _responses_body(index, calls, text, body)
            if body.get("stream"):
                return _sse(http, _responses_events(response))
            return http.Response(200, json=response, headers=_HEADERS)
        if request.method == "POST" and path.endswith("/chat/completions"):
            outputs = [
                str(message.get("content"))
                for message in _list(body.get("messages"))
                if message.get("role") == "tool"
            ]
            turn = self._turn(outputs)
            if turn is None:
                return _error(http, f"{len(outputs)} tool outputs match no turn of the script")
            index, calls = turn
            completion = _chat_body(index, calls, "" if calls else self.final_text(outputs))
            if body.get("stream"):
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                return _sse(http, _chat_chunks(completion, include_usage), events=False)
            return http.Response(200, json=completion, headers=_HEADERS)
        return http.Response(
            404,
            json={
                "error": {"message": f"Unknown endpoint {path}", "type": "invalid_request_error"}
            },
            headers=_HEADERS,
        )

    def _turn(self, outputs: list[str]) -> tuple[int, Sequence[ToolCall]] | None:
        """Which turn follows `outputs`: tool calls, or `()` for the final message."""
        answered = 0
        for index, calls in enumerate(self.turns):
            if len(outputs) == answered:
                return index, calls
            answered += len(calls)
        return (len(self.turns), ()) if len(outputs) == answered else None


@dataclass
class RefusingTransport:
    """Fails on every request (as a connection error would) and counts them."""

    requests: list[str] = field(default_factory=list[str])

    def handle(self, request: Any) -> Any:
        self.requests.append(f"{request.method} {request.url}")
        raise http_module().ConnectError(
            f"offline: {request.method} {request.url.path} must not reach a provider"
        )

    def transport(self) -> Any:
        return http_module().MockTransport(self.handle)

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(
            api_key="sk-refused",
            http_client=http_module().Client(transport=self.transport()),
            max_retries=0,
        )

    def async_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key="sk-refused",
            http_client=http_module().AsyncClient(transport=self.transport()),
            max_retries=0,
        )


def refusing_transport() -> RefusingTransport:
    return RefusingTransport()


# --- bodies -------------------------------------------------------------------------------

_HEADERS = {"x-request-id": "req_fake_api"}


def _list(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _error(http: ModuleType, message: str) -> Any:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return http.Response(400, json={"error": error}, headers=_HEADERS)


def _usage(turn: int) -> dict[str, Any]:
    return {
        "input_tokens": 120 + 40 * turn,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 18,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 138 + 40 * turn,
    }


def _responses_body(
    turn: int, calls: Sequence[ToolCall], text: str, request: dict[str, Any]
) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {
            "type": "function_call",
            "id": f"fc_{turn}_{position}",
            "call_id": f"call_{turn}_{position}",
            "name": call.name,
            "arguments": call.arguments_json,
            "status": "completed",
        }
        for position, call in enumerate(calls)
    ]
    if not calls:
        output.append(
            {
                "type": "message",
                "id": f"msg_{turn}",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
                ],
            }
        )
    return {
        "id": f"resp_fake_{turn}",
        "object": "response",
        "created_at": CREATED + turn,
        "status": "completed",
        "background": False,
        "completed_at": CREATED + turn + 1,
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "max_output_tokens": request.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": bool(request.get("parallel_tool_calls", True)),
        "previous_response_id": request.get("previous_response_id"),
        "prompt_cache_key": None,
        "reasoning": {"effort": None, "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": bool(request.get("store", True)),
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": _usage(turn),
        "user": None,
        "metadata": {},
    }


def _responses_events(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The event sequence the API streams for `response`, as the real service orders it."""
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    started["completed_at"] = None
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": started},
        {"type": "response.in_progress", "response": started},
    ]
    for index, item in enumerate(response["output"]):
        if item["type"] == "function_call":
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "arguments": "", "status": "in_progress"},
                }
            )
            for piece in _pieces(item["arguments"]):
                events.append(
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "delta": piece,
                    }
                )
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": item["id"],
                    "output_index": index,
                    "arguments": item["arguments"],
                }
            )
        else:
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            events.append(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            address = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events.append({"type": "response.content_part.added", **address, "part": part})
            for piece in _pieces(text):
                events.append(
                    {
                        "type": "response.output_text.delta",
                        **address,
                        "delta": piece,
                        "logprobs": [],
                    }
                )
            events.append(
                {"type": "response.output_text.done", **address, "text": text, "logprobs": []}
            )
            events.append(
                {"type": "response.content_part.done", **address, "part": {**part, "text": text}}
            )
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": response})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def _chat_body(turn: int, calls: Sequence[ToolCall], text: str) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None if calls else text,
        "refusal": None,
        "annotations": [],
    }
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{turn}_{position}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json},
            }
            for position, call in enumerate(calls)
        ]
    return {
        "id": f"chatcmpl-fake-{turn}",
        "object": "chat.completion",
        "created": CREATED + turn,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 120 + 40 * turn,
            "completion_tokens": 18,
            "total_tokens": 138 + 40 * turn,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_fake",
    }


def _chat_chunks(completion: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The chunks the API streams for `completion`: role, content or tool calls, finish."""
    head = {key: completion[key] for key in ("id", "created", "model", "service_tier")}
    head["object"] = "chat.completion.chunk"
    head["system_fingerprint"] = completion["system_fingerprint"]
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            **head,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    chunks = [chunk({"role": "assistant", "content": "" if message["content"] else None})]
    for position, call in enumerate(message.get("tool_calls", [])):
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": position,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["function"]["name"], "arguments": ""},
                        }
                    ]
                }
            )
        )
        for piece in _pieces(call["function"]["arguments"]):
            chunks.append(
                chunk({"tool_calls": [{"index": position, "function": {"arguments": piece}}]})
            )
    for piece in _pieces(message["content"] or ""):
        chunks.append(chunk({"content": piece}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append({**head, "choices": [], "usage": completion["usage"]})
    return chunks


def _pieces(text: str, size: int = 8) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


def _sse(http: ModuleType, payloads: list[dict[str, Any]], *, events: bool = True) -> Any:
    """A `text/event-stream` response: `event:` lines for Responses, `[DONE]` for Chat."""
    lines: list[str] = []
    for payload in payloads:
        if events:
            lines.append(f"event: {payload['type']}")
        lines.append("data: " + json.dumps(payload, separators=(",", ":")))
        lines.append("")
    if not events:
        lines += ["data: [DONE]", ""]
    content = ("\n".join(lines) + "\n").encode()
    return http.Response(
        200, content=content, headers={**_HEADERS, "content-type": "text/event-stream"}
    )
