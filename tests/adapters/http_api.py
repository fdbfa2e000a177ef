"""A transport handler (`LocalOpenAI`, `refusing`, ...) served over real HTTP on loopback.

For tests of SDK clients built the way applications build them, with the SDK's
own HTTP client and its real connection pool: only `base_url` points here. JSON
bodies are gzip-compressed when the client accepts it, as the API does.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

from examples.local_openai import HTTP

__all__ = ["served"]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: Callable[[Any], Any]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.handler = handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects

    def _answer(self) -> None:
        server = cast(_Server, self.server)
        content = self.rfile.read(int(self.headers.get("content-length", "0")))
        host, port = cast(tuple[str, int], server.server_address)
        request = HTTP.Request(
            self.command,
            f"http://{host}:{port}{self.path}",
            headers=list(self.headers.items()),
            content=content,
        )
        response = server.handler(request)
        body: bytes = response.read()
        headers = {
            name: value
            for name, value in response.headers.items()
            if name.lower() not in ("content-length", "content-encoding", "transfer-encoding")
        }
        json_body = headers.get("content-type", "").startswith("application/json")
        if json_body and "gzip" in self.headers.get("accept-encoding", ""):
            body = gzip.compress(body)
            headers["content-encoding"] = "gzip"
        self.send_response(response.status_code)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:  # the base signature
        pass


@contextmanager
def served(handler: Callable[[Any], Any]) -> Iterator[str]:
    """Serve `handler` on loopback; yields the API's base URL (`http://127.0.0.1:PORT/v1`).

    The server is shut down on exit, so a client still pointed at it afterwards
    gets a refused connection, never an answer.
    """
    server = _Server(handler)
    thread = threading.Thread(target=server.serve_forever, name="local-openai-http", daemon=True)
    thread.start()
    host, port = cast(tuple[str, int], server.server_address)
    try:
        yield f"http://{host}:{port}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
