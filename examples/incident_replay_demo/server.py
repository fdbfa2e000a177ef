"""Serve the incident replay demo on loopback: `python -m examples.incident_replay_demo.server`.

Open http://127.0.0.1:8765 and press Replay incident, Apply correction (and supply
the answers of the calls the corrected run makes that the recording never made),
Compare executions and Promote to test. Every button calls this server, which
calls the real Tool Replay API (see `scenario.py`); nothing is simulated in the
page. The
server binds 127.0.0.1 only, keeps its scenario in a temporary folder removed
on exit, and needs no API key: the model's answer on the day of the incident is
served by a local transport, and every later step refuses any provider call.

Binding loopback is not enough on its own: any web page the same browser has
open can send requests to 127.0.0.1, and a name that resolves to it (DNS
rebinding) makes them look same-origin. So every request is answered with 403
unless its Host is this server's own address and, when the browser says where
the request comes from (Origin, Sec-Fetch-Site), that is this page.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

from examples.incident_replay_demo.scenario import STEPS, DemoError, DemoScenario
from toolreplay.terminal import terminal_safe

__all__ = ["DemoServer", "main"]

HOST = "127.0.0.1"
DEFAULT_PORT = 8765
STATIC = Path(__file__).resolve().parent / "static"
_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/style.css": ("style.css", "text/css; charset=utf-8"),
}
_MAX_BODY = 4096
_BODY_TIMEOUT = 30  # seconds


class DemoServer(ThreadingHTTPServer):
    """The HTTP server, holding the one scenario it serves."""

    daemon_threads = True
    # The listen backlog: socketserver's default of 5 makes a burst of connections
    # wait for the kernel to retry their SYNs, seconds each.
    request_queue_size = 1024

    def __init__(self, port: int, scenario: DemoScenario) -> None:
        super().__init__((HOST, port), _Handler)
        self.scenario = scenario

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request is normal for a server: nothing is printed.
        Anything else is one line (escaped: it may quote the request), not a traceback."""
        error = sys.exception()
        if isinstance(error, ConnectionError):  # BrokenPipeError, ConnectionResetError, ...
            return
        where = f"{client_address[0]}:{client_address[1]}"
        problem = "unknown error" if error is None else f"{type(error).__name__}: {error}"
        print(terminal_safe(f"request from {where} failed: {problem}"), file=sys.stderr)

    def own_hosts(self) -> frozenset[str]:
        """The Host values that name this server: the address the page is opened at."""
        port = self.server_address[1]
        return frozenset({f"{HOST}:{port}", f"localhost:{port}"})


class _Handler(BaseHTTPRequestHandler):
    server_version = "toolreplay-demo"
    sys_version = ""

    @property
    def scenario(self) -> DemoScenario:
        return cast(DemoServer, self.server).scenario

    def log_message(self, format: str, *args: Any) -> None:
        return  # quiet: the terminal shows the address and nothing else

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", "default-src 'self'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, document: dict[str, Any]) -> None:
        self._send(status, json.dumps(document).encode(), "application/json")

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": {"status": status, "message": message}})

    def _refused_cross_site(self) -> bool:
        """Answer 403 to a request that does not come from this server's own page."""
        server = cast(DemoServer, self.server)
        host = self.headers.get("Host")
        origin = self.headers.get("Origin")
        site = self.headers.get("Sec-Fetch-Site")
        if host not in server.own_hosts():
            address = f"http://{HOST}:{server.server_address[1]}"
            reason = f"the Host {host!r} is not this server; open {address}"
        elif origin is not None and origin != f"http://{host}":
            reason = f"requests from {origin!r} are refused: only this page may call the demo"
        elif site not in (None, "same-origin", "none"):
            reason = f"{site} requests are refused: only this page may call the demo"
        else:
            return False
        self.close_connection = True  # a body, if any, is not read
        self._error(HTTPStatus.FORBIDDEN, reason)
        return True

    def do_GET(self) -> None:
        if self._refused_cross_site():
            return
        if self.path == "/api/state":
            self._json(HTTPStatus.OK, self.scenario.state())
            return
        served = _FILES.get(self.path)
        if served is None:
            self._error(HTTPStatus.NOT_FOUND, f"no such page: {self.path}")
            return
        name, content_type = served
        self._send(HTTPStatus.OK, (STATIC / name).read_bytes(), content_type)

    def do_POST(self) -> None:
        if self._refused_cross_site():
            return
        prefix = "/api/actions/"
        if not self.path.startswith(prefix):
            self._error(HTTPStatus.NOT_FOUND, f"no such endpoint: {self.path}")
            return
        action = self.path[len(prefix) :]
        try:
            body = self._read_body()
            scenario = self.scenario
            state = scenario.reset() if action == "reset" else scenario.run(action, body)
        except DemoError as error:
            self._error(error.status, error.message)
            return
        except Exception as error:  # the page shows errors; the server keeps serving
            message = self.scenario.scrub(f"{type(error).__name__}: {error}")
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, message)
            return
        self._json(HTTPStatus.OK, state)

    def do_PUT(self) -> None:
        if self._refused_cross_site():
            return
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, "use GET for pages and state, POST for actions")

    do_DELETE = do_PATCH = do_PUT

    def _read_body(self) -> dict[str, Any]:
        """Actions take an empty body or a JSON object; anything else is a 400."""
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise DemoError(400, "Content-Length is not a number") from None
        if length < 0 or length > _MAX_BODY:
            self.close_connection = True  # the body is not read: the stream is out of step
            if length < 0:
                raise DemoError(400, "Content-Length is negative")
            raise DemoError(413, f"the body is over {_MAX_BODY} bytes")
        self.connection.settimeout(_BODY_TIMEOUT)  # a client that stalls mid-body
        try:
            raw = self.rfile.read(length) if length else b""
        except TimeoutError:
            self.close_connection = True
            raise DemoError(408, "the body did not arrive in time") from None
        finally:
            self.connection.settimeout(None)
        if len(raw) != length:
            self.close_connection = True
            raise DemoError(400, f"the body ended after {len(raw)} of {length} bytes")
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw, parse_constant=_refuse_constant)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise DemoError(400, "the body is not valid JSON") from None
        except RecursionError:
            raise DemoError(400, "the body is nested too deeply") from None
        if not isinstance(body, dict):
            raise DemoError(400, "the body must be a JSON object")
        return cast(dict[str, Any], body)


def _refuse_constant(name: str) -> None:
    raise DemoError(400, f"the body is not portable JSON: {name} is not a number")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port on {HOST} (default {DEFAULT_PORT})"
    )
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="toolreplay-demo-") as folder:
        server = DemoServer(options.port, DemoScenario(Path(folder) / "scenario"))
        stop = threading.Event()

        def shut_down(signum: int, frame: object) -> None:
            if not stop.is_set():
                stop.set()
                threading.Thread(target=server.shutdown, daemon=True).start()

        signal.signal(signal.SIGTERM, shut_down)
        signal.signal(signal.SIGINT, shut_down)
        print(f"Tool Replay incident demo: http://{HOST}:{server.server_address[1]}", flush=True)
        print(f"steps: {', '.join(STEPS)}; press Ctrl+C to stop", flush=True)
        try:
            server.serve_forever()
        finally:
            server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
