"""Response bodies as the capturing transports hand them on: recorded, or replayed.

A recorded body is handed on chunk by chunk as it arrives and recorded once, when
it ends, is closed, or its session closes (RFC 0006 §4.2). A replayed body hands
out the recorded bytes once and then ends as the recording ended: quietly, with
the recorded transport error, or with `StreamReplayError` where the application had
closed it early. Both resume where the last reading stopped when read again, as a
network stream does.

The classes here are the behaviour; `stream_class` makes them subclasses of the
client library's `SyncByteStream`/`AsyncByteStream`, which the HTTP clients check.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from toolreplay.adapters.capture.exchange import StreamEnd
from toolreplay.errors import StreamReplayError
from toolreplay.runtime.session import PendingCall, Session, session_var

__all__ = [
    "AsyncRecordingStream",
    "AsyncReplayStream",
    "RecordingBody",
    "ReplayedBody",
    "SyncRecordingStream",
    "SyncReplayStream",
    "stream_class",
]


class _Recorder(Protocol):
    """What keeps a sent request's exchange once its body ends (the capturing transport)."""

    def record(
        self,
        session: Session,
        call: PendingCall,
        response: Any,
        request: Any,
        content: bytes,
        end: StreamEnd,
        error: Exception | None,
    ) -> None: ...


@functools.cache
def stream_class(library: ModuleType, base: str, behaviour: type) -> type:
    """`behaviour` as a subclass of the library's `SyncByteStream`/`AsyncByteStream`.

    The HTTP clients check a transport's response stream against those classes,
    and which library is in use is only known per client.
    """
    return type(behaviour.__name__, (behaviour, getattr(library, base)), {})


class RecordingBody:
    """What the sync and async recording streams share: the chunks handed on, and
    recording them once, when the body ends, is closed, or its session closes.

    A body still open when its session closes (an application that stopped reading
    a stream without closing it) is recorded then, as what it had received
    (`closed_early`), rather than lost: the session runs `_done` before it stops.
    The session is a recording, or a fork keeping a live call in its branch.
    """

    def __init__(
        self, recorder: _Recorder, session: Session, call: PendingCall, request: Any
    ) -> None:
        self.response: Any = None
        self._recorder = recorder
        self._session = session
        self._call = call
        self._request = request
        self._chunks: list[bytes] = []
        self._finished = False
        self._lock = threading.Lock()  # the session may close on another thread

    def watch(self) -> None:
        """Have the session record this body when it closes, if nothing did before."""
        self._session.end_at_close(self, functools.partial(self._done, "closed_early", None))

    def _done(self, end: StreamEnd, error: Exception | None) -> None:
        with self._lock:
            if self._finished:
                return
            self._finished = True
        self._session.end_at_close(self, None)
        self._recorder.record(
            self._session,
            self._call,
            self.response,
            self._request,
            b"".join(self._chunks),
            end,
            error,
        )


class SyncRecordingStream(RecordingBody):
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


class AsyncRecordingStream(RecordingBody):
    """The async form of `SyncRecordingStream`."""

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
class ReplayedBody:
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


class SyncReplayStream:
    """A replayed body for a sync client."""

    def __init__(self, body: ReplayedBody) -> None:
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


class AsyncReplayStream:
    """A replayed body for an async client."""

    def __init__(self, body: ReplayedBody) -> None:
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
