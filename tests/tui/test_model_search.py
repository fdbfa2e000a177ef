"""The filter's scan finds exactly what `matches` accepts, from the raw lines, in order."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from toolreplay_tui.model.search import first_match, matches, query_words, scan_matches
from toolreplay_tui.model.trace_file import TraceFile

from benchmarks.tui import NEEDLE, write_kv_trace
from tests.support.traces import write_trace
from toolreplay import Raised

CALLS = [
    ("crm.customer.get", {"customer_id": 42, "region": "eu"}, {"name": "Ada Lovelace"}),
    ("policy.refund.get", {"region": "eu"}, {"limit": 1000.0, "tiers": ["gold", "silver"]}),
    ("llm.refund.decide", {"amount": 1200.5}, {"decision": "approve", "note": 'say "yes"'}),
    (
        "billing.refund.create",
        {"amount": 1200.5},
        Raised("builtins.TimeoutError", "too\nslow", None),
    ),
    ("crm.customer.get", {"customer_id": 7, "region": "us"}, {"name": "Émile Zola"}),
    ("mail.send", {"to": "a@b.c", "body": "tab\there \\ back"}, None),
    ("kv.get", {"k": "\u0001ctl"}, {"nested": {"deep": [1, {"x": True}]}}),
]

QUERIES = [
    "crm",
    "effect:crm.customer",
    "effect:refund",
    "CUSTOMER.GET",
    '"region": "eu"',
    "region",
    '"eu"',
    "1200.5",
    "timeouterror too",
    "too\nslow",
    "slow",
    'say "yes"',
    "émile",
    "ÉMILE",
    "zola",
    "tab\there",
    "\\ back",
    '"deep": [1',
    "true",
    "null",
    '{"x": true}',
    "ctl",
    "approve",
    'gold", "silver',
    "nothing like this",
    ":",
    "1000.0",
]


@pytest.fixture
def trace(tmp_path: Path) -> Iterator[TraceFile]:
    with TraceFile.open(write_trace(tmp_path / "t.trp", CALLS)) as opened:
        opened.index()
        yield opened


def never() -> bool:
    return False


@pytest.mark.parametrize("query", QUERIES)
def test_the_scan_finds_what_matches_accepts(trace: TraceFile, query: str) -> None:
    expected = [i for i, op in enumerate(trace.operations) if matches(op, query)]
    found = [i for batch in scan_matches(trace, query, never) for i in batch]
    assert found == expected


def test_query_words_are_what_every_matching_line_holds() -> None:
    assert query_words('"region": "eu"') == [b"region", b"eu"]
    assert query_words("effect:crm.customer") == [b"customer", b"crm"]
    assert query_words("Émile zola") == [b"zola"]  # only ASCII folds bytewise
    assert query_words(":{}") == []  # nothing to look for: every line is decoded
    assert query_words("a\x01b") == []


def test_the_scan_follows_indexing_and_stops_when_cancelled(tmp_path: Path) -> None:
    path = tmp_path / "kv.trp"
    write_kv_trace(path, 20_000)
    with TraceFile.open(path) as trace:
        assert not trace.indexed
        indexer = threading.Thread(target=trace.index)
        indexer.start()
        found = [i for batch in scan_matches(trace, NEEDLE, never) for i in batch]
        indexer.join()
        assert found == [19_999]
        batches = scan_matches(trace, "key-0001", lambda: True)
        assert list(batches) == []


def test_first_match_forwards_and_backwards(trace: TraceFile) -> None:
    assert first_match(trace, "crm", 0) == 0
    assert first_match(trace, "crm", 1) == 4
    assert first_match(trace, "crm", 5) is None
    assert first_match(trace, "crm", 6, forward=False) == 4
    assert first_match(trace, "crm", 3, forward=False) == 0
    assert first_match(trace, "approve", 1, forward=False) is None
