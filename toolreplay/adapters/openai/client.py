"""The instrumented clients: `responses.create` through an effect, everything else untouched.

The sync and async shells share the request parser, the response codec and the
error codec; they differ only in awaiting the SDK. Instrumenting never mutates
the client: the wrapper holds it as `original_client` and forwards every other
attribute to it.
"""

from __future__ import annotations

from typing import Any, cast, overload

import openai
from openai import Omit
from openai._legacy_response import LegacyAPIResponse  # the public with_raw_response type
from openai.types.responses import Response
from openai.types.shared_params import Reasoning

from toolreplay.adapters.openai import provider_errors as _provider_errors  # registers the codec
from toolreplay.adapters.openai.request import parse_request
from toolreplay.adapters.openai.responses import rebuild_response, response_envelope
from toolreplay.portable import JsonValue
from toolreplay.runtime.effect import effect

__all__ = ["EFFECT_NAME", "InstrumentedAsyncOpenAI", "InstrumentedOpenAI", "instrument"]

EFFECT_NAME = "openai.responses.create"
assert _provider_errors.CODEC is not None


def _reasoning(reasoning: dict[str, JsonValue] | None) -> Reasoning | Omit:
    return openai.omit if reasoning is None else cast(Reasoning, reasoning)


def _limit(max_output_tokens: int | None) -> int | Omit:
    return openai.omit if max_output_tokens is None else max_output_tokens


def _envelope(raw: LegacyAPIResponse[Response]) -> dict[str, JsonValue]:
    # The body exactly as received (json() of the HTTP body), not the parsed model.
    body: object = raw.http_response.json()
    return response_envelope(body, raw.request_id)


class _Responses:
    """`client.responses` with `create` instrumented (sync)."""

    def __init__(self, client: openai.OpenAI) -> None:
        self._original = client.responses

        @effect(EFFECT_NAME)
        def create_response(
            model: str,
            input: str,
            reasoning: dict[str, JsonValue] | None,
            max_output_tokens: int | None,
        ) -> dict[str, JsonValue]:
            raw = client.responses.with_raw_response.create(
                model=model,
                input=input,
                reasoning=_reasoning(reasoning),
                max_output_tokens=_limit(max_output_tokens),
            )
            return _envelope(raw)

        self._create = create_response

    def create(self, *args: Any, **kwargs: Any) -> Response:
        """`responses.create`, recorded and replayed (see the adapter's request surface)."""
        return rebuild_response(self._create(*parse_request(args, kwargs)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class _AsyncResponses:
    """`client.responses` with `create` instrumented (async)."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self._original = client.responses

        @effect(EFFECT_NAME)
        async def create_response(
            model: str,
            input: str,
            reasoning: dict[str, JsonValue] | None,
            max_output_tokens: int | None,
        ) -> dict[str, JsonValue]:
            raw = await client.responses.with_raw_response.create(
                model=model,
                input=input,
                reasoning=_reasoning(reasoning),
                max_output_tokens=_limit(max_output_tokens),
            )
            return _envelope(raw)

        self._create = create_response

    async def create(self, *args: Any, **kwargs: Any) -> Response:
        """`responses.create`, recorded and replayed; replay creates no provider coroutine."""
        return rebuild_response(await self._create(*parse_request(args, kwargs)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class InstrumentedOpenAI:
    """An `OpenAI` client whose `responses.create` is the effect `openai.responses.create`."""

    def __init__(self, client: openai.OpenAI) -> None:
        self.original_client = client
        self.responses = _Responses(client)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original_client, name)


class InstrumentedAsyncOpenAI:
    """An `AsyncOpenAI` client whose `responses.create` is the effect `openai.responses.create`."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self.original_client = client
        self.responses = _AsyncResponses(client)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.original_client, name)


@overload
def instrument(client: openai.OpenAI) -> InstrumentedOpenAI: ...
@overload
def instrument(client: openai.AsyncOpenAI) -> InstrumentedAsyncOpenAI: ...
def instrument(
    client: openai.OpenAI | openai.AsyncOpenAI,
) -> InstrumentedOpenAI | InstrumentedAsyncOpenAI:
    """Wrap an `OpenAI` or `AsyncOpenAI` client so sessions record and replay its responses.

    The client itself is not changed (`wrapper.original_client` is it). Under
    `replay()`, `fork()` and case verification, `responses.create` contacts no
    provider: the recorded `Response` (or provider error) is rebuilt from the
    trace.
    """
    if isinstance(client, openai.AzureOpenAI | openai.AsyncAzureOpenAI):
        raise TypeError(
            "instrument() supports OpenAI and AsyncOpenAI clients; Azure OpenAI clients are not "
            "supported (their deployments and API versions are not part of what is recorded)"
        )
    if isinstance(client, openai.AsyncOpenAI):
        return InstrumentedAsyncOpenAI(client)
    if isinstance(client, openai.OpenAI):  # pyright: ignore[reportUnnecessaryIsInstance]  # untyped callers
        return InstrumentedOpenAI(client)
    raise TypeError(
        f"instrument() takes an openai.OpenAI or openai.AsyncOpenAI client, not "
        f"{type(client).__name__}"
    )
