"""The capturing transports: every request of an instrumented HTTP client, recorded or replayed.

An instrumented client's HTTP client (an `httpx.Client` or `httpx2.Client`, or
their async forms; the two libraries share this API) sends through these
transports, each wrapping one of the original HTTP client's transports. Each
request is one effect call, named and read as the client's `ProviderProfile`
says, and decided by the session visible where the request is sent:

- no session, nothing refused: the request goes to the original transport,
  unrecorded, and its response comes back untouched (the instrumented client
  behaves as the plain one);
- no session while a replay is open somewhere: refused (`SessionContextError`);
- record: the request goes to the original transport; the response is handed
  on as it streams in and recorded when its body ends or is closed, so a stream
  the application stops reading is recorded as what it received;
- replay, fork, case verification: answered from the trace; the original
  transport is never called, except for a call a fork's `live=` lets run live
  (one the source does not hold): that one is sent and kept in the branch
  exactly as a recording keeps a call, with the network allowed while it is sent.

A transport error is recorded as a failure and raised again on replay as the same
class of the HTTP library the replaying client uses (`errors.py`).
"""

from __future__ import annotations

import contextvars
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from toolreplay.adapters.capture.errors import (
    RecordedTransportError,
    library_error,
    register_transport_error_envelope,
    transport_error,
)
from toolreplay.adapters.capture.exchange import (
    StreamEnd,
    is_secret_query_name,
    kept_request_headers,
    recorded_response,
    replayed_body,
    request_inputs,
)
from toolreplay.adapters.capture.profile import ProviderProfile
from toolreplay.adapters.capture.streams import (
    AsyncRecordingStream,
    AsyncReplayStream,
    ReplayedBody,
    SyncRecordingStream,
    SyncReplayStream,
    stream_class,
)
from toolreplay.errors import (
    ReplayMiss,
    StreamReplayError,
    ToolReplayError,
    UnsupportedRequestError,
    UnsupportedResponseError,
)
from toolreplay.portable import JsonValue
from toolreplay.runtime.network import allowing_network
from toolreplay.runtime.recipes import register_recipe_resolver
from toolreplay.runtime.recording import RecordSession
from toolreplay.runtime.replaying import ReplaySession
from toolreplay.runtime.session import PendingCall, Session, offline_guard, session_var

__all__ = [
    "AsyncCaptureTransport",
    "CaptureTransport",
    "capturing_client",
    "http_library",
    "register_profile",
    "replayed_operation",
]

replayed_operation: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "toolreplay_replayed_operation", default=None
)
"""The operation the last replayed request in this context was answered from (for errors)."""


def register_profile(profile: ProviderProfile) -> None:
    """Make a profile's recorded transport failures and recipes known to this process:
    its envelope to the failure codec, its `recipes` to forks, for its namespace."""
    register_transport_error_envelope(profile.transport_error_envelope)
    if profile.recipes is not None:
        register_recipe_resolver(profile.namespace, profile.recipes)


def http_library(http_client: object, *, what: str = "the HTTP client") -> ModuleType:
    """The HTTP library (`httpx` or `httpx2`) an HTTP client comes from.

    The client is often a subclass defined elsewhere (an SDK's own default client,
    `openai.DefaultHttpxClient`, the aiohttp-backed client), so the library is the
    one its first `httpx`/`httpx2` base class comes from.
    """
    for kind in type(http_client).__mro__:
        root = kind.__module__.split(".", 1)[0]
        module = sys.modules.get(root)
        if root in ("httpx", "httpx2") and module is not None:
            return module
    raise TypeError(
        f"{what} is a {type(http_client).__qualname__}, not an httpx or httpx2 client (nor a "
        "subclass of one); instrument() captures requests at that client's transport"
    )


def capturing_client(
    original_http: Any,
    *,
    asynchronous: bool,
    base_path: str,
    profile: ProviderProfile,
    sends_through: Any = None,
    origin: Origin | None = None,
) -> Any:
    """A new HTTP client that captures, sending through `original_http`'s transports.

    `base_path` is the path of the API's base URL, and `origin` its scheme, host and
    port when the API has one (an SDK client's base URL): for a profile with
    `same_host`, a request elsewhere is no endpoint of the API (RFC 0006 §3.5).

    It is one layer, configured as `original_http` is (auth, event hooks, base URL,
    redirects, timeout, default headers and query, the same cookie jar), whose transport
    and mounted transports (proxies) are the original's, each wrapped in a capturing
    transport. So a request crosses one HTTP client, as it does without Tool Replay, and
    the original's connection pool carries it. Closing it closes nothing of the
    original's.

    `sends_through`, when given, is the one transport to wrap instead of the original's
    transport and mounts: for an original client that does not send through its own
    (google-genai's async client picks a pool per event loop, and its transport is
    never used).
    """
    library = http_library(original_http, what=f"the {profile.provider} client's HTTP client")
    capture: Any
    if asynchronous:
        capture, client_class = AsyncCaptureTransport, library.AsyncClient
    else:
        capture, client_class = CaptureTransport, library.Client
    where = _Where(base_path, origin)
    # The HTTP client's transport and mounts have no public accessor; both libraries keep
    # them here. A mount of None (no proxy for those URLs) stays None.
    mounts = {
        pattern.pattern: None if transport is None else capture(transport, library, where, profile)
        for pattern, transport in original_http._mounts.items()
    }
    if sends_through is not None:
        mounts = {}  # the transport given picks its own
    return client_class(
        transport=capture(
            original_http._transport if sends_through is None else sends_through,
            library,
            where,
            profile,
        ),
        mounts=mounts,
        auth=original_http.auth,
        event_hooks=original_http.event_hooks,
        base_url=original_http.base_url,
        headers=original_http.headers,
        params=original_http.params,
        cookies=original_http.cookies.jar,  # shared, as the original SDK client shares it
        timeout=original_http.timeout,
        follow_redirects=original_http.follow_redirects,
        max_redirects=original_http.max_redirects,
        default_encoding=getattr(original_http, "_default_encoding", "utf-8"),
        trust_env=False,  # the original's environment proxies are among its mounts
    )


Origin = tuple[str, str, int | None]
"""A base URL's scheme, host and port (None: the scheme's default)."""


@dataclass(frozen=True, slots=True)
class _Where:
    """Where the API's endpoints are: below `path` (ending in `/`), at `origin` if known."""

    path: str
    origin: Origin | None


@dataclass(frozen=True, slots=True)
class _Exchange:
    """One request as an effect call: its name, inputs and the session deciding it."""

    name: str
    inputs: dict[str, JsonValue]
    session: Session
    operation: str


class _Capture:
    """What the sync and async transports share: deciding a request, building responses.

    `original` is the transport wrapped (the original HTTP client's own, or one of its
    mounts), `library` the HTTP library of the client sending through it, `where` the
    API's base URL path (and origin, if known), `profile` the provider's.
    """

    def __init__(
        self, original: Any, library: ModuleType, where: _Where, profile: ProviderProfile
    ) -> None:
        self.original = original
        self.library = library
        base_path = where.path
        self.base_path = base_path if base_path.endswith("/") else base_path + "/"
        self.origin = where.origin if profile.same_host else None
        self.profile = profile
        self.namespace = profile.namespace

    def exchange(self, request: Any) -> _Exchange | None:
        """The request as an effect call, or None to send it live, unrecorded."""
        session = session_var.get()
        method = str(request.method)
        if session is None or not session.observing:
            if session is None and offline_guard.active:
                raise offline_guard.refuse(f"{self.namespace} request {method} {request.url.path}")
            return None
        profile = self.profile
        try:
            name = profile.effect_name(method, self._path(request))
            if not isinstance(session, ReplaySession):
                self.check_origin(request)
            content = request.read()
            inputs = request_inputs(
                method,
                request.url.path,
                self.base_path,
                request.url.params.multi_items(),
                self._content_type(request),
                content,
                stable=profile.stable_body,
                headers=kept_request_headers(profile, request.headers.multi_items())
                if profile.request_headers
                else None,
            )
        except ToolReplayError as error:
            # A per-request capture gives up and sends it live (RFC 0008 §2.1).
            if not session.tolerates(f"{self.namespace} request {method}", error):
                raise
            return None
        return _Exchange(name, inputs, session, f"{self.namespace}.{name}")

    def _content_type(self, request: Any) -> str | None:
        """The content type the request's body is recorded by (the profile's `body_type`)."""
        sent: str | None = request.headers.get("content-type")
        body_type = self.profile.body_type
        return sent if body_type is None else body_type(sent, request.headers)

    def _path(self, request: Any) -> str:
        path = str(request.url.path)
        if path.startswith(self.base_path):
            return "/" + path[len(self.base_path) :]
        raise UnsupportedRequestError(
            f"{request.method} {path}: this request is not below the client's base URL path "
            f"{self.base_path!r}, so it is no endpoint of this client's API and cannot be "
            "recorded or replayed; make it with a client that is not instrumented"
        )

    def check_origin(self, request: Any) -> None:
        """Refuse to send a request to another host than the API's, to record or as a
        fork's live call. A base URL of `/` (Anthropic's) puts every path below it, so
        the host decides. Replay leaves the host out, as identity does (§3.4): an absolute
        URL the API gave (a batch's `results_url`) names the host it was recorded from."""
        url = request.url
        if self.origin is not None and (url.scheme, url.host, url.port) != self.origin:
            raise UnsupportedRequestError(
                f"{request.method} {url.path}: this request goes to another host than the "
                "client's base URL, so it is no endpoint of this client's API and cannot be "
                "recorded or sent from a fork; make it with a client that is not instrumented"
            )

    def call_for(self, exchange: _Exchange, request: Any) -> Any:
        """The replayed response to a request, or the call to send it as.

        Replay answers from the trace (a recorded transport failure is raised, after
        the body received before it, if any). A call to send is a `PendingCall`: a
        recording's, or a live one a fork's `live=` let through.
        """
        session = exchange.session
        if not isinstance(session, ReplaySession):
            return self._begin(exchange)
        try:
            # Read only: the output is turned into bytes and never changed.
            answer = session.answer(self.namespace, exchange.name, exchange.inputs, read_only=True)
        except ReplayMiss as miss:
            explain = self.profile.explain_miss
            clearer = explain(session, exchange.operation, exchange.inputs) if explain else None
            if clearer is not None:
                raise clearer from miss
            raise
        except RecordedTransportError as recorded:
            failure = library_error(self.library, recorded, request)
            if recorded.partial is None:
                raise failure from None
            return self.replayed_response(exchange, recorded.partial, request, failure)
        if isinstance(answer, PendingCall):
            try:
                self.check_origin(request)  # a live call: it would be sent
            except UnsupportedRequestError:
                session.abort(answer)
                raise
            return answer
        return self.replayed_response(exchange, answer, request, None)

    def _begin(self, exchange: _Exchange) -> PendingCall:
        """The recorded call of a request about to be sent: its identity is given now, so
        identical requests take their occurrences in the order they are sent (as replay
        numbers them), though each is recorded when its response ends."""
        session = exchange.session
        assert isinstance(session, RecordSession)
        # The inputs were built for this request alone: handed over, not copied.
        return session.begin(self.namespace, exchange.name, exchange.inputs)

    def replayed_response(
        self, exchange: _Exchange, output: JsonValue, request: Any, failure: Exception | None
    ) -> Any:
        if not isinstance(output, dict):
            raise UnsupportedResponseError(
                f"{exchange.operation}: the recorded output is not an object with status, "
                "headers and body; re-record the call, or `toolreplay migrate` a trace "
                "recorded by an older adapter"
            )
        status = output.get("status")
        headers = output.get("headers")
        if type(status) is not int or not isinstance(headers, dict):
            raise UnsupportedResponseError(
                f"{exchange.operation}: $.output.status must be an int and $.output.headers "
                "an object; re-record the call"
            )
        content = replayed_body(exchange.operation, output, self.profile.stream_format)
        replayed_operation.set(
            f"{exchange.operation} ({exchange.inputs['method']} {exchange.inputs['path']})"
        )
        beyond: Exception | None = failure
        again: Exception | None = failure
        if failure is None and output.get("end") == "closed_early":
            beyond = StreamReplayError(
                f"{exchange.operation}: the application read past the end of the recording; "
                "when it was recorded the application stopped reading the response here and "
                "closed it. Stop reading at the same point, or re-record the call"
            )
            # A later reading is the SDK draining the stream before closing it (openai
            # 3.x, async), which discards what it reads and tolerates this error.
            again = self.library.ReadError(
                f"{exchange.operation}: the response was read again past the end of its "
                "recording; when it was recorded the application closed it there, so what "
                "followed was never received",
                request=request,
            )
        return self.library.Response(
            status,
            headers=[(name, str(value)) for name, value in headers.items()],
            stream=self._replay_stream(ReplayedBody(content, beyond, again)),
            request=request,
        )

    def _replay_stream(self, body: ReplayedBody) -> Any:
        raise NotImplementedError

    def recorded_output(
        self, response: Any, request: Any, content: bytes, end: StreamEnd, effect: str
    ) -> tuple[dict[str, JsonValue], bool]:
        output, portable = recorded_response(
            self.profile,
            response.status_code,
            response.headers.multi_items(),
            content,
            end,
            effect=effect,
        )
        if 300 <= response.status_code < 400:
            location = self._redirect_target(response.headers.get("location"), request)
            headers = output["headers"]
            if isinstance(headers, dict):
                headers.pop("location", None)  # only as a target below the base URL
                if location is not None:
                    headers["location"] = location
        return output, portable

    def _redirect_target(self, location: str | None, request: Any) -> str | None:
        """A redirect's target as a path and query, so that replay follows it too; None
        unless it is an endpoint below this client's base URL with no credential-like
        query parameter (a replayed redirect without it is not followed)."""
        if location is None:
            return None
        origin = request.url
        target = origin.join(location)
        if (
            (target.scheme, target.host, target.port) != (origin.scheme, origin.host, origin.port)
            or target.userinfo
            or not target.path.startswith(self.base_path)
            or any(is_secret_query_name(name) for name in target.params)
        ):
            return None
        return target.raw_path.decode("ascii")

    def record(
        self,
        session: Session,
        call: PendingCall,
        response: Any,
        request: Any,
        content: bytes,
        end: StreamEnd,
        error: Exception | None,
    ) -> None:
        """Keep a sent request's exchange: a recording's call, or a fork's live one."""
        try:
            output, portable = (
                self.recorded_output(response, request, content, end, call.identity.name)
                if response is not None
                else (None, False)
            )
        except BaseException:
            session.abort(call)
            raise
        if error is None:
            assert output is not None
            binary = self.profile.stream_format.binary and "events" in output
            encoded = None if binary else _scan_text(output, content)
            session.complete(call, output, portable=portable, encoded=encoded)
        else:
            envelope = self.profile.transport_error_envelope
            session.fail(call, transport_error(self.library, error, request, output, envelope))

    def handed_on(self, response: Any, stream: Any, request: Any) -> Any:
        """The live response being recorded, as the instrumented client's HTTP client
        receives it: `stream` hands on the body decoded (`iter_bytes`, which also serves
        a body the transport read already), so its encoding and length no longer apply."""
        headers = [
            (name, value)
            for name, value in response.headers.raw
            if name.lower() not in (b"content-encoding", b"content-length", b"transfer-encoding")
        ]
        return self.library.Response(
            response.status_code,
            headers=headers,
            stream=stream,
            request=request,
            extensions=response.extensions,
        )


def _scan_text(output: dict[str, JsonValue], content: bytes) -> bytes | None:
    """Text for the secret scan's prefilter, so that the output is not JSON-encoded for
    it: the body as received, then the kept header values.

    A prefilter match in the output's JSON text lies inside one string, key or integer
    and is made of letters, digits, `_`, `-`, `.` and spaces, which the body holds as
    themselves; so the same match is in these bytes (the output's own keys are fixed
    words that match nothing; a float's digits may be written differently, but no rule
    reads floats). Not so when the body escapes characters as `\\u....`, for a
    base64 body, or for a binary stream's events (the caller's): then None, and the scan
    encodes the output.
    """
    if "base64" in output or b"\\u" in content:
        return None
    headers = output["headers"]
    assert isinstance(headers, dict)
    values = "\n".join(str(value) for value in headers.values())
    return b"%b\n%b" % (content, values.encode())


class CaptureTransport(_Capture):
    """A transport of an instrumented sync client, wrapping one of the original client's."""

    def _replay_stream(self, body: ReplayedBody) -> Any:
        return stream_class(self.library, "SyncByteStream", SyncReplayStream)(body)

    def handle_request(self, request: Any) -> Any:
        exchange = self.exchange(request)
        if exchange is None:
            return self.original.handle_request(request)
        call = self.call_for(exchange, request)
        if not isinstance(call, PendingCall):
            return call  # replayed
        session = exchange.session
        stream = stream_class(self.library, "SyncByteStream", SyncRecordingStream)(
            self, session, call, request
        )
        try:
            with allowing_network():  # lets a fork's live call through the network guard
                stream.response = self.original.handle_request(request)
        except Exception as error:
            self.record(session, call, None, request, b"", "complete", error)
            raise
        except BaseException:
            session.abort(call)  # interrupted: nothing to record
            raise
        stream.watch()
        return self.handed_on(stream.response, stream, request)

    def __enter__(self) -> CaptureTransport:
        return self  # entering the instrumented client opens nothing of the original's

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to close: the original transport belongs to the original client."""


class AsyncCaptureTransport(_Capture):
    """The transport of an instrumented async client."""

    def _replay_stream(self, body: ReplayedBody) -> Any:
        return stream_class(self.library, "AsyncByteStream", AsyncReplayStream)(body)

    async def handle_async_request(self, request: Any) -> Any:
        exchange = self.exchange(request)
        if exchange is None:
            return await self.original.handle_async_request(request)
        # Replay awaits nothing: no transport coroutine is ever created.
        call = self.call_for(exchange, request)
        if not isinstance(call, PendingCall):
            return call  # replayed
        session = exchange.session
        stream = stream_class(self.library, "AsyncByteStream", AsyncRecordingStream)(
            self, session, call, request
        )
        try:
            with allowing_network():  # lets a fork's live call through the network guard
                stream.response = await self.original.handle_async_request(request)
        except Exception as error:
            self.record(session, call, None, request, b"", "complete", error)
            raise
        except BaseException:
            session.abort(call)  # cancelled: nothing to record
            raise
        stream.watch()
        return self.handed_on(stream.response, stream, request)

    async def __aenter__(self) -> AsyncCaptureTransport:
        return self  # entering the instrumented client opens nothing of the original's

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Nothing to close: the original transport belongs to the original client."""
