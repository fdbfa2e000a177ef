"""The refund approval with `AsyncOpenAI`: record, replay, fork, diff, promote to a test.

Run it with `uv run python examples/openai_async_responses_approval.py`. Offline,
and no API key is needed: the recording is served by a local
`MockTransport` (examples/local_openai) answering like the Responses API; replay, the fork and the
promoted case use a client whose transport fails on any request it is given,
and counts them. Everything is written to a temporary folder. It needs the
OpenAI extra (`uv sync --extra openai`).

The incident: an async application asks a model whether to approve a $1,200
refund and acts on the answer. The model said "approve", so the refund was
approved, although refunds above $1,000 need manual review. We replay it
without the provider, fork it with the answer the model should have given,
ask where the two runs first differ, and keep the corrected run as a pytest
case, run the way CI would run it: in a new process, with no credentials.

With credentials, `--live-record` makes one real call and writes its trace to
the current folder (it prints where; it never prints the key):

    export OPENAI_API_KEY=... OPENAI_MODEL=...
    uv run python examples/openai_async_responses_approval.py --live-record
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import importlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root holds `examples`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import openai  # after the path is set
from openai import AsyncOpenAI

import toolreplay
from examples.local_openai import HTTP, LocalOpenAI
from toolreplay.adapters.openai import InstrumentedAsyncOpenAI, instrument

EFFECT_NAME = "openai.responses.create"

MODEL = "gpt-5-mini"
MAX_OUTPUT_TOKENS = 256
PROMPT = (
    "Customer 42 (gold tier, four years, no earlier refunds) asks for a refund of $1,200 "
    "for order 8812, which arrived damaged. Answer with exactly one word: approve or "
    "manual_review."
)
DECISIONS = {"approve": "approved", "manual_review": "manual_review"}
# The promoted case imports its runner by name: this file is importable under it
# when the examples folder is on sys.path (as it is when the script runs).
RUNNER_MODULE = "openai_async_responses_approval"


async def decide_refund(client: InstrumentedAsyncOpenAI, model: str) -> str:
    """The application under investigation.

    Its bug: it acts on the model's answer alone, although policy sends every
    refund above $1,000 to manual review.
    """
    response = await client.responses.create(
        model=model,
        input=PROMPT,
        reasoning={"effort": "minimal"},
        max_output_tokens=MAX_OUTPUT_TOKENS,
    )
    return DECISIONS.get(response.output_text.strip(), "manual_review")


# --- local stand-ins for the provider (examples/local_openai) -------------------------


class ExplodingProvider:
    """A transport handler that fails on any request, and counts them."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: Any) -> Any:
        self.calls += 1
        raise RuntimeError(f"no provider in this run, yet {request.method} {request.url} was sent")


@asynccontextmanager
async def offline_client(
    handler: Callable[[Any], Any],
) -> AsyncIterator[InstrumentedAsyncOpenAI]:
    """An instrumented `AsyncOpenAI` client whose only transport is `handler`."""
    http_client = HTTP.AsyncClient(transport=HTTP.MockTransport(handler))
    client = AsyncOpenAI(api_key="sk-offline-demo", http_client=http_client, max_retries=0)
    try:
        yield instrument(client)
    finally:
        await client.close()


# What the promoted case's runs sent to a provider (always nothing).
case_provider = ExplodingProvider()


async def run_case() -> str:
    """The promoted case's runner: the application, with no way to reach a provider."""
    async with offline_client(case_provider) as client:
        return await decide_refund(client, MODEL)


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


async def offline_demo() -> None:
    here = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "incident.trp"
        branch = Path(folder) / "corrected.trp"

        provider = LocalOpenAI("approve")
        async with offline_client(provider) as client:
            with toolreplay.record(source):
                decision = await decide_refund(client, MODEL)
        print(f"recorded decision: {decision} (the model answered 'approve')")
        print(f"provider calls while recording: {provider.calls}")

        exploding = ExplodingProvider()
        async with offline_client(exploding) as client:
            with toolreplay.replay(source):
                decision = await decide_refund(client, MODEL)
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
        async with offline_client(exploding) as client:
            with toolreplay.fork(source, branch, patches=[correction]):
                expected = await decide_refund(client, MODEL)
        print(f"forked decision:   {expected} (the model answering 'manual_review')")
        print(f"provider calls during the fork: {exploding.calls}")

        first = toolreplay.diff(source, branch).first_divergence
        assert first is not None
        print()
        print(f"first observable divergence: {first.describe()}")
        for field in first.fields:
            print(f"  {field.describe()}")
        print("(where the two runs first differ; it is not a claim about the cause)")

        print()
        case = await toolreplay.promote_async(
            branch,
            Path(folder) / "cases" / "openai_async_approval",
            name="openai_async_approval",
            runner=f"{RUNNER_MODULE}:run_case",
            expected=expected,
        )
        assets = sorted(path.name[:24] for path in case.directory.iterdir())
        print(f"promoted: {case.directory.name}/ holds {assets}")
        print(f"  trace sha256: {case.trace_sha256}")

        verified = await toolreplay.verify_case_async(case.directory)
        print(
            f"verify_case_async: returned {verified.returned!r}, "
            f"{verified.operations_replayed} operation(s) replayed"
        )
        # The runner ran in the module imported by name, not in this script's __main__.
        runner_module = importlib.import_module(RUNNER_MODULE)
        print(f"provider calls while promoting and verifying: {runner_module.case_provider.calls}")

        environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        environment["PYTHONPATH"] = str(here)
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(case.directory)],
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        print(f"pytest on the case: {result.stdout.strip().splitlines()[-1]}")
        assert result.returncode == 0, result.stdout + result.stderr


async def live_record() -> int:
    missing = [name for name in ("OPENAI_API_KEY", "OPENAI_MODEL") if not os.environ.get(name)]
    if missing:
        print(
            "--live-record makes one real OpenAI call and needs OPENAI_API_KEY and "
            f"OPENAI_MODEL in the environment; not set: {', '.join(missing)}",
            file=sys.stderr,
        )
        return 2
    key, model = os.environ["OPENAI_API_KEY"], os.environ["OPENAI_MODEL"]
    trace = Path.cwd() / f"openai-async-approval-{time.strftime('%Y%m%d-%H%M%S')}.trp"
    calls = 0

    async def count(request: Any) -> None:
        nonlocal calls
        calls += 1

    async with openai.DefaultAsyncHttpxClient(event_hooks={"request": [count]}) as http_client:
        client = instrument(AsyncOpenAI(http_client=http_client, max_retries=0))
        try:
            with toolreplay.record(trace):
                decision = await decide_refund(client, model)
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


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--offline-demo",
        action="store_true",
        help="record, replay, fork, diff and promote with local stand-ins (default)",
    )
    mode.add_argument(
        "--live-record",
        action="store_true",
        help="record one real call (needs OPENAI_API_KEY and OPENAI_MODEL)",
    )
    args = parser.parse_args(argv)
    if args.live_record:
        return await live_record()
    await offline_demo()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
