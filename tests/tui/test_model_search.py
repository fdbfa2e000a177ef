"""The filter's scan finds exactly what `matches` accepts, from the raw lines, in order;
`:effect NAME` resolves a name against the trace's effects, or says why it cannot."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from toolreplay_tui.model.search import (
    EFFECTS_LISTED,
    EffectMatch,
    effect_refusal,
    effect_resolution,
    first_match,
    matches,
    query_words,
    resolve_effect,
    scan_matches,
)
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


# --- :effect NAME --------------------------------------------------------------------------

EFFECTS = {
    "crm.customer.get": 0,
    "crm.refund.create": 1,
    "orders.get": 2,
    "billing.invoice.send": 90_000,
    "audit.log.write": 99_999,
}
"""Effect name -> its first operation's index, as indexing collects them."""


@pytest.mark.parametrize(
    ("name", "found", "said"),
    [
        # The exact name: its filter starts at its first operation, and nothing is said.
        (
            "billing.invoice.send",
            EffectMatch(("billing.invoice.send",), "effect:billing.invoice.send", 90_000),
            None,
        ),
        # A name without its namespace, a prefix, any case: the one effect they name.
        (
            "invoice.send",
            EffectMatch(("billing.invoice.send",), "effect:billing.invoice.send", 90_000),
            "effect 'invoice.send': billing.invoice.send",
        ),
        (
            "audit",
            EffectMatch(("audit.log.write",), "effect:audit.log.write", 99_999),
            "effect 'audit': audit.log.write",
        ),
        (
            " CRM.Customer ",
            EffectMatch(("crm.customer.get",), "effect:crm.customer.get", 0),
            "effect ' CRM.Customer ': crm.customer.get",
        ),
        # A namespace: every effect in it, by one filter that keeps exactly those.
        (
            "crm",
            EffectMatch(("crm.customer.get", "crm.refund.create"), "effect:crm", 0),
            "effect 'crm': 2 effects, crm.customer.get, crm.refund.create",
        ),
    ],
)
def test_an_effect_name_resolves_to_the_filter_of_what_it_names(
    name: str, found: EffectMatch, said: str | None
) -> None:
    assert resolve_effect(name, EFFECTS) == found
    assert effect_resolution(name, found) == said


@pytest.mark.parametrize(
    ("name", "refusal"),
    [
        # Two names start with `c`, and a third holds it: no filter shows just the two.
        ("c", "effect 'c' names 2 effects: crm.customer.get, crm.refund.create; give one of them"),
        # Misspelt: the nearest names.
        (
            "crm.custmer.get",
            "no operation of effect 'crm.custmer.get' in this trace; nearest: crm.customer.get",
        ),
        # Nothing near: a trace with few effects lists them all.
        (
            "zzz",
            "no operation of effect 'zzz' in this trace; its effects: crm.customer.get, "
            "crm.refund.create, orders.get, billing.invoice.send, audit.log.write",
        ),
    ],
)
def test_a_name_that_filters_nothing_is_refused_saying_why(name: str, refusal: str) -> None:
    found = resolve_effect(name, EFFECTS)
    assert found.query is None
    assert effect_resolution(name, found) is None
    assert effect_refusal(name, found, EFFECTS) == refusal


def test_a_trace_of_many_effects_is_not_listed_in_a_refusal() -> None:
    many = {f"svc{number}.call": number for number in range(EFFECTS_LISTED + 1)}
    found = resolve_effect("zzz", many)
    assert found == EffectMatch((), None, None)
    assert effect_refusal("zzz", found, many) == "no operation of effect 'zzz' in this trace"
