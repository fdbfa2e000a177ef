"""The OpenAI adapter's requests and responses go through the redaction policy (RFC 0007 §9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import toolreplay
from examples.local_openai import LocalOpenAI, refusing, response_body
from tests.adapters.support import sync_client
from toolreplay.adapters.openai import InstrumentedOpenAI, instrument

EMAIL = "ada.lovelace@example.com"
POLICY = toolreplay.RedactionPolicy(
    effects={"openai.responses.*": ["$.body.input[*].content"]},
    patterns=[r"[\w.]+@example\.com"],
    key="adapter-redaction-key-0123456789",
)


def ask(client: InstrumentedOpenAI) -> Any:
    return client.responses.create(
        model="gpt-5-mini",
        input=[{"role": "user", "content": f"Refund the order of {EMAIL}?"}],
        metadata={"customer": EMAIL},
    )


def test_request_and_response_bodies_are_redacted_and_replay_matches(tmp_path: Path) -> None:
    trace = tmp_path / "openai.trp"
    api = LocalOpenAI(response_body(text=f"Refund approved for {EMAIL}"))
    with toolreplay.record(trace, redaction=POLICY):
        live = ask(instrument(sync_client(api)))
    assert EMAIL in live.output_text  # the application got the real response
    written = trace.read_bytes()
    assert EMAIL.encode() not in written
    operation = toolreplay.read_trace(trace).operations[0]
    body = operation.inputs["body"]
    assert isinstance(body, dict)
    assert toolreplay.is_placeholder(body["input"][0]["content"])  # type: ignore[index]

    sent: list[Any] = []
    with toolreplay.replay(trace, redaction=POLICY):
        replayed = ask(instrument(sync_client(refusing(sent))))
    assert sent == []
    assert EMAIL not in replayed.output_text
    assert "<redacted:" in replayed.output_text
