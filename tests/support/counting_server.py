"""A plain TCP server on loopback that counts the connections it accepts (network guard tests)."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time

__all__ = ["CountingServer"]


class CountingServer:
    """A TCP server on 127.0.0.1 that counts the connections it accepts; each gets a short
    HTTP answer, so that an HTTP client let through completes its request."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, name="counting-server", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return  # closed
            self.accepted += 1
            with connection:
                connection.settimeout(2)
                try:
                    connection.recv(65536)
                    connection.sendall(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
                    )
                except OSError:
                    pass

    def close(self) -> None:
        # A connection the client already made may still wait in the listening queue
        # (the serving thread not scheduled yet): shutting down would reset it uncounted.
        # Wait (at most 5 s) until the queue is empty; joining then lets the thread
        # finish counting what it took.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and select.select([self._socket], [], [], 0)[0]:
            time.sleep(0.001)
        # Shut down first: closing alone does not wake the thread blocked in accept().
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._socket.close()
        self._thread.join(timeout=5)
