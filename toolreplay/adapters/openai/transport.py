"""The capturing transports: every request of an instrumented client, recorded or replayed.

An instrumented client's HTTP client (an `httpx.Client` for openai 2.x, an
`httpx2.Client` for 3.x, or their async forms; the two libraries share this
API) sends through these transports, each wrapping one of the original HTTP
client's transports. Each request is one effect call, decided by the session
visible where the SDK sends it:

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

A transport error (timeout, refused connection, a stream cut by the server) is
recorded as a failure and raised again on replay as the same class of the
HTTP library the replaying client uses, which the SDK maps to the same
`APITimeoutError` or `APIConnectionError`.
"""

from __future__ import annotations

import contextvars
import functools
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

from toolreplay.adapters.openai.exchange import (
    EFFECT_NAMESPACE,
    StreamEnd,
    effect_name,
    is_secret_query_name,
    recorded_response,
    replayed_body,
    request_inputs,
)
from toolreplay.errors import (
    LegacyOpenAITraceError,
    ReplayMiss,
    StreamReplayError,
    ToolReplayError,
    UnsupportedRequestError,
    UnsupportedResponseError,
)
from toolreplay.failures import register_failure_codec
from toolreplay.portable import JsonValue, encodable_text
from toolreplay.runtime.context import PendingCall, offline_guard, session_var
from toolreplay.runtime.network import allowing_network
from toolreplay.runtime.recording import RecordSession
from toolreplay.runtime.replaying import ReplaySession
from toolreplay.runtime.session import Session
from toolreplay.trace.model import operation_location

__all__ = [
    "TRANSPORT_ERRORS",
    "AsyncCaptureTransport",
    "CaptureTransport",
    "RecordedTransportError",
    "http_library",
    "replayed_operation",
]

TRANSPORT_ERRORS = (
    "ConnectTimeout",
    "ReadTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "TimeoutException",
    "ConnectError",
    "ReadError",
    "WriteError",
    "CloseError",
    "NetworkError",
    "RemoteProtocolError",
    "LocalProtocolError",
    "ProtocolError",
    "ProxyError",
    "UnsupportedProtocol",
    "TransportError",
)
"""The HTTP library's transport errors a recording keeps by class (most specific first)."""

replayed_operation: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "toolreplay_openai_replayed_operation", default=None
)
"""The operation the last replayed request in this context was answered from (for errors)."""

_ERROR_ENVELOPE = "openai.transport_error"
_ERROR_VERSION = 1


def http_library(http_client: object) -> ModuleType:
    """The HTTP library (`httpx` or `httpx2`) an SDK's HTTP client comes from.

    The client is usually a subclass defined elsewhere (the SDK's own default
    client, `openai.DefaultHttpxClient`, the aiohttp-backed client), so the
    library is the one its first `httpx`/`httpx2` base class comes from.
    """
    for kind in type(http_client).__mro__:
        root = kind.__module__.split(".", 1)[0]
        module = sys.modules.get(root)
        if root in ("httpx", "httpx2") and module is not None:
            return module
    raise TypeError(
        f"the OpenAI client's HTTP client is a {type(http_client).__qualname__}, not an "
        "httpx or httpx2 client (nor a subclass of one); instrument() captures requests at "
        "that client's transport"
    )


class RecordedTransportError(Exception):
    """A transport error as recorded: the library's class name, its message, and the
    response received before it (a stream cut midway), if any.

    Raised by replay inside the transport, which turns it back into the HTTP
    library's own exception; applications never see it.
    """

    def __init__(self, kind: str, message: str, partial: dict[str, JsonValue] | None) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.partial = partial


class _TransportErrorCodec:
    """Records `RecordedTransportError` as `httpx.<Class>` and rebuilds it on replay."""

    def error_type(self, error: Exception) -> str | None:
        if isinstance(error, RecordedTransportError):
            return f"httpx.{error.kind}"
        return None

    def capture(self, error: Exception) -> JsonValue:
        assert isinstance(error, RecordedTransportError)
        return {
            "envelope": _ERROR_ENVELOPE,
            "version": _ERROR_VERSION,
            "kind": error.kind,
            "message": error.message,
            "response": error.partial,
        }

    def rebuild(self, error_type: str, envelope: JsonValue) -> Exception:
        kind = error_type.removeprefix("httpx.")
        if (
            not isinstance(envelope, dict)
            or envelope.get("envelope") != _ERROR_ENVELOPE
            or envelope.get("version") != _ERROR_VERSION
            or envelope.get("kind") != kind
            or kind not in TRANSPORT_ERRORS
        ):
            raise UnsupportedResponseError(
                f"{error_type}: the recorded failure is not an {_ERROR_ENVELOPE} envelope of "
                f"version {_ERROR_VERSION} for {kind!r}; re-record the call"
            )
        message = envelope.get("message")
        partial = envelope.get("response")
        return RecordedTransportError(
            kind,
            message if isinstance(message, str) else "",
            cast(dict[str, JsonValue], partial) if isinstance(partial, dict) else None,
        )


register_failure_codec(_TransportErrorCodec(), tuple(f"httpx.{kind}" for kind in TRANSPORT_ERRORS))


def _transport_error(
    library: ModuleType, error: Exception, request: Any, partial: dict[str, JsonValue] | None
) -> Exception:
    """What to record for `error`: a `RecordedTransportError`, or `error` itself."""
    if not isinstance(error, library.TransportError):
        return error
    kind = next(
        (kind.__name__ for kind in type(error).__mro__ if kind.__name__ in TRANSPORT_ERRORS),
        "TransportError",
    )
    message = encodable_text(str(error))
    url = request.url
    for secret in (str(url), url.netloc.decode("ascii", "replace"), url.host):
        if secret:
            message = message.replace(secret, "<url>")
    return RecordedTransportError(kind, message, partial)


@functools.cache
def _stream_class(library: ModuleType, base: str, behaviour: type) -> type:
    """`behaviour` as a subclass of the library's `SyncByteStream`/`AsyncByteStream`.

    The HTTP clients check a transport's response stream against those classes,
    and which library is in use is only known per client.
    """
    return type(behaviour.__name__, (behaviour, getattr(library, base)), {})


def _library_error(library: ModuleType, recorded: RecordedTransportError, request: Any) -> Any:
    return getattr(library, recorded.kind)(recorded.message, request=request)


@dataclass(frozen=True, slots=True)
class _Exchange:
    """One request as an effect call: its name, inputs and the session deciding it."""

    name: str
    inputs: dict[str, JsonValue]
    session: Session

    @property
    def operation(self) -> str:
        return f"{EFFECT_NAMESPACE}.{self.name}"


class _Capture:
    """What the sync and async transports share: deciding a request, building responses.

    `original` is the transport wrapped (the original HTTP client's own, or one of its
    mounts), `library` the HTTP library of the client sending through it.
    """

    def __init__(self, original: Any, library: ModuleType, base_path: str) -> None:
        self.original = original
        self.library = library
        self.base_path = base_path if base_path.endswith("/") else base_path + "/"

    def exchange(self, request: Any) -> _Exchange | None:
        """The request as an effect call, or None to send it live, unrecorded."""
        session = session_var.get()
        method = str(request.method)
        if session is None or not session.observing:
            if session is None and offline_guard.active:
                raise offline_guard.refuse(
                    f"{EFFECT_NAMESPACE} request {method} {request.url.path}"
                )
            return None
        try:
            name = effect_name(method, self._path(request))
            content = request.read()
            inputs = request_inputs(
                method,
                request.url.path,
                self.base_path,
                request.url.params.multi_items(),
                request.headers.get("content-type"),
                content,
            )
        except ToolReplayError as error:
            # A per-request capture gives up and sends it live (RFC 0008 §2.1).
            if not session.tolerates(f"{EFFECT_NAMESPACE} request {method}", error):
                raise
            return None
        return _Exchange(name, inputs, session)

    def _path(self, request: Any) -> str:
        path = str(request.url.path)
        if path.startswith(self.base_path):
            return "/" + path[len(self.base_path) :]
        raise UnsupportedRequestError(
            f"{request.method} {path}: this request is not below the client's base URL path "
            f"{self.base_path!r}, so it is no endpoint of this client's API and cannot be "
            "recorded or replayed; make it with a client that is not instrumented"
        )

    def call_for(self, exchange: _Exchange, request: Any) -> Any:
        """The replayed response to a request, or the call to send it as.

        Replay answers from the trace (a recorded transport failure is raised, after
        the body received before it, if any). A call to send is a `PendingCall`: a
        recording's, or a live one a fork's `live=` let through.
        """
        session = exchange.session
        if not isinstance(session, ReplaySession):
            return _begin(exchange)
        try:
            # Read only: the output is turned into bytes and never changed.
            answer = session.answer(
                EFFECT_NAMESPACE, exchange.name, exchange.inputs, read_only=True
            )
        except ReplayMiss as miss:
            legacy = _legacy_error(session, exchange)
            if legacy is not None:
                raise legacy from miss
            raise
        except RecordedTransportError as recorded:
            failure = _library_error(self.library, recorded, request)
            if recorded.partial is None:
                raise failure from None
            return self.replayed_response(exchange, recorded.partial, request, failure)
        if isinstance(answer, PendingCall):
            return answer
        return self.replayed_response(exchange, answer, request, None)

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
        content = replayed_body(exchange.operation, output)
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
            stream=self._replay_stream(_ReplayedBody(content, beyond, again)),
            request=request,
        )

    def _replay_stream(self, body: _ReplayedBody) -> Any:
        raise NotImplementedError

    def stream_of(self, behaviour: type, base: str) -> Any:
        """The class of a response stream with `behaviour`, for this client's library."""
        return _stream_class(self.library, base, behaviour)

    def recorded_output(
        self, response: Any, request: Any, content: bytes, end: StreamEnd
    ) -> tuple[dict[str, JsonValue], bool]:
        output, portable = recorded_response(
            response.status_code, response.headers.multi_items(), content, end
        )
        if 300 <= response.status_code < 400:
            location = self._redirect_target(response.headers.get("location"), request)
            headers = output["headers"]
            if location is not None and isinstance(headers, dict):
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


def _legacy_error(session: ReplaySession, exchange: _Exchange) -> LegacyOpenAITraceError | None:
    convert = (
        "Convert the trace once with `toolreplay migrate TRACE --output NEW_TRACE` and "
        "replay the new trace"
    )
    uploading = "body_digest" in exchange.inputs
    for operation in session.trace.operations:
        if operation.identity.namespace != EFFECT_NAMESPACE:
            continue
        if "method" not in operation.inputs:
            return LegacyOpenAITraceError(
                f"{exchange.operation}: this trace holds {operation.effect} calls recorded by "
                "the first OpenAI adapter (whose inputs were model, input, reasoning and "
                "max_output_tokens); today's adapter records every request as method, path, "
                f"query and body. {convert}"
            )
        digest = operation.inputs.get("body_digest")
        if uploading and isinstance(digest, dict) and "sha256" in digest:
            return LegacyOpenAITraceError(
                f"{exchange.operation}: this trace records file uploads by a hex digest "
                f"(body_digest.sha256, {operation_location(operation)}); today's adapter "
                f"records it in base64 (body_digest.sha256_base64). {convert}"
            )
    return None


def _begin(exchange: _Exchange) -> PendingCall:
    """The recorded call of a request about to be sent: its identity is given now, so
    identical requests take their occurrences in the order they are sent (as replay
    numbers them), though each is recorded when its response ends."""
    session = exchange.session
    assert isinstance(session, RecordSession)
    # The inputs were built for this request alone: handed over, not copied.
    return session.begin(EFFECT_NAMESPACE, exchange.name, exchange.inputs, owned=True)


def _record(
    capture: _Capture,
    exchange: _Exchange,
    call: PendingCall,
    response: Any,
    request: Any,
    chunks: list[bytes],
    end: StreamEnd,
    error: Exception | None,
) -> None:
    """Keep a sent request's exchange: a recording's call, or a fork's live one."""
    session = exchange.session
    content = b"".join(chunks)
    try:
        output, portable = (
            capture.recorded_output(response, request, content, end)
            if response is not None
            else (None, False)
        )
    except BaseException:
        session.abort(call)
        raise
    if error is None:
        assert output is not None
        session.complete(call, output, portable=portable, encoded=_scan_text(output, content))
    else:
        session.fail(call, _transport_error(capture.library, error, request, output))


def _scan_text(output: dict[str, JsonValue], content: bytes) -> bytes | None:
    """Text for the secret scan's prefilter, so that the output is not JSON-encoded for
    it: the body as received, then the kept header values.

    A prefilter match in the output's JSON text lies inside one string, key or integer
    and is made of letters, digits, `_`, `-`, `.` and spaces, which the body holds as
    themselves; so the same match is in these bytes (the output's own keys are fixed
    words that match nothing; a float's digits may be written differently, but no rule
    reads floats). Not so when the body escapes characters as `\\u....`, or for a
    base64 body: then None, and the scan encodes the output.
    """
    if "base64" in output or b"\\u" in content:
        return None
    headers = output["headers"]
    assert isinstance(headers, dict)
    values = "\n".join(str(value) for value in headers.values())
    return b"%b\n%b" % (content, values.encode())


class _RecordingBody:
    """What the sync and async recording streams share: the chunks handed on, and
    recording them once, when the body ends, is closed, or its session closes.

    A body still open when its session closes (an application that stopped reading
    a stream without closing it) is recorded then, as what it had received
    (`closed_early`), rather than lost: the session runs `_done` before it stops.
    The session is a recording, or a fork keeping a live call in its branch.
    """

    def __init__(
        self, capture: _Capture, exchange: _Exchange, call: PendingCall, request: Any
    ) -> None:
        self.response: Any = None
        self._capture = capture
        self._exchange = exchange
        self._call = call
        self._request = request
        self._chunks: list[bytes] = []
        self._finished = False
        self._lock = threading.Lock()  # the session may close on another thread

    def watch(self) -> None:
        """Have the session record this body when it closes, if nothing did before."""
        self._exchange.session.end_at_close(
            self, functools.partial(self._done, "closed_early", None)
        )

    def _done(self, end: StreamEnd, error: Exception | None) -> None:
        with self._lock:
            if self._finished:
                return
            self._finished = True
        self._exchange.session.end_at_close(self, None)
        _record(
            self._capture,
            self._exchange,
            self._call,
            self.response,
            self._request,
            self._chunks,
            end,
            error,
        )


class _SyncRecordingStream(_RecordingBody):
    """The live body, handed on chunk by chunk and recorded when it ends or is closed.

    Iterating it again resumes where the last iteration stopped, as a network
    stream does: the SDK drains what follows a stream's last event by iterating the
    response's stream a second time (openai 3.x, async), and each byte must be
    recorded once, in order.
    """

    _source: Iterator[bytes] | None = None

    def __iter__(self) -> Iterator[bytes]:
        source = self._source
        if source is None:
            source = self._source = self.response.iter_bytes()
        try:
            for chunk in source:
                self._chunks.append(chunk)
                yield chunk
        except Exception as error:
            self._done("complete", error)
            raise
        self._done("complete", None)

    def close(self) -> None:
        try:
            self.response.close()
        finally:
            self._done("closed_early", None)


class _AsyncRecordingStream(_RecordingBody):
    """The async form of `_SyncRecordingStream`."""

    _source: AsyncIterator[bytes] | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        source = self._source
        if source is None:
            source = self._source = self.response.aiter_bytes()
        try:
            async for chunk in source:
                self._chunks.append(chunk)
                yield chunk
        except Exception as error:
            self._done("complete", error)
            raise
        self._done("complete", None)

    async def aclose(self) -> None:
        try:
            await self.response.aclose()
        finally:
            self._done("closed_early", None)


def _note(error: Exception) -> None:
    """A replay read past its recording: the session fails even if the error is caught."""
    session = session_var.get()
    if isinstance(error, StreamReplayError) and session is not None:
        session.note_violation(error)


@dataclass(slots=True)
class _ReplayedBody:
    """A replayed response's body: the recorded bytes, handed out once, and how each
    reading of it ends.

    A response stream read again resumes where the last reading stopped, as a network
    stream does (so a recorded body that was read yields nothing more). `beyond` ends
    the first reading (the recorded transport error, or `StreamReplayError` where the
    application had closed the stream), `again` every later one; None ends it quietly.
    """

    content: bytes
    beyond: Exception | None
    again: Exception | None
    read: bool = False

    def take(self) -> tuple[bytes, Exception | None]:
        """The bytes not handed out yet, and the error that ends this reading."""
        end = self.again if self.read else self.beyond
        content, self.content, self.read = self.content, b"", True
        return content, end


class _SyncReplayStream:
    def __init__(self, body: _ReplayedBody) -> None:
        self._body = body

    def __iter__(self) -> Iterator[bytes]:
        content, end = self._body.take()
        if content:
            yield content
        if end is not None:
            _note(end)
            raise end

    def close(self) -> None:
        pass


class _AsyncReplayStream:
    def __init__(self, body: _ReplayedBody) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        content, end = self._body.take()
        if content:
            yield content
        if end is not None:
            _note(end)
            raise end

    async def aclose(self) -> None:
        pass


class CaptureTransport(_Capture):
    """A transport of an instrumented sync client, wrapping one of the original client's."""

    def _replay_stream(self, body: _ReplayedBody) -> Any:
        return self.stream_of(_SyncReplayStream, "SyncByteStream")(body)

    def handle_request(self, request: Any) -> Any:
        exchange = self.exchange(request)
        if exchange is None:
            return self.original.handle_request(request)
        call = self.call_for(exchange, request)
        if not isinstance(call, PendingCall):
            return call  # replayed
        stream = self.stream_of(_SyncRecordingStream, "SyncByteStream")(
            self, exchange, call, request
        )
        try:
            with allowing_network():  # lets a fork's live call through the network guard
                stream.response = self.original.handle_request(request)
        except Exception as error:
            _record(self, exchange, call, None, request, [], "complete", error)
            raise
        except BaseException:
            exchange.session.abort(call)  # interrupted: nothing to record
            raise
        stream.watch()
        return self.handed_on(stream.response, stream, request)

    def close(self) -> None:
        """Nothing to close: the original transport belongs to the original SDK client."""


class AsyncCaptureTransport(_Capture):
    """The transport of an instrumented async client."""

    def _replay_stream(self, body: _ReplayedBody) -> Any:
        return self.stream_of(_AsyncReplayStream, "AsyncByteStream")(body)

    async def handle_async_request(self, request: Any) -> Any:
        exchange = self.exchange(request)
        if exchange is None:
            return await self.original.handle_async_request(request)
        # Replay awaits nothing: no transport coroutine is ever created.
        call = self.call_for(exchange, request)
        if not isinstance(call, PendingCall):
            return call  # replayed
        stream = self.stream_of(_AsyncRecordingStream, "AsyncByteStream")(
            self, exchange, call, request
        )
        try:
            with allowing_network():  # lets a fork's live call through the network guard
                stream.response = await self.original.handle_async_request(request)
        except Exception as error:
            _record(self, exchange, call, None, request, [], "complete", error)
            raise
        except BaseException:
            exchange.session.abort(call)  # cancelled: nothing to record
            raise
        stream.watch()
        return self.handed_on(stream.response, stream, request)

    async def aclose(self) -> None:
        """Nothing to close: the original transport belongs to the original SDK client."""
