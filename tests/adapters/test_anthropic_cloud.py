"""Claude on Amazon Bedrock and Google Vertex AI: `instrument(AnthropicBedrock(...))` and
`instrument(AnthropicVertex(...))` (RFC 0006 Part IV, C.8).

Real SDK clients against local stand-ins of the platforms served on loopback
(examples/local_anthropic/cloud.py). Bedrock's client signs each request with SigV4
(boto3/botocore, with made-up credentials: the stand-in checks the signature's shape and
the session token) and streams AWS event-stream frames that botocore decodes; Vertex's
sends a google-auth credentials object's bearer token. Replay points the clients at a
server that counts connections, with the network guard open, and gives them other
credentials: a replay that matched on a signature, a date or a token would miss.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import anthropic
import pytest
from anthropic.lib.bedrock import AnthropicBedrock, AsyncAnthropicBedrock
from anthropic.lib.vertex import AnthropicVertex, AsyncAnthropicVertex
from google.oauth2.credentials import Credentials

import toolreplay
from examples.local_anthropic import DATED_MODEL
from examples.local_anthropic.cloud import (
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    AWS_SESSION_TOKEN,
    BEDROCK_MODEL,
    GOOGLE_TOKEN,
    PROJECT,
    REGION,
    VERTEX_MODEL,
    LocalBedrock,
    LocalVertex,
)
from tests.adapters.http_api import served
from tests.support.counting_server import CountingServer
from toolreplay.adapters.anthropic import edit, final_message, instrument, reply

ROOT = Path(__file__).resolve().parents[2]
ASK: Any = [{"role": "user", "content": "Refund order 8812, it was lost."}]
TOOLS: Any = [{"name": "issue_refund", "input_schema": {"type": "object"}}]
THINKING: Any = {"type": "enabled", "budget_tokens": 1024}
SECRETS = (
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    AWS_SESSION_TOKEN,
    GOOGLE_TOKEN,
    "AWS4-HMAC-SHA256",
    "Signature=",
    "x-amz-date",
    "x-amz-security-token",
    "authorization",
)
OTHER_AWS = {"aws_access_key": "AKIAOTHERKEY00000000", "aws_secret_key": "other" * 8}


def bedrock(mode: str, base_url: str, **credentials: Any) -> Any:
    """An instrumented Bedrock client of `base_url` (`served`'s URL, without `/v1`)."""
    kind = AnthropicBedrock if mode == "sync" else AsyncAnthropicBedrock
    settings = credentials or {
        "aws_access_key": AWS_ACCESS_KEY,
        "aws_secret_key": AWS_SECRET_KEY,
        "aws_session_token": AWS_SESSION_TOKEN,
    }
    return instrument(
        kind(
            aws_region="us-east-1", base_url=base_url.removesuffix("/v1"), max_retries=0, **settings
        )
    )


def vertex(mode: str, base_url: str, token: str = GOOGLE_TOKEN) -> Any:
    """An instrumented Vertex client of `base_url` (its `/v1` kept), with a google-auth
    credentials object holding `token`."""
    kind = AnthropicVertex if mode == "sync" else AsyncAnthropicVertex
    return instrument(
        kind(
            region=REGION,
            project_id=PROJECT,
            credentials=Credentials(token=token),  # pyright: ignore[reportCallIssue]  # untyped
            base_url=base_url,
            max_retries=0,
        )
    )


def sync_app(client: Any, model: str) -> dict[str, Any]:
    """Claude with a tool and thinking, the answer streamed, and a raw event stream."""
    seen: dict[str, Any] = {}
    first = client.messages.create(
        model=model, max_tokens=2048, messages=ASK, tools=TOOLS, thinking=THINKING
    )
    seen["create"] = [first.to_dict(), first._request_id]
    with client.messages.stream(model=model, max_tokens=2048, messages=ASK, tools=TOOLS) as stream:
        events = [event.type for event in stream]
        seen["stream"] = [events, stream.get_final_message().to_dict()]
    raw = client.messages.create(model=model, max_tokens=64, messages=ASK, stream=True)
    seen["raw"] = [event.to_dict() for event in raw]
    return seen


async def async_app(client: Any, model: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    first = await client.messages.create(
        model=model, max_tokens=2048, messages=ASK, tools=TOOLS, thinking=THINKING
    )
    seen["create"] = [first.to_dict(), first._request_id]
    async with client.messages.stream(
        model=model, max_tokens=2048, messages=ASK, tools=TOOLS
    ) as stream:
        events = [event.type async for event in stream]
        seen["stream"] = [events, (await stream.get_final_message()).to_dict()]
    raw = await client.messages.create(model=model, max_tokens=64, messages=ASK, stream=True)
    seen["raw"] = [event.to_dict() async for event in raw]
    return seen


def run(mode: str, client: Any, model: str) -> dict[str, Any]:
    return sync_app(client, model) if mode == "sync" else asyncio.run(async_app(client, model))


PLATFORMS: dict[str, tuple[Callable[[], Any], Callable[..., Any], str, str]] = {
    # platform: (its stand-in, its client, the model, the path a Messages call goes to)
    "bedrock": (LocalBedrock, bedrock, BEDROCK_MODEL, f"/model/{BEDROCK_MODEL}/invoke"),
    "vertex": (
        LocalVertex,
        vertex,
        VERTEX_MODEL,
        f"/projects/{PROJECT}/locations/{REGION}/publishers/anthropic/models/{VERTEX_MODEL}",
    ),
}


def replay_offline(path: Path, app: Callable[[str], Any]) -> Any:
    """`app(base_url)` under replay, pointed at a server that counts connections."""
    server = CountingServer()
    try:
        with toolreplay.replay(path, network="allow"):
            seen = app(server.url.removesuffix("/"))
    finally:
        server.close()
    assert server.accepted == 0
    return seen


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("platform", ["bedrock", "vertex"])
def test_cloud_clients_record_and_replay_with_other_credentials(
    platform: str, mode: str, tmp_path: Path
) -> None:
    stand_in, client, model, path = PLATFORMS[platform]
    api = stand_in()
    trace = tmp_path / f"{platform}.trp"
    with served(api) as url, toolreplay.record(trace):
        recorded = run(mode, client(mode, url), model)
    assert recorded["stream"][1]["content"][-1]["name"] == "issue_refund"
    assert {"text", "input_json", "message_stop"} <= set(recorded["stream"][0])
    assert [event["type"] for event in recorded["raw"]][-1] == "message_stop"

    operations = toolreplay.read_trace(trace).operations
    assert [op.effect for op in operations] == ["anthropic.messages.create"] * 3
    assert len(api.requests) == 3
    paths = [op.inputs["path"] for op in operations]
    if platform == "bedrock":
        assert paths == [path, f"{path}-with-response-stream", f"{path}-with-response-stream"]
    else:
        assert paths == [
            f"{path}:rawPredict",
            f"{path}:streamRawPredict",
            f"{path}:streamRawPredict",
        ]
    body = cast(Any, operations[0].inputs["body"])
    assert "model" not in body
    assert body["anthropic_version"]
    # No request header is an input but the API's own (none is sent to these platforms).
    assert all(op.inputs["headers"] == {} for op in operations)
    streamed = cast(Any, operations[1].outcome).value
    # A stream is kept as the Messages events, whatever its wire format.
    assert [event["event"] for event in streamed["events"]][:3] == [
        "message_start",
        "ping",
        "content_block_start",
    ]
    assert final_message(streamed) == recorded["stream"][1]
    content = trace.read_bytes()
    for secret in SECRETS:
        assert secret.encode() not in content, secret

    # Other credentials on replay: another signature, date and token; nothing matches on them.
    if platform == "bedrock":
        other = {**OTHER_AWS, "aws_session_token": None}
        replayed = replay_offline(trace, lambda url: run(mode, bedrock(mode, url, **other), model))
    else:
        replayed = replay_offline(
            trace, lambda url: run(mode, vertex(mode, url + "/v1", "ya29.other"), model)
        )
    assert replayed == recorded


def test_bedrock_errors_replay_as_the_sdks_own_exceptions(tmp_path: Path) -> None:
    api = LocalBedrock()
    api.fail = [429, 400]

    def app(base_url: str) -> list[Any]:
        raised: list[Any] = []
        client = bedrock("sync", base_url)
        for _ in range(2):
            with pytest.raises(anthropic.APIStatusError) as error:
                client.messages.create(model=BEDROCK_MODEL, max_tokens=8, messages=ASK)
            raised.append((type(error.value), error.value.status_code, error.value.body))
        return raised

    trace = tmp_path / "errors.trp"
    with served(api) as url, toolreplay.record(trace):
        recorded = app(url)
    assert [kind for kind, *_ in recorded] == [anthropic.RateLimitError, anthropic.BadRequestError]
    headers = cast(Any, toolreplay.read_trace(trace).operations[0].outcome).value["headers"]
    assert headers["x-amzn-errortype"].startswith("ThrottlingException")
    assert replay_offline(trace, app) == recorded


def _stream_text(client: Any, asked: Any) -> tuple[str, dict[str, Any]]:
    with client.messages.stream(
        model=BEDROCK_MODEL, max_tokens=2048, messages=asked, tools=TOOLS
    ) as stream:
        text = "".join(event.text for event in stream if event.type == "text")
        return text, stream.get_final_message().to_dict()


def test_a_bedrock_stream_is_edited_and_a_new_call_is_answered_as_frames(tmp_path: Path) -> None:
    trace, branch = tmp_path / "source.trp", tmp_path / "branch.trp"
    with served(LocalBedrock()) as url, toolreplay.record(trace):
        recorded = _stream_text(bedrock("sync", url), ASK)
    assert recorded[0] == "Let me check that order."
    asked = [*ASK, {"role": "assistant", "content": "?"}, {"role": "user", "content": "Again"}]
    patches = [
        toolreplay.replace_output(at=0, value=edit({"$.content[0].text": "Held for review."})),
        toolreplay.supply_output(
            effect="anthropic.messages.create",
            value=reply(text="Done.", tool_calls=[("issue_refund", {"order_id": 2})]),
        ),
    ]

    def app(base_url: str) -> Any:
        client = bedrock("sync", base_url, **OTHER_AWS)
        return _stream_text(client, ASK), _stream_text(client, asked)

    with toolreplay.fork(trace, branch, patches=patches):
        (edited, edited_final), (new, new_final) = app("http://127.0.0.1:9")
    # botocore decoded the frames the fork wrote; the SDK added them up as it does live.
    assert edited == "Held for review."
    assert edited_final["content"][0]["text"] == "Held for review."
    assert new == "Done."
    assert new_final["content"][1]["input"] == {"order_id": 2}
    assert new_final["model"] == BEDROCK_MODEL  # the model in the path, not the body's
    forked = cast(Any, toolreplay.read_trace(branch).operations[1].outcome).value
    assert forked["headers"]["content-type"] == "application/vnd.amazon.eventstream"
    assert toolreplay.diff(trace, branch).differences
    assert replay_offline(branch, app) == ((edited, edited_final), (new, new_final))
    assert recorded[1]["model"] == DATED_MODEL  # the recorded answer's own model
    for secret in SECRETS:
        assert secret.encode() not in branch.read_bytes(), secret


def test_show_reads_claude_on_bedrock_and_vertex_without_the_sdk(tmp_path: Path) -> None:
    traces: list[Path] = []
    for platform in ("bedrock", "vertex"):
        stand_in, client, model, _path = PLATFORMS[platform]
        trace = tmp_path / f"{platform}.trp"
        with served(stand_in()) as url, toolreplay.record(trace):
            sync_app(client("sync", url), model)
        traces.append(trace)
    blocked = "import sys; sys.modules['anthropic'] = None\nfrom toolreplay.cli import main\n"
    for trace in traces:
        code = blocked + f"raise SystemExit(main(['show', {str(trace)!r}]))"
        shown = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert shown.returncode == 0, shown.stderr
        rows = [row for row in shown.stdout.splitlines() if "anthropic.messages.create" in row]
        assert len(rows) == 3
        assert "user: Refund order 8812, it was lost." in rows[0]
        assert "issue_refund(" in rows[1]  # the stream, read back from its events
        for secret in SECRETS:
            assert secret not in shown.stdout + shown.stderr, secret
