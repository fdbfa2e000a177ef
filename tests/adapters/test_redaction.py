"""An adapter's requests and responses go through the redaction policy (RFC 0007 §9), for
OpenAI and Anthropic: a rule by path blanks the message sent, a pattern rule the e-mail
address in the answer; the trace holds neither, and replays with the answer redacted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

import toolreplay
from examples.local_anthropic import API_KEY, MODEL, LocalAnthropic
from examples.local_anthropic import refusing as refusing_claude
from examples.local_openai import LocalOpenAI, refusing, response_body
from tests.adapters.support import sync_client
from toolreplay.adapters.anthropic import instrument as instrument_claude
from toolreplay.adapters.openai import instrument

EMAIL = "ada.lovelace@example.com"
QUESTION = f"Refund the order of {EMAIL}?"
ANSWER = f"Refund approved for {EMAIL}"


@dataclass(frozen=True)
class Provider:
    """One adapter: its API answering `ANSWER`, a client over a handler, the call, the
    answer's text, the rule blanking the question, and where the question is recorded."""

    api: Callable[[], Any]
    client: Callable[[Any], Any]
    ask: Callable[[Any], Any]
    text: Callable[[Any], str]
    effects: dict[str, list[str]]
    question: Callable[[Any], Any]


def claude_client(handler: Any) -> Any:
    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    return instrument_claude(anthropic.Anthropic(api_key=API_KEY, http_client=http, max_retries=0))


PROVIDERS = {
    "openai": Provider(
        api=lambda: LocalOpenAI(response_body(text=ANSWER)),
        client=lambda handler: instrument(sync_client(handler)),
        ask=lambda client: client.responses.create(
            model="gpt-5-mini",
            input=[{"role": "user", "content": QUESTION}],
            metadata={"customer": EMAIL},
        ),
        text=lambda response: response.output_text,
        effects={"openai.responses.*": ["$.body.input[*].content"]},
        question=lambda body: body["input"][0]["content"],
    ),
    "anthropic": Provider(
        api=lambda: LocalAnthropic(final_text=lambda _results: ANSWER),
        client=claude_client,
        ask=lambda client: client.messages.create(
            model=MODEL,
            max_tokens=64,
            messages=[{"role": "user", "content": QUESTION}],
            metadata={"user_id": EMAIL},
        ),
        text=lambda message: message.content[0].text,
        effects={"anthropic.messages.*": ["$.body.messages[*].content"]},
        question=lambda body: body["messages"][0]["content"],
    ),
}
REFUSING = {"openai": refusing, "anthropic": refusing_claude}


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_request_and_response_bodies_are_redacted_and_replay_matches(
    name: str, tmp_path: Path
) -> None:
    provider = PROVIDERS[name]
    policy = toolreplay.RedactionPolicy(
        effects=provider.effects,
        patterns=[r"[\w.]+@example\.com"],
        key="adapter-redaction-key-0123456789",
    )
    trace = tmp_path / f"{name}.trp"
    with toolreplay.record(trace, redaction=policy):
        live = provider.ask(provider.client(provider.api()))
    assert provider.text(live) == ANSWER  # the application got the real response
    written = trace.read_bytes()
    assert EMAIL.encode() not in written
    operation = toolreplay.read_trace(trace).operations[0]
    body = operation.inputs["body"]
    assert isinstance(body, dict)
    assert toolreplay.is_placeholder(provider.question(body))

    sent: list[Any] = []
    with toolreplay.replay(trace, redaction=policy):
        replayed = provider.ask(provider.client(REFUSING[name](sent)))
    assert sent == []
    assert EMAIL not in provider.text(replayed)
    assert "<redacted:" in provider.text(replayed)
