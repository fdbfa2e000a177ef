"""Async effects: native record and replay, nesting refused, no coroutine created on replay."""

from __future__ import annotations

import asyncio
import gc
import sys
import warnings
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import toolreplay
from tests.support import crm
from toolreplay import NestedEffectError, SessionError


def test_async_effects_record_and_replay_with_zero_body_executions(tmp_path: Path) -> None:
    path = tmp_path / "async.trp"
    with toolreplay.record(path):
        live = asyncio.run(crm.handle_refund_async(42))
    assert crm.BODY_CALLS == {"crm.customer.get": 1, "llm.decide": 2}
    crm.BODY_CALLS.clear()

    async def replayed() -> object:
        with toolreplay.replay(path):
            return await crm.handle_refund_async(42)

    assert asyncio.run(replayed()) == live == {"decision": "approve", "second": "reject"}
    assert sum(crm.BODY_CALLS.values()) == 0
    inputs = [op.inputs for op in toolreplay.read_trace(path).operations]
    assert inputs[2] == {"prompt": "anything else?", "effort": "high"}


def replay_watching_coroutines(
    path: Path, effect: Callable[[str], Coroutine[Any, Any, str]]
) -> list[str]:
    """Replay one call; report never-awaited coroutines and frames of the body that ran."""
    body_code = effect.__wrapped__.__code__  # type: ignore[attr-defined]  # functools.wraps
    seen: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code is body_code:
            seen.append("body ran")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sys.setprofile(profile)
        try:
            with toolreplay.replay(path):
                assert asyncio.run(effect("hi")) == "HI"
        finally:
            sys.setprofile(None)
        gc.collect()  # finalises any coroutine that was created and dropped
    seen += [str(w.message) for w in caught if "never awaited" in str(w.message)]
    return seen


@toolreplay.effect("llm.shout")
async def shout(prompt: str) -> str:
    return prompt.upper()


def test_replay_never_creates_the_body_coroutine(tmp_path: Path) -> None:
    path = tmp_path / "shout.trp"
    with toolreplay.record(path):
        assert asyncio.run(shout("hi")) == "HI"
    assert replay_watching_coroutines(path, shout) == []


def test_the_coroutine_watch_would_see_a_created_coroutine(tmp_path: Path) -> None:
    # The check above must be able to fail: an effect whose replay creates (and
    # drops) a coroutine of the body is reported.
    @toolreplay.effect("llm.leaky")
    async def leaky(prompt: str) -> str:
        return prompt.upper()

    async def body(prompt: str) -> str:
        return prompt.upper()

    def creates_coroutine(prompt: str) -> Coroutine[Any, Any, str]:
        dropped = body(prompt)  # created, never awaited
        del dropped
        return leaky(prompt)

    creates_coroutine.__wrapped__ = body  # type: ignore[attr-defined]  # mimic functools.wraps
    path = tmp_path / "leaky.trp"
    with toolreplay.record(path):
        asyncio.run(leaky("hi"))
    assert any(
        "never awaited" in seen for seen in replay_watching_coroutines(path, creates_coroutine)
    )


def test_effects_under_gather_are_recorded_on_their_own_lanes(tmp_path: Path) -> None:
    # More in tests/test_concurrency.py; here: gather is no longer refused.
    async def concurrently() -> list[str]:
        return list(await asyncio.gather(crm.decide("refund a"), crm.decide("refund b")))

    path = tmp_path / "gather.trp"
    with toolreplay.record(path):
        live = asyncio.run(concurrently())
    trace = toolreplay.read_trace(path)
    assert sorted(op.lane or "" for op in trace.operations) == ["task-1", "task-2"]
    with toolreplay.replay(path):
        assert asyncio.run(concurrently()) == live


def test_an_effect_awaited_inside_another_effects_body_is_refused(tmp_path: Path) -> None:
    @toolreplay.effect("llm.outer")
    async def outer(prompt: str) -> str:
        return await crm.decide(prompt)

    with pytest.raises(
        NestedEffectError, match=r"llm\.decide was called inside the body of llm\.outer"
    ):
        with toolreplay.record(tmp_path / "nested.trp"):
            asyncio.run(outer("refund?"))


def test_a_nested_sync_effect_is_refused_too(tmp_path: Path) -> None:
    @toolreplay.effect("crm.customer.summary")
    def summary(customer_id: int) -> str:
        return str(crm.get_customer(customer_id)["name"])

    path = tmp_path / "nested.trp"
    with pytest.raises(NestedEffectError), toolreplay.record(path):
        summary(42)
    # Tool Replay's refusal is not recorded as a failure of the outer effect.
    assert len(toolreplay.read_trace(path)) == 0


def test_a_nested_effect_swallowed_by_the_application_still_fails_the_recording(
    tmp_path: Path,
) -> None:
    @toolreplay.effect("llm.outer")
    async def outer(prompt: str) -> str:
        try:
            return await crm.decide(prompt)
        except NestedEffectError:
            return "swallowed"

    async def swallow() -> None:
        assert await outer("refund?") == "swallowed"

    with pytest.raises(SessionError, match="caught by the application"):
        with toolreplay.record(tmp_path / "swallowed.trp"):
            asyncio.run(swallow())


def test_a_task_that_outlives_its_session_cannot_use_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        started = asyncio.Event()
        release = asyncio.Event()

        async def late() -> str:
            started.set()
            await release.wait()
            return await crm.decide("refund late")

        with toolreplay.record(tmp_path / "late.trp"):
            task = asyncio.create_task(late())
            await started.wait()
        release.set()
        with pytest.raises(SessionError, match="after its record session closed"):
            await task

    asyncio.run(scenario())
    assert crm.BODY_CALLS["llm.decide"] == 0


def test_to_thread_copies_the_context_so_the_session_follows(tmp_path: Path) -> None:
    path = tmp_path / "thread.trp"

    async def app() -> object:
        return await asyncio.to_thread(crm.get_customer, 7)

    with toolreplay.record(path):
        asyncio.run(app())
    crm.BODY_CALLS.clear()
    with toolreplay.replay(path):
        assert asyncio.run(app()) == crm.CUSTOMERS[7]
    assert crm.BODY_CALLS["crm.customer.get"] == 0


def test_a_call_still_running_when_the_session_closes_fails_the_recording(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        started = asyncio.Event()
        release = asyncio.Event()

        @toolreplay.effect("llm.slow")
        async def slow() -> str:
            started.set()
            await release.wait()
            return "late"

        tasks: list[asyncio.Task[str]] = []
        with pytest.raises(SessionError, match=r"llm\.slow was still running"):
            with toolreplay.record(tmp_path / "slow.trp"):
                tasks.append(asyncio.create_task(slow()))
                await started.wait()
        release.set()
        with pytest.raises(SessionError, match="completed after its record session closed"):
            await tasks[0]

    asyncio.run(scenario())
    trace = toolreplay.read_trace(tmp_path / "slow.trp")
    assert len(trace) == 0
    assert trace.footer is not None
    assert trace.footer.ending.status == "raised"
