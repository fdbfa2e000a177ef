"""`instrument(client)`: a copy of a `genai.Client` whose every request is an effect.

A `genai.Client` keeps its settings (key, credentials, base URL, API version, headers,
retries) and its HTTP clients in one API client (`client._api_client`), which every
resource (`models`, `chats`, `files`, `caches`, `batches`, `interactions`, ... and the same
under `client.aio`) sends through. The copy has a copy of that API client whose sync and
async HTTP clients are the capture core's capturing clients over the original's
(`toolreplay.adapters.capture`, with the Google Gen AI profile), given to it as
`http_options.httpx_client` and `httpx_async_client`: the SDK's own way to say which
httpx clients it sends through. So the SDK builds requests and parses responses exactly
as it does without Tool Replay, and the resources are the SDK's own, built by its own
constructor over the copied API client.

The async path: where aiohttp is installed, a plain client sends its async requests with
aiohttp; the copy sends them through the capturing httpx client instead, as the SDK does
for any client given an httpx async client (or where aiohttp is not installed). What
crosses the wire is the same request either way; the SDK parses both responses alike.
"""

from __future__ import annotations

import copy
from typing import Any, cast
from urllib.parse import urlsplit

from google import genai
from google.genai import _api_client  # the API client the SDK's resources send through
from google.genai.client import AsyncClient

from toolreplay.adapters.capture.transport import capturing_client
from toolreplay.adapters.google_genai.profile import GOOGLE_GENAI
from toolreplay.errors import UnsupportedRequestError
from toolreplay.runtime.session import offline_guard, session_var

__all__ = ["InstrumentedClient", "instrument"]


def _refuse_websocket() -> None:
    """Refuse a WebSocket connection (the Live API) inside a session, or while replay refuses."""
    if session_var.get() is not None or offline_guard.active:
        raise UnsupportedRequestError(
            "WebSocket connections (the Live API, live.connect, interactions.connect, ...) "
            "are not captured by Tool Replay: inside a session, or while a replay is open, "
            "an instrumented client refuses them rather than reach the network unrecorded. "
            "Make them with client.original_client outside any session"
        )


class _CapturedApiClient(_api_client.BaseApiClient):
    """The copied API client: sends through capturing HTTP clients, and refuses WebSocket
    connections inside sessions (every one the SDK opens reads its base URL or its
    WebSocket options first)."""

    def _websocket_base_url(self, *args: Any, **kwargs: Any) -> str:  # pyright: ignore[reportIncompatibleMethodOverride]  # passed on as given
        _refuse_websocket()
        return cast(Any, super())._websocket_base_url(*args, **kwargs)

    @property
    def _websocket_ssl_ctx(self) -> Any:
        _refuse_websocket()
        try:
            return vars(self)["_toolreplay_websocket_ssl_ctx"]
        except KeyError:  # a release that keeps no such options
            raise AttributeError("_websocket_ssl_ctx") from None

    @_websocket_ssl_ctx.setter
    def _websocket_ssl_ctx(self, value: Any) -> None:
        vars(self)["_toolreplay_websocket_ssl_ctx"] = value


class _RunningLoopPool:
    """The original async HTTP client's connection pool for the running event loop.

    google-genai 3.x keeps one pool per event loop (a pooled connection cannot be used
    from another loop), in an inner client per loop; the outer client's own transport is
    never used. Its capturing copy sends the same way.
    """

    def __init__(self, client: Any) -> None:
        self._client = client

    async def handle_async_request(self, request: Any) -> Any:
        inner = self._client._client_for_running_loop()
        return await inner._transport_for_url(request.url).handle_async_request(request)


def _captured(api: Any) -> _CapturedApiClient:
    """A copy of the API client that sends through capturing clients over its HTTP clients."""
    options = api._http_options
    base_path = urlsplit(str(options.base_url or "/")).path or "/"
    sync_http = capturing_client(
        api._httpx_client, asynchronous=False, base_path=base_path, profile=GOOGLE_GENAI
    )
    original_async = api._async_httpx_client
    async_http = capturing_client(
        original_async,
        asynchronous=True,
        base_path=base_path,
        profile=GOOGLE_GENAI,
        sends_through=_RunningLoopPool(original_async)
        if getattr(original_async, "_per_loop", False)
        else None,
    )
    twin: Any = copy.copy(api)
    state = cast(dict[str, Any], twin.__dict__)
    twin.__class__ = _CapturedApiClient
    if "_websocket_ssl_ctx" in state:  # now kept behind the property
        twin._websocket_ssl_ctx = state.pop("_websocket_ssl_ctx")
    twin._httpx_client = sync_http
    twin._async_httpx_client = async_http
    # The SDK's own switch: with httpx clients given, it sends through them, never
    # through aiohttp or google-auth's sessions, and closing the copy closes neither.
    twin._http_options = options.model_copy(
        update={"httpx_client": sync_http, "httpx_async_client": async_http}
    )
    if "_aiohttp_sessions" in state:
        twin._aiohttp_sessions = {}  # the original's, which the copy must not close
    if "_aiohttp_session" in state:
        twin._aiohttp_session = None  # google-genai 1.x's single session
    return cast(_CapturedApiClient, twin)


class InstrumentedClient(genai.Client):
    """A `genai.Client` whose every request (sync, and async under `aio`) is recorded and
    replayed by Tool Replay sessions.

    Made by `instrument(client)`; `original_client` is the client it copies.
    """

    original_client: genai.Client


def _refusal(client: genai.Client) -> str | None:
    """Why `client` cannot be captured, or None."""
    api: Any = cast(Any, client)._api_client
    kind: type = type(api)  # pyright: ignore[reportUnknownVariableType]  # the SDK client is untyped here
    if kind is not _api_client.BaseApiClient:
        return (
            f"its API client is a {kind.__qualname__} (the SDK's own record/replay "
            "client, chosen by debug_config or GOOGLE_GENAI_CLIENT_MODE), not the one that "
            "sends requests; instrument a client made without it"
        )
    options = api._http_options
    if getattr(options, "aiohttp_client", None) is not None:
        return (
            "it sends its async requests through the aiohttp session given as "
            "http_options.aiohttp_client, which Tool Replay does not capture; give it an "
            "httpx client instead (http_options.httpx_async_client), or leave that out"
        )
    for uses_google_auth in ("_use_google_auth_sync", "_use_google_auth_async"):
        check = getattr(api, uses_google_auth, None)
        if check is not None and check():
            return (
                "it sends through google-auth's mutual-TLS sessions (a client certificate "
                "is configured), not its httpx clients; give it httpx clients "
                "(http_options.httpx_client and httpx_async_client) made with the certificate"
            )
    if api._async_httpx_client is None:
        return "it has no async httpx client to capture; give it http_options.httpx_async_client"
    return None


def instrument(client: genai.Client) -> InstrumentedClient:
    """An instrumented copy of `client`: every request it makes is an effect.

    `client` is not changed (`instrumented.original_client` is it). Inside `record()`
    each HTTP request of the copy, through any resource, sync or under `.aio`, is
    recorded as the effect named after its API method
    (`google_genai.models.generate_content`, `google_genai.models.stream_generate_content`,
    `google_genai.models.count_tokens`, `google_genai.models.list`, ...); inside
    `replay()`, `fork()` and case verification it is answered from the trace and nothing
    is sent. Outside every session the copy behaves as `client` does, its async requests
    sent with httpx. WebSocket connections (the Live API) are refused inside sessions.
    """
    if isinstance(client, InstrumentedClient):
        raise TypeError("this client is already instrumented; instrument the original once")
    if isinstance(client, AsyncClient):
        raise TypeError(
            "instrument() takes the genai.Client, not its .aio: instrument the client, and "
            "use instrumented.aio for async calls (the same captured client)"
        )
    if not isinstance(client, genai.Client):  # pyright: ignore[reportUnnecessaryIsInstance]  # user input
        raise TypeError(f"instrument() takes a google.genai.Client, not {type(client).__name__}")
    if type(client) is not genai.Client:
        raise TypeError(
            f"instrument() takes a google.genai.Client, not the subclass "
            f"{type(client).__qualname__}: instrument a plain SDK client"
        )
    refusal = _refusal(client)
    if refusal is not None:
        raise TypeError(f"this genai.Client cannot be instrumented: {refusal}")
    api = _captured(cast(Any, client)._api_client)
    twin: Any = InstrumentedClient.__new__(InstrumentedClient)
    # The SDK's constructor builds every resource over the API client `_get_api_client`
    # gives it: here, the copy, so the resources are the SDK's own for this version.
    twin._get_api_client = lambda **_: api  # pyright: ignore[reportUnknownLambdaType]  # the SDK's arguments, unused
    try:
        cast(Any, genai.Client).__init__(twin, debug_config=cast(Any, client)._debug_config)
    finally:
        del twin._get_api_client
    twin.original_client = client
    return cast(InstrumentedClient, twin)
