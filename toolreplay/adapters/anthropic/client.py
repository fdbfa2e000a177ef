"""`instrument(client)`: a copy of an Anthropic client whose every request is an effect.

The copy is made by the SDK itself (`client.copy()`, so every setting carries over) and
differs from it in one thing: its HTTP client sends through the capture core's
transports (`toolreplay.adapters.capture`, with the client's profile) that wrap the
original HTTP client's transports. The SDK builds requests, signs them (Bedrock's SigV4,
Vertex's Google token) and parses responses exactly as it does without Tool Replay; only
what crosses the wire is recorded or replayed.

Clients: `Anthropic` and `AsyncAnthropic` (the `ANTHROPIC` profile), `AnthropicBedrock`
and `AsyncAnthropicBedrock` (`BEDROCK`), `AnthropicVertex` and `AsyncAnthropicVertex`
(`VERTEX`). The SDK's other platform clients are refused, naming why.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar, cast, overload

import anthropic
from anthropic.lib.bedrock import AnthropicBedrock, AsyncAnthropicBedrock
from anthropic.lib.vertex import AnthropicVertex, AsyncAnthropicVertex

from toolreplay.adapters.anthropic.profile import ANTHROPIC, BEDROCK, VERTEX
from toolreplay.adapters.capture import ProviderProfile
from toolreplay.adapters.capture.sdk_clients import SdkErrors, capture, copy_instrumented

__all__ = [
    "InstrumentedAnthropic",
    "InstrumentedAnthropicBedrock",
    "InstrumentedAnthropicVertex",
    "InstrumentedAsyncAnthropic",
    "InstrumentedAsyncAnthropicBedrock",
    "InstrumentedAsyncAnthropicVertex",
    "instrument",
]


_ERRORS = SdkErrors(
    anthropic.APIConnectionError, anthropic.AnthropicError, f"anthropic {anthropic.__version__}"
)
"""The SDK's exceptions: it wraps any exception from the transport as `APIConnectionError`."""


_Client = TypeVar("_Client")


def _copy(self: _Client, **kwargs: Any) -> _Client:
    """The SDK's `copy`, still instrumented (a new `http_client` is captured too)."""
    kind = cast(Any, type(self))
    return cast(
        _Client,
        copy_instrumented(
            self, kind.plain, kwargs, asynchronous=kind.asynchronous, profile=kind.profile
        ),
    )


def _request(self: Any, *args: Any, **kwargs: Any) -> Any:
    """The SDK's `request`; see `SdkErrors.surfacing` for the errors it raises differently."""
    with _ERRORS.surfacing():
        return cast(Any, type(self)).plain.request(self, *args, **kwargs)


async def _request_async(self: Any, *args: Any, **kwargs: Any) -> Any:
    """The SDK's `request`; see `SdkErrors.surfacing` for the errors it raises differently."""
    with _ERRORS.surfacing():
        return await cast(Any, type(self)).plain.request(self, *args, **kwargs)


# Each class is its SDK class with these attributes only (an SDK client's class is swapped
# for it, which needs the same layout: no mixin base). `plain` is the SDK class, `profile`
# the capture profile; `copy`/`with_options` stay instrumented.


class InstrumentedAnthropic(anthropic.Anthropic):
    """An `anthropic.Anthropic` whose every request is recorded and replayed by Tool Replay
    sessions.

    Made by `instrument(client)`; `original_client` is the client it copies.
    `with_options(...)` and `copy(...)` return instrumented clients too.
    """

    plain: ClassVar[type[Any]] = anthropic.Anthropic
    profile: ClassVar[ProviderProfile] = ANTHROPIC
    asynchronous: ClassVar[bool] = False
    original_client: anthropic.Anthropic
    copy = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # every parameter is passed on
    with_options = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as the SDK aliases it
    request = _request  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # passed on as given


class InstrumentedAsyncAnthropic(anthropic.AsyncAnthropic):
    """An `anthropic.AsyncAnthropic` whose every request is recorded and replayed by sessions."""

    plain: ClassVar[type[Any]] = anthropic.AsyncAnthropic
    profile: ClassVar[ProviderProfile] = ANTHROPIC
    asynchronous: ClassVar[bool] = True
    original_client: anthropic.AsyncAnthropic
    copy = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    with_options = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    request = _request_async  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above


class InstrumentedAnthropicBedrock(AnthropicBedrock):
    """An `AnthropicBedrock` whose every request is recorded and replayed by sessions
    (signed by the SDK with SigV4 as usual; the signature is never recorded)."""

    plain: ClassVar[type[Any]] = AnthropicBedrock
    profile: ClassVar[ProviderProfile] = BEDROCK
    asynchronous: ClassVar[bool] = False
    original_client: AnthropicBedrock
    copy = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    with_options = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    request = _request  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above


class InstrumentedAsyncAnthropicBedrock(AsyncAnthropicBedrock):
    """An `AsyncAnthropicBedrock` whose every request is recorded and replayed."""

    plain: ClassVar[type[Any]] = AsyncAnthropicBedrock
    profile: ClassVar[ProviderProfile] = BEDROCK
    asynchronous: ClassVar[bool] = True
    original_client: AsyncAnthropicBedrock
    copy = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    with_options = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    request = _request_async  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above


class InstrumentedAnthropicVertex(AnthropicVertex):
    """An `AnthropicVertex` whose every request is recorded and replayed by sessions (its
    Google bearer token is never recorded)."""

    plain: ClassVar[type[Any]] = AnthropicVertex
    profile: ClassVar[ProviderProfile] = VERTEX
    asynchronous: ClassVar[bool] = False
    original_client: AnthropicVertex
    copy = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    with_options = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    request = _request  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above


class InstrumentedAsyncAnthropicVertex(AsyncAnthropicVertex):
    """An `AsyncAnthropicVertex` whose every request is recorded and replayed."""

    plain: ClassVar[type[Any]] = AsyncAnthropicVertex
    profile: ClassVar[ProviderProfile] = VERTEX
    asynchronous: ClassVar[bool] = True
    original_client: AsyncAnthropicVertex
    copy = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    with_options = _copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above
    request = _request_async  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as above


_INSTRUMENTED: tuple[type[Any], ...] = (
    InstrumentedAsyncAnthropic,
    InstrumentedAnthropic,
    InstrumentedAnthropicBedrock,
    InstrumentedAsyncAnthropicBedrock,
    InstrumentedAnthropicVertex,
    InstrumentedAsyncAnthropicVertex,
)
# The SDK's other platform clients, and why each is not captured.
_NOT_CAPTURED = {
    "AnthropicFoundry": "Microsoft Foundry",
    "AsyncAnthropicFoundry": "Microsoft Foundry",
    "AnthropicAWS": "Claude Platform on AWS",
    "AsyncAnthropicAWS": "Claude Platform on AWS",
    "AnthropicGoogleCloud": "Claude on Google Cloud",
    "AsyncAnthropicGoogleCloud": "Claude on Google Cloud",
    "AnthropicBedrockMantle": "Bedrock Mantle",
    "AsyncAnthropicBedrockMantle": "Bedrock Mantle",
}


@overload
def instrument(client: anthropic.AsyncAnthropic) -> InstrumentedAsyncAnthropic: ...
@overload
def instrument(client: anthropic.Anthropic) -> InstrumentedAnthropic: ...
@overload
def instrument(client: AnthropicBedrock) -> InstrumentedAnthropicBedrock: ...
@overload
def instrument(client: AsyncAnthropicBedrock) -> InstrumentedAsyncAnthropicBedrock: ...
@overload
def instrument(client: AnthropicVertex) -> InstrumentedAnthropicVertex: ...
@overload
def instrument(client: AsyncAnthropicVertex) -> InstrumentedAsyncAnthropicVertex: ...
def instrument(client: Any) -> Any:
    """An instrumented copy of `client`: every request it makes is an effect.

    `client` is not changed (`instrumented.original_client` is it). Inside `record()`
    each HTTP request of the copy is recorded as the effect named after its endpoint
    (`anthropic.messages.create`, `anthropic.messages.count_tokens`,
    `anthropic.models.list`, ...); inside `replay()`, `fork()` and case verification it
    is answered from the trace and nothing is sent. Outside every session the copy
    behaves as `client` does. Works for `Anthropic`, `AnthropicBedrock` and
    `AnthropicVertex` and their async forms, streaming or not, beta resources included.
    """
    if isinstance(client, _INSTRUMENTED):
        raise TypeError("this client is already instrumented; instrument the original once")
    name = type(client).__name__
    if name in _NOT_CAPTURED and type(client).__module__.startswith("anthropic"):
        raise TypeError(
            f"instrument() does not capture anthropic.{name} ({_NOT_CAPTURED[name]}) yet: its "
            "requests go to its own paths with its own credentials, which no profile names "
            "and no test covers. Use Anthropic, AnthropicBedrock or AnthropicVertex (or "
            "their async forms), or leave this client uninstrumented"
        )
    for instrumented in _INSTRUMENTED:
        plain = instrumented.plain
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
            profile, asynchronous = instrumented.profile, instrumented.asynchronous
            capture(twin, client._client, asynchronous=asynchronous, profile=profile)
            twin.original_client = client
            return twin
    raise TypeError(
        "instrument() takes an anthropic.Anthropic, AnthropicBedrock or AnthropicVertex "
        f"client (or its async form), not {type(client).__name__}"
    )
