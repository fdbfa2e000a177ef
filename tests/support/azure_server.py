"""A real Azure Blob Storage API on loopback: Azurite's blob service in a child process,
started by the tests.

Azurite is an npm package (`npm install -g azurite@3`; `.ci/run` installs it). When it
is not on PATH the test skips, naming that command: a test run does not install
programs into the machine.
The service keeps its data in memory and is killed at the end. The account is the
emulator's well-known development account, which obstore uses by itself when
`AZURE_STORAGE_USE_EMULATOR=true`: no credential is given anywhere.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["AzureServer", "azure_environment", "azurite_command", "running_azurite"]

INSTALL = "npm install -g azurite@3"
# The emulator's published development account (the same for every Azurite).
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def azurite_command() -> str | None:
    """The path of `azurite-blob`, or None when it is not installed."""
    return shutil.which("azurite-blob")


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
class AzureServer:
    """Azurite's blob service on `127.0.0.1:port`."""

    port: int
    process: subprocess.Popen[bytes]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _service(self) -> Any:
        from azure.storage.blob import BlobServiceClient

        return BlobServiceClient.from_connection_string(
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint={self.endpoint}/{ACCOUNT};"
        )

    def create_container(self, container: str) -> None:
        """Create `container` through the Blob API (azure-storage-blob, a dev dependency)."""
        self._service().create_container(container)

    def objects(self, container: str) -> dict[str, bytes]:
        """Every blob of `container`, name to bytes, read through the Blob API."""
        client = self._service().get_container_client(container)
        return {
            blob.name: client.download_blob(blob.name).readall() for blob in client.list_blobs()
        }


def azure_environment(server: AzureServer) -> dict[str, str]:
    """The standard variables an application on this emulator would have."""
    return {
        "AZURE_STORAGE_USE_EMULATOR": "true",
        "AZURITE_BLOB_STORAGE_URL": server.endpoint,
    }


@contextmanager
def running_azurite(command: str) -> Iterator[AzureServer]:
    """A started blob service (`command` is `azurite_command()`), killed at the end."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AZURE")}
    port = _free_port()
    process = subprocess.Popen(
        [
            command,
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(port),
            "--inMemoryPersistence",
            "--disableTelemetry",
            # The helper client (azure-storage-blob) may speak a newer API version.
            "--skipApiVersionCheck",
            "--silent",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    server = AzureServer(port, process)
    try:
        deadline = time.monotonic() + 30
        while not _reachable(port):
            assert process.poll() is None, f"azurite-blob exited with {process.returncode}"
            assert time.monotonic() < deadline, "azurite-blob did not listen within 30 s"
            time.sleep(0.05)
        yield server
    finally:
        process.kill()
        process.wait()
