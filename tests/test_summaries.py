"""A model call in a list reads as its last message and its answer (`toolreplay.summarize_call`).

Recorded from unmodified agents (pydantic-ai over Responses and Chat Completions, the
Agents SDK), streamed and not, each served by the local scripted model: the two model
turns of an agent must not read alike. Summaries are bounded whatever a trace holds, and
reading them never imports the openai SDK.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from toolreplay import CallSummary, JsonValue, Raised, Returned, summarize_call
from toolreplay.summaries import SUMMARY_LIMIT, fit_to_width, register_summarizer

ROOT = Path(__file__).resolve().parent.parent

ASKED_FIRST = "user: Please refund order 8812; it arrived broken."
TOOL_OUTPUT = '{"order_id": 8812, "total": 1200.0, "status": "delivered"}'


def _record(tmp_path: Path, run: Callable[[], Any]) -> list[toolreplay.Operation]:
    path = tmp_path / "agent.trp"
    with toolreplay.record(path):
        run()
    return list(toolreplay.read_trace(path).operations)


def _summaries(operations: list[toolreplay.Operation]) -> list[CallSummary | None]:
    return [summarize_call(op.effect, op.inputs, op.outcome) for op in operations]


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("api", ["responses", "chat"])
def test_a_pydantic_ai_agents_two_model_turns_read_apart(
    api: str, streamed: bool, tmp_path: Path
) -> None:
    pytest.importorskip("pydantic_ai")
    from tests.adapters.agent_apps import pydantic_ai_api, run_pydantic_ai
    from tests.adapters.support import async_client

    operations = _record(
        tmp_path,
        lambda: asyncio.run(
            run_pydantic_ai(async_client(pydantic_ai_api()), api=api, streamed=streamed)
        ),
    )
    first, tool, second = _summaries(operations)
    assert tool is None  # not a model call: shown by its inputs, as before
    assert first is not None
    assert second is not None
    assert first == CallSummary(ASKED_FIRST, 'lookup_order({"order_id": 8812})')
    assert second == CallSummary(
        f"tool lookup_order: {TOOL_OUTPUT}",
        'Order 8812 is on file: {"order_id":8812,"total":1200.0,"status":"delivered"}',
    )
    # Cut to a column, each part keeps half of it.
    assert first.line(60) == 'user: Please refund order 88… → lookup_order({"order_id": 8…'
    assert second.line(60) == 'tool lookup_order: {"order_i… → Order 8812 is on file: {"or…'
    assert first.line(90) == f'{ASKED_FIRST} → lookup_order({{"order_id": 8812}})'
    assert len(first.line(80)) == 80


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
def test_an_agents_sdk_agent_shows_its_tool_calls(streamed: bool, tmp_path: Path) -> None:
    pytest.importorskip("agents")
    from tests.adapters.agent_apps import agents_api, run_agents_sdk
    from tests.adapters.support import async_client

    operations = _record(
        tmp_path,
        lambda: asyncio.run(run_agents_sdk(async_client(agents_api()), streamed=streamed)),
    )
    models = [
        summary
        for op, summary in zip(operations, _summaries(operations), strict=True)
        if op.effect == "openai.responses.create"
    ]
    assert [summary.answered for summary in models if summary is not None] == [
        'lookup_order({"order_id": 8812})',
        'issue_refund({"order_id": 8812, "amount": 1200.0})',
    ]
    assert models[0] is not None
    assert models[0].asked == ASKED_FIRST
    assert models[1] is not None
    assert models[1].asked.startswith("tool lookup_order: ")


def _responses_call(last_item: JsonValue, output: JsonValue) -> tuple[JsonValue, Returned]:
    inputs: JsonValue = {
        "method": "POST",
        "path": "/responses",
        "query": {},
        "body": {"model": "gpt-5-mini", "input": [last_item]},
    }
    return inputs, Returned(output)


def test_failures_refusals_and_cut_streams_are_said_as_such() -> None:
    user: JsonValue = {"role": "user", "content": "hello"}
    inputs, limited = _responses_call(
        user,
        {"status": 429, "headers": {}, "body": {"error": {"message": "Rate limit reached"}}},
    )
    assert summarize_call("openai.responses.create", inputs, limited) == CallSummary(
        "user: hello", "HTTP 429: Rate limit reached"
    )
    failed = Raised("openai.APIConnectionError", "Connection error.", None)
    assert summarize_call("openai.responses.create", inputs, failed) == CallSummary(
        "user: hello", "APIConnectionError: Connection error."
    )
    refusal: JsonValue = {
        "status": 200,
        "headers": {},
        "body": {
            "output": [
                {"type": "reasoning", "summary": []},
                {"type": "message", "content": [{"type": "refusal", "refusal": "I can't."}]},
            ]
        },
    }
    _, refused = _responses_call(user, refusal)
    summary = summarize_call("openai.responses.create", inputs, refused)
    assert summary is not None
    assert summary.answered == "refused: I can't."
    cut: JsonValue = {
        "status": 200,
        "headers": {},
        "events": [
            {"event": "response.created", "data": {"type": "response.created"}},
            {
                "event": "response.output_item.done",
                "data": {
                    "type": "response.output_item.done",
                    "item": {"type": "message", "content": [{"type": "output_text", "text": "Hi"}]},
                },
            },
        ],
        "end": "closed_early",
    }
    _, stopped = _responses_call(user, cut)
    summary = summarize_call("openai.responses.create", inputs, stopped)
    assert summary is not None
    assert summary.answered == (
        "Hi (stream ended before the response completed) (stream closed early)"
    )
    # The call a fork stopped at has no outcome yet.
    assert summarize_call("openai.responses.create", inputs) == CallSummary("user: hello", "")
    # Other endpoints of the adapter, and other shapes, are left to the raw inputs.
    embeddings: JsonValue = {"method": "POST", "path": "/embeddings", "body": {"input": "x"}}
    assert summarize_call("openai.embeddings.create", embeddings, limited) is None
    assert summarize_call("openai.responses.create", [1, 2], limited) is None
    assert summarize_call("crm.customer.get", {"customer_id": 1}, limited) is None


def test_every_summary_is_one_bounded_line_whatever_the_trace_holds() -> None:
    hostile = "line one\nline two\x1b[2J\u202eevil" + "x" * 100_000
    inputs, outcome = _responses_call(
        {"role": "user", "content": hostile},
        {
            "status": 200,
            "headers": {},
            "body": {
                "output": [
                    {"type": "message", "content": [{"type": "output_text", "text": "答" * 5000}]}
                ]
            },
        },
    )
    summary = summarize_call("openai.responses.create", inputs, outcome)
    assert summary is not None
    assert summary.asked.startswith("user: line one line two\\u001b[2J\\u202eevilxxx")
    for part in (summary.asked, summary.answered):
        assert len(part) <= SUMMARY_LIMIT
        assert part.isprintable()
        assert part.endswith("…")
    # Wide characters take two cells: a line fits the cells it is given.
    line = summary.line(40)
    cells = sum(2 if ch == "答" else 1 for ch in line)
    assert cells <= 40
    assert fit_to_width("答答答", 4) == "答…"
    assert fit_to_width("abc", 0) == ""
    # A tool's arguments nested past what JSON can write are shown, not raised.
    deep: JsonValue = "[" * 50_000 + "]" * 50_000
    inputs, outcome = _responses_call(
        {"type": "function_call", "name": "f", "arguments": deep, "call_id": "c"}, None
    )
    summary = summarize_call("openai.responses.create", inputs, outcome)
    assert summary is not None
    assert summary.asked.startswith("assistant: f([[[[")


def test_a_registered_summarizer_speaks_for_its_namespace() -> None:
    def tickets(effect: str, inputs: JsonValue, outcome: object) -> CallSummary | None:
        assert isinstance(inputs, dict)
        return CallSummary(f"ticket {inputs['id']}", "opened")

    register_summarizer("helpdesk", tickets)
    assert summarize_call("helpdesk.ticket.open", {"id": 7}) == CallSummary("ticket 7", "opened")
    with pytest.raises(ValueError, match="namespace"):
        register_summarizer("helpdesk.ticket", tickets)


def test_summaries_never_import_the_openai_sdk(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "sys.modules['openai'] = None  # importing it would fail\n"
        "import toolreplay\n"
        "inputs = {'method': 'POST', 'path': '/chat/completions', 'query': {},\n"
        "          'body': {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}}\n"
        "answer = toolreplay.Returned({'status': 200, 'headers': {}, 'body': {'choices': [\n"
        "    {'message': {'role': 'assistant', 'content': 'hello'}}]}})\n"
        "summary = toolreplay.summarize_call('openai.chat.completions.create', inputs, answer)\n"
        "print(summary.line(40))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout == "user: hi → hello\n"


def test_show_lists_each_model_turn_by_its_message_and_answer(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_ai")
    from tests.adapters.agent_apps import pydantic_ai_api, run_pydantic_ai
    from tests.adapters.support import async_client

    _record(
        tmp_path,
        lambda: asyncio.run(
            run_pydantic_ai(async_client(pydantic_ai_api()), api="responses", streamed=True)
        ),
    )
    shown = subprocess.run(
        [sys.executable, "-m", "toolreplay", "show", str(tmp_path / "agent.trp")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    rows = [line for line in shown.splitlines() if "openai.responses.create" in line]
    assert len(rows) == 2
    assert ASKED_FIRST in rows[0]
    assert rows[0].rstrip().endswith('lookup_order({"order_id": 8812})')
    assert 'tool lookup_order: {"order_id": 8812, "total": 1200.0, "sta…' in rows[1]
    assert 'Order 8812 is on file: {"order_id":8812,"total":1200.0,"sta…' in rows[1]
