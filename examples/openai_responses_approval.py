"""A refund approval made through the OpenAI Responses API: record, replay, fork, diff.

Run it with `uv run python examples/openai_responses_approval.py` (the same as
`--offline-demo`). Offline, and no API key is needed: the recording is served by
a local `MockTransport` (examples/local_openai) answering like the Responses API, and replay and
the fork use a client whose transport fails on any request it is given, and
counts them. Everything is written to a temporary folder. It needs the OpenAI
extra (`uv sync --extra openai`).

The incident: the application asks a model whether to approve a $1,200 refund
and acts on the answer. The model said "approve", so the refund was approved,
although refunds above $1,000 need manual review. We replay the incident
without the provider, fork it with the answer the model should have given, and
ask where the two runs first differ.

With credentials, `--live-record` makes one real call and writes its trace to
the current folder (it prints where; it never prints the key):

    export OPENAI_API_KEY=... OPENAI_MODEL=...
    uv run python examples/openai_responses_approval.py --live-record
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root holds `examples`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai  # after the path is set
from openai import OpenAI

import toolreplay
from examples.local_openai import HTTP, LocalOpenAI
from toolreplay.adapters.openai import InstrumentedOpenAI, instrument

EFFECT_NAME = "openai.responses.create"

MODEL = "gpt-5-mini"
MAX_OUTPUT_TOKENS = 256
PROMPT = (
    "Customer 42 (gold tier, four years, no earlier refunds) asks for a refund of $1,200 "
    "for order 8812, which arrived damaged. Answer with exactly one word: approve or "
    "manual_review."
)
DECISIONS = {"approve": "approved", "manual_review": "manual_review"}


def decide_refund(client: InstrumentedOpenAI, model: str) -> str:
    """The application under investigation.

    Its bug: it acts on the model's answer alone, although policy sends every
    refund above $1,000 to manual review.
    """
    response = client.responses.create(
        model=model,
        input=PROMPT,
        reasoning={"effort": "minimal"},
        max_output_tokens=MAX_OUTPUT_TOKENS,
    )
    return DECISIONS.get(response.output_text.strip(), "manual_review")


# --- local stand-ins for the provider (examples/local_openai.py) ---------------------


class ExplodingProvider:
    """A transport handler that fails on any request, and counts them."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: Any) -> Any:
        self.calls += 1
        raise RuntimeError(f"no provider in this run, yet {request.method} {request.url} was sent")


@contextmanager
def offline_client(handler: Callable[[Any], Any]) -> Iterator[InstrumentedOpenAI]:
    """An instrumented `OpenAI` client whose only transport is `handler`."""
    http_client = HTTP.Client(transport=HTTP.MockTransport(handler))
    client = OpenAI(api_key="sk-offline-demo", http_client=http_client, max_retries=0)
    try:
        yield instrument(client)
    finally:
        client.close()


def with_output_text(recorded: toolreplay.JsonValue, text: str) -> Any:
    """A copy of a recorded response (status, headers, body) whose message says `text`."""
    corrected: Any = copy.deepcopy(recorded)
    for item in corrected["body"]["output"]:
        if item["type"] == "message":
            for part in item["content"]:
                if part["type"] == "output_text":
                    part["text"] = text
    return corrected


# --- the two modes --------------------------------------------------------------------


def offline_demo() -> None:
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "incident.trp"
        branch = Path(folder) / "corrected.trp"

        provider = LocalOpenAI("approve")
        with offline_client(provider) as client, toolreplay.record(source):
            decision = decide_refund(client, MODEL)
        print(f"recorded decision: {decision} (the model answered 'approve')")
        print(f"provider calls while recording: {provider.calls}")

        exploding = ExplodingProvider()
        with offline_client(exploding) as client, toolreplay.replay(source):
            decision = decide_refund(client, MODEL)
        print(f"replayed decision: {decision}")
        print(f"provider calls during replay: {exploding.calls}")

        # The fork replaces the whole recorded response (status, headers, body), found in
        # the trace under the endpoint's effect name.
        operation = toolreplay.read_trace(source).operations[0]
        assert operation.effect == EFFECT_NAME
        assert isinstance(operation.outcome, toolreplay.Returned)
        correction = toolreplay.replace_output(
            effect=EFFECT_NAME,
            inputs=operation.inputs,
            value=with_output_text(operation.outcome.value, "manual_review"),
        )
        exploding = ExplodingProvider()
        with (
            offline_client(exploding) as client,
            toolreplay.fork(source, branch, patches=[correction]),
        ):
            decision = decide_refund(client, MODEL)
        print(f"forked decision:   {decision} (the model answering 'manual_review')")
        print(f"provider calls during the fork: {exploding.calls}")

        first = toolreplay.diff(source, branch).first_divergence
        assert first is not None
        print()
        print(f"first observable divergence: {first.describe()}")
        for field in first.fields:
            print(f"  {field.describe()}")
        print("(where the two runs first differ; it is not a claim about the cause)")


def live_record() -> int:
    missing = [name for name in ("OPENAI_API_KEY", "OPENAI_MODEL") if not os.environ.get(name)]
    if missing:
        print(
            "--live-record makes one real OpenAI call and needs OPENAI_API_KEY and "
            f"OPENAI_MODEL in the environment; not set: {', '.join(missing)}",
            file=sys.stderr,
        )
        return 2
    key, model = os.environ["OPENAI_API_KEY"], os.environ["OPENAI_MODEL"]
    trace = Path.cwd() / f"openai-approval-{time.strftime('%Y%m%d-%H%M%S')}.trp"
    calls = 0

    def count(request: Any) -> None:
        nonlocal calls
        calls += 1

    with openai.DefaultHttpxClient(event_hooks={"request": [count]}) as http_client:
        client = instrument(OpenAI(http_client=http_client, max_retries=0))
        try:
            with toolreplay.record(trace):
                decision = decide_refund(client, model)
        except (openai.APIError, toolreplay.ToolReplayError) as error:
            message = str(getattr(error, "message", error)).replace(key, "<OPENAI_API_KEY>")
            print(f"the call failed: {type(error).__name__}: {message}", file=sys.stderr)
            if trace.exists():
                print(f"trace (holding the failure) written to {trace}")
            return 1
    print(f"live decision: {decision}")
    print(f"provider calls while recording: {calls}")
    print(f"trace written to {trace}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--offline-demo",
        action="store_true",
        help="record, replay, fork and diff with local stand-ins for the provider (default)",
    )
    mode.add_argument(
        "--live-record",
        action="store_true",
        help="record one real call (needs OPENAI_API_KEY and OPENAI_MODEL)",
    )
    args = parser.parse_args(argv)
    if args.live_record:
        return live_record()
    offline_demo()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
