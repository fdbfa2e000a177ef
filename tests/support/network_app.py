"""An application that reaches the network on its own, beside its one effect.

For the network guard's tests, which run it as a runner (`tests.support.network_app:main`)
in child processes: the command line, a promoted case under pytest. What it does besides
its effect comes from the environment, so one module serves every test:

- `NETWORK_APP_TARGET`: `host:port` to connect to (unset: nowhere);
- `NETWORK_APP_CONNECT`: `raw` (`socket.create_connection`, the error propagates),
  `quiet` (the same, the error caught, as a telemetry ping would), or `none` (default);
- `NETWORK_APP_SKU`: the item whose stock is counted (default `sku-1`).

`BODY_RUNS` lists the items whose effect body ran in this process.
"""

from __future__ import annotations

import os
import socket

import toolreplay
from toolreplay import JsonValue

BODY_RUNS: list[str] = []


@toolreplay.effect("inventory.count")
def count_stock(sku: str) -> int:
    BODY_RUNS.append(sku)
    return 3


def _connect() -> str:
    how = os.environ.get("NETWORK_APP_CONNECT", "none")
    target = os.environ.get("NETWORK_APP_TARGET")
    if how == "none" or target is None:
        return "nothing"
    host, _, port = target.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError:
        if how != "quiet":
            raise
        return "refused"
    return "connected"


def main() -> dict[str, JsonValue]:
    stock = count_stock(os.environ.get("NETWORK_APP_SKU", "sku-1"))
    return {"stock": stock, "network": _connect()}
