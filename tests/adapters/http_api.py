"""A transport handler (`LocalOpenAI`, `refusing`, ...) served over real HTTP on loopback.

For tests of SDK clients built the way applications build them, with the SDK's
own HTTP client and its real connection pool: only `base_url` points here. JSON
bodies are gzip-compressed when the client accepts it, as the API does; event
streams are sent as the API sends them, chunked, one chunk per event, each flushed.

A handler may also answer with `Dropped` (send part of a stream, then close the
socket) or `Stalled` (go quiet for a while, before the headers or mid-stream), the
network failures an in-process transport cannot produce.
"""

from __future__ import annotations

import contextlib
import gzip
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

from examples.local_openai import HTTP

__all__ = ["Dropped", "Stalled", "served"]


@dataclass(frozen=True)
class Dropped:
    """Send `response`'s first `events` server-sent events (and `partial` bytes of the
    next one), then drop the connection without ending the body; for a response that is
    not an event stream, drop the connection before answering."""

    response: Any
    events: int
    partial: int = 0


@dataclass(frozen=True)
class Stalled:
    """Send nothing for `seconds` before `response`'s headers, or (with `after_events`)
    after its first `after_events` events, then the rest."""

    response: Any
    seconds: float
    after_events: int | None = None


_EVENT = re.compile(rb".*?(?:\r\n\r\n|\n\n)|.+$", re.S)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: Callable[[Any], Any]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.handler = handler


def _events(body: bytes) -> list[bytes]:
    """The body's server-sent events, each with its closing blank line as sent (`\\n\\n`,
    or `\\r\\n\\r\\n` as the Gemini API sends)."""
    return [
        block if block.endswith(b"\n\n") else block + b"\n\n"
        for block in _EVENT.findall(body)
        if block.strip()
    ]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects

    def _answer(self) -> None:
        server = cast(_Server, self.server)
        content = self._request_body()
        host, port = cast(tuple[str, int], server.server_address)
        request = HTTP.Request(
            self.command,
            f"http://{host}:{port}{self.path}",
            headers=list(self.headers.items()),
            content=content,
        )
        answer = server.handler(request)
        response = answer.response if isinstance(answer, Dropped | Stalled) else answer
        if isinstance(answer, Stalled) and answer.after_events is None:
            time.sleep(answer.seconds)  # the stall itself: no byte before the client's timeout
        body: bytes = response.read()
        streamed = response.headers.get("content-type", "").startswith("text/event-stream")
        if isinstance(answer, Dropped) and not streamed:
            self._drop()  # gone before the answer's first byte
            return
        headers = {
            name: value
            for name, value in response.headers.items()
            if name.lower() not in ("content-length", "content-encoding", "transfer-encoding")
        }
        if streamed:
            self._stream(response.status_code, headers, _events(body), answer)
            return
        is_json = headers.get("content-type", "").startswith("application/json")
        if is_json and "gzip" in self.headers.get("accept-encoding", ""):
            body = gzip.compress(body)
            headers["content-encoding"] = "gzip"
        self.send_response(response.status_code)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _request_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("content-length", "0")))
        # aiohttp sends some bodies chunked (a redirected request's, even when empty).
        body = b""
        while size := int(self.rfile.readline().split(b";")[0], 16):
            body += self.rfile.read(size)
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return body

    def _stream(
        self, status: int, headers: dict[str, str], events: list[bytes], answer: Any
    ) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for index, event in enumerate(events):
            if isinstance(answer, Dropped) and index == answer.events:
                # A pause, so that what was sent arrives before the drop (a client reading
                # it all in one go may discard a buffer that ends in a broken connection).
                time.sleep(0.05)
                if answer.partial:
                    self._chunk(event[: answer.partial])
                self._drop()  # without the closing chunk: the client sees the body cut
                return
            if isinstance(answer, Stalled) and index == answer.after_events:
                time.sleep(answer.seconds)  # the stall itself, mid-stream
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")

    def _drop(self) -> None:
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%b\r\n" % (len(data), data))
        self.wfile.flush()

    def handle(self) -> None:
        # The client may give up first (a timeout test): nobody is left to answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            super().handle()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:  # the base signature
        pass


@contextmanager
def served(handler: Callable[[Any], Any]) -> Iterator[str]:
    """Serve `handler` on loopback; yields the API's base URL (`http://127.0.0.1:PORT/v1`).

    The server is shut down on exit, so a client still pointed at it afterwards
    gets a refused connection, never an answer.
    """
    server = _Server(handler)
    # Polled often: shutting down waits for the next poll.
    thread = threading.Thread(
        target=server.serve_forever, args=(0.02,), name="local-openai-http", daemon=True
    )
    thread.start()
    host, port = cast(tuple[str, int], server.server_address)
    try:
        yield f"http://{host}:{port}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
