"""Concurrent effects: tasks and threads recorded on lanes, replayed deterministically.

Real event loops and real threads throughout; effect bodies sleep randomly while
recording so that calls overlap and complete out of order, and the application
sleeps randomly before each call while replaying, so every replay runs under
another schedule.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, cast

import pytest

import toolreplay
from examples.local_openai import HTTP, refusing
from tests.adapters.support import async_client
from tests.support import concurrent_app as app
from tests.support import crm
from toolreplay import (
    AmbiguousReplayMatch,
    JsonValue,
    NestedEffectError,
    Operation,
    OperationIdentity,
    SessionContextError,
    SessionEnding,
    SessionError,
    TraceHeader,
)
from toolreplay.adapters.openai import instrument
from toolreplay.trace import TraceWriter


@pytest.fixture(autouse=True)
def _fresh_app() -> Iterator[None]:
    app.BODY_CALLS.clear()
    app.JITTER = None
    yield
    app.JITTER = None


def concurrent_pairs(operations: tuple[Operation, ...]) -> int:
    """How many pairs of operations were in flight at the same time."""
    return sum(
        1
        for k, left in enumerate(operations)
        for right in operations[k + 1 :]
        if not left.precedes(right) and not right.precedes(left)
    )


# --- asyncio.gather: model calls through the instrumented async client, plain effects ---


def answer_body(text: str) -> dict[str, Any]:
    return {
        "id": f"resp_{abs(hash(text)) % 10**8}",
        "object": "response",
        "created_at": 1741476777,
        "status": "completed",
        "model": "gpt-5-mini-2025-08-07",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


class ResponsesClient(Protocol):
    """An async OpenAI client, instrumented (whatever type `instrument` returns for it)."""

    @property
    def responses(self) -> Any: ...


async def fan_out(client: ResponsesClient, jitter: random.Random | None) -> list[str]:
    """The application: 10 model calls and 10 plain effects, all at once."""

    async def ask(k: int) -> str:
        if jitter is not None:
            await asyncio.sleep(jitter.random() * 0.002)
        response = await client.responses.create(
            model="gpt-5-mini", input=f"Classify ticket {k}: refund or question?"
        )
        return response.output_text

    async def price(k: int) -> str:
        if jitter is not None:
            await asyncio.sleep(jitter.random() * 0.002)
        return str((await app.quote(k))["price"])

    return list(await asyncio.gather(*(ask(k) for k in range(10)), *(price(k) for k in range(10))))


def test_gather_of_model_calls_and_effects_replays_identically_under_jitter(
    tmp_path: Path,
) -> None:
    delays = random.Random(11)
    requests: list[Any] = []

    async def provider(request: Any) -> Any:
        requests.append(request)
        await asyncio.sleep(delays.random() * 0.003)  # answers arrive out of order
        prompt = json.loads(request.content)["input"]
        return HTTP.Response(200, json=answer_body(f"answer to {prompt}"))

    refused: list[Any] = []

    path = tmp_path / "gather.trp"

    async def record() -> list[str]:
        with toolreplay.record(path):
            return await fan_out(instrument(async_client(provider)), None)

    live = asyncio.run(record())
    assert len(requests) == 10
    assert live[0] == "answer to Classify ticket 0: refund or question?"
    trace = toolreplay.read_trace(path)
    assert len(trace) == 20
    assert len(trace.lanes) == 20  # one task per call; the opening task made none
    assert all(op.start_ns is not None and op.end_ns is not None for op in trace.operations)
    assert concurrent_pairs(trace.operations) > 0

    bodies = sum(app.BODY_CALLS.values())
    replay_client = instrument(async_client(refusing(refused)))
    for seed in range(50):

        async def replayed(seed: int = seed) -> list[str]:
            with toolreplay.replay(trace):
                return await fan_out(replay_client, random.Random(seed))

        assert asyncio.run(replayed()) == live
    assert refused == []
    assert sum(app.BODY_CALLS.values()) == bodies


# --- thread pools ---------------------------------------------------------------------


def test_a_thread_pool_under_record_replays_identically_with_jitter(tmp_path: Path) -> None:
    path = tmp_path / "pool.trp"
    with toolreplay.record(path):
        live = app.stock_levels(200)
    trace = toolreplay.read_trace(path)
    assert trace.complete
    assert len(trace) == 200
    assert app.BODY_CALLS["inventory.stock.get"] == 200
    assert 1 < len(trace.lanes) <= 8
    assert set(trace.lanes) <= {f"thread-{k}" for k in range(1, 9)}
    assert concurrent_pairs(trace.operations) > 0

    for seed in range(20):
        app.JITTER = random.Random(seed)
        with toolreplay.replay(trace):
            # A plain pool with propagate() replays what SessionExecutor recorded.
            with ThreadPoolExecutor(max_workers=8) as pool:
                replayed = list(pool.map(toolreplay.propagate(app.checked_stock), range(200)))
        assert replayed == live
    assert app.BODY_CALLS["inventory.stock.get"] == 200


def test_a_plain_pool_without_propagation_raises_at_the_call(tmp_path: Path) -> None:
    path = tmp_path / "unpropagated.trp"
    with pytest.raises(SessionContextError, match=r"toolreplay\.propagate") as raised:
        with toolreplay.record(path), ThreadPoolExecutor(max_workers=8) as pool:
            app.stock_levels_with(pool, range(200))
    assert "inventory.stock.get was called in thread" in str(raised.value)
    assert app.BODY_CALLS["inventory.stock.get"] == 0  # refused before the body, never lost
    trace = toolreplay.read_trace(path)
    assert trace.complete
    assert len(trace) == 0
    assert trace.footer is not None
    assert trace.footer.ending.error_type == "toolreplay.errors.SessionContextError"


def test_an_unseen_thread_whose_error_is_swallowed_still_fails_the_recording(
    tmp_path: Path,
) -> None:
    caught: list[BaseException] = []

    def worker() -> None:
        try:
            app.stock(1)
        except SessionContextError as error:
            caught.append(error)

    with pytest.raises(SessionError, match="SessionContextError was raised during it"):
        with toolreplay.record(tmp_path / "swallowed.trp"):
            thread = threading.Thread(target=worker)
            thread.start()
            thread.join()
    assert len(caught) == 1
    # Once the session has closed, the same call runs as plain code again.
    assert app.stock(1)["sku"] == 1


def test_propagate_carries_the_session_into_a_plain_thread(tmp_path: Path) -> None:
    path = tmp_path / "thread.trp"
    results: list[int] = []
    with toolreplay.record(path):
        threads = [
            threading.Thread(
                target=toolreplay.propagate(lambda k=k: results.append(app.checked_stock(k)))
            )
            for k in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        main = app.checked_stock(99)
    trace = toolreplay.read_trace(path)
    lanes = {op.inputs["sku"]: op.lane for op in trace.operations}
    assert lanes[99] == "main"
    assert sorted(lane or "" for sku, lane in lanes.items() if sku != 99) == [
        "thread-1",
        "thread-2",
        "thread-3",
        "thread-4",
    ]
    assert main == app.checked_stock(99)
    assert sorted(results) == sorted(app.checked_stock(k) for k in range(4))


# --- occurrences of concurrent calls with one identity ----------------------------------


@toolreplay.effect("tickets.next")
def next_ticket(queue: str) -> int:
    with _TICKET_LOCK:
        _TICKETS[queue] = _TICKETS.get(queue, 0) + 1
        number = _TICKETS[queue]
    _BARRIER.wait(timeout=5)  # both calls are in flight at once
    return number


_TICKET_LOCK = threading.Lock()
_TICKETS: dict[str, int] = {}
_BARRIER = threading.Barrier(2)


def two_tickets_at_once() -> list[int]:
    with toolreplay.SessionExecutor(max_workers=2) as pool:
        return sorted(pool.map(next_ticket, ["refunds", "refunds"]))


def test_concurrent_calls_with_one_identity_and_different_outcomes_are_ambiguous(
    tmp_path: Path,
) -> None:
    _TICKETS.clear()
    path = tmp_path / "tickets.trp"
    with toolreplay.record(path):
        assert two_tickets_at_once() == [1, 2]
    trace = toolreplay.read_trace(path)
    assert [op.identity.occurrence for op in trace.operations] in ([0, 1], [1, 0])
    with pytest.raises(AmbiguousReplayMatch) as raised, toolreplay.replay(trace):
        two_tickets_at_once()
    message = str(raised.value)
    assert "tickets.next was called with inputs it was called with 2 times at once" in message
    for op in trace.operations:
        assert f"operation {op.logical_id}, line {op.line}: occurrence" in message
        assert f"lane {op.lane}" in message
    assert "make the concurrent calls distinguishable by their inputs" in message
    assert len(raised.value.operations) == 2


def test_concurrent_calls_with_one_identity_and_one_outcome_replay(tmp_path: Path) -> None:
    @toolreplay.effect("tickets.queue.size")
    def queue_size(queue: str) -> int:
        _BARRIER.wait(timeout=5)
        return 3

    path = tmp_path / "sizes.trp"
    with toolreplay.record(path), toolreplay.SessionExecutor(max_workers=2) as pool:
        live = list(pool.map(queue_size, ["refunds", "refunds"]))
    trace = toolreplay.read_trace(path)
    assert len(trace.lanes) == 2
    with toolreplay.replay(trace), toolreplay.SessionExecutor(max_workers=2) as pool:
        assert list(pool.map(queue_size, ["refunds", "refunds"])) == live == [3, 3]


# --- nesting, lanes of tasks, late calls ------------------------------------------------


def test_an_effect_called_from_threads_started_by_another_effect_is_nested(
    tmp_path: Path,
) -> None:
    @toolreplay.effect("inventory.report")
    def report() -> list[int]:
        with toolreplay.SessionExecutor(max_workers=2) as pool:
            return list(pool.map(app.checked_stock, [1, 2]))

    with pytest.raises(NestedEffectError, match=r"inside the body of inventory\.report"):
        with toolreplay.record(tmp_path / "nested.trp"):
            report()
    assert app.BODY_CALLS["inventory.stock.get"] == 0


def test_tasks_are_named_in_the_order_of_their_first_effect_call(tmp_path: Path) -> None:
    path = tmp_path / "tasks.trp"

    async def scenario() -> None:
        await crm.decide("refund first")  # the task that opened the session: main
        first = asyncio.Event()

        async def later() -> None:
            await first.wait()
            await crm.decide("refund later")

        async def earlier() -> None:
            await crm.decide("refund earlier")
            first.set()

        async with asyncio.TaskGroup() as group:
            group.create_task(later())
            group.create_task(earlier())

    async def run() -> None:
        with toolreplay.record(path):
            await scenario()

    asyncio.run(run())
    lanes = {op.inputs["prompt"]: op.lane for op in toolreplay.read_trace(path).operations}
    assert lanes == {"refund first": "main", "refund earlier": "task-1", "refund later": "task-2"}


# --- fork, diff, promote and verify_case on a concurrent trace ---------------------------


def test_fork_and_diff_of_a_concurrent_trace_report_no_order_change(tmp_path: Path) -> None:
    source = tmp_path / "source.trp"
    with toolreplay.record(source):
        live = app.stock_levels(40)
    again = tmp_path / "again.trp"
    with toolreplay.record(again):
        assert app.stock_levels(40) == live
    first, second = toolreplay.read_trace(source), toolreplay.read_trace(again)
    assert [op.identity for op in first.operations] != [op.identity for op in second.operations]

    target = first.operations[5].identity
    # A value no call returns (sku 0 really answers {"sku": 0, "available": 0}).
    patch = toolreplay.replace_output(
        effect=target.effect, inputs=first.operations[5].inputs, value={"sku": -1, "available": -1}
    )
    branch = tmp_path / "branch.trp"
    app.JITTER = random.Random(3)
    with toolreplay.fork(source, branch, patches=[patch]):
        app.stock_levels(40)
    assert len(toolreplay.read_trace(branch)) == 40

    reordered = toolreplay.diff(source, again)
    assert any(row.match == "moved" for row in reordered.rows)  # completed in another order
    assert [d.type for d in reordered.differences] == []
    forked = toolreplay.diff(source, branch)
    assert [d.type for d in forked.differences] == ["output_changed"]
    assert forked.differences[0].patch_id == patch.patch_id


def test_a_concurrent_run_promotes_to_a_case_that_verifies(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.trp"
    with toolreplay.record(path):
        expected = app.catalogue()
    trace = toolreplay.read_trace(path)
    assert len(trace.lanes) > 2
    case = toolreplay.promote(
        path,
        tmp_path / "cases" / "catalogue",
        name="catalogue",
        runner="tests.support.concurrent_app:catalogue",
        expected=expected,
    )
    app.JITTER = random.Random(5)
    verified = toolreplay.verify_case(case.directory)
    assert verified.operations_replayed == len(trace)


# --- SIGKILL during a 16-thread recording ---------------------------------------------

KILLED_APP = textwrap.dedent(
    """
    import os, sys, time
    import toolreplay

    @toolreplay.effect("orders.fetch")
    def fetch(order_id: int) -> dict:
        time.sleep(0.0005)  # a body that takes a moment, so the 16 threads' calls overlap
        return {"order_id": order_id, "total": order_id * 10.5}

    def fetched(order_id: int) -> int:
        fetch(order_id)
        os.write(1, f"done {order_id}\\n".encode())  # after the call completed
        return order_id

    with toolreplay.record(sys.argv[1]):
        with toolreplay.SessionExecutor(max_workers=16) as pool:
            list(pool.map(fetched, range(1_000_000)))
    """
)


def test_sigkill_during_a_16_thread_recording_keeps_every_completed_call(
    tmp_path: Path,
) -> None:
    script = tmp_path / "app.py"
    script.write_text(KILLED_APP)
    trace_path = tmp_path / "killed.trp"
    child = subprocess.Popen(
        [sys.executable, str(script), str(trace_path)],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).parent.parent,
    )
    assert child.stdout is not None
    for _ in range(500):
        assert child.stdout.readline().startswith(b"done ")
    os.kill(child.pid, signal.SIGKILL)
    rest, _ = child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    completed = {int(line.split()[1]) for line in rest.splitlines() if line.startswith(b"done ")}

    trace = toolreplay.read_trace(trace_path)
    assert not trace.complete
    recorded = {cast(int, op.inputs["order_id"]): op for op in trace.operations}
    assert completed <= set(recorded)
    assert len(recorded) >= 500
    for order_id, op in recorded.items():
        assert op.outcome == toolreplay.Returned({"order_id": order_id, "total": order_id * 10.5})
    assert 1 < len(trace.lanes) <= 16
    assert set(trace.lanes) <= {f"thread-{k}" for k in range(1, 17)}


# --- traces recorded before lanes (format 3) --------------------------------------------

FIXTURES = Path(__file__).parent / "fixtures"


def sequential_refunds() -> None:
    crm.get_customer(42)
    crm.get_customer(42, include_history=True)
    crm.get_customer(42)
    crm.create_refund(42, 50.0)
    with pytest.raises(TimeoutError, match="billing service timed out after 30s"):
        crm.create_refund(42, 1200.0)


def test_a_format_3_trace_replays_forks_and_diffs_unchanged(tmp_path: Path) -> None:
    path = FIXTURES / "sequential-v3.trp"
    before = path.read_bytes()
    trace = toolreplay.read_trace(path)
    assert trace.header.format_version == 3
    assert trace.complete
    assert trace.lanes == ()
    assert all(op.lane is None and op.start_ns is None for op in trace.operations)
    with toolreplay.replay(path):
        sequential_refunds()
    assert sum(crm.BODY_CALLS.values()) == 0

    branch = tmp_path / "branch.trp"
    with toolreplay.fork(path, branch):
        sequential_refunds()
    forked = toolreplay.read_trace(branch)
    assert forked.header.format_version == toolreplay.TRACE_FORMAT_VERSION == 5
    assert forked.lanes == ("main",)
    assert toolreplay.diff(path, branch).differences == ()
    assert path.read_bytes() == before


def test_the_bundled_incident_still_replays(tmp_path: Path) -> None:
    from examples.incident.app import run_incident

    trace = toolreplay.read_trace(Path("examples/incident/refund.trp"))
    assert trace.header.format_version == 5
    with toolreplay.replay(trace):
        run_incident()


def test_a_format_4_trace_replays_and_forks_with_its_lanes(tmp_path: Path) -> None:
    # Written by the release that introduced lanes (format 4, before supplied and live).
    path = FIXTURES / "concurrent-v4.trp"
    before = path.read_bytes()
    trace = toolreplay.read_trace(path)
    assert trace.header.format_version == 4
    assert trace.complete
    assert set(trace.lanes) == {"thread-1", "task-1"}
    assert trace.footer is not None
    assert (trace.footer.unobserved, trace.footer.attempted) == ((), None)

    def refunds() -> None:
        crm.get_customer(42)
        crm.get_customer(7, include_history=True)
        crm.create_refund(42, 50.0)

    with toolreplay.replay(path):
        refunds()
    branch = tmp_path / "branch.trp"
    with toolreplay.fork(path, branch):
        refunds()
    assert toolreplay.read_trace(branch).header.format_version == 5
    assert toolreplay.diff(path, branch).differences == ()
    assert path.read_bytes() == before


# --- the operation line of format 4 -------------------------------------------------------


def rewrite_first_operation(source: Path, path: Path, **changes: object) -> Path:
    lines = source.read_text().splitlines()
    operation = json.loads(lines[1]) | changes
    path.write_text("\n".join([lines[0], json.dumps(operation), *lines[2:-1]]) + "\n")
    return path


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "recorded.trp"
    with toolreplay.record(path):
        crm.handle_refund(42, 120.0)
    return path


def test_operations_carry_lane_and_monotonic_start_and_end(recorded: Path) -> None:
    operations = toolreplay.read_trace(recorded).operations
    assert {op.lane for op in operations} == {"main"}
    for earlier, later in itertools.pairwise(operations):
        assert earlier.start_ns is not None
        assert earlier.end_ns is not None
        assert 0 <= earlier.start_ns <= earlier.end_ns
        assert earlier.precedes(later)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"start_ns": 5, "end_ns": 4}, "end_ns must be at least start_ns (5), found 4"),
        ({"lane": 3}, "lane must be a string, found 3"),
        ({"start_ns": -1}, "start_ns must be a non-negative integer, found -1"),
        ({"lane": None}, "lane must be a string, found null"),
    ],
)
def test_bad_timing_is_a_format_error_naming_the_field(
    recorded: Path, tmp_path: Path, changes: dict[str, object], expected: str
) -> None:
    path = rewrite_first_operation(recorded, tmp_path / "bad.trp", **changes)
    with pytest.raises(toolreplay.TraceFormatError, match=re.escape(expected)) as raised:
        toolreplay.read_trace(path)
    assert raised.value.line == 2


def test_an_operation_without_timing_reads_as_unobserved(recorded: Path, tmp_path: Path) -> None:
    path = rewrite_first_operation(
        recorded, tmp_path / "untimed.trp", lane=None, start_ns=None, end_ns=None
    )
    operation = toolreplay.read_trace(path).operations[0]
    assert (operation.lane, operation.start_ns, operation.end_ns) == (None, None, None)


def test_a_format_3_line_may_not_carry_lanes(tmp_path: Path) -> None:
    lines = (FIXTURES / "sequential-v3.trp").read_text().splitlines()
    operation = json.loads(lines[1]) | {"lane": "main", "start_ns": 1, "end_ns": 2}
    path = tmp_path / "mixed.trp"
    path.write_text("\n".join([lines[0], json.dumps(operation), *lines[2:-1]]) + "\n")
    with pytest.raises(toolreplay.TraceFormatError, match="unknown end_ns, lane, start_ns"):
        toolreplay.read_trace(path)


# --- diff: order within a lane, not across lanes ------------------------------------------


def lane_trace(path: Path, calls: list[tuple[int, str]]) -> Path:
    """A trace of `work.item` calls (item, lane), each completing before the next starts."""
    writer = TraceWriter(path, TraceHeader(trace_id=path.stem, mode="record", library_version="t"))
    for position, (item, lane) in enumerate(calls):
        inputs: dict[str, JsonValue] = {"item": item}
        writer.append(
            Operation(
                logical_id=position,
                identity=OperationIdentity("work", "item", toolreplay.fingerprint(inputs), 0),
                inputs=inputs,
                outcome=toolreplay.Returned(item),
                lane=lane,
                start_ns=position * 10,
                end_ns=position * 10 + 5,
            )
        )
    writer.close(SessionEnding("completed"))
    return path


def test_diff_reports_order_changes_within_a_lane_only(tmp_path: Path) -> None:
    source = lane_trace(
        tmp_path / "s.trp", [(1, "main"), (2, "main"), (3, "task-1"), (4, "task-2")]
    )
    across = lane_trace(
        tmp_path / "a.trp", [(4, "task-1"), (3, "task-2"), (1, "main"), (2, "main")]
    )
    assert [d.type for d in toolreplay.diff(source, across).differences] == []
    within = lane_trace(
        tmp_path / "w.trp", [(2, "main"), (1, "main"), (3, "task-1"), (4, "task-2")]
    )
    report = toolreplay.diff(source, within)
    assert [(d.type, d.source and d.source.inputs) for d in report.differences] == [
        ("order_changed", {"item": 1})
    ]


def test_import_toolreplay_leaves_asyncio_and_thread_pools_to_the_application() -> None:
    probe = (
        "import sys, toolreplay; "
        "print(sorted(m for m in ('asyncio', 'concurrent.futures') if m in sys.modules)); "
        "print(toolreplay.SessionExecutor.__module__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == ["[]", "toolreplay.runtime.executor"]
