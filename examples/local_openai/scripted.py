"""A scripted model for agent frameworks: tool-call turns, then a final message.

`ScriptedModel` is a transport handler (like `LocalOpenAI`) that answers
`POST /responses` and `POST /chat/completions` following a script: some turns
of tool calls (several calls in one turn are parallel calls), then a final
message whose text it makes from the tool outputs it was sent. It decides the
turn from the tool outputs the request carries (Responses `function_call_output`
items, Chat Completions `tool` messages), so it keeps no state between requests
and an agent framework driving it cannot tell it from the API. With
`"stream": true` it sends the events the API sends for those items (function
call arguments and text in deltas).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from examples.local_openai import (
    HTTP,
    REQUEST_ID,
    chat_completion_body,
    event_stream,
    function_call_item,
    message_item,
    response_body,
)

__all__ = ["ScriptedModel", "ToolCall"]

_CREATED = 1767225600


@dataclass(frozen=True)
class ToolCall:
    """One function call the scripted model makes: its arguments, or a function of the
    tool outputs the request carries that makes them (a model that reads its tools)."""

    name: str
    arguments: dict[str, Any] | Callable[[list[str]], dict[str, Any]]

    def arguments_for(self, outputs: list[str]) -> dict[str, Any]:
        return self.arguments(outputs) if callable(self.arguments) else self.arguments


@dataclass
class ScriptedModel:
    """`turns` of tool calls, then a final message saying `final_text(tool outputs)`.

    `requests` holds the JSON body of every request received, in order.
    """

    turns: Sequence[Sequence[ToolCall]]
    final_text: Callable[[list[str]], str]
    requests: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    def __call__(self, request: Any) -> Any:
        body: dict[str, Any] = json.loads(request.content or b"{}")
        self.requests.append(body)
        path = request.url.path
        if request.method == "POST" and path.endswith("/responses"):
            outputs = [
                str(item.get("output"))
                for item in _objects(body.get("input"))
                if item.get("type") == "function_call_output"
            ]
            turn = self._turn(outputs)
            if turn is None:
                return _mismatch(outputs)
            answer = _responses_answer(*turn, self.final_text, outputs, body)
            if body.get("stream"):
                return _events(event_stream(_responses_events(answer)))
            return HTTP.Response(200, json=answer, headers={"x-request-id": REQUEST_ID})
        if request.method == "POST" and path.endswith("/chat/completions"):
            outputs = [
                str(message.get("content"))
                for message in _objects(body.get("messages"))
                if message.get("role") == "tool"
            ]
            turn = self._turn(outputs)
            if turn is None:
                return _mismatch(outputs)
            answer = _chat_answer(*turn, self.final_text, outputs)
            if body.get("stream"):
                usage = bool((body.get("stream_options") or {}).get("include_usage"))
                return _events(event_stream(_chat_chunks(answer, usage)))
            return HTTP.Response(200, json=answer, headers={"x-request-id": REQUEST_ID})
        error = {"message": f"Unknown path {path}", "type": "invalid_request_error"}
        return HTTP.Response(404, json={"error": error}, headers={"x-request-id": REQUEST_ID})

    def _turn(self, outputs: list[str]) -> tuple[int, Sequence[ToolCall]] | None:
        """The turn that follows `outputs`: its tool calls, or `()` for the final message."""
        answered = 0
        for index, calls in enumerate(self.turns):
            if len(outputs) == answered:
                return index, calls
            answered += len(calls)
        return (len(self.turns), ()) if len(outputs) == answered else None


def _objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _mismatch(outputs: list[str]) -> Any:
    message = f"{len(outputs)} tool outputs match no turn of the script"
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return HTTP.Response(400, json={"error": error}, headers={"x-request-id": REQUEST_ID})


def _events(stream: bytes) -> Any:
    headers = {"x-request-id": REQUEST_ID, "content-type": "text/event-stream"}
    return HTTP.Response(200, content=stream, headers=headers)


def _responses_answer(
    turn: int,
    calls: Sequence[ToolCall],
    final_text: Callable[[list[str]], str],
    outputs: list[str],
    request: dict[str, Any],
) -> dict[str, Any]:
    items = [
        function_call_item(
            call.name, call.arguments_for(outputs), f"call_{turn}_{n}", f"fc_{turn}_{n}"
        )
        for n, call in enumerate(calls)
    ] or [message_item(final_text(outputs), f"msg_{turn}")]
    return response_body(
        output=items,
        id=f"resp_scripted_{turn}",
        created_at=_CREATED + turn,
        completed_at=_CREATED + turn + 1,
        instructions=request.get("instructions"),
        max_output_tokens=request.get("max_output_tokens"),
        tools=request.get("tools", []),
    )


def _responses_events(answer: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """The events the API streams for `answer`, in the API's order."""
    started = {**answer, "status": "in_progress", "output": [], "usage": None}
    started["completed_at"] = None
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": started}),
        ("response.in_progress", {"response": started}),
    ]
    for index, item in enumerate(answer["output"]):
        if item["type"] == "function_call":
            pending = {**item, "arguments": "", "status": "in_progress"}
            events.append(("response.output_item.added", {"output_index": index, "item": pending}))
            address = {"item_id": item["id"], "output_index": index}
            for piece in _pieces(item["arguments"]):
                events.append(
                    ("response.function_call_arguments.delta", {**address, "delta": piece})
                )
            events.append(
                (
                    "response.function_call_arguments.done",
                    {**address, "arguments": item["arguments"]},
                )
            )
        else:
            text = item["content"][0]["text"]
            pending = {**item, "status": "in_progress", "content": []}
            events.append(("response.output_item.added", {"output_index": index, "item": pending}))
            address = {"item_id": item["id"], "output_index": index, "content_index": 0}
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            events.append(("response.content_part.added", {**address, "part": part}))
            for piece in _pieces(text):
                delta = {**address, "delta": piece, "logprobs": []}
                events.append(("response.output_text.delta", delta))
            events.append(("response.output_text.done", {**address, "text": text, "logprobs": []}))
            events.append(
                ("response.content_part.done", {**address, "part": {**part, "text": text}})
            )
        events.append(("response.output_item.done", {"output_index": index, "item": item}))
    events.append(("response.completed", {"response": answer}))
    return [
        (kind, {"type": kind, "sequence_number": number, **data})
        for number, (kind, data) in enumerate(events)
    ]


def _chat_answer(
    turn: int,
    calls: Sequence[ToolCall],
    final_text: Callable[[list[str]], str],
    outputs: list[str],
) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None if calls else final_text(outputs),
        "refusal": None,
        "annotations": [],
    }
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_{turn}_{n}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": json.dumps(call.arguments_for(outputs)),
                },
            }
            for n, call in enumerate(calls)
        ]
    choice = {
        "index": 0,
        "message": message,
        "logprobs": None,
        "finish_reason": "tool_calls" if calls else "stop",
    }
    return chat_completion_body(
        id=f"chatcmpl-scripted-{turn}", created=_CREATED + turn, choices=[choice]
    )


def _chat_chunks(answer: dict[str, Any], include_usage: bool) -> list[tuple[str | None, Any]]:
    """The chunks the API streams for `answer`: role, tool calls or text, finish, usage."""
    head = {k: answer[k] for k in ("id", "created", "model", "service_tier", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"
    choice = answer["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> tuple[str | None, Any]:
        choices = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        return None, {**head, "choices": choices}

    chunks = [chunk({"role": "assistant", "content": "" if message["content"] else None})]
    for n, call in enumerate(message.get("tool_calls", [])):
        function = call["function"]
        opening = {"index": n, "id": call["id"], "type": "function"}
        opening["function"] = {"name": function["name"], "arguments": ""}
        chunks.append(chunk({"tool_calls": [opening]}))
        for piece in _pieces(function["arguments"]):
            chunks.append(chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}))
    for piece in _pieces(message["content"] or ""):
        chunks.append(chunk({"content": piece}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append((None, {**head, "choices": [], "usage": answer["usage"]}))
    chunks.append((None, "[DONE]"))
    return chunks


def _pieces(text: str, size: int = 8) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]
