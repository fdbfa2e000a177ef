"""Async effects: native record and replay, sequential only, no coroutine created on replay."""

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
from toolreplay import OverlappingEffectsError, SessionError


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


def test_effects_under_gather_are_refused(tmp_path: Path) -> None:
    async def concurrently() -> None:
        await asyncio.gather(crm.decide("refund a"), crm.decide("refund b"))

    path = tmp_path / "gather.trp"
    with pytest.raises(OverlappingEffectsError, match="was still running") as caught:
        with toolreplay.record(path):
            asyncio.run(concurrently())
    assert "asyncio.gather" in str(caught.value)
    trace = toolreplay.read_trace(path)
    assert trace.footer is not None
    assert trace.footer.ending.status == "raised"


def test_an_effect_awaited_inside_another_effects_body_is_refused(tmp_path: Path) -> None:
    @toolreplay.effect("llm.outer")
    async def outer(prompt: str) -> str:
        return await crm.decide(prompt)

    with pytest.raises(OverlappingEffectsError, match=r"llm\.decide was called while llm\.outer"):
        with toolreplay.record(tmp_path / "nested.trp"):
            asyncio.run(outer("refund?"))


def test_a_nested_sync_effect_is_refused_too(tmp_path: Path) -> None:
    @toolreplay.effect("crm.customer.summary")
    def summary(customer_id: int) -> str:
        return str(crm.get_customer(customer_id)["name"])

    path = tmp_path / "nested.trp"
    with pytest.raises(OverlappingEffectsError), toolreplay.record(path):
        summary(42)
    # Tool Replay's refusal is not recorded as a failure of the outer effect.
    assert len(toolreplay.read_trace(path)) == 0


def test_an_overlap_swallowed_by_the_application_still_fails_the_recording(
    tmp_path: Path,
) -> None:
    async def swallow() -> None:
        results = await asyncio.gather(
            crm.decide("refund a"), crm.decide("refund b"), return_exceptions=True
        )
        assert isinstance(results[1], OverlappingEffectsError)

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
