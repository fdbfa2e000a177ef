"""`TraceFile`: opened at once, indexed and checked in the background, as `read_trace` reads."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from toolreplay_tui.model.trace_file import FIRST_SCREEN_BYTES, TraceFile

import toolreplay
from benchmarks.tui import NEEDLE, write_kv_trace
from tests.support.traces import write_trace
from toolreplay import Raised, TraceFormatError, TraceNotFoundError

BIG = 5_000  # lines of ~330 bytes: far more than the first screen reads


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "kv.trp"
    write_kv_trace(path, BIG)
    return path


def test_opening_reads_the_header_the_footer_and_the_first_screen_only(big_trace: Path) -> None:
    with TraceFile.open(big_trace) as trace:
        assert trace.header.trace_id == f"bench-tui-{BIG}"
        assert trace.footer is not None
        assert trace.expected_count == BIG
        assert not trace.indexed
        shown = len(trace)
        assert 0 < shown < BIG
        assert shown * 200 < FIRST_SCREEN_BYTES * 4  # a screenful, not the file
        assert trace.operations[0].inputs == {"key": "key-0000"}
        with pytest.raises(IndexError):
            trace.operation(shown)


def test_indexed_operations_are_read_traces_operations(big_trace: Path) -> None:
    loaded = toolreplay.read_trace(big_trace)
    with TraceFile.open(big_trace) as trace:
        trace.index()
        assert trace.indexed
        assert trace.index_progress == 1.0
        assert len(trace) == BIG
        assert list(trace.operations) == list(loaded.operations)
        assert [op.line for op in trace.operations[-3:]] == [
            op.line for op in loaded.operations[-3:]
        ]
        assert trace.operations[-1].inputs == {"key": NEEDLE}
        assert trace.check().state == "ok"
        wanted = loaded.operations[4321]
        assert trace.get(wanted.identity) == wanted
        assert trace.get(wanted.identity._replace(occurrence=99)) is None


def test_indexing_follows_a_growing_read_and_stops_when_cancelled(big_trace: Path) -> None:
    with TraceFile.open(big_trace) as trace:
        calls = 0

        def cancelled() -> bool:
            nonlocal calls
            calls += 1
            return calls > 1  # one chunk, then stop

        trace.index(cancelled)
        assert not trace.indexed
        state = trace.check(lambda: True)
        assert state.state == "checking"
        trace.index()
        assert len(trace) == BIG


def test_closing_stops_a_background_check(tmp_path: Path) -> None:
    path = tmp_path / "kv.trp"
    write_kv_trace(path, 50_000)
    trace = TraceFile.open(path)
    worker = threading.Thread(target=trace.check)
    worker.start()
    time.sleep(0.05)  # let the check get under way, so close() has to stop it mid-scan
    started = time.perf_counter()
    trace.close()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert time.perf_counter() - started < 2.0  # within a chunk, not the whole file
    assert trace.closed


def test_a_changed_byte_fails_the_footer_check_as_read_trace_does(
    big_trace: Path, tmp_path: Path
) -> None:
    data = bytearray(big_trace.read_bytes())
    spot = data.rindex(b'"value":')
    data[spot + 8 : spot + 9] = b"9" if data[spot + 8 : spot + 9] != b"9" else b"8"
    changed = tmp_path / "changed.trp"
    changed.write_bytes(bytes(data))
    with pytest.raises(TraceFormatError) as expected:
        toolreplay.read_trace(changed)
    with TraceFile.open(changed) as trace:
        assert trace.operations[0].inputs == {"key": "key-0000"}  # browsable meanwhile
        state = trace.check()
    assert state.state == "failed"
    assert state.problem == str(expected.value)
    assert "footer digest" in str(state.problem)


def test_an_incomplete_trace_has_its_fingerprints_checked(tmp_path: Path) -> None:
    path = write_trace(
        tmp_path / "t.trp",
        [("crm.customer.get", {"customer_id": 42}, {"name": "Ada"})] * 3,
    )
    lines = path.read_bytes().splitlines(keepends=True)
    incomplete = tmp_path / "incomplete.trp"
    incomplete.write_bytes(b"".join(lines[:-1]))
    with TraceFile.open(incomplete) as trace:
        assert trace.footer is None
        assert trace.expected_count is None
        assert trace.check().state == "ok"
        assert len(trace) == 3
    edited = tmp_path / "edited.trp"
    edited.write_bytes(b"".join([*lines[:2], lines[2].replace(b"42", b"43"), lines[3]]))
    with pytest.raises(TraceFormatError) as expected:
        toolreplay.read_trace(edited)
    with TraceFile.open(edited) as trace:
        state = trace.check()
    assert state.state == "failed"
    assert state.problem == str(expected.value)
    assert "fingerprint" in str(state.problem)


def test_a_torn_last_line_is_set_aside_as_read_trace_does(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.trp", [("kv.get", {"k": i}, i) for i in range(4)])
    lines = path.read_bytes().splitlines(keepends=True)
    torn = tmp_path / "torn.trp"
    torn.write_bytes(b"".join(lines[:-1]) + b'{"kind":"operation","logi')
    loaded = toolreplay.read_trace(torn)
    with TraceFile.open(torn) as trace:
        assert trace.check().state == "ok"
        assert len(trace) == len(loaded) == 4
        assert trace.torn_line == loaded.torn_line == 6
        assert list(trace.operations) == list(loaded.operations)


def test_an_unterminated_last_operation_is_an_operation(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.trp", [("kv.get", {"k": i}, i) for i in range(3)])
    lines = path.read_bytes().splitlines(keepends=True)
    unterminated = tmp_path / "u.trp"
    unterminated.write_bytes(b"".join(lines[:-1]).rstrip(b"\n"))
    loaded = toolreplay.read_trace(unterminated)
    with TraceFile.open(unterminated) as trace:
        trace.index()
        assert len(trace) == len(loaded) == 3
        assert trace.operations[2] == loaded.operations[2]
        assert trace.check().state == "ok"


def test_a_line_longer_than_a_chunk_is_one_operation(tmp_path: Path) -> None:
    long_value = "x" * 1_500_000
    path = write_trace(
        tmp_path / "t.trp",
        [
            ("kv.get", {"k": 0}, long_value),
            ("kv.get", {"k": 1}, Raised("builtins.KeyError", "k", None)),
        ],
    )
    with TraceFile.open(path) as trace:
        trace.index()
        assert len(trace) == 2
        assert trace.operations[0].outcome == toolreplay.Returned(long_value)
        assert isinstance(trace.operations[1].outcome, Raised)
        assert trace.check().state == "ok"


def test_an_unreadable_line_names_itself_when_drawn_and_in_the_check(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "t.trp", [("kv.get", {"k": i}, i) for i in range(3)])
    lines = path.read_bytes().splitlines(keepends=True)
    broken = tmp_path / "broken.trp"
    broken.write_bytes(b"".join([lines[0], lines[1], b'{"kind":"operation"}\n', *lines[3:]]))
    with TraceFile.open(broken) as trace:
        assert trace.operations[0].logical_id == 0
        with pytest.raises(TraceFormatError) as problem:
            trace.operations[1]
        assert problem.value.line == 3
        state = trace.check()
    with pytest.raises(TraceFormatError) as expected:
        toolreplay.read_trace(broken)
    assert expected.value.line == 3
    assert state.state == "failed"
    assert state.problem == str(expected.value)  # the bad line, before the footer's digest


def test_a_file_that_is_no_trace_is_refused_at_once(tmp_path: Path) -> None:
    with pytest.raises(TraceNotFoundError, match="no such trace file"):
        TraceFile.open(tmp_path / "missing.trp")
    with pytest.raises(TraceNotFoundError, match="not a regular file"):
        TraceFile.open(tmp_path)
    empty = tmp_path / "empty.trp"
    empty.write_bytes(b"")
    with pytest.raises(TraceFormatError, match="empty"):
        TraceFile.open(empty)
    other = tmp_path / "other.trp"
    other.write_bytes(b'{"hello": 1}\n')
    with pytest.raises(TraceFormatError, match="not a Tool Replay trace") as problem:
        TraceFile.open(other)
    assert problem.value.line == 1
