"""No back door: while a replay is open, effects outside its context never run live."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

import toolreplay
from tests.support import crm
from toolreplay import SessionContextError, SessionError


@pytest.fixture
def empty_trace(tmp_path: Path) -> Path:
    path = tmp_path / "empty.trp"
    with toolreplay.record(path):
        pass
    return path


def run_in_thread(target: object) -> BaseException | None:
    outcome: list[BaseException | None] = [None]

    def body() -> None:
        try:
            target()  # type: ignore[operator]  # a callable under test
        except BaseException as error:
            outcome[0] = error

    thread = threading.Thread(target=body, name="worker-7")
    thread.start()
    thread.join()
    return outcome[0]


def test_a_plain_thread_cannot_run_an_effect_live_during_replay(empty_trace: Path) -> None:
    # The refusal reaches the thread, and the replay fails too even if the thread
    # swallowed it: the run did not reproduce the recording.
    error: BaseException | None = None
    with pytest.raises(SessionError, match="SessionContextError was raised during it") as exited:
        with toolreplay.replay(empty_trace):
            error = run_in_thread(lambda: crm.get_customer(42))
    assert exited.value.__cause__ is error
    assert isinstance(error, SessionContextError)
    assert "crm.customer.get was called in thread 'worker-7'" in str(error)
    assert "toolreplay.propagate(fn)" in str(error)
    assert crm.BODY_CALLS["crm.customer.get"] == 0


def test_a_callback_on_another_event_loop_cannot_either(empty_trace: Path) -> None:
    def other_loop() -> None:
        asyncio.run(crm.decide("refund?"))

    error: BaseException | None = None
    with pytest.raises(SessionError), toolreplay.replay(empty_trace):
        error = run_in_thread(other_loop)
    assert isinstance(error, SessionContextError)
    assert crm.BODY_CALLS["llm.decide"] == 0


def test_after_the_replay_closes_effects_run_live_again(empty_trace: Path) -> None:
    with toolreplay.replay(empty_trace):
        pass
    assert run_in_thread(lambda: crm.get_customer(42)) is None
    assert crm.BODY_CALLS["crm.customer.get"] == 1


def test_the_guard_is_released_even_when_the_replay_fails(empty_trace: Path) -> None:
    with pytest.raises(toolreplay.ReplayMiss), toolreplay.replay(empty_trace):
        crm.get_customer(42)
    assert run_in_thread(lambda: crm.get_customer(42)) is None
