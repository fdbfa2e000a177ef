"""Clients for the adapter tests: real SDK clients over in-process transports."""

from __future__ import annotations

from typing import Any

import openai

from examples.local_openai import HTTP

__all__ = ["SDK_MAJOR", "async_client", "sync_client"]

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
