"""The network guard (RFC 0001 §10): replay, fork and case verification refuse connections.

Every test points real clients (a raw socket, httpx, aiohttp, the Agents SDK's trace
exporter) at a plain TCP server on loopback that counts the connections it accepts:
while the network is blocked it must accept none.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from examples.local_openai import HTTP
from tests.adapters.real_clients import needs_openai_3
from tests.support.case_pytest import CASE_PYTEST
from tests.support.counting_server import CountingServer

# Refusals are what this module is about: their warning is expected, and checked where it
# matters (the project's settings make an unexpected one an error everywhere else).
pytestmark = pytest.mark.filterwarnings("default::toolreplay.errors.NetworkBlockedWarning")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def server() -> Iterator[CountingServer]:
    counting = CountingServer()
    yield counting
    counting.close()


@toolreplay.effect("inventory.count")
def count_stock(sku: str) -> int:
    return 3


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "stock.trp"
    with toolreplay.record(path):
        count_stock("sku-1")
    return path


def refusal_in(error: BaseException) -> toolreplay.NetworkBlockedError:
    """The guard's refusal, wherever the client put it in the exception chain."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, toolreplay.NetworkBlockedError):
            return seen
        seen = seen.__cause__ or seen.__context__
    raise AssertionError(f"no NetworkBlockedError in the chain of {error!r}")


def refused(attempt: Callable[[], object]) -> toolreplay.NetworkBlockedError:
    with pytest.raises(Exception) as raised:  # each client reports a failed connection its way
        attempt()
    return refusal_in(raised.value)


@contextlib.contextmanager
def warnings_kept() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        yield warned


def network_warnings(warned: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in warned if w.category is toolreplay.NetworkBlockedWarning]


# --- what is refused --------------------------------------------------------------------


def test_an_uninstrumented_http_client_and_a_raw_socket_are_refused_during_replay(
    trace: Path, server: CountingServer
) -> None:
    with warnings_kept() as warned, toolreplay.replay(trace) as session:
        assert count_stock("sku-1") == 3
        by_httpx = refused(lambda: HTTP.get(server.url, timeout=5))
        raw = refused(lambda: socket.create_connection(("127.0.0.1", server.port), timeout=5))
    assert server.accepted == 0
    [warning] = network_warnings(warned)  # one, naming the destination once
    assert f"{server.address} (connection, 2x, thread 'MainThread')" in warning
    for error in (by_httpx, raw):
        assert (error.host, error.port) == ("127.0.0.1", server.port)
        assert error.thread == threading.current_thread().name
        assert error.effect is None
        message = str(error)
        assert f"a connection to {server.address}" in message
        assert 'network="allow"' in message
        assert f'network=["{server.address}"]' in message
        assert f"--allow-host {server.address}" in message
    assert [(r.destination, r.kind, r.in_session) for r in session.network_refusals] == [
        (server.address, "connect", True)
    ] * 2


def test_async_clients_are_refused_too(trace: Path, server: CountingServer) -> None:
    import aiohttp

    async def with_httpx() -> None:
        async with HTTP.AsyncClient() as client:
            await client.get(server.url, timeout=5)

    async def with_aiohttp() -> None:
        async with aiohttp.ClientSession() as client, client.get(server.url) as response:
            await response.read()

    async def with_asyncio() -> None:
        _reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.close()

    with warnings.catch_warnings(record=True), toolreplay.replay(trace) as session:
        count_stock("sku-1")
        errors = [refused(lambda run=run: asyncio.run(run())) for run in (
            with_httpx, with_aiohttp, with_asyncio
        )]  # fmt: skip
    assert server.accepted == 0
    assert all(error.port == server.port for error in errors)
    assert len(session.network_refusals) == 3


def test_a_background_thread_is_refused_without_failing_the_replay(
    trace: Path, server: CountingServer
) -> None:
    """A thread that sees no session (a trace exporter's) answers to every blocking session."""
    outcome: list[BaseException] = []

    def export() -> None:
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=5)
        except OSError as error:
            outcome.append(error)

    with warnings_kept() as warned, toolreplay.replay(trace) as session:
        exporter = threading.Thread(target=export, name="exporter")
        exporter.start()
        exporter.join()
        assert count_stock("sku-1") == 3
    # The replay itself passed: the refusal is reported, not a violation.
    assert server.accepted == 0
    error = refusal_in(outcome[0])
    assert error.thread == "exporter"
    assert "which sees no session" in str(error)
    assert [(r.thread, r.in_session) for r in session.network_refusals] == [("exporter", False)]
    [warning] = network_warnings(warned)
    assert "thread 'exporter'" in warning


def test_a_host_name_is_refused_before_it_is_looked_up(trace: Path) -> None:
    with warnings.catch_warnings(record=True), toolreplay.replay(trace) as session:
        count_stock("sku-1")
        error = refused(lambda: socket.getaddrinfo("db.example.invalid", 5432))
    assert (error.host, error.port) == ("db.example.invalid", 5432)
    assert "a lookup of the host name db.example.invalid:5432" in str(error)
    assert session.network_refusals[0].kind == "lookup"


def test_unix_sockets_are_local_and_pass(trace: Path, tmp_path: Path) -> None:
    with toolreplay.replay(trace) as session:
        count_stock("sku-1")
        left, right = socket.socketpair()
        left.sendall(b"x")
        assert right.recv(1) == b"x"
        left.close()
        right.close()
        path = str(tmp_path / "local.sock")
        with socket.socket(socket.AF_UNIX) as listening:
            listening.bind(path)
            listening.listen()
            with socket.socket(socket.AF_UNIX) as client:
                client.connect(path)
    assert session.network_refusals == ()


# --- what is let through ----------------------------------------------------------------


def test_an_allow_list_lets_its_hosts_through_and_only_them(trace: Path) -> None:
    allowed, other = CountingServer(), CountingServer()
    try:
        with warnings.catch_warnings(record=True):
            with toolreplay.replay(trace, network=[allowed.address]) as session:
                count_stock("sku-1")
                assert HTTP.get(allowed.url, timeout=5).text == "ok"
                refused(lambda: HTTP.get(other.url, timeout=5))
            with toolreplay.replay(trace, network=[f"localhost:{allowed.port}"]):
                count_stock("sku-1")  # a name: looked up, and its addresses let through
                socket.create_connection(("localhost", allowed.port), timeout=5).close()
                refused(lambda: socket.create_connection(("localhost", other.port), timeout=5))
    finally:
        allowed.close()
        other.close()
    assert (allowed.accepted, other.accepted) == (2, 0)
    assert [r.destination for r in session.network_refusals] == [other.address]


def test_network_allow_record_and_no_session_are_not_blocked(
    trace: Path, tmp_path: Path, server: CountingServer
) -> None:
    with toolreplay.replay(trace, network="allow"):
        count_stock("sku-1")
        HTTP.get(server.url, timeout=5)
    with toolreplay.record(tmp_path / "recorded.trp"):
        HTTP.get(server.url, timeout=5)
    HTTP.get(server.url, timeout=5)  # after the replays closed
    assert server.accepted == 3


def test_a_fork_lets_its_live_effects_connect_and_nothing_else(
    trace: Path, tmp_path: Path, server: CountingServer
) -> None:
    @toolreplay.effect("inventory.reserve")
    def reserve(sku: str) -> str:
        return HTTP.get(server.url, timeout=5).text

    @toolreplay.effect("inventory.release")
    async def release(sku: str) -> str:
        async def ping() -> str:
            async with HTTP.AsyncClient() as client:
                return (await client.get(server.url, timeout=5)).text

        return await asyncio.create_task(ping())  # a task the body starts carries the allowance

    with warnings.catch_warnings(record=True):
        with toolreplay.fork(
            trace, tmp_path / "branch.trp", live=["inventory.reserve", "inventory.release"]
        ) as session:
            count_stock("sku-1")
            assert reserve("sku-1") == "ok"
            assert asyncio.run(release("sku-1")) == "ok"
            refused(lambda: HTTP.get(server.url, timeout=5))  # the application's own
    assert server.accepted == 2
    assert session.live_count == 2
    assert [r.in_session for r in session.network_refusals] == [True]


# --- settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("network", "message"),
    [
        ("localhost:5432", "for an allow-list write network=['localhost:5432']"),
        ("offline", 'must be "block", "allow" or a list of hosts'),
        (True, "got a bool"),
        (["db:99999"], "the port must be a number from 1 to 65535"),
        (["db:"], "the port must be a number"),
        (["not a host"], "an allow-list entry is a host name or IP address"),
        ([""], "an allow-list entry"),
        ([5432], "an allow-list entry"),
    ],
)
def test_a_malformed_network_setting_is_refused_before_the_session_opens(
    trace: Path, network: Any, message: str
) -> None:
    with pytest.raises(toolreplay.NetworkOptionError, match=message.replace("[", r"\[")):
        toolreplay.replay(trace, network=network)
    with pytest.raises(toolreplay.NetworkOptionError):
        toolreplay.fork(trace, trace.with_name("branch.trp"), network=network)


# --- where it is always on: cases, the pytest plugin, the command line -------------------


def child_env(**extra: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NETWORK_APP_")}
    environment["PYTHONPATH"] = str(ROOT)
    return {**environment, **extra}


def run(*args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=child_env(**extra),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_promoted_case_refuses_a_connection_its_runner_makes(
    tmp_path: Path, server: CountingServer
) -> None:
    from tests.support import network_app

    trace = tmp_path / "stock.trp"
    with toolreplay.record(trace):
        expected = network_app.main()  # NETWORK_APP_CONNECT unset: no connection
    case = toolreplay.promote(
        trace,
        tmp_path / "cases" / "stock",
        name="stock",
        runner="tests.support.network_app:main",
        expected=expected,
    )
    passing = run(*CASE_PYTEST, str(case.directory), cwd=ROOT)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    connecting = run(
        *CASE_PYTEST, str(case.directory), cwd=ROOT,
        NETWORK_APP_CONNECT="raw", NETWORK_APP_TARGET=server.address,
    )  # fmt: skip
    assert connecting.returncode == 1, connecting.stdout + connecting.stderr
    assert "NetworkBlockedError" in connecting.stdout
    assert f"a connection to {server.address}" in connecting.stdout
    assert server.accepted == 0


def test_the_plugins_replay_mode_refuses_a_connection_the_test_makes(
    tmp_path: Path, server: CountingServer
) -> None:
    (tmp_path / "test_stock.py").write_text(
        "import pytest\n"
        "from tests.support.network_app import main\n\n"
        "@pytest.mark.toolreplay\n"
        "def test_stock():\n"
        "    assert main()['stock'] == 3\n",
        encoding="utf-8",
    )
    arguments = (*CASE_PYTEST, "test_stock.py")
    connect = {"NETWORK_APP_CONNECT": "raw", "NETWORK_APP_TARGET": server.address}
    recorded = run(*arguments, "--toolreplay-mode=once", cwd=tmp_path, **connect)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert server.accepted == 1  # recording is not blocked
    replayed = run(*arguments, "--toolreplay-mode=none", cwd=tmp_path, **connect)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "NetworkBlockedError" in replayed.stdout
    assert server.accepted == 1


def test_the_command_line_reports_what_it_refused(tmp_path: Path, server: CountingServer) -> None:
    def cli(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return run("-m", "toolreplay", *args, "--format", "json", cwd=tmp_path, **extra)

    runner = ("--runner", "tests.support.network_app:main")
    recorded = cli("record", *runner, "--output", "stock.trp")
    assert recorded.returncode == 0, recorded.stderr
    quiet = {"NETWORK_APP_CONNECT": "quiet", "NETWORK_APP_TARGET": server.address}

    replayed = cli("replay", "stock.trp", **quiet)
    document = json.loads(replayed.stdout)
    assert document["outcome"] == "ok"
    assert document["return_value"] == {"stock": 3, "network": "refused"}
    assert document["network_refused"] == [server.address]
    assert "NetworkBlockedWarning" in replayed.stderr

    raising = cli(
        "replay", "stock.trp", NETWORK_APP_CONNECT="raw", NETWORK_APP_TARGET=server.address
    )
    document = json.loads(raising.stdout)
    assert document["outcome"] == "application_error"
    assert document["error"]["type"] == "toolreplay.errors.NetworkBlockedError"
    assert server.accepted == 0

    allowed = cli("replay", "stock.trp", "--allow-host", server.address, **quiet)
    assert json.loads(allowed.stdout)["return_value"]["network"] == "connected"
    opened = cli("replay", "stock.trp", "--network", "allow", **quiet)
    assert json.loads(opened.stdout)["return_value"]["network"] == "connected"
    assert server.accepted == 2

    both = cli("replay", "stock.trp", "--network", "allow", "--allow-host", "db", **quiet)
    assert both.returncode == 2
    assert json.loads(both.stdout)["error"]["type"] == "toolreplay.errors.NetworkOptionError"
    bad = cli("fork", "stock.trp", "-o", "b.trp", "--allow-host", "db:0", **quiet)
    assert bad.returncode == 2  # refused before the application ran: no branch
    assert not (tmp_path / "b.trp").exists()


def test_a_case_cannot_go_live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing passes `live` to case verification: a case made from a fork whose effect
    ran live replays that call, and a call its trace does not hold misses; no body runs."""
    from tests.support import network_app

    trace, branch = tmp_path / "stock.trp", tmp_path / "live.trp"
    with toolreplay.record(trace):
        network_app.main()
    monkeypatch.setenv("NETWORK_APP_SKU", "sku-2")
    with toolreplay.fork(trace, branch, live=["inventory.*"], unobserved="allow") as forked:
        returned = network_app.main()
    assert forked.live_count == 1
    assert network_app.BODY_RUNS[-1] == "sku-2"  # the fork ran it live
    case = toolreplay.promote(
        branch, tmp_path / "cases" / "sku2", name="sku2", runner="tests.support.network_app:main",
        expected=returned,
    )  # fmt: skip
    ran = len(network_app.BODY_RUNS)
    assert toolreplay.verify_case(case.directory).returned == returned
    monkeypatch.setenv("NETWORK_APP_SKU", "sku-3")
    with pytest.raises(toolreplay.ReplayContractError) as raised:
        toolreplay.verify_case(case.directory)
    assert isinstance(raised.value.__cause__, toolreplay.ReplayMiss)
    assert len(network_app.BODY_RUNS) == ran  # verification ran no body
    usage = run("-m", "toolreplay", "verify", str(case.directory), "--live", "inventory.*",
                cwd=tmp_path)  # fmt: skip
    assert usage.returncode == 2
    assert "--live" in usage.stderr


@needs_openai_3
def test_the_agents_sdk_replays_with_its_trace_exporter_left_on(tmp_path: Path) -> None:
    """The exporter sends from its own thread, which sees no session: refused, reported,
    and the replay passes."""
    from examples.openai_agents_refund import client_of, provider, settle_refund

    trace = tmp_path / "refund.trp"
    with toolreplay.record(trace):
        asyncio.run(settle_refund(client_of(provider())))
    child = run("-m", "tests.adapters.traced_agent", str(trace), cwd=ROOT)
    assert child.returncode == 0, child.stdout + child.stderr
    report = json.loads(child.stdout.splitlines()[-1])
    assert report["output"]["status"] == "issued"  # the replay passed
    assert report["accepted_during_replay"] == 0
    assert report["refusals"]
    assert {r["destination"] for r in report["refusals"]} == {report["tracing_api"]}
    assert not any(r["in_session"] for r in report["refusals"])
    assert "NetworkBlockedWarning" in child.stderr
