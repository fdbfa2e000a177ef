"""`instrument(client)`: a copy of an OpenAI client whose every request is an effect.

The copy is made by the SDK itself (`client.copy()`, so every setting, Azure's
included, carries over) and differs from it in one thing: its HTTP client sends
through the capture core's transports (`toolreplay.adapters.capture`, with the
OpenAI profile) that wrap the original HTTP client's transports. The SDK builds
requests and parses responses exactly as it does without Tool Replay; only what
crosses the wire is recorded or replayed.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast, overload

import openai

from toolreplay.adapters.capture.sdk_clients import SdkErrors, capture, copy_instrumented
from toolreplay.adapters.openai.profile import OPENAI
from toolreplay.errors import UnsupportedRequestError
from toolreplay.runtime.session import offline_guard, session_var

__all__ = [
    "InstrumentedAsyncAzureOpenAI",
    "InstrumentedAsyncOpenAI",
    "InstrumentedAzureOpenAI",
    "InstrumentedOpenAI",
    "instrument",
]

_Client = TypeVar("_Client", bound="openai.OpenAI | openai.AsyncOpenAI")


def _capture(client: openai.OpenAI | openai.AsyncOpenAI, original_http: Any) -> None:
    """Give `client` an HTTP client that captures, sending through `original_http`'s
    transports, and remember the original for copies."""
    capture(
        client, original_http, asynchronous=isinstance(client, openai.AsyncOpenAI), profile=OPENAI
    )


def _copying(client: Any, copying: bool) -> None:
    client._toolreplay_copying = copying  # the SDK's copy reads websocket_base_url


def _copy(instrumented: Any, base: Any, kwargs: dict[str, Any]) -> Any:
    return copy_instrumented(
        instrumented,
        base,
        kwargs,
        asynchronous=issubclass(base, openai.AsyncOpenAI),
        profile=OPENAI,
        before=_copying,
    )


def _refuse_websocket() -> None:
    """Refuse a WebSocket connection (Realtime API) inside a session, or while replay refuses."""
    if session_var.get() is not None or offline_guard.active:
        raise UnsupportedRequestError(
            "WebSocket connections (the Realtime API, responses.connect, ...) are not captured "
            "by Tool Replay: inside a session, or while a replay is open, an instrumented "
            "client refuses them rather than reach the network unrecorded. Make them with "
            "client.original_client outside any session"
        )


_ERRORS = SdkErrors(openai.APIConnectionError, openai.OpenAIError, f"openai {openai.__version__}")
"""The SDK's exceptions: it wraps any exception from the transport as `APIConnectionError`."""


def _websocket_base_url() -> Any:
    """`websocket_base_url`, which every WebSocket connection the SDK opens reads, refused
    in sessions (the SDK's own `copy` reads it too, and is let through)."""

    def read(client: Any) -> Any:
        state = cast(dict[str, Any], vars(client))
        if not state.get("_toolreplay_copying", False):
            _refuse_websocket()
        return state.get("_toolreplay_websocket_base_url")

    def write(client: Any, value: Any) -> None:
        vars(client)["_toolreplay_websocket_base_url"] = value

    return property(read, write)


class InstrumentedOpenAI(openai.OpenAI):
    """An `openai.OpenAI` whose every request is recorded and replayed by Tool Replay sessions.

    Made by `instrument(client)`; `original_client` is the client it copies.
    `with_options(...)` and `copy(...)` return instrumented clients too.
    """

    original_client: openai.OpenAI
    websocket_base_url = _websocket_base_url()  # pyright: ignore[reportIncompatibleVariableOverride, reportAssignmentType]  # stores what the SDK assigns

    def copy(self, **kwargs: Any) -> InstrumentedOpenAI:  # pyright: ignore[reportIncompatibleMethodOverride]  # the SDK's parameters differ between 2.x and 3.x; all are passed on
        """The SDK's `copy`, still instrumented (a new `http_client` is captured too)."""
        return cast(InstrumentedOpenAI, _copy(self, openai.OpenAI, kwargs))

    with_options = copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as the SDK aliases it

    def request(self, *args: Any, **kwargs: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]  # passed on as given
        """The SDK's `request`; see `SdkErrors.surfacing` for the errors it raises differently."""
        with _ERRORS.surfacing():
            return cast(Any, super()).request(*args, **kwargs)


class InstrumentedAsyncOpenAI(openai.AsyncOpenAI):
    """An `openai.AsyncOpenAI` whose every request is recorded and replayed by sessions."""

    original_client: openai.AsyncOpenAI
    websocket_base_url = _websocket_base_url()  # pyright: ignore[reportIncompatibleVariableOverride, reportAssignmentType]  # stores what the SDK assigns

    def copy(self, **kwargs: Any) -> InstrumentedAsyncOpenAI:  # pyright: ignore[reportIncompatibleMethodOverride]  # see InstrumentedOpenAI.copy
        """The SDK's `copy`, still instrumented."""
        return cast(InstrumentedAsyncOpenAI, _copy(self, openai.AsyncOpenAI, kwargs))

    with_options = copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as the SDK aliases it

    async def request(self, *args: Any, **kwargs: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]  # passed on as given
        """The SDK's `request`; see `SdkErrors.surfacing` for the errors it raises differently."""
        with _ERRORS.surfacing():
            return await cast(Any, super()).request(*args, **kwargs)


class InstrumentedAzureOpenAI(openai.AzureOpenAI, InstrumentedOpenAI):
    """An `openai.AzureOpenAI` whose every request is recorded and replayed by sessions."""

    original_client: openai.AzureOpenAI  # pyright: ignore[reportIncompatibleVariableOverride]  # narrower: the Azure original

    def copy(self, **kwargs: Any) -> InstrumentedAzureOpenAI:  # pyright: ignore[reportIncompatibleMethodOverride]  # see InstrumentedOpenAI.copy
        """The SDK's `copy`, still instrumented."""
        return cast(InstrumentedAzureOpenAI, _copy(self, openai.AzureOpenAI, kwargs))

    def _configure_realtime(self, *args: Any, **kwargs: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]  # passed on as given
        _refuse_websocket()
        return cast(Any, super())._configure_realtime(*args, **kwargs)

    def _configure_realtime_with_api_key(self, *args: Any, **kwargs: Any) -> Any:
        _refuse_websocket()
        return cast(Any, super())._configure_realtime_with_api_key(*args, **kwargs)

    with_options = copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as the SDK aliases it


class InstrumentedAsyncAzureOpenAI(openai.AsyncAzureOpenAI, InstrumentedAsyncOpenAI):
    """An `openai.AsyncAzureOpenAI` whose every request is recorded and replayed by sessions."""

    original_client: openai.AsyncAzureOpenAI  # pyright: ignore[reportIncompatibleVariableOverride]  # narrower: the Azure original

    def copy(self, **kwargs: Any) -> InstrumentedAsyncAzureOpenAI:  # pyright: ignore[reportIncompatibleMethodOverride]  # see InstrumentedOpenAI.copy
        """The SDK's `copy`, still instrumented."""
        return cast(InstrumentedAsyncAzureOpenAI, _copy(self, openai.AsyncAzureOpenAI, kwargs))

    async def _configure_realtime(self, *args: Any, **kwargs: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]  # passed on as given
        _refuse_websocket()
        return await cast(Any, super())._configure_realtime(*args, **kwargs)

    async def _configure_realtime_with_api_key(self, *args: Any, **kwargs: Any) -> Any:
        _refuse_websocket()
        return await cast(Any, super())._configure_realtime_with_api_key(*args, **kwargs)

    with_options = copy  # pyright: ignore[reportAssignmentType, reportIncompatibleMethodOverride]  # as the SDK aliases it


# Most specific first: the Azure clients are subclasses of the plain ones.
_INSTRUMENTED: tuple[tuple[type[Any], type[Any]], ...] = (
    (openai.AsyncAzureOpenAI, InstrumentedAsyncAzureOpenAI),
    (openai.AzureOpenAI, InstrumentedAzureOpenAI),
    (openai.AsyncOpenAI, InstrumentedAsyncOpenAI),
    (openai.OpenAI, InstrumentedOpenAI),
)


@overload
def instrument(client: openai.AsyncAzureOpenAI) -> InstrumentedAsyncAzureOpenAI: ...
@overload
def instrument(client: openai.AzureOpenAI) -> InstrumentedAzureOpenAI: ...
@overload
def instrument(client: openai.AsyncOpenAI) -> InstrumentedAsyncOpenAI: ...
@overload
def instrument(client: openai.OpenAI) -> InstrumentedOpenAI: ...
def instrument(
    client: openai.OpenAI | openai.AsyncOpenAI,
) -> InstrumentedOpenAI | InstrumentedAsyncOpenAI:
    """An instrumented copy of `client`: every request it makes is an effect.

    `client` is not changed (`instrumented.original_client` is it). Inside
    `record()` each HTTP request of the copy is recorded as the effect named
    after its endpoint (`openai.responses.create`, `openai.chat.completions.create`,
    `openai.models.list`, ...); inside `replay()`, `fork()` and case verification
    it is answered from the trace and nothing is sent. Outside every session the
    copy behaves as `client` does. Works for `OpenAI`, `AsyncOpenAI`,
    `AzureOpenAI` and `AsyncAzureOpenAI`, sync and async, streaming or not.
    """
    if isinstance(client, InstrumentedOpenAI | InstrumentedAsyncOpenAI):
        raise TypeError("this client is already instrumented; instrument the original once")
    for plain, instrumented in _INSTRUMENTED:
        if isinstance(client, plain):
            if type(client) is not plain:
                raise TypeError(
                    f"instrument() takes an {plain.__qualname__} client, not the subclass "
                    f"{type(client).__qualname__}: instrument the client before subclassing "
                    "it, or instrument a plain SDK client"
                )
            twin: Any = client.copy()
            # The SDK copies every setting; the instrumented class adds only `original_client`
            # and keeps `copy`/`with_options` instrumented.
            twin.__class__ = instrumented
            state = cast(dict[str, Any], vars(twin))
            twin.websocket_base_url = state.pop("websocket_base_url", None)  # now the property's
            _capture(twin, cast(Any, client)._client)  # the SDK's HTTP client attribute
            twin.original_client = client
            return twin
    raise TypeError(
        f"instrument() takes an openai.OpenAI, AsyncOpenAI, AzureOpenAI or AsyncAzureOpenAI "
        f"client, not {type(client).__name__}"
    )
