"""A fork asks the model live: `fork(..., live=["openai.responses.create"])` (RFC 0004 §2.3a).

The model is a local fake API served over real HTTP on loopback (`served`), reached by
unmodified SDK clients (only `base_url` points at it), which counts what it receives. A
call the source holds is replayed and never reaches it; a call it does not hold is sent
through the instrumented client's own transport and kept in the branch with origin
`live`, redacted and scanned as a recording is.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import openai
import pytest
from openai.types.responses import ResponseCompletedEvent

import toolreplay
from examples.local_openai import (
    HTTP,
    REQUEST_ID,
    LocalOpenAI,
    function_call_item,
    refusing,
    response_body,
)
from tests.adapters.agent_apps import (
    ORDER_ID,
    agents_api,
    pydantic_ai_api,
    run_agents_sdk,
    run_pydantic_ai,
)
from tests.adapters.http_api import Dropped, served
from tests.adapters.real_clients import needs_openai_3, pytest_on_case
from tests.adapters.support import API_KEY, SDK_MAJOR, async_client, sync_client
from toolreplay import JsonValue
from toolreplay.adapters.openai import instrument
from toolreplay.redaction import RedactionPolicy

MODEL = "gpt-5-mini"
LOST = {"order_id": ORDER_ID, "total": 1200.0, "status": "lost"}
SECRET = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"  # the shape of an OpenAI key
KEY = "test-redaction-key-0123456789abcdef"


def over_http(url: str, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(api_key=API_KEY, base_url=url, **{"max_retries": 0, **options})


def async_over_http(url: str, **options: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=API_KEY, base_url=url, **{"max_retries": 0, **options})


async def agents_over_http(url: str, *, streamed: bool) -> Any:
    """The Agents SDK app with a client of the API at `url`, closed before the loop ends."""
    client = async_over_http(url)
    try:
        return await run_agents_sdk(client, streamed=streamed)
    finally:
        await client.close()


async def pydantic_ai_over_http(url: str, *, api: str, streamed: bool) -> Any:
    client = async_over_http(url)
    try:
        return await run_pydantic_ai(client, api=api, streamed=streamed)
    finally:
        await client.close()


def tool_outputs(request: dict[str, Any]) -> list[str]:
    """The tool outputs a Responses or Chat Completions request carries."""
    items = request.get("input") or request.get("messages") or []
    return [
        str(item.get("output", item.get("content")))
        for item in items
        if item.get("type") == "function_call_output" or item.get("role") == "tool"
    ]


# The runners of the promoted cases (no arguments). They name a base URL that is not the
# official endpoint, as the loopback API's is not: the Agents SDK sends a prompt cache
# key only to api.openai.com, so the requests match the recording. Replay never sends.
CASE_API = "http://127.0.0.1:9/v1"


def agents_case() -> JsonValue:
    return asyncio.run(
        run_agents_sdk(async_client(agents_api(), base_url=CASE_API), streamed=False)
    )


def agents_streamed_case() -> JsonValue:
    return asyncio.run(run_agents_sdk(async_client(agents_api(), base_url=CASE_API), streamed=True))


def pydantic_ai_case() -> JsonValue:
    client = async_client(pydantic_ai_api(), base_url=CASE_API)
    return asyncio.run(run_pydantic_ai(client, api="responses", streamed=False))


def lost_order() -> toolreplay.OutputPatch:
    return toolreplay.replace_output(
        effect="shop.order.lookup", inputs={"order_id": ORDER_ID}, value=LOST
    )


def bodies(requests: list[Any]) -> list[Any]:
    """The JSON bodies of what a `LocalOpenAI` received."""
    return [json.loads(request.content) for request in requests]


# --- one application, every way of calling the model ------------------------------------


@toolreplay.effect("shop.status")
def order_status(order_id: int) -> str:
    return "delivered"


def completed_text(event: object) -> str:
    """The answer text of a stream's last event, `response.completed`."""
    assert isinstance(event, ResponseCompletedEvent), event
    return event.response.output_text


def returned(operation: toolreplay.Operation) -> dict[str, Any]:
    """The output an adapter operation returned."""
    assert isinstance(operation.outcome, toolreplay.Returned)
    return cast(dict[str, Any], operation.outcome.value)


def ask(client: openai.OpenAI, *, stream: bool) -> str:
    """The application: look the order up, ask the model about it, return the answer."""
    question = f"Order {ORDER_ID} is {order_status(ORDER_ID)}. Refund it?"
    if not stream:
        return client.responses.create(model=MODEL, input=question).output_text
    events = list(client.responses.create(model=MODEL, input=question, stream=True))
    return completed_text(events[-1])


async def ask_async(client: openai.AsyncOpenAI, *, stream: bool) -> str:
    question = f"Order {ORDER_ID} is {order_status(ORDER_ID)}. Refund it?"
    if not stream:
        return (await client.responses.create(model=MODEL, input=question)).output_text
    events = [event async for event in await client.responses.create(
        model=MODEL, input=question, stream=True
    )]  # fmt: skip
    return completed_text(events[-1])


def run(app: str, url: str, *, stream: bool) -> str:
    if app == "sync":
        return ask(instrument(over_http(url)), stream=stream)
    return asyncio.run(ask_async(instrument(async_over_http(url)), stream=stream))


def run_refusing(app: str, sent: list[Any], *, stream: bool) -> str:
    if app == "sync":
        return ask(instrument(sync_client(refusing(sent))), stream=stream)
    return asyncio.run(ask_async(instrument(async_client(refusing(sent))), stream=stream))


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("app", ["sync", "async"])
def test_the_call_the_source_does_not_hold_is_sent_live_and_kept_in_the_branch(
    app: str, stream: bool, tmp_path: Path
) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "lost.trp"
    api = LocalOpenAI("approve", "hold it for review", deltas=4)
    with served(api) as url:
        with toolreplay.record(trace):
            assert run(app, url, stream=stream) == "approve"
        recorded_bodies = bodies(api.requests)
        lost = toolreplay.replace_output(
            effect="shop.status", inputs={"order_id": ORDER_ID}, value="lost"
        )
        with toolreplay.fork(
            trace, branch, patches=[lost], live=["openai.responses.create"], unobserved="allow"
        ) as session:
            answer = run(app, url, stream=stream)
    assert answer == "hold it for review"  # what the API answered the new question
    sent = bodies(api.requests[len(recorded_bodies) :])
    assert len(sent) == 1
    assert sent[0] not in recorded_bodies
    assert "Order 8812 is lost." in json.dumps(sent[0])
    assert session.live_count == 1

    operations = toolreplay.read_trace(branch).operations
    assert [(op.effect, op.origin) for op in operations] == [
        ("shop.status", "patched"),
        ("openai.responses.create", "live"),
    ]
    live = operations[1]
    assert live.inputs["body"] == sent[0]
    output = returned(live)
    assert output["status"] == 200
    assert output["end"] == "complete"
    assert ("events" if stream else "body") in output
    assert API_KEY not in branch.read_text(encoding="utf-8")  # headers are never kept

    # The branch replays offline: the live answer is now a recorded one.
    refused: list[Any] = []
    with toolreplay.replay(branch):
        assert run_refusing(app, refused, stream=stream) == "hold it for review"
    assert refused == []


def test_a_recorded_call_is_replayed_even_when_its_effect_may_run_live(tmp_path: Path) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "same.trp"
    api = LocalOpenAI("approve")
    with served(api) as url:
        with toolreplay.record(trace):
            run("sync", url, stream=False)
        with toolreplay.fork(trace, branch, live=["openai.*"]) as session:
            assert run("sync", url, stream=False) == "approve"
    assert len(api.requests) == 1  # the recording's
    assert session.live_count == 0


# --- unmodified agent frameworks --------------------------------------------------------


@needs_openai_3
@pytest.mark.parametrize("streamed", [False, True], ids=["Runner.run", "Runner.run_streamed"])
def test_an_agents_sdk_fork_asks_the_model_only_what_the_recording_never_asked(
    streamed: bool, tmp_path: Path
) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "lost.trp"
    model = agents_api()
    with served(model) as url:
        with toolreplay.record(trace):
            asyncio.run(agents_over_http(url, streamed=streamed))
        recorded_requests = list(model.requests)
        assert len(recorded_requests) == 2
        model.requests.clear()
        with toolreplay.fork(
            trace,
            branch,
            patches=[lost_order()],
            live=["openai.responses.create"],
            unobserved="allow",
        ):
            forked = asyncio.run(agents_over_http(url, streamed=streamed))
    # The first model request is the recording's and is replayed; the second carries
    # the changed tool output, which the model was never asked: only that one is sent.
    assert len(model.requests) == 1
    assert model.requests[0] not in recorded_requests
    assert "lost" in tool_outputs(model.requests[0])[-1]
    operations = toolreplay.read_trace(branch).operations
    assert [(op.effect, op.origin) for op in operations] == [
        ("openai.responses.create", "recorded"),
        ("shop.order.lookup", "patched"),
        ("openai.responses.create", "live"),
        ("billing.refund.issue", "recorded"),
    ]

    runner = "agents_streamed_case" if streamed else "agents_case"
    case = toolreplay.promote(
        branch,
        tmp_path / "cases" / "lost_order",
        name="lost_order",
        runner=f"tests.adapters.test_fork_live:{runner}",
        expected=forked,
    )
    result = pytest_on_case(case.directory)  # a case replays with the network blocked
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


@needs_openai_3
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
@pytest.mark.parametrize("api", ["responses", "chat"])
def test_a_pydantic_ai_fork_asks_the_model_live_about_the_changed_tool_output(
    api: str, streamed: bool, tmp_path: Path
) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "lost.trp"
    model = pydantic_ai_api()
    effect = "openai.responses.create" if api == "responses" else "openai.chat.completions.create"
    with served(model) as url:
        with toolreplay.record(trace):
            asyncio.run(pydantic_ai_over_http(url, api=api, streamed=streamed))
        recorded_requests = list(model.requests)
        model.requests.clear()
        with toolreplay.fork(
            trace, branch, patches=[lost_order()], live=[effect], unobserved="allow"
        ):
            forked = asyncio.run(pydantic_ai_over_http(url, api=api, streamed=streamed))
    assert forked == f"Order {ORDER_ID} is on file: {json.dumps(LOST, separators=(',', ':'))}"
    assert len(model.requests) == 1
    assert model.requests[0] not in recorded_requests
    assert "lost" in tool_outputs(model.requests[0])[-1]
    origins = [(op.effect, op.origin) for op in toolreplay.read_trace(branch).operations]
    assert origins == [(effect, "recorded"), ("shop.order.lookup", "patched"), (effect, "live")]

    if (api, streamed) == ("responses", False):  # the case runner agent_apps has
        case = toolreplay.promote(
            branch,
            tmp_path / "cases" / "lost_order",
            name="lost_order",
            runner="tests.adapters.test_fork_live:pydantic_ai_case",
            expected=forked,
        )
        result = pytest_on_case(case.directory)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "1 passed" in result.stdout


class LoopingModel:
    """A model that asks for the order to be looked up again, every turn, forever."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def __call__(self, request: Any) -> Any:
        body = json.loads(request.content)
        self.requests.append(body)
        turn = len(self.requests)
        item = function_call_item(
            "lookup_order", {"order_id": ORDER_ID}, f"call_loop_{turn}", f"fc_loop_{turn}"
        )
        answer = response_body(output=[item], id=f"resp_loop_{turn}", tools=body.get("tools", []))
        return HTTP.Response(200, json=answer, headers={"x-request-id": REQUEST_ID})


@needs_openai_3
def test_the_live_limit_stops_a_fork_whose_agent_loops(tmp_path: Path) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "looping.trp"
    with served(agents_api()) as url:
        with toolreplay.record(trace):
            asyncio.run(agents_over_http(url, streamed=False))
    model = LoopingModel()
    with served(model) as url, pytest.raises(Exception) as raised:  # the chain is checked
        with toolreplay.fork(
            trace,
            branch,
            patches=[lost_order()],
            live=["openai.*", "shop.*"],
            live_limit=5,
            unobserved="allow",
        ):
            asyncio.run(agents_over_http(url, streamed=False))
    chain: list[BaseException] = []
    error: BaseException | None = raised.value
    while error is not None:
        chain.append(error)
        error = error.__cause__ or error.__context__
    limit = next(e for e in chain if isinstance(e, toolreplay.LiveCallLimitError))
    assert (limit.limit, limit.count) == (5, 5)
    assert "live_limit=5" in str(limit)
    assert "--live-limit" in str(limit)
    branch_trace = toolreplay.read_trace(branch)
    live = [op for op in branch_trace.operations if op.origin == "live"]
    assert len(live) == 5
    # Nothing of a refused call was sent: the model saw exactly the live model calls.
    assert len(model.requests) == sum(op.effect == "openai.responses.create" for op in live)
    assert branch_trace.footer is not None
    assert branch_trace.footer.attempted is not None
    # The first call refused was the sixth, a tool call; the SDK told the model it failed,
    # and the model call that followed was refused too, ending the run.
    assert branch_trace.footer.attempted.identity.effect == "shop.order.lookup"
    assert limit.effect == "openai.responses.create"


# --- a live call is kept as a recording keeps one ---------------------------------------


def answering(text: str) -> Callable[[Any], Any]:
    def handle(request: Any) -> Any:
        return HTTP.Response(
            200, json=response_body(text=text), headers={"x-request-id": REQUEST_ID}
        )

    return handle


def test_a_secret_in_a_live_answer_is_refused_before_the_branch_keeps_it(tmp_path: Path) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "leaky.trp"
    with served(answering("approve")) as url, toolreplay.record(trace):
        run("sync", url, stream=False)
    lost = toolreplay.replace_output(effect="shop.status", inputs={"order_id": 8812}, value="lost")
    with served(answering(f"use the key {SECRET}")) as url:
        with pytest.raises(toolreplay.SecretInTraceError) as raised:
            with toolreplay.fork(
                trace, branch, patches=[lost], live=["openai.*"], unobserved="allow"
            ):
                run("sync", url, stream=False)
    assert all(finding.part == "output" for finding in raised.value.findings)
    written = branch.read_text(encoding="utf-8")
    assert SECRET not in written
    assert [op.origin for op in toolreplay.read_trace(branch).operations] == ["patched"]


def test_a_live_answer_is_redacted_as_a_recording_is(tmp_path: Path) -> None:
    policy = RedactionPolicy(redact_secrets=True, key=KEY)
    trace, branch = tmp_path / "refund.trp", tmp_path / "redacted.trp"
    with served(answering("approve")) as url, toolreplay.record(trace, redaction=policy):
        run("sync", url, stream=False)
    lost = toolreplay.replace_output(effect="shop.status", inputs={"order_id": 8812}, value="lost")
    with served(answering(f"use the key {SECRET}")) as url:
        with toolreplay.fork(
            trace, branch, patches=[lost], live=["openai.*"], unobserved="allow", redaction=policy
        ):
            answer = run("sync", url, stream=False)
    assert answer == f"use the key {SECRET}"  # the application sees what was sent
    written = branch.read_text(encoding="utf-8")
    assert SECRET not in written
    live = toolreplay.read_trace(branch).operations[-1]
    assert live.origin == "live"
    assert "use the key <redacted:" in json.dumps(returned(live))


def test_each_retry_is_its_own_live_call(tmp_path: Path) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "retried.trp"
    with served(answering("approve")) as url, toolreplay.record(trace):
        run("sync", url, stream=False)
    answers = [
        HTTP.Response(
            500,
            json={"error": {"message": "overloaded", "type": "server_error"}},
            headers={"x-request-id": "req_retry", "retry-after-ms": "1"},
        ),
        HTTP.Response(200, json=response_body("hold"), headers={"x-request-id": REQUEST_ID}),
    ]
    received: list[Any] = []

    def flaky(request: Any) -> Any:
        received.append(request)
        return answers[len(received) - 1]

    lost = toolreplay.replace_output(effect="shop.status", inputs={"order_id": 8812}, value="lost")
    with served(flaky) as url:
        with toolreplay.fork(
            trace, branch, patches=[lost], live=["openai.*"], unobserved="allow"
        ) as session:
            assert ask(instrument(over_http(url, max_retries=1)), stream=False) == "hold"
    assert len(received) == 2
    assert session.live_count == 2
    live = [op for op in toolreplay.read_trace(branch).operations if op.origin == "live"]
    assert [op.identity.occurrence for op in live] == [0, 1]
    assert [returned(op)["status"] for op in live] == [500, 200]


def test_a_dropped_live_stream_is_kept_as_the_transport_failure(tmp_path: Path) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "dropped.trp"
    api = LocalOpenAI("approve", deltas=6)
    with served(api) as url, toolreplay.record(trace):
        run("sync", url, stream=True)
    stream = LocalOpenAI("approve, it arrived broken", deltas=6)

    def dropping(request: Any) -> Any:
        return Dropped(stream(request), events=4)

    lost = toolreplay.replace_output(effect="shop.status", inputs={"order_id": 8812}, value="lost")
    # openai 3.x raises APIConnectionError from the cut, 2.x the HTTP library's error.
    with served(dropping) as url, pytest.raises(Exception) as live_error:
        with toolreplay.fork(trace, branch, patches=[lost], live=["openai.*"], unobserved="allow"):
            run("sync", url, stream=True)
    live = toolreplay.read_trace(branch).operations[-1]
    assert live.origin == "live"
    failure = live.outcome
    assert isinstance(failure, toolreplay.Raised)
    assert failure.error_type.startswith("httpx.")
    assert "<url>" in failure.message or url not in failure.message
    # Replaying the branch raises what the live run raised, after the same events.
    with pytest.raises(Exception) as replayed_error:  # the same as live
        with toolreplay.replay(branch):
            run_refusing("sync", [], stream=True)
    assert type(replayed_error.value) is type(live_error.value)
    if SDK_MAJOR >= 3:  # 2.x raises the HTTP library's error unchained on replay (RFC 0006)
        assert type(replayed_error.value.__cause__) is type(live_error.value.__cause__)


def test_a_live_stream_left_open_when_the_fork_ends_is_kept_as_received(tmp_path: Path) -> None:
    trace, branch = tmp_path / "refund.trp", tmp_path / "open.trp"
    api = LocalOpenAI("approve", "hold it for review, please", deltas=8)
    with served(api) as url:
        with toolreplay.record(trace):
            run("sync", url, stream=True)
        lost = toolreplay.replace_output(
            effect="shop.status", inputs={"order_id": 8812}, value="lost"
        )
        client = instrument(over_http(url))
        with toolreplay.fork(trace, branch, patches=[lost], live=["openai.*"], unobserved="allow"):
            question = f"Order {ORDER_ID} is {order_status(ORDER_ID)}. Refund it?"
            stream = client.responses.create(model=MODEL, input=question, stream=True)
            first = next(iter(stream))  # then the block ends, the stream still open
        assert first.type == "response.created"
        stream.close()
    live = toolreplay.read_trace(branch).operations[-1]
    output = returned(live)
    assert (live.origin, output["end"]) == ("live", "closed_early")
    assert 1 <= len(output["events"]) < 8


def test_concurrent_live_calls_are_each_kept_on_their_lane(tmp_path: Path) -> None:
    trace, branch = tmp_path / "none.trp", tmp_path / "concurrent.trp"
    with toolreplay.record(trace):
        pass
    api = LocalOpenAI("approve")
    questions = [f"question {n}" for n in range(3)]

    async def ask_all(client: openai.AsyncOpenAI) -> list[str]:
        answers = await asyncio.gather(
            *(client.responses.create(model=MODEL, input=q) for q in questions)
        )
        return [answer.output_text for answer in answers]

    def ask_in_threads(client: openai.OpenAI) -> list[str]:
        with toolreplay.SessionExecutor(max_workers=3) as pool:
            answers = pool.map(lambda q: client.responses.create(model=MODEL, input=q), questions)
            return [answer.output_text for answer in answers]

    with served(api) as url:
        with toolreplay.fork(trace, branch, live=["openai.*"]) as session:
            assert asyncio.run(ask_all(instrument(async_over_http(url)))) == ["approve"] * 3
            assert ask_in_threads(instrument(over_http(url))) == ["approve"] * 3
    assert len(api.requests) == 6
    assert session.live_count == 6
    live = toolreplay.read_trace(branch).operations
    assert all(op.origin == "live" for op in live)
    assert sorted(op.identity.occurrence for op in live) == [0, 0, 0, 1, 1, 1]
    lanes = [str(op.lane) for op in live]
    assert len({lane for lane in lanes if lane.startswith("task-")}) == 3  # one per task
    assert sum(lane.startswith("thread-") for lane in lanes) == 3  # the pool's threads


def test_the_command_line_forks_with_live_model_calls_and_reports_them(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[2]

    def cli(*args: str, url: str) -> dict[str, Any]:
        environment = {k: v for k, v in os.environ.items() if "API_KEY" not in k}
        result = subprocess.run(
            [sys.executable, "-m", "toolreplay", *args, "--format", "json"],
            cwd=tmp_path,
            env={**environment, "PYTHONPATH": str(root), "LIVE_MODEL_API": url},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return json.loads(result.stdout)

    api = LocalOpenAI("approve", "hold it for review")
    lost = toolreplay.replace_output(effect="shop.status", inputs={"order_id": 8812}, value="lost")
    toolreplay.write_patches(tmp_path / "lost.json", [lost])
    with served(api) as url:
        recorded = cli("record", "-r", "tests.support.live_model_app:main", "-o", "s.trp", url=url)
        assert recorded["return_value"] == "approve"
        fork = ("fork", "s.trp", "-p", "lost.json", "--allow-unobserved")
        live = cli(*fork, "-o", "live.trp", "--live", "openai.responses.create", url=url)
        bounded = cli(
            *fork, "-o", "bounded.trp", "--live", "openai.*", "--live-limit", "0", url=url
        )
    assert live["outcome"] == "ok"
    assert live["return_value"] == "hold it for review"
    assert live["counts"]["operations_live"] == 1
    assert live["network_refused"] == []
    assert bounded["outcome"] == "replay_contract_error"
    assert bounded["error"]["type"] == "toolreplay.errors.LiveCallLimitError"
    assert "--live-limit" in bounded["error"]["message"]
    assert bounded["counts"]["operations_live"] == 0
    assert len(api.requests) == 2  # the recording's, and the live fork's: none from the bound


@pytest.mark.parametrize("bound", [-1, True, 2.5, "20", None])
def test_a_malformed_live_limit_is_refused_before_the_fork_runs(bound: Any, tmp_path: Path) -> None:
    trace = tmp_path / "none.trp"
    with toolreplay.record(trace):
        pass
    with pytest.raises(toolreplay.ForkOptionError, match="live_limit must be a whole number"):
        toolreplay.fork(trace, tmp_path / "branch.trp", live=["openai.*"], live_limit=bound)
    assert not (tmp_path / "branch.trp").exists()
