"""Failure replay: recorded exceptions come back as the same type, or as ReplayedEffectError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import toolreplay
from tests.support import crm
from toolreplay import REBUILT_EXCEPTIONS, ReplayedEffectError


@toolreplay.effect("faults.raise")
def raise_error(kind: str) -> None:
    errors: dict[str, Exception] = {
        "timeout": TimeoutError("upstream timed out"),
        "timeout-errno": TimeoutError(110, "Connection timed out"),
        "key": KeyError("missing"),
        "value": ValueError("bad", 3),
        "decode": json.JSONDecodeError("Expecting value", "x", 0),
        "bytes-args": ValueError(b"\x00raw"),
        "custom": crm.CrmUnavailable("CRM is down"),
        "surrogate": ValueError("bad byte \udc80 in payload"),
    }
    raise errors[kind]


def record_and_replay(tmp_path: Path, kind: str) -> tuple[BaseException, BaseException]:
    path = tmp_path / f"{kind}.trp"
    with toolreplay.record(path), pytest.raises(Exception) as live:
        raise_error(kind)
    with toolreplay.replay(path), pytest.raises(Exception) as replayed:
        raise_error(kind)
    return live.value, replayed.value


@pytest.mark.parametrize("kind", ["timeout", "timeout-errno", "key", "value"])
def test_allowlisted_builtins_come_back_as_the_same_type_and_args(
    tmp_path: Path, kind: str
) -> None:
    live, replayed = record_and_replay(tmp_path, kind)
    assert type(replayed) is type(live)
    assert replayed.args == live.args
    assert str(replayed) == str(live)
    assert replayed is not live


def test_a_timeout_replays_as_an_oserror_with_errno(tmp_path: Path) -> None:
    _, replayed = record_and_replay(tmp_path, "timeout-errno")
    assert isinstance(replayed, TimeoutError)
    assert replayed.errno == 110
    assert replayed.strerror == "Connection timed out"


@pytest.mark.parametrize(
    ("kind", "original_type", "message"),
    [
        ("custom", "tests.support.crm.CrmUnavailable", "CRM is down"),
        ("decode", "json.decoder.JSONDecodeError", "Expecting value: line 1 column 1 (char 0)"),
        ("bytes-args", "builtins.ValueError", "b'\\x00raw'"),
        ("surrogate", "builtins.ValueError", "bad byte \\udc80 in payload"),
    ],
)
def test_other_exceptions_become_replayed_effect_errors(
    tmp_path: Path, kind: str, original_type: str, message: str
) -> None:
    _, replayed = record_and_replay(tmp_path, kind)
    assert isinstance(replayed, ReplayedEffectError)
    assert replayed.original_type == original_type
    assert replayed.original_message == message
    assert str(replayed) == f"{original_type}: {message}"


def test_the_allowlist_is_short_and_builtin() -> None:
    assert "builtins.TimeoutError" in REBUILT_EXCEPTIONS
    assert all(name.startswith("builtins.") for name in REBUILT_EXCEPTIONS)
    assert len(REBUILT_EXCEPTIONS) <= 12


def test_keyboard_interrupt_is_not_recorded_and_propagates(tmp_path: Path) -> None:
    @toolreplay.effect("faults.interrupt")
    def interrupted() -> None:
        raise KeyboardInterrupt

    path = tmp_path / "interrupt.trp"
    with pytest.raises(KeyboardInterrupt), toolreplay.record(path):
        interrupted()
    trace = toolreplay.read_trace(path)
    assert len(trace) == 0
    assert trace.footer is not None
    assert trace.footer.ending.error_type == "builtins.KeyboardInterrupt"


def test_an_application_error_with_a_lone_surrogate_still_closes_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "ending.trp"
    with pytest.raises(RuntimeError), toolreplay.record(path):
        raise RuntimeError("cannot decode \udcff")
    footer = toolreplay.read_trace(path).footer
    assert footer is not None
    assert footer.ending.message == "cannot decode \\udcff"
