"""Gemini calls read back as transcripts, from what the Google Gen AI adapter records (a real
`genai.Client` against the local fake of the API, over loopback)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from toolreplay_tui.model.jsonpaths import get_at
from toolreplay_tui.model.transcript import Transcript, transcript_of

import toolreplay
from examples.local_gemini import LocalGemini
from tests.adapters.http_api import served
from tests.adapters.test_google_genai import ASK, CONFIG, MODEL, _answered, client_for


def rows(transcript: Transcript) -> list[tuple[str, str, str, str]]:
    return [(e.side, e.kind, e.who, e.text) for e in transcript.entries]


def _recorded(tmp_path: Path) -> list[Any]:
    path = tmp_path / "turns.trp"
    with served(LocalGemini()) as url, toolreplay.record(path):
        client = client_for(url)
        first = client.models.generate_content(model=MODEL, contents=ASK, config=CONFIG)
        client.models.generate_content(model=MODEL, contents=_answered(first), config=CONFIG)
        list(client.models.generate_content_stream(model=MODEL, contents=ASK, config=CONFIG))
        client.models.count_tokens(model=MODEL, contents=ASK)
    return list(toolreplay.read_trace(path).operations)


def test_a_gemini_conversation_reads_as_one(tmp_path: Path) -> None:
    first, second, _, _ = _recorded(tmp_path)
    output = cast(Any, first.outcome).value
    transcript = transcript_of(first.effect, first.inputs, output)
    assert transcript is not None
    assert (transcript.api, transcript.model, transcript.status) == ("gemini", MODEL, 200)
    assert transcript.tools_offered == ("issue_refund",)
    assert rows(transcript) == [
        ("request", "instructions", "system", "You are the refunds agent of an online shop."),
        ("request", "message", "user", ASK),
        (
            "response",
            "reasoning",
            "thought",
            "The user gives the order number, so I can refund it directly.",
        ),
        ("response", "text", "model", "Let me refund that order."),
        (
            "response",
            "tool_call",
            "issue_refund",
            '{\n  "order_id": 8812,\n  "reason": "lost in transit"\n}',
        ),
        ("response", "usage", "usage", "31 in · 51 out (15 thoughts) · 97 total"),
    ]
    for entry in transcript.response:  # each answered value's path leads to it
        if entry.path is not None and entry.kind in ("text", "reasoning"):
            assert get_at(output, entry.path) == entry.text
    # The next turn: the model's call and the function's response are sent back.
    turn = transcript_of(second.effect, second.inputs, cast(Any, second.outcome).value)
    assert turn is not None
    assert [row for row in rows(turn) if row[1] in ("tool_call", "tool_output")] == [
        (
            "request",
            "tool_call",
            "issue_refund",
            '{\n  "order_id": 8812,\n  "reason": "lost in transit"\n}',
        ),
        ("request", "tool_output", "issue_refund", '{\n  "status": "refunded"\n}'),
    ]
    said = [entry.text for entry in turn.response if entry.kind == "text"]
    assert said == ["Order 8812 was refunded in full. Anything else?"]


def test_a_gemini_stream_reads_as_the_answer_it_adds_up_to(tmp_path: Path) -> None:
    first, _, streamed, counted = _recorded(tmp_path)
    output = cast(Any, streamed.outcome).value
    transcript = transcript_of(streamed.effect, streamed.inputs, output)
    whole = transcript_of(first.effect, first.inputs, cast(Any, first.outcome).value)
    assert transcript is not None
    assert whole is not None
    assert transcript.streamed
    assert transcript.event_count == len(output["events"])
    # The same answer as the unstreamed call's, each text joined from its pieces.
    assert [(e.kind, e.who, e.text) for e in transcript.response] == [
        (e.kind, e.who, e.text) for e in whole.response
    ]
    call = next(entry for entry in transcript.response if entry.kind == "tool_call")
    assert call.path is not None  # a function call comes whole, in one chunk
    assert get_at(output, call.path) == {"order_id": 8812, "reason": "lost in transit"}
    assert transcript_of(counted.effect, counted.inputs, cast(Any, counted.outcome).value) is None
