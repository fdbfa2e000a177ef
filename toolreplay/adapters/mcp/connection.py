"""One MCP connection, recorded or replayed at the stream pair a client session speaks through.

Every MCP transport (stdio, streamable HTTP, SSE, or any other) is an async
context manager yielding a pair of streams of JSON-RPC messages, over which the
SDK's `ClientSession` runs. `InstrumentedTransport` stands in for such a
transport and yields a pair of its own:

- record, or no session: the original transport is entered (the server process
  is spawned, the connection opened) and every message crosses as it would;
  each request the client writes is an effect call, begun in the writing task
  (so its lane is the caller's), and completed when its response comes back,
  with the notifications and server requests that came for it meanwhile;
- replay, fork, case verification: the original transport is never entered.
  Each request is answered from the trace in the writing task: its recorded
  notifications and its response are put on the stream the session reads, so
  the SDK parses them as it parsed the live ones. A fork whose `live=` names an
  unrecorded request enters the original transport then, once, runs the
  recorded handshake on it, and sends that request live.

The decision is made per message, by the session visible where the client
writes it, as for any effect; the offline guard refuses a request made where no
session is visible while one is open.
"""

from __future__ import annotations

import contextlib
import itertools
import math
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Self, cast

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from toolreplay.adapters.mcp.failures import RecordedFailure
from toolreplay.adapters.mcp.in_flight import (
    Awaited,
    Recording,
    Waiting,
    message_value,
    messages_of,
    portable_or_none,
    progress_token,
)
from toolreplay.adapters.mcp.messages import (
    EFFECT_NAMESPACE,
    effect_name,
    error_message,
    incoming,
    negotiated_version,
    notification_message,
    renumbered,
    request_inputs,
    response_message,
    validate_result,
)
from toolreplay.adapters.mcp.replayed import explain_miss, replayed_messages
from toolreplay.errors import (
    ReplayMiss,
    SessionError,
    ToolReplayError,
    UnsupportedResponseError,
)
from toolreplay.portable import JsonValue, preview
from toolreplay.runtime.context import PendingCall, offline_guard, session_var
from toolreplay.runtime.network import allowing_network
from toolreplay.runtime.recording import RecordSession
from toolreplay.runtime.replaying import ReplaySession

__all__ = ["InstrumentedTransport"]

_INTERNAL_ERROR = -32603
_LIVE_CLOSE_SECONDS = 10
_HANDSHAKES = ("initialize", "server/discover")


class InstrumentedTransport:
    """An MCP transport whose requests are effects (made by `toolreplay.adapters.mcp.instrument`).

    An async context manager, as the transport it wraps: `async with` it yields
    the read and write streams a `ClientSession` takes. It can be entered once.
    """

    def __init__(
        self,
        original: Any,
        server: str,
        *,
        live: Callable[[], AbstractAsyncContextManager[Any]] | None = None,
    ) -> None:
        self.original = original
        self.server = server
        self._open_live = live or (lambda: original)
        self._group: anyio.abc.TaskGroup | None = None
        self._to_client: MemoryObjectSendStream[SessionMessage | Exception] | None = None
        self._client_reads: MemoryObjectReceiveStream[SessionMessage | Exception] | None = None
        self._upstream: Any = None  # the original transport's write stream, once entered
        self._replayed = False
        self._entered = False
        self._waiting: dict[object, Waiting] = {}
        # The client's first handshake request, repeated on a fork's live connection.
        self._handshake: SessionMessage | None = None
        self._protocol: str | None = None  # the replayed connection's protocol version
        self._live_ready: anyio.Event | None = None
        self._live_error: BaseException | None = None
        self._live_stop: anyio.Event | None = None
        self._live_done = anyio.Event()
        self._live_lock = anyio.Lock()
        self._server_request_ids = itertools.count(1)
        self._replayed_server_requests: set[object] = set()

    # --- the context manager -----------------------------------------------------------

    async def __aenter__(self) -> tuple[Any, ...]:
        if self._entered:
            raise SessionError(
                f"this instrumented MCP transport (server {self.server!r}) was entered already; "
                "instrument a new transport for each connection"
            )
        self._entered = True
        session = session_var.get()
        if session is None and offline_guard.active:
            raise offline_guard.refuse(f"{EFFECT_NAMESPACE}.{self.server} connection")
        self._to_client, self._client_reads = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](math.inf)
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        if isinstance(session, ReplaySession):
            # Replay, fork, case verification: nothing is started, nothing connects.
            self._replayed = True
        elif self.original is not None:  # else the streams are attached when it opens
            try:
                read, upstream, *_ = await self.original.__aenter__()
            except BaseException:
                await self._close_group()
                raise
            self.attach(read, upstream)
        return (self._client_reads, _WriteStream(self))

    @property
    def replayed(self) -> bool:
        """Whether this connection is served from a trace (nothing was started)."""
        return self._replayed

    def attach(self, read: Any, write: Any) -> tuple[Any, Any]:
        """Capture the stream pair of a connection opened elsewhere; the pair to use instead."""
        assert self._group is not None
        assert self._client_reads is not None
        self._upstream = write
        self._group.start_soon(self._pump, read)
        return self._client_reads, _WriteStream(self)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool | None:
        self._give_up_waiting("unanswered")
        try:
            if self._live_stop is not None:
                self._live_stop.set()  # the live connection closes in its own task
                with anyio.move_on_after(_LIVE_CLOSE_SECONDS):
                    await self._live_done.wait()
            if not self._replayed and self.original is not None:
                return await self.original.__aexit__(exc_type, exc, traceback)
            return None
        finally:
            await self._close_group()

    async def _close_group(self) -> None:
        group, self._group = self._group, None
        if self._to_client is not None:
            self._to_client.close()
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)

    # --- what the client writes (in the writing task) ----------------------------------

    async def write(self, item: SessionMessage) -> None:
        message = incoming(item)
        if message.kind == "request":
            assert message.method is not None
            await self._request(item, message.id, message.method, message.params)
            return
        if message.kind == "notification" and message.method == "notifications/cancelled":
            cancelled = (message.params or {}).get("requestId")
            if isinstance(self._waiting.get(cancelled), Recording):
                self._end(cancelled, RecordedFailure("unanswered"))
        if self._replayed:
            if (
                message.kind in ("response", "error")
                and message.id in self._replayed_server_requests
            ):
                self._replayed_server_requests.discard(message.id)
                return  # the client's answer to a replayed server request: it was recorded already
            if self._upstream is not None and message.kind != "notification":
                await self._upstream.send(item)  # to a server request of a fork's live call
            return
        await self._send_upstream(item)

    async def _send_upstream(self, item: SessionMessage) -> None:
        if self._upstream is None:
            raise SessionError(
                f"the MCP connection to server {self.server!r} was opened under a replay, so no "
                "server stands behind it; open a new connection outside the replay"
            )
        await self._upstream.send(item)

    async def _request(
        self, item: SessionMessage, request_id: object, method: str, params: dict[str, Any] | None
    ) -> None:
        session = session_var.get()
        name = effect_name(self.server, method)
        operation = f"{EFFECT_NAMESPACE}.{name}"
        if session is None or not session.observing:
            if session is None and offline_guard.active:
                raise offline_guard.refuse(operation)
            await self._send_upstream(item)
            return
        if self._handshake is None and method in _HANDSHAKES:
            self._handshake = item
        try:
            inputs = request_inputs(method, params)
        except ToolReplayError as error:
            if not session.tolerates(operation, error):
                raise
            await self._send_upstream(item)
            return
        if isinstance(session, ReplaySession):
            await self._replay(session, item, request_id, method, name, inputs, params)
            return
        assert isinstance(session, RecordSession)
        if self._upstream is None:
            raise SessionError(
                f"{operation}: this MCP connection was opened under a replay and has no server; "
                "open the connection inside the record block"
            )
        call = session.begin(EFFECT_NAMESPACE, name, inputs)
        self._waiting[request_id] = Recording(progress_token(params), call, session)

        def end_unanswered() -> None:
            self._end(request_id, RecordedFailure("unanswered"))

        # A request still unanswered when the record block ends is recorded as such.
        session.end_at_close(call, end_unanswered)
        try:
            await self._upstream.send(item)
        except BaseException:
            self._waiting.pop(request_id, None)
            session.end_at_close(call, None)
            session.abort(call)
            raise

    # --- replay ------------------------------------------------------------------------

    async def _replay(
        self,
        session: ReplaySession,
        item: SessionMessage,
        request_id: object,
        method: str,
        name: str,
        inputs: dict[str, JsonValue],
        params: dict[str, Any] | None,
    ) -> None:
        operation = f"{EFFECT_NAMESPACE}.{name}"
        try:
            answer = session.answer(EFFECT_NAMESPACE, name, inputs, read_only=True)
        except ReplayMiss as miss:
            explain_miss(session, miss, self.server, method, inputs)
            raise
        except RecordedFailure as failure:
            self._deliver_failure(request_id, failure, params)
            return
        if isinstance(answer, PendingCall):
            answer = await self._live(session, answer, item, request_id, params)
            if isinstance(answer, RecordedFailure):
                self._deliver_failure(request_id, answer, params)
                return
        self._deliver_output(operation, request_id, method, answer, params)

    def _deliver_output(
        self,
        operation: str,
        request_id: object,
        method: str,
        output: JsonValue,
        params: dict[str, Any] | None,
    ) -> None:
        if not isinstance(output, dict) or "result" not in output:
            raise UnsupportedResponseError(
                f"{operation}: the recorded output must be an object with the JSON-RPC "
                f"`result` (and optionally `messages`), not {preview(output, 80)}; restore it, "
                "or write a patch value such as tool_result('...')"
            )
        result = output["result"]
        validate_result(operation, method, result, self._protocol)
        if method in _HANDSHAKES and isinstance(result, dict):
            self._protocol = negotiated_version(method, cast(dict[str, Any], result))
        self._deliver_messages(operation, output.get("messages"), params)
        self._put(response_message(request_id, cast(dict[str, Any], result)))

    def _deliver_failure(
        self, request_id: object, failure: RecordedFailure, params: dict[str, Any] | None
    ) -> None:
        self._deliver_messages("mcp", failure.messages, params)
        if failure.kind == "error":
            self._put(error_message(request_id, failure.code, failure.message, failure.data))
        elif failure.kind == "closed" and self._to_client is not None:
            self._to_client.close()  # the server hung up: the SDK fails what is in flight
        # unanswered: nothing comes back, as when it was recorded

    def _deliver_messages(
        self, operation: str, messages: JsonValue, params: dict[str, Any] | None
    ) -> None:
        token = progress_token(params)
        replayed = replayed_messages(operation, messages, token, self._server_request_ids)
        for item, server_request_id in replayed:
            if server_request_id is not None:
                self._replayed_server_requests.add(server_request_id)
            self._put(item)

    def _put(self, item: SessionMessage) -> None:
        if self._to_client is None:
            return
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._to_client.send_nowait(item)

    # --- a fork's live requests --------------------------------------------------------

    async def _live(
        self,
        session: ReplaySession,
        call: PendingCall,
        item: SessionMessage,
        request_id: object,
        params: dict[str, Any] | None,
    ) -> JsonValue | RecordedFailure:
        """Send a request a fork lets run live, as the client wrote it (its id, and the
        metadata its transport reads, such as the 2026 protocol's version header); its
        output, or its failure."""
        try:
            await self._connect_live()
        except BaseException:
            session.abort(call)
            raise
        waiting = Awaited(progress_token(params))
        self._waiting[request_id] = waiting
        try:
            with session.running_live(call) as running:
                try:
                    await self._upstream.send(item)
                    # A failure raised here is kept as the live call's failure.
                    result = await waiting.outcome()
                finally:
                    self._waiting.pop(request_id, None)
                running.result = {"result": result, **messages_of(waiting)}
        except RecordedFailure as failure:
            return failure
        return cast(JsonValue, running.result)

    async def _connect_live(self) -> None:
        async with self._live_lock:
            if self._upstream is not None:
                return
            if self._group is None:
                raise SessionError(f"the MCP connection to server {self.server!r} is closed")
            self._live_ready = anyio.Event()
            self._live_stop = anyio.Event()
            self._group.start_soon(self._run_live)
            await self._live_ready.wait()
            if self._live_error is not None:
                raise self._live_error
            await self._live_handshake()

    async def _run_live(self) -> None:
        assert self._live_ready is not None
        assert self._live_stop is not None
        try:
            # The transport's own tasks start here and inherit the allowance: a fork's
            # live MCP call may connect (or start the server) while the guard blocks.
            with allowing_network():
                async with self._open_live() as streams:
                    read, self._upstream, *_ = streams
                    assert self._group is not None
                    self._group.start_soon(self._pump, read)
                    self._live_ready.set()
                    await self._live_stop.wait()
        except Exception as error:
            self._live_error = error
        finally:
            self._live_ready.set()
            self._live_done.set()

    async def _live_handshake(self) -> None:
        """Open the live connection as the client opened the replayed one."""
        if self._handshake is None:
            return
        handshake_id = "toolreplay-live-handshake"  # the client's own id was answered already
        waiting = Awaited(None)
        self._waiting[handshake_id] = waiting
        # Some transports (the SDK's streamable HTTP) send in the sender's context.
        with allowing_network():
            try:
                await self._upstream.send(renumbered(self._handshake, handshake_id))
                await waiting.outcome()
            finally:
                self._waiting.pop(handshake_id, None)
            if incoming(self._handshake).method == "initialize":
                await self._upstream.send(notification_message("notifications/initialized", None))

    # --- what the server sends (in the pump task) -------------------------------------

    async def _pump(self, read: Any) -> None:
        """Carry what the server sends to the client, ending the requests it answers."""
        try:
            async with read:
                async for item in read:
                    if isinstance(item, SessionMessage) and not self._observe(item):
                        continue
                    if self._to_client is None:
                        return
                    await self._to_client.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass  # the transport or the client closed its end: the connection is over
        finally:
            self._give_up_waiting("closed")
            if self._to_client is not None and not self._replayed:
                self._to_client.close()

    def _observe(self, item: SessionMessage) -> bool:
        """Note a message from the server; whether the client should receive it."""
        message = incoming(item)
        if message.kind in ("response", "error"):
            waiting = self._waiting.get(message.id)
            if waiting is None:
                return not self._replayed
            if message.kind == "response":
                return self._end(message.id, message.result or {}, item)
            error = message.error or {}
            return self._end(
                message.id,
                RecordedFailure(
                    "error",
                    code=int(error.get("code", 0)),
                    message=str(error.get("message", "")),
                    data=portable_or_none(error.get("data")),
                    messages=list(waiting.messages),
                ),
                item,
            )
        if message.kind in ("notification", "request") and self._waiting:
            assert message.method is not None
            owner = self._owner(message.params)
            if owner is not None:
                kind = "notification" if message.kind == "notification" else "request"
                owner.messages.append(message_value(kind, message.method, message.params))
                if isinstance(owner, Awaited) and message.kind == "notification":
                    return False  # a live call's notifications are served with its answer
        return True

    def _owner(self, params: dict[str, Any] | None) -> Waiting | None:
        """The request a notification belongs to: by its progress token, else the oldest."""
        token = (params or {}).get("progressToken")
        if token is not None:
            for waiting in self._waiting.values():
                if waiting.progress_token == token:
                    return waiting
        return next(iter(self._waiting.values()), None)

    def _end(
        self,
        request_id: object,
        outcome: dict[str, Any] | RecordedFailure,
        item: SessionMessage | None = None,
    ) -> bool:
        """End a request in flight with its result or failure; whether to hand `item` on."""
        waiting = self._waiting.pop(request_id, None)
        if waiting is None:
            return True
        if isinstance(waiting, Awaited):  # a fork's live request, or the live handshake
            if isinstance(outcome, RecordedFailure):
                waiting.failure = outcome
            else:
                waiting.result = outcome
            waiting.answered.set()
            return False
        session, call = waiting.session, waiting.call
        session.end_at_close(call, None)
        try:
            if isinstance(outcome, RecordedFailure):
                outcome.messages = list(waiting.messages)
                session.fail(call, outcome)
            else:
                output: JsonValue = {"result": cast(JsonValue, outcome), **messages_of(waiting)}
                session.complete(call, output)
        except ToolReplayError as refused:
            # Refused (a secret in the answer): the session fails on exit, and the caller
            # gets an error in place of what could not be recorded, never the value.
            self._put(error_message(request_id, _INTERNAL_ERROR, str(refused)))
            return False
        return True

    def _give_up_waiting(self, kind: str) -> None:
        for request_id in list(self._waiting):
            waiting = self._waiting.get(request_id)
            if waiting is None:
                continue
            if isinstance(waiting, Awaited):
                waiting.failure = RecordedFailure(kind, messages=list(waiting.messages))
                self._waiting.pop(request_id, None)
                waiting.answered.set()
                continue
            with contextlib.suppress(ToolReplayError):
                self._end(request_id, RecordedFailure(kind))


class _WriteStream:
    """The stream the client session writes to: each request is decided as it is written."""

    def __init__(self, transport: InstrumentedTransport) -> None:
        self._transport = transport

    async def send(self, item: SessionMessage) -> None:
        await self._transport.write(item)

    async def aclose(self) -> None:
        upstream = self._transport._upstream  # pyright: ignore[reportPrivateUsage]
        if upstream is not None and not self._transport._replayed:  # pyright: ignore[reportPrivateUsage]
            await upstream.aclose()

    def close(self) -> None:
        upstream = self._transport._upstream  # pyright: ignore[reportPrivateUsage]
        if upstream is not None and hasattr(upstream, "close"):
            upstream.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
