"""`:effect NAME` on a big trace: the names indexing collects, and the filter of a name
starting at its effect's first operation. (How a name resolves, and each refusal's
words, are checked without the app in `test_model_search`.)"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections import Counter
from pathlib import Path

import pytest
from toolreplay_tui.app import ToolReplayApp
from toolreplay_tui.model.trace_file import TraceFile

import toolreplay
from tests.tui.pilot import SIZE, pilot_test, said, wait_for
from toolreplay import Operation, OperationIdentity, Returned
from toolreplay.trace import SessionEnding, TraceFooter, TraceHeader
from toolreplay.trace.codec import (
    encode_footer,
    encode_header,
    encode_operation,
    operation_to_dict,
)

COUNT = 100_000
LATE = 90_000
"""Where `billing.invoice.send` first appears (the last operation is `audit.log.write`)."""
EARLY = ("crm.customer.get", "crm.refund.create", "orders.get")


def effect_of(index: int, count: int = COUNT, late: int = LATE) -> str:
    if index == count - 1:
        return "audit.log.write"
    return "billing.invoice.send" if index >= late else EARLY[index % len(EARLY)]


def write_effects_trace(path: Path, count: int = COUNT, late: int = LATE) -> None:
    """A complete trace of `count` operations of five effects, through the codec."""
    fingerprints = {key: toolreplay.fingerprint({"key": key}) for key in range(64)}
    seen: Counter[tuple[str, int]] = Counter()
    digest = hashlib.sha256()
    header = TraceHeader(trace_id="effects", mode="record", library_version="test")
    with path.open("wb") as out:
        for index in range(-1, count):
            if index < 0:
                line = encode_header(header)
            else:
                effect, key = effect_of(index, count, late), index % 64
                namespace, _, name = effect.partition(".")
                occurrence = seen[(effect, key)]
                seen[(effect, key)] += 1
                identity = OperationIdentity(namespace, name, fingerprints[key], occurrence)
                line = encode_operation(
                    Operation(index, identity, {"key": key}, Returned({"n": index}))
                )
            digest.update(line)
            out.write(line)
        out.write(encode_footer(TraceFooter(count, digest.hexdigest(), SessionEnding("completed"))))


@pytest.fixture(scope="module")
def effects_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("effects") / "effects.trp"
    write_effects_trace(path)
    return path


def test_indexing_collects_each_effect_with_its_first_operation(effects_trace: Path) -> None:
    loaded = toolreplay.read_trace(effects_trace)
    expected: dict[str, int] = {}
    for index, operation in enumerate(loaded.operations):
        expected.setdefault(operation.effect, index)
    with TraceFile.open(effects_trace) as trace:
        assert list(trace.effects) == list(EARLY)  # the first screen's
        trace.index()
        assert trace.effects == expected
        assert list(trace.effects) == list(expected)  # in order of first appearance
        assert trace.effects["billing.invoice.send"] == LATE


def test_a_line_in_another_key_order_still_names_its_effect(tmp_path: Path) -> None:
    """A hand-edited line (keys reordered, spaces) is decoded to find its effect."""
    path = tmp_path / "edited.trp"
    write_effects_trace(path, count=3000, late=2000)
    lines = path.read_bytes().split(b"\n")
    operation = toolreplay.read_trace(path).operations[5]
    fields = operation_to_dict(operation)
    fields["namespace"], fields["name"] = "hand", "edited"
    reordered = dict(reversed(list(fields.items())))
    lines[6] = json.dumps(reordered).encode()  # line 1 is the header
    edited = tmp_path / "edited-copy.trp"
    edited.write_bytes(b"\n".join(lines))
    with TraceFile.open(edited) as trace:
        trace.index()
        assert trace.effects["hand.edited"] == 5
        assert list(trace.effects)[:4] == [*EARLY, "hand.edited"]


class EffectsApp(ToolReplayApp):
    CSS_PATH = Path(inspect.getfile(ToolReplayApp)).with_name("app.tcss")

    def __init__(self, trace: Path) -> None:
        super().__init__(trace, cwd=trace.parent, blink_cursors=False, warm_runs=False)


@pilot_test
async def test_effect_names_jump_to_their_first_operation(effects_trace: Path) -> None:
    app = EffectsApp(effects_trace)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.background.indexed, what="the index")
        rows, listing = app.rows, app.browse.operations
        assert rows is not None

        # An exact name: the filter's scan starts at its first operation, 90,000 in.
        await pilot.press("colon", *"effect billing.invoice.send", "enter")
        await wait_for(pilot, lambda: len(rows) > 0, what="the first match")
        assert rows.query == "effect:billing.invoice.send"
        assert listing.current_index == LATE
        assert rows.operation_at(0).logical_id == LATE
        await wait_for(pilot, lambda: not rows.scanning, what="the scan")
        assert len(rows) == COUNT - 1 - LATE

        # A partial name: what it stood for is said, and its filter starts where the
        # exact name's does; a misspelt one is refused (with the nearest names) and the
        # filter stays.
        await pilot.press("colon", *"effect audit", "enter")
        await wait_for(pilot, lambda: rows.query == "effect:audit.log.write", what="audit")
        assert "effect 'audit': audit.log.write" in said(app)
        await wait_for(pilot, lambda: listing.current_index == COUNT - 1, what="the last")
        await pilot.press("colon", *"effect crm.custmer.get", "enter")
        assert (
            "no operation of effect 'crm.custmer.get' in this trace; nearest: crm.customer.get"
            in said(app)
        )
        assert rows.query == "effect:audit.log.write"  # unchanged
