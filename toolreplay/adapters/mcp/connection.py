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
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self, cast

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from toolreplay.adapters.mcp.messages import (
    EFFECT_NAMESPACE,
    effect_name,
    error_message,
    incoming,
    listed_tools,
    negotiated_version,
    notification_message,
    renumbered,
    request_inputs,
    response_message,
    server_request_message,
    validate_result,
)
from toolreplay.errors import (
    ReplayMiss,
    SessionError,
    ToolReplayError,
    UnsupportedResponseError,
)
from toolreplay.failures import register_failure_codec
from toolreplay.portable import JsonValue, ensure_portable, preview
from toolreplay.runtime.context import PendingCall, offline_guard, session_var
from toolreplay.runtime.network import allowing_network
from toolreplay.runtime.recording import RecordSession
from toolreplay.runtime.replaying import ReplaySession
from toolreplay.trace.model import Returned

__all__ = ["InstrumentedTransport", "RecordedFailure"]

_ERROR = "mcp.JSONRPCError"
_CLOSED = "mcp.ConnectionClosed"
_UNANSWERED = "mcp.Unanswered"
_ENVELOPE = "mcp.failure"
_VERSION = 1
_INTERNAL_ERROR = -32603
_LIVE_CLOSE_SECONDS = 10
_HANDSHAKES = ("initialize", "server/discover")


class RecordedFailure(Exception):
    """A request that got no result: a JSON-RPC error, a connection that closed, or none.

    `kind` is `error` (the server answered with a JSON-RPC error: `code`,
    `message`, `data`), `closed` (the connection closed while it was in flight)
    or `unanswered` (the client gave up on it: a timeout, a cancellation).
    `messages` are the notifications and server requests that came for it first.
    Replay turns it back into what the client saw on the wire; applications
    see the SDK's own exception (`MCPError`), never this one.
    """

    def __init__(
        self,
        kind: str,
        *,
        code: int = 0,
        message: str = "",
        data: JsonValue = None,
        messages: list[JsonValue] | None = None,
    ) -> None:
        shown = {
            "error": f"JSON-RPC error {code}: {message}",
            "closed": "the connection closed while the request was in flight",
            "unanswered": "the client stopped waiting for an answer",
        }.get(kind, kind)
        super().__init__(shown)
        self.kind = kind
        self.code = code
        self.message = message
        self.data = data
        self.messages: list[JsonValue] = messages or []


class _FailureCodec:
    """Records `RecordedFailure` and the SDK's own `MCPError` (a `replace_error` patch)."""

    def error_type(self, error: Exception) -> str | None:
        if isinstance(error, RecordedFailure):
            return {"error": _ERROR, "closed": _CLOSED}.get(error.kind, _UNANSWERED)
        if _is_sdk_error(error):
            return _ERROR
        return None

    def capture(self, error: Exception) -> JsonValue:
        if isinstance(error, RecordedFailure):
            envelope: dict[str, JsonValue] = {"envelope": _ENVELOPE, "version": _VERSION}
            if error.kind == "error":
                envelope.update({"code": error.code, "message": error.message, "data": error.data})
            envelope["messages"] = error.messages
            return envelope
        sdk_error: Any = error
        data = ensure_portable(sdk_error.error.data, what="the MCPError's data")
        return {
            "envelope": _ENVELOPE,
            "version": _VERSION,
            "code": sdk_error.error.code,
            "message": sdk_error.error.message,
            "data": data,
            "messages": [],
        }

    def rebuild(self, error_type: str, envelope: JsonValue) -> Exception:
        if (
            not isinstance(envelope, dict)
            or envelope.get("envelope") != _ENVELOPE
            or envelope.get("version") != _VERSION
            or not isinstance(envelope.get("messages", []), list)
        ):
            raise UnsupportedResponseError(
                f"{error_type}: the recorded failure is not an {_ENVELOPE} envelope of version "
                f"{_VERSION}; restore it, or re-record the call"
            )
        messages = cast(list[JsonValue], envelope.get("messages", []))
        if error_type == _ERROR:
            code, message = envelope.get("code"), envelope.get("message")
            if type(code) is not int or not isinstance(message, str):
                raise UnsupportedResponseError(
                    f"{error_type}: the recorded JSON-RPC error needs an int code and a string "
                    f"message, not {preview(envelope, 80)}; restore it, or re-record the call"
                )
            return RecordedFailure(
                "error", code=code, message=message, data=envelope.get("data"), messages=messages
            )
        return RecordedFailure(
            "closed" if error_type == _CLOSED else "unanswered", messages=messages
        )


def _is_sdk_error(error: Exception) -> bool:
    from mcp.shared import exceptions

    sdk_class = getattr(exceptions, "MCPError", None) or getattr(exceptions, "McpError", None)
    return sdk_class is not None and isinstance(error, sdk_class)


register_failure_codec(_FailureCodec(), (_ERROR, _CLOSED, _UNANSWERED))


@dataclass(slots=True, eq=False)
class _Recording:
    """A request in flight that is being recorded: its answer completes `call`."""

    progress_token: object
    call: PendingCall
    session: RecordSession
    messages: list[JsonValue] = field(default_factory=list[JsonValue])


@dataclass(slots=True, eq=False)
class _Awaited:
    """A request a fork sent live (or the live handshake): its answer goes to the writer."""

    progress_token: object
    messages: list[JsonValue] = field(default_factory=list[JsonValue])
    answered: anyio.Event = field(default_factory=anyio.Event)
    result: dict[str, Any] | None = None
    failure: RecordedFailure | None = None

    async def outcome(self) -> dict[str, Any]:
        """The result once the answer came; its failure is raised."""
        await self.answered.wait()
        if self.failure is not None:
            raise self.failure
        assert self.result is not None
        return self.result


_Waiting = _Recording | _Awaited


def _message_value(kind: str, method: str, params: dict[str, Any] | None) -> JsonValue:
    value: dict[str, JsonValue] = {kind: method}
    if params is not None:
        value["params"] = cast(JsonValue, params)
    return value


def _progress_token(params: object) -> object:
    if isinstance(params, dict):
        meta = cast(dict[str, Any], params).get("_meta")
        if isinstance(meta, dict):
            return cast(dict[str, Any], meta).get("progressToken")
    return None


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
        self._waiting: dict[object, _Waiting] = {}
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
            if isinstance(self._waiting.get(cancelled), _Recording):
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
        call = session.begin(EFFECT_NAMESPACE, name, inputs, owned=True)
        self._waiting[request_id] = _Recording(_progress_token(params), call, session)

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
            _explain_miss(session, miss, self.server, method, inputs)
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
        if messages is None:
            return
        if not isinstance(messages, list):
            raise UnsupportedResponseError(
                f"{operation}: $.output.messages must be a list of notifications; restore it"
            )
        token = _progress_token(params)
        for index, entry in enumerate(messages):
            if not isinstance(entry, dict) or not (
                isinstance(entry.get("notification"), str) or isinstance(entry.get("request"), str)
            ):
                raise UnsupportedResponseError(
                    f"{operation}: $.output.messages[{index}] is not a recorded notification "
                    f"or server request ({preview(entry, 80)}); restore it"
                )
            raw_params = entry.get("params")
            sent = dict(cast(dict[str, Any], raw_params)) if isinstance(raw_params, dict) else None
            notification = entry.get("notification")
            if isinstance(notification, str):
                if (
                    notification == "notifications/progress"
                    and sent is not None
                    and token is not None
                ):
                    sent["progressToken"] = token  # this run's token, not the recorded one
                self._put(notification_message(notification, sent))
            else:
                server_request_id = f"toolreplay-{next(self._server_request_ids)}"
                self._replayed_server_requests.add(server_request_id)
                self._put(
                    server_request_message(server_request_id, cast(str, entry["request"]), sent)
                )

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
        waiting = _Awaited(_progress_token(params))
        self._waiting[request_id] = waiting
        try:
            with session.running_live(call) as running:
                try:
                    await self._upstream.send(item)
                    # A failure raised here is kept as the live call's failure.
                    result = await waiting.outcome()
                finally:
                    self._waiting.pop(request_id, None)
                running.result = {"result": result, **_messages_of(waiting)}
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
        waiting = _Awaited(None)
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
                    data=_portable_or_none(error.get("data")),
                    messages=list(waiting.messages),
                ),
                item,
            )
        if message.kind in ("notification", "request") and self._waiting:
            assert message.method is not None
            owner = self._owner(message.params)
            if owner is not None:
                kind = "notification" if message.kind == "notification" else "request"
                owner.messages.append(_message_value(kind, message.method, message.params))
                if isinstance(owner, _Awaited) and message.kind == "notification":
                    return False  # a live call's notifications are served with its answer
        return True

    def _owner(self, params: dict[str, Any] | None) -> _Waiting | None:
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
        if isinstance(waiting, _Awaited):  # a fork's live request, or the live handshake
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
                output: JsonValue = {"result": cast(JsonValue, outcome), **_messages_of(waiting)}
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
            if isinstance(waiting, _Awaited):
                waiting.failure = RecordedFailure(kind, messages=list(waiting.messages))
                self._waiting.pop(request_id, None)
                waiting.answered.set()
                continue
            with contextlib.suppress(ToolReplayError):
                self._end(request_id, RecordedFailure(kind))


def _messages_of(waiting: _Waiting) -> dict[str, JsonValue]:
    return {"messages": list(waiting.messages)} if waiting.messages else {}


def _portable_or_none(value: object) -> JsonValue:
    try:
        return ensure_portable(value)
    except ToolReplayError:
        return None


def _explain_miss(
    session: ReplaySession,
    miss: ReplayMiss,
    server: str,
    method: str,
    inputs: dict[str, JsonValue],
) -> None:
    """Say which tool a missed `tools/call` asked for, and which tools the recording lists."""
    if method != "tools/call":
        return
    tool = inputs.get("name")
    listed: list[str] = []
    for operation in session.trace.operations_of(
        EFFECT_NAMESPACE, effect_name(server, "tools/list")
    ):
        if isinstance(operation.outcome, Returned):
            for name in listed_tools(operation.outcome.value):
                if name not in listed:
                    listed.append(name)
    recorded = ", ".join(listed) if listed else "none (no tools/list was recorded)"
    known = tool in listed
    miss.add_note(
        f"MCP server {server!r}: the application called the tool {preview(tool)}"
        + (
            ", which the recorded tool list has, with other arguments"
            if known
            else ", which is not in the tool list recorded from the server"
        )
        + f". Recorded tools: {recorded}. If the server's tools changed since the recording, "
        "record again; a fork can answer the call with supply_output(..., "
        "value=tool_result(...)) or send it live with live=['mcp.*']."
    )


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
