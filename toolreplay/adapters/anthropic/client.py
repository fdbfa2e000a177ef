"""`instrument(client)`: a copy of an Anthropic client whose every request is an effect.

The copy is made by the SDK itself (`client.copy()`, so every setting carries over) and
differs from it in one thing: its HTTP client sends through the capture core's
transports (`toolreplay.adapters.capture`, with the Anthropic profile) that wrap the
original HTTP client's transports. The SDK builds requests and parses responses exactly
as it does without Tool Replay; only what crosses the wire is recorded or replayed.
"""

from __future__ import annotations

from typing import Any, cast, overload

import anthropic

from toolreplay.adapters.anthropic.profile import ANTHROPIC
from toolreplay.adapters.capture.sdk_clients import SdkErrors, capture, copy_instrumented

__all__ = ["InstrumentedAnthropic", "InstrumentedAsyncAnthropic", "instrument"]


_ERRORS = SdkErrors(
    anthropic.APIConnectionError, anthropic.AnthropicError, f"anthropic {anthropic.__version__}"
)
"""The SDK's exceptions: it wraps any exception from the transport as `APIConnectionError`."""


class InstrumentedAnthropic(anthropic.Anthropic):
    """An `anthropic.Anthropic` whose every request is recorded and replayed by Tool Replay
    sessions.

    Made by `instrument(client)`; `original_client` is the client it copies.
    `with_options(...)` and `copy(...)` return instrumented clients too.
    """

    original_client: anthropic.Anthropic

    def copy(self, **kwargs: Any) -> InstrumentedAnthropic:  # pyright: ignore[reportIncompatibleMethodOverride]  # every parameter is passed on
        """The SDK's `copy`, still instrumented (a new `http_client` is captured too)."""
        return cast(
            InstrumentedAnthropic,
            copy_instrumented(
                self, anthropic.Anthropic, kwargs, asynchronous=False, profile=ANTHROPIC
            ),
        )

    with_options = copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as the SDK aliases it

    def request(self, *args: Any, **kwargs: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]  # passed on as given
        """The SDK's `request`; a Tool Replay refusal or miss surfaces as itself."""
        with _ERRORS.surfacing():
            return cast(Any, super()).request(*args, **kwargs)


class InstrumentedAsyncAnthropic(anthropic.AsyncAnthropic):
    """An `anthropic.AsyncAnthropic` whose every request is recorded and replayed by sessions."""

    original_client: anthropic.AsyncAnthropic

    def copy(self, **kwargs: Any) -> InstrumentedAsyncAnthropic:  # pyright: ignore[reportIncompatibleMethodOverride]  # see InstrumentedAnthropic.copy
        """The SDK's `copy`, still instrumented."""
        return cast(
            InstrumentedAsyncAnthropic,
            copy_instrumented(
                self, anthropic.AsyncAnthropic, kwargs, asynchronous=True, profile=ANTHROPIC
            ),
        )

    with_options = copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as the SDK aliases it

    async def request(self, *args: Any, **kwargs: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]  # passed on as given
        """The SDK's `request`; a Tool Replay refusal or miss surfaces as itself."""
        with _ERRORS.surfacing():
            return await cast(Any, super()).request(*args, **kwargs)


_INSTRUMENTED: tuple[tuple[type[Any], type[Any]], ...] = (
    (anthropic.AsyncAnthropic, InstrumentedAsyncAnthropic),
    (anthropic.Anthropic, InstrumentedAnthropic),
)


@overload
def instrument(client: anthropic.AsyncAnthropic) -> InstrumentedAsyncAnthropic: ...
@overload
def instrument(client: anthropic.Anthropic) -> InstrumentedAnthropic: ...
def instrument(
    client: anthropic.Anthropic | anthropic.AsyncAnthropic,
) -> InstrumentedAnthropic | InstrumentedAsyncAnthropic:
    """An instrumented copy of `client`: every request it makes is an effect.

    `client` is not changed (`instrumented.original_client` is it). Inside `record()`
    each HTTP request of the copy is recorded as the effect named after its endpoint
    (`anthropic.messages.create`, `anthropic.messages.count_tokens`,
    `anthropic.models.list`, ...); inside `replay()`, `fork()` and case verification it
    is answered from the trace and nothing is sent. Outside every session the copy
    behaves as `client` does. Works for `Anthropic` and `AsyncAnthropic`, streaming or
    not, beta resources included.
    """
    if isinstance(client, InstrumentedAnthropic | InstrumentedAsyncAnthropic):
        raise TypeError("this client is already instrumented; instrument the original once")
    for plain, instrumented in _INSTRUMENTED:
        if isinstance(client, plain):
            if type(client) is not plain:
                raise TypeError(
                    f"instrument() takes an anthropic.{plain.__qualname__} client, not the "
                    f"subclass {type(client).__qualname__}: instrument a plain SDK client"
                )
            twin: Any = client.copy()
            # The SDK copies every setting; the instrumented class adds only
            # `original_client` and keeps `copy`/`with_options` instrumented.
            twin.__class__ = instrumented
            asynchronous = plain is anthropic.AsyncAnthropic
            capture(twin, cast(Any, client)._client, asynchronous=asynchronous, profile=ANTHROPIC)
            twin.original_client = client
            return twin
    raise TypeError(
        "instrument() takes an anthropic.Anthropic or anthropic.AsyncAnthropic client, not "
        f"{type(client).__name__} (the Bedrock, Vertex and Foundry clients are not captured "
        "yet)"
    )
