"""`read_trace` reads a file a block at a time: however its bytes are cut into blocks,
the trace (or the error) is the one its whole bytes give.

The reader holds back the last complete line it has seen until it knows whether more
bytes follow (the file's last line may be torn, or be the footer), a line may run over
many blocks, and the footer's digest and the CRLF hint are computed block by block:
these properties cut real traces, and damaged copies of them, at arbitrary points.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolreplay
from tests.support import crm
from toolreplay import TraceError
from toolreplay.trace import Trace, parse_trace
from toolreplay.trace.reader import _parse  # pyright: ignore[reportPrivateUsage]  # under test


def _recorded() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "refund.trp"
        with toolreplay.record(path):
            crm.handle_refund(42, 120.0)
            crm.handle_refund(7, 3_000.0)
        return path.read_bytes()


COMPLETE = _recorded()
_LINES = COMPLETE.split(b"\n")
BASES = {
    "complete": COMPLETE,
    "unterminated": COMPLETE.rstrip(b"\n"),
    "killed": b"\n".join(_LINES[:-2]) + b"\n",  # no footer
    "torn": b"\n".join(_LINES[:-2]) + b"\n" + _LINES[-2][: len(_LINES[-2]) // 2],
    "crlf": COMPLETE.replace(b"\n", b"\r\n"),
    "edited": COMPLETE.replace(b"42", b"43", 1),
    "blank line": b"\n".join([*_LINES[:3], b"", *_LINES[3:]]),
    "header only": _LINES[0],
    "header and newline": _LINES[0] + b"\n",
    "header and blank": _LINES[0] + b"\n\n",
    "not json": b"hello\nworld\n",
    "empty": b"",
}


def outcome(result: Iterator[bytes]) -> object:
    """What parsing gives: the trace's parts, or the error's type and message."""
    try:
        trace: Trace = _parse(Path("t.trp"), result)
    except TraceError as error:
        return type(error), str(error)
    return trace.header, trace.operations, trace.footer, trace.torn_line


def cut(data: bytes, points: list[int]) -> Iterator[bytes]:
    """`data` in blocks ending at `points` (ordered, clipped to the data)."""
    start = 0
    for point in sorted({min(point, len(data)) for point in points}):
        if point > start:
            yield data[start:point]
            start = point
    if start < len(data):
        yield data[start:]


@settings(max_examples=300)
@given(
    base=st.sampled_from(sorted(BASES)),
    points=st.lists(st.integers(min_value=0, max_value=len(COMPLETE) + 200), max_size=12),
    single_bytes=st.booleans(),
)
def test_any_cut_into_blocks_reads_as_the_whole(
    base: str, points: list[int], single_bytes: bool
) -> None:
    data = BASES[base]
    blocks = (data[k : k + 1] for k in range(len(data))) if single_bytes else cut(data, points)
    assert outcome(blocks) == outcome(iter((data,)))


@pytest.mark.parametrize("single_bytes", [False, True])
def test_what_the_cut_bytes_read_as(single_bytes: bool) -> None:
    """The property compares cuts with the whole; this pins what the whole reads as."""

    def read(base: str) -> Trace:
        data = BASES[base]
        blocks = (data[k : k + 1] for k in range(len(data))) if single_bytes else iter((data,))
        return _parse(Path("t.trp"), blocks)

    def refusal(base: str) -> str:
        with pytest.raises(TraceError) as caught:
            read(base)
        return str(caught.value)

    complete = read("complete")
    assert (len(complete), complete.footer is not None, complete.torn_line) == (6, True, None)
    assert read("unterminated").footer is not None
    killed = read("killed")
    assert (len(killed), killed.footer) == (6, None)
    assert read("torn").torn_line == 8
    assert "CRLF" in refusal("crlf")
    assert "digest" in refusal("edited")
    assert refusal("blank line").startswith("t.trp:4: not valid JSON")
    for base in ("header only", "header and newline"):
        alone = read(base)
        assert (alone.operations, alone.footer, alone.torn_line) == ((), None, None)
    assert "empty" in refusal("empty")


def test_a_file_of_many_blocks_with_a_line_longer_than_a_block(tmp_path: Path) -> None:
    """Through the file itself: a trace over several megabytes, one value of 3 MB."""

    @toolreplay.effect("notes.fetch")
    def fetch(i: int) -> dict[str, object]:
        return {"i": i, "text": "x" * (3 << 20) if i == 7 else "note"}

    path = tmp_path / "big.trp"
    with toolreplay.record(path):
        for i in range(20_000):
            fetch(i)
    assert path.stat().st_size > 4 << 20
    read = toolreplay.read_trace(path)
    assert (read.complete, len(read)) == (True, 20_000)
    whole = parse_trace(path, path.read_bytes())
    assert (read.header, read.operations, read.footer) == (
        whole.header,
        whole.operations,
        whole.footer,
    )


def test_an_unreadable_path_is_refused_before_a_block_is_read(tmp_path: Path) -> None:
    with pytest.raises(toolreplay.TraceNotFoundError, match="is a directory"):
        toolreplay.read_trace(tmp_path)
