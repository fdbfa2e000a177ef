"""Runners of promoted agent cases that also probe the network, for the acceptance tests.

Each runner runs an unmodified agent (tests/adapters/agent_apps.py, and the loopback
variants of tests/adapters/test_fork_live.py) as its case replays it, then tries one
outbound connection of its own, to the address in `TOOLREPLAY_TEST_PROBE` (a counting
server the test runs), as a telemetry exporter would, and appends what happened to the
file `TOOLREPLAY_TEST_PROBE_LOG`: the exception's type when it was refused, `connected`
when it was not. The agent's value is returned either way, so the case passes or fails
on the agent alone, and the log shows whether the network was blocked while it ran.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

from tests.adapters import agent_apps, test_fork_live
from toolreplay import JsonValue


def probed(run: Callable[[], JsonValue]) -> JsonValue:
    value = run()
    host, _, port = os.environ["TOOLREPLAY_TEST_PROBE"].rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
        outcome = "connected"
    except OSError as error:
        outcome = type(error).__name__
    with Path(os.environ["TOOLREPLAY_TEST_PROBE_LOG"]).open("a", encoding="utf-8") as log:
        log.write(outcome + "\n")
    return value


def agents_live() -> JsonValue:
    return probed(test_fork_live.agents_case)


def agents_offline() -> JsonValue:
    return probed(agent_apps.agents_refund)


def pydantic_ai_live() -> JsonValue:
    return probed(test_fork_live.pydantic_ai_case)


def pydantic_ai_offline() -> JsonValue:
    return probed(agent_apps.pydantic_ai_refund)
