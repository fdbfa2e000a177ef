"""What the MCP adapter's tests share: the weather server as a process, counted.

The server (`weather_server.py`, a real FastMCP server) runs as a child process,
over stdio or streamable HTTP on loopback. Every start appends a line to a marker
file, so a test says how many server processes ran; `Listener` stands on a port
and counts the connections made to it, so a replay shows it reached nothing.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from mcp import StdioServerParameters

_E = TypeVar("_E", bound=BaseException)
ROOT = Path(__file__).resolve().parents[3]
SERVER_MODULE = "tests.adapters.mcp.weather_server"
CANARY = "canary-7f3a9c2e-never-recorded"
"""A credential given to the servers (environment, command line, HTTP headers)."""


def inner(error: BaseException, kind: type[_E]) -> _E:
    """The `kind` exception in `error`, however deep in exception groups (the SDK's task
    groups report what a `ClientSession` block raised in one)."""
    if isinstance(error, kind):
        return error
    if isinstance(error, BaseExceptionGroup):
        for member in error.exceptions:
            with contextlib.suppress(LookupError):
                return inner(member, kind)
    raise LookupError(f"no {kind.__name__} in {error!r}")


def stdio_params(marker: Path, *, command: str = sys.executable) -> StdioServerParameters:
    """The weather server over stdio; `command` replaced by one that fails in replays."""
    return StdioServerParameters(
        command=command,
        args=["-m", SERVER_MODULE, "stdio", f"--token={CANARY}"],
        cwd=str(ROOT),
        env={"WEATHER_SERVER_MARKER": str(marker), "WEATHER_API_TOKEN": CANARY},
    )


def failing_command(tmp_path: Path, marker: Path) -> str:
    """A command that notes that it was started in `marker`, then fails."""
    script = tmp_path / "no-server.sh"
    script.write_text(f"#!/bin/sh\necho started >> {marker}\nexit 3\n", encoding="utf-8")
    script.chmod(0o755)
    return str(script)


def starts(marker: Path) -> int:
    """How many server processes started (lines in the marker file)."""
    return len(marker.read_text(encoding="utf-8").splitlines()) if marker.exists() else 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def http_server(marker: Path) -> Iterator[str]:
    """The weather server over streamable HTTP on a loopback port: its URL."""
    port = free_port()
    env = {**os.environ, "WEATHER_SERVER_MARKER": str(marker), "WEATHER_API_TOKEN": CANARY}
    process = subprocess.Popen(
        [sys.executable, "-m", SERVER_MODULE, "http", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the weather server did not listen on port {port}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


class Listener:
    """A loopback port that accepts and counts connections (and answers none)."""

    def __init__(self, port: int) -> None:
        self.connections = 0
        self._socket = socket.create_server(("127.0.0.1", port))
        self._socket.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._socket.close()


@contextlib.contextmanager
def listening(url: str) -> Iterator[Listener]:
    """Count connections to `url`'s port while the block runs (its server has stopped)."""
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    listener = Listener(port)
    try:
        yield listener
    finally:
        listener.close()
