"""Local stand-ins for the OpenAI API: payloads, serving transports and exploding transports."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import httpx
import openai

FAKE_KEY = "sk-test-RECOGNISABLE-SECRET-0123456789"
CUSTOM_HEADER = "X-Tenant-Secret"
CUSTOM_HEADER_VALUE = "tenant-header-value-987654"


def response_body(text: str = "approve", **overrides: Any) -> dict[str, Any]:
    """A realistic Responses API body (what the HTTP response carries)."""
    body: dict[str, Any] = {
        "id": "resp_0123456789abcdef",
        "object": "response",
        "created_at": 1741476777,
        "status": "completed",
        "background": False,
        "completed_at": 1741476779,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": 256,
        "max_tool_calls": None,
        "model": "gpt-5-mini-2025-08-07",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": None},
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
                ],
            },
        ],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "prompt_cache_key": None,
        "prompt_cache_retention": "in_memory",
        "reasoning": {"effort": "minimal", "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": 31,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 40,
        },
        "user": None,
        "metadata": {},
        "billing": {"payer": "developer"},
    }
    body.update(overrides)
    return body


class Transport:
    """An httpx transport that answers with `answer(request)` and remembers every request."""

    def __init__(self, answer: Callable[[httpx.Request], httpx.Response]) -> None:
        self.requests: list[httpx.Request] = []
        self._answer = answer

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self._answer(request)

    def sync(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)


def serving(body: dict[str, Any] | None = None, status: int = 200) -> Transport:
    payload = copy.deepcopy(body if body is not None else response_body())
    return Transport(
        lambda request: httpx.Response(
            status, json=payload, headers={"x-request-id": "req_recorded_42"}
        )
    )


def exploding() -> Transport:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"the provider was contacted: {request.method} {request.url}")

    return Transport(refuse)


def sync_client(transport: Transport) -> openai.OpenAI:
    return openai.OpenAI(
        api_key=FAKE_KEY,
        default_headers={CUSTOM_HEADER: CUSTOM_HEADER_VALUE},
        http_client=httpx.Client(transport=transport.sync()),
        max_retries=0,
    )


def async_client(transport: Transport) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key=FAKE_KEY,
        default_headers={CUSTOM_HEADER: CUSTOM_HEADER_VALUE},
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(transport.handle)),
        max_retries=0,
    )


REQUEST: dict[str, Any] = {
    "model": "gpt-5-mini",
    "input": "Refund $1,200 for order 7? Answer approve or manual_review.",
    "reasoning": {"effort": "minimal"},
    "max_output_tokens": 256,
}
