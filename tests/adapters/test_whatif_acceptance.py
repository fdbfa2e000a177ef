"""Issue 22's acceptance, end to end, on two unmodified agents (Agents SDK, pydantic-ai).

A fork changes one tool's output (the order lookup), so the model's next request is one
the recording never made. It completes

(a) with `live=`: the fake API, served over loopback as the provider would be, receives
    exactly the new model request and none of the recorded ones;
(b) offline, with `reply(...)` in a supply patch that names no inputs: zero requests.

Each branch is promoted, and the four cases run in one pytest process in which the
network is blocked: each case's runner, after its agent, tries a connection of its own
to a counting server (tests/adapters/probed_cases.py); every try is refused (when
promote verifies the case, and again under pytest), the server accepts nothing, and
every case passes.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from examples.local_openai import refusing
from tests.adapters.agent_apps import (
    ORDER_ID,
    agents_api,
    pydantic_ai_api,
    run_agents_sdk,
    run_pydantic_ai,
)
from tests.adapters.http_api import served
from tests.adapters.real_clients import ROOT, needs_openai_3
from tests.adapters.support import async_client
from tests.adapters.test_fork_live import agents_over_http, pydantic_ai_over_http, tool_outputs
from tests.support.case_pytest import case_pytest
from tests.support.counting_server import CountingServer
from toolreplay import NetworkBlockedWarning
from toolreplay.adapters.openai import reply

pytestmark = needs_openai_3

MODEL = "openai.responses.create"
CHEAPER = {"order_id": ORDER_ID, "total": 250.0, "status": "delivered"}
PARTIAL = {"refund_id": f"rf_{ORDER_ID}", "status": "issued", "amount": 250.0}
ON_FILE = f"Order {ORDER_ID} is on file: {json.dumps(CHEAPER, separators=(',', ':'))}"


def cheaper() -> toolreplay.OutputPatch:
    return toolreplay.replace_output(
        effect="shop.order.lookup", inputs={"order_id": ORDER_ID}, value=CHEAPER
    )


def billed() -> toolreplay.OutputPatch:
    """Billing's call for the new amount is new too: the next such call gets this."""
    return toolreplay.supply_output(effect="billing.refund.issue", value=PARTIAL)


def live_fork(
    model: Any, run: Any, folder: Path, name: str, patches: list[toolreplay.Patch]
) -> tuple[Path, Any]:
    """Record over loopback, then fork with `patches` and the model live; the branch,
    the agent's answer. Only the fork's requests are left in `model.requests`."""
    trace, branch = folder / f"{name}-recorded-live.trp", folder / f"{name}-live.trp"
    with served(model) as url:
        with toolreplay.record(trace):
            asyncio.run(run(url))
        recorded = list(model.requests)
        model.requests.clear()
        with toolreplay.fork(trace, branch, patches=patches, live=[MODEL], unobserved="allow"):
            answer = asyncio.run(run(url))
    # Exactly the new request went out: it carries the changed tool output, and the
    # recording holds no request like it.
    assert len(model.requests) == 1
    assert model.requests[0] not in recorded
    assert "250.0" in tool_outputs(model.requests[0])[-1]
    return branch, answer


def offline_fork(
    model: Any, run: Any, folder: Path, name: str, patches: list[toolreplay.Patch]
) -> tuple[Path, Any]:
    """Record, then fork with `patches` and a client that refuses (and counts) requests."""
    trace, branch = folder / f"{name}-recorded-offline.trp", folder / f"{name}-offline.trp"
    with toolreplay.record(trace):
        asyncio.run(run(async_client(model)))
    sent: list[Any] = []
    with toolreplay.fork(trace, branch, patches=patches, unobserved="allow"):
        answer = asyncio.run(run(async_client(refusing(sent))))
    assert sent == []  # zero requests
    return branch, answer


def origins(branch: Path) -> list[tuple[str, str]]:
    return [(op.effect, op.origin) for op in toolreplay.read_trace(branch).operations]


def test_both_agents_fork_live_and_offline_and_every_branch_passes_with_the_network_blocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, cases = tmp_path / "traces", tmp_path / "cases"
    folder.mkdir()
    branches: list[tuple[str, Path, Any, str]] = []

    # The Agents SDK agent, two tools: the model refunds what the lookup says (250), and
    # billing's call for 250 is new too.
    branch, answer = live_fork(
        agents_api(),
        lambda url: agents_over_http(url, streamed=False),
        folder,
        "agents",
        [cheaper(), billed()],
    )
    assert answer == PARTIAL
    assert origins(branch) == [
        (MODEL, "recorded"),
        ("shop.order.lookup", "patched"),
        (MODEL, "live"),
        ("billing.refund.issue", "supplied"),
    ]
    branches.append(("agents_live", branch, answer, "agents_live"))
    refund = reply(tool_calls=[("issue_refund", {"order_id": ORDER_ID, "amount": 250.0})])
    branch, answer = offline_fork(
        agents_api(),
        lambda client: run_agents_sdk(client, streamed=False),
        folder,
        "agents",
        [cheaper(), toolreplay.supply_output(effect=MODEL, value=refund), billed()],
    )
    assert answer == PARTIAL
    assert [origin for _, origin in origins(branch)] == [
        "recorded",
        "patched",
        "supplied",
        "supplied",
    ]
    branches.append(("agents_offline", branch, answer, "agents_offline"))

    # The pydantic-ai agent, over the Responses API: the model's final answer.
    branch, answer = live_fork(
        pydantic_ai_api(),
        lambda url: pydantic_ai_over_http(url, api="responses", streamed=False),
        folder,
        "pydantic",
        [cheaper()],
    )
    assert answer == ON_FILE  # what the fake API answered the new request
    assert origins(branch)[-1] == (MODEL, "live")
    branches.append(("pydantic_ai_live", branch, answer, "pydantic_ai_live"))
    branch, answer = offline_fork(
        pydantic_ai_api(),
        lambda client: run_pydantic_ai(client, api="responses", streamed=False),
        folder,
        "pydantic",
        [cheaper(), toolreplay.supply_output(effect=MODEL, value=reply(text=ON_FILE))],
    )
    assert answer == ON_FILE
    assert origins(branch)[-1] == (MODEL, "supplied")
    branches.append(("pydantic_ai_offline", branch, answer, "pydantic_ai_offline"))

    probe, log = CountingServer(), tmp_path / "probes.log"
    try:
        # Promote verifies each case by running it here, with the network blocked too.
        monkeypatch.setenv("TOOLREPLAY_TEST_PROBE", probe.address)
        monkeypatch.setenv("TOOLREPLAY_TEST_PROBE_LOG", str(log))
        for name, branch, answer, runner in branches:
            with pytest.warns(NetworkBlockedWarning, match=probe.address):
                toolreplay.promote(
                    branch,
                    cases / name,
                    name=name,
                    runner=f"tests.adapters.probed_cases:{runner}",
                    expected=answer,
                )
        assert log.read_text(encoding="utf-8").split() == ["NetworkBlockedError"] * 4
        log.unlink()
        env = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        env["PYTHONPATH"] = str(ROOT)
        result = subprocess.run(
            case_pytest(str(cases)),
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        accepted = probe.accepted
    finally:
        probe.close()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout
    # Each case's connection was refused by the blocked network; none got through.
    assert log.read_text(encoding="utf-8").split() == ["NetworkBlockedError"] * 4
    assert accepted == 0
