"""A real S3 API on loopback: moto's server in a child process, started by the tests.

The child keeps its buckets in memory across `stop()` and `start()`, so a test can
take the store away mid-run and bring it back with everything it had acknowledged.
It runs in its own process so that its request handling does not share the test's
interpreter (and the uploader's measurements) with the code under test.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["S3Server", "running_s3_server", "s3_environment"]

_CHILD = r"""
import sys
from moto.server import ThreadedMotoServer

port = int(sys.argv[1])
server = None
for command in sys.stdin:
    command = command.strip()
    if command == "start" and server is None:
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
    elif command == "stop" and server is not None:
        server.stop()
        server = None
    print(command, flush=True)
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _reachable(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        return False
    return True


@dataclass
class S3Server:
    """A moto S3 server on `127.0.0.1:port`; `stop()` and `start()` keep its buckets."""

    port: int
    process: subprocess.Popen[str]
    running: bool = field(default=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _command(self, command: str) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        assert answer == command, f"the S3 server child answered {answer!r} to {command!r}"

    def start(self) -> None:
        self._command("start")
        deadline = time.monotonic() + 30
        while not _reachable(self.port):
            assert time.monotonic() < deadline, "the S3 server did not listen within 30 s"
            time.sleep(0.05)
        self.running = True

    def stop(self) -> None:
        self._command("stop")
        deadline = time.monotonic() + 30
        while _reachable(self.port):
            assert time.monotonic() < deadline, "the S3 server did not stop within 30 s"
            time.sleep(0.05)
        self.running = False

    def create_bucket(self, bucket: str) -> None:
        """Create `bucket` through the S3 API (boto3, a dev dependency)."""
        import boto3

        boto3.client("s3", **s3_client_options(self)).create_bucket(Bucket=bucket)

    def keys(self, bucket: str) -> list[str]:
        """Every key of `bucket`, listed through the S3 API (nothing downloaded)."""
        import boto3

        client = boto3.client("s3", **s3_client_options(self))
        pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return [entry["Key"] for page in pages for entry in page.get("Contents", [])]

    def objects(self, bucket: str) -> dict[str, bytes]:
        """Every object of `bucket`, key to bytes, read through the S3 API."""
        import boto3

        client = boto3.client("s3", **s3_client_options(self))
        found: dict[str, bytes] = {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for entry in page.get("Contents", []):
                key = entry["Key"]
                found[key] = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        return found


# The test server's own credentials: moto accepts any, and these name themselves.
TEST_ACCESS_KEY = "test-access-key-id"
TEST_SECRET_KEY = "test-secret-access-key"


def s3_client_options(server: S3Server) -> dict[str, str]:
    return {
        "endpoint_url": server.endpoint,
        "aws_access_key_id": TEST_ACCESS_KEY,
        "aws_secret_access_key": TEST_SECRET_KEY,
        "region_name": "us-east-1",
    }


def s3_environment(server: S3Server) -> dict[str, str]:
    """The standard variables an application on this server would have (no profile)."""
    return {
        "AWS_ACCESS_KEY_ID": TEST_ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": TEST_SECRET_KEY,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": server.endpoint,
        "AWS_ALLOW_HTTP": "true",
    }


@contextmanager
def running_s3_server() -> Iterator[S3Server]:
    """A started server in a child process, killed at the end."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    server = S3Server(port, process)
    try:
        server.start()
        yield server
    finally:
        process.kill()
        process.wait()
