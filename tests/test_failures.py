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


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("str() of this error fails")


def test_an_unprintable_failure_is_recorded_and_the_session_keeps_working(tmp_path: Path) -> None:
    @toolreplay.effect("faults.unprintable")
    def unprintable() -> None:
        raise Unprintable

    path = tmp_path / "unprintable.trp"
    with toolreplay.record(path):
        with pytest.raises(Unprintable):
            unprintable()
        assert crm.get_customer(7)["name"] == "Bo"  # not jammed
    outcome = toolreplay.read_trace(path).operations[0].outcome
    assert isinstance(outcome, toolreplay.Raised)
    assert outcome.message == "<unprintable Unprintable object>"


def test_a_missing_file_replays_with_its_filename(tmp_path: Path) -> None:
    @toolreplay.effect("files.read")
    def read(name: str) -> str:
        return Path(name).read_text()

    path = tmp_path / "files.trp"
    missing = str(tmp_path / "nope" / "config.json")
    with toolreplay.record(path), pytest.raises(FileNotFoundError) as live:
        read(missing)
    with toolreplay.replay(path), pytest.raises(FileNotFoundError) as replayed:
        read(missing)
    assert replayed.value.filename == live.value.filename == missing
    assert str(replayed.value) == str(live.value)


def test_replayed_exception_args_are_copies_of_the_trace(tmp_path: Path) -> None:
    @toolreplay.effect("faults.detailed")
    def detailed() -> None:
        raise ValueError({"code": 503, "retry": True})

    path = tmp_path / "detailed.trp"
    with toolreplay.record(path), pytest.raises(ValueError):
        detailed()
    trace = toolreplay.read_trace(path)
    for _ in range(2):
        with toolreplay.replay(trace), pytest.raises(ValueError) as caught:
            detailed()
        assert caught.value.args == ({"code": 503, "retry": True},)
        caught.value.args[0]["retry"] = False


def test_every_exported_error_survives_pickling(tmp_path: Path) -> None:
    import pickle

    path = tmp_path / "x.trp"
    errors: list[toolreplay.ToolReplayError] = [
        toolreplay.NonPortableValueError("bad", path="$.a"),
        toolreplay.TraceFormatError("broken", path=path, line=3),
        ReplayedEffectError("myapp.Boom", "boom"),
        toolreplay.PatchFileError("bad patch", path=path),
        toolreplay.UnappliedPatchError("unapplied", patch_ids=["p-1"]),
    ]
    with pytest.raises(toolreplay.ReplayMiss) as miss:
        with toolreplay.replay(_empty_trace(tmp_path)):
            crm.get_customer(1)
    errors.append(miss.value)
    for error in errors:
        copy = pickle.loads(pickle.dumps(error))
        assert type(copy) is type(error)
        assert str(copy) == str(error)
        assert copy.__dict__.keys() == error.__dict__.keys()


def _empty_trace(folder: Path) -> Path:
    path = folder / "empty.trp"
    with toolreplay.record(path):
        pass
    return path
