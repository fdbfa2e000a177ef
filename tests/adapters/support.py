"""Clients for the adapter tests: real SDK clients over in-process transports."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from examples.local_openai import HTTP

__all__ = ["SDK_MAJOR", "aiohttp_http_client", "async_client", "sdk_error_view", "sync_client"]

SDK_MAJOR = int(openai.__version__.split(".", 1)[0])

API_KEY = "sk-test-adapter-0123456789"


def sync_client(handler: Any, **options: Any) -> openai.OpenAI:
    """A plain `OpenAI` client whose only transport is `handler`."""
    options.setdefault("max_retries", 0)
    options.setdefault("api_key", API_KEY)
    return openai.OpenAI(http_client=HTTP.Client(transport=HTTP.MockTransport(handler)), **options)


def async_client(handler: Any, **options: Any) -> openai.AsyncOpenAI:
    """A plain `AsyncOpenAI` client whose only transport is `handler`."""
    options.setdefault("max_retries", 0)
    options.setdefault("api_key", API_KEY)
    return openai.AsyncOpenAI(
        http_client=HTTP.AsyncClient(transport=HTTP.MockTransport(handler)), **options
    )


def aiohttp_http_client() -> Any:
    """`openai.DefaultAioHttpClient()`; the test is skipped under openai 2.x, whose aiohttp
    client needs the `httpx-aiohttp` package (not a dev dependency)."""
    try:
        return openai.DefaultAioHttpClient()
    except RuntimeError:
        assert SDK_MAJOR < 3, "aiohttp is a dev dependency: openai 3.x's aiohttp client must build"
        pytest.skip("openai 2.x's aiohttp client needs the httpx-aiohttp package, not installed")


def sdk_error_view(error: BaseException) -> dict[str, Any]:
    """What the application can see of an SDK error."""
    return {
        "type": type(error),
        "message": str(error),
        "status": getattr(error, "status_code", None),
        "body": getattr(error, "body", None),
        "code": getattr(error, "code", None),
        "request_id": getattr(error, "request_id", None),
        "cause": type(error.__cause__).__name__ if error.__cause__ is not None else None,
    }
