"""Real Anthropic traffic: every pair of the corpus round-trips through `instrument()`.

Each pair (`corpus/anthropic/*.json`, recorded against api.anthropic.com by other
projects; the corpus README lists the sources) is served three ways through the SDK's
own resource method for its endpoint (`messages.create`, `beta.messages.create` for a
`?beta=true` request, `messages.count_tokens`, `completions.create`,
`beta.files.upload`, ...): to the plain `anthropic` SDK, to an instrumented client under
`record`, and to an instrumented client under `replay` whose transport refuses every
request. The three results (the parsed object's `model_dump`, every event of a stream,
or the error's class, status and body) must be identical, and the replay must send
nothing. The request is rebuilt from the recorded one (body fields as the method's
arguments, the `anthropic-beta` header as `betas`), so the SDK sends what the recording
application sent; an upload sends placeholder bytes for its file.

Every recorded Messages answer is also read back as the adapter reads it: its
`final_message` (what edits' paths run through) must be the message the SDK makes of
it (the body, or what `messages.stream(...).get_final_message()` adds a stream up to),
and a fork that edits its last text block with `edit(...)` must give the SDK that
message with only that text changed.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

import toolreplay
from examples.local_openai import refusing
from tests.adapters.corpus_pairs import (
    body_mode,
    failures,
    load_pairs,
    one_per_shape,
    readme_lists_every_file,
    requires_corpus,
    serving,
)
from toolreplay.adapters.anthropic import edit, final_message, instrument

pytestmark = requires_corpus("anthropic")
PAIRS = load_pairs("anthropic")
API_KEY = "sk-ant-test-corpus-0123456789"
# Not the SDK's default, so it does not refuse a large `max_tokens` without streaming
# (a check of the client's default timeout, which a recording application may have set).
TIMEOUT = 60.0

# Each endpoint of the corpus: method, path pattern (its parameters named as the SDK
# method's arguments), and the resource method that sends it, plain and beta
# (`?beta=true`).
ROUTES: tuple[tuple[str, str, Callable[[Any], Any], Callable[[Any], Any] | None], ...] = (
    ("POST", r"/v1/messages", lambda c: c.messages.create, lambda c: c.beta.messages.create),
    (
        "POST",
        r"/v1/messages/count_tokens",
        lambda c: c.messages.count_tokens,
        lambda c: c.beta.messages.count_tokens,
    ),
    ("POST", r"/v1/complete", lambda c: c.completions.create, None),
    ("POST", r"/v1/files", lambda c: c.beta.files.upload, lambda c: c.beta.files.upload),
    (
        "DELETE",
        r"/v1/files/(?P<file_id>[^/]+)",
        lambda c: c.beta.files.delete,
        lambda c: c.beta.files.delete,
    ),
)


def route_of(request: dict[str, Any]) -> tuple[Callable[[Any], Any], dict[str, str], str]:
    """The resource method of the request's endpoint, its path arguments, and the route's
    name (`POST /v1/messages`, `beta POST /v1/messages`)."""
    beta = request["query"].get("beta") == "true"
    for method, pattern, plain, beta_resource in ROUTES:
        found = re.fullmatch(pattern, request["path"])
        if method == request["method"] and found:
            resource = beta_resource if beta else plain
            if resource is None:
                break
            return resource, found.groupdict(), f"{'beta ' if beta else ''}{method} {pattern}"
    raise LookupError(f"no SDK method known for {request['method']} {request['path']}")


def method_for(client: Any, request: dict[str, Any]) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The SDK resource method of the request's endpoint, and its keyword arguments.

    Body fields the installed SDK's method does not name go through `extra_body`, as an
    application on an older SDK would send them; the `anthropic-beta` header is the beta
    method's `betas` (a plain method sends it as an extra header).
    """
    resource, path_arguments, _ = route_of(request)
    function = resource(client)
    body: dict[str, Any] = request["body"] or {}
    accepted = inspect.signature(function).parameters
    arguments = {k: v for k, v in body.items() if k in accepted}
    extra = {k: v for k, v in body.items() if k not in accepted}
    if extra:
        arguments["extra_body"] = extra
    beta = request.get("headers", {}).get("anthropic-beta")
    if beta is not None and "betas" in accepted:
        arguments["betas"] = beta.split(",")
    elif beta is not None:
        arguments["extra_headers"] = {"anthropic-beta": beta}
    # The corpus keeps an upload's file name, not its bytes: a placeholder stands in.
    uploads = {
        name: (filename, b"bytes of " + filename.encode())
        for name, filename in request.get("files", {}).items()
    }
    return function, {**arguments, **path_arguments, **uploads}


def sync_client(handler: Callable[[Any], Any]) -> anthropic.Anthropic:
    """A plain `Anthropic` client whose only transport is `handler`."""
    return anthropic.Anthropic(
        api_key=API_KEY,
        max_retries=0,
        timeout=TIMEOUT,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def async_client(handler: Callable[[Any], Any]) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key=API_KEY,
        max_retries=0,
        timeout=TIMEOUT,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )


def dump(value: Any) -> Any:
    # Bodies the SDK types narrowly still parse (its models allow extra fields); the
    # dump of such a value warns, which says nothing about the round trip.
    return value.model_dump(mode="json", warnings=False)


def observe(client: anthropic.Anthropic, request: dict[str, Any]) -> dict[str, Any]:
    """What the application sees: the parsed value, the stream's events, or the error."""
    function, arguments = method_for(client, request)
    try:
        result = function(**arguments)
        if isinstance(result, anthropic.Stream):
            return {"events": [dump(event) for event in result]}
    except anthropic.APIStatusError as error:
        return {"error": type(error).__name__, "status": error.status_code, "body": error.body}
    return {"value": dump(result)}


async def observe_async(client: anthropic.AsyncAnthropic, request: dict[str, Any]) -> Any:
    function, arguments = method_for(client, request)
    try:
        result = await function(**arguments)
        if isinstance(result, anthropic.AsyncStream):
            return {"events": [dump(event) async for event in result]}
    except anthropic.APIStatusError as error:
        return {"error": type(error).__name__, "status": error.status_code, "body": error.body}
    return {"value": dump(result)}


def round_trip(pair: dict[str, Any], trace: Path) -> None:
    """Serve the pair to the plain SDK, to an instrumented client under `record` and to
    one under `replay` that refuses every request: all three see the same."""
    request, response = pair["request"], pair["response"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # see dump()
        plain = observe(sync_client(serving(response, httpx2)), request)
        with toolreplay.record(trace):
            recorded = observe(instrument(sync_client(serving(response, httpx2))), request)
        refused: list[Any] = []
        with toolreplay.replay(trace):
            replayed = observe(instrument(sync_client(refusing(refused, http=httpx2))), request)
    assert recorded == plain
    assert replayed == plain
    assert refused == []
    (operation,) = toolreplay.read_trace(trace).operations
    assert operation.effect.startswith("anthropic.")


def round_trip_async(pair: dict[str, Any], trace: Path) -> None:
    """`round_trip` through the async client (for streams: its own stream classes)."""
    request, response = pair["request"], pair["response"]

    async def three_ways() -> tuple[Any, Any, Any, list[Any]]:
        plain = await observe_async(async_client(serving(response, httpx2)), request)
        with toolreplay.record(trace):
            recorded = await observe_async(
                instrument(async_client(serving(response, httpx2))), request
            )
        refused: list[Any] = []
        with toolreplay.replay(trace):
            replayed = await observe_async(
                instrument(async_client(refusing(refused, http=httpx2))), request
            )
        return plain, recorded, replayed, refused

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # see dump()
        plain, recorded, replayed, sent = asyncio.run(three_ways())
    assert recorded == plain
    assert replayed == plain
    assert sent == []


def shape_of(pair: dict[str, Any]) -> tuple[str, int, str]:
    """What makes two pairs exercise different code: the endpoint (its route, beta or
    not), the status class, and how the body is encoded (JSON or an event stream)."""
    request, response = pair["request"], pair["response"]
    return route_of(request)[2], response["status"] // 100, body_mode(response)


STREAMS = [param for param in PAIRS if "sse" in param.values[0]["response"]]


@pytest.mark.parametrize("pair", one_per_shape(PAIRS, shape_of))
def test_a_real_pair_of_each_shape_round_trips_identically(
    pair: dict[str, Any], tmp_path: Path
) -> None:
    round_trip(pair, tmp_path / "pair.trp")


@pytest.mark.parametrize("pair", one_per_shape(STREAMS, shape_of))
def test_a_real_stream_of_each_shape_round_trips_identically_through_the_async_client(
    pair: dict[str, Any], tmp_path: Path
) -> None:
    round_trip_async(pair, tmp_path / "pair.trp")


def test_every_real_pair_round_trips_identically(tmp_path: Path) -> None:
    # One test for all of them: the per-shape tests above say which code broke; this
    # one says every pair that breaks, without a test's set-up for each.
    assert not failures(PAIRS, round_trip, tmp_path)


def test_every_real_stream_round_trips_identically_through_the_async_client(
    tmp_path: Path,
) -> None:
    assert not failures(STREAMS, round_trip_async, tmp_path)


def test_the_corpus_is_large_and_its_readme_lists_every_file() -> None:
    assert len(PAIRS) >= 80
    assert len(STREAMS) >= 20
    assert len(one_per_shape(PAIRS, shape_of)) >= 10
    assert readme_lists_every_file("anthropic") > 0


MESSAGES = [
    param
    for param in PAIRS
    if param.values[0]["request"]["path"] == "/v1/messages"
    and param.values[0]["response"]["status"] == 200
]
EDITED_TEXT = "Edited by the corpus test."


def sdk_message(client: Any, request: dict[str, Any]) -> dict[str, Any]:
    """The message the SDK makes of the answer: the parsed body, or for a streamed
    request what `messages.stream(...)` adds the events up to."""
    function, arguments = method_for(client, request)
    if not arguments.pop("stream", False):
        return dump(function(**arguments))
    resource = client.beta.messages if request["query"].get("beta") == "true" else client.messages
    with resource.stream(**arguments) as stream:
        return dump(stream.get_final_message())


def recorded_output(pair: dict[str, Any], trace: Path) -> dict[str, Any]:
    """The output the adapter records for the pair (what the SDK made of it returned)."""
    request, response = pair["request"], pair["response"]
    with toolreplay.record(trace):
        sdk_message(instrument(sync_client(serving(response, httpx2))), request)
    (operation,) = toolreplay.read_trace(trace).operations
    return operation.outcome.value  # type: ignore[union-attr,return-value]  # recorded as returned


def adds_up_as_the_sdk_does(pair: dict[str, Any], trace: Path) -> None:
    """The adapter's `final_message` of the recorded answer, parsed by the SDK as a JSON
    answer, is the message the SDK made of the answer itself."""
    request, response = pair["request"], pair["response"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # see dump()
        final = final_message(recorded_output(pair, trace))
        assert final is not None
        as_body = {"status": 200, "content_type": "application/json", "body": final}
        unstreamed = {**request, "body": {**request["body"], "stream": False}}
        ours = sdk_message(sync_client(serving(as_body, httpx2)), unstreamed)
        assert ours == sdk_message(sync_client(serving(response, httpx2)), request)


def edits_as_the_sdk_reads_them(pair: dict[str, Any], trace: Path) -> None:
    """A fork editing the answer's last text block gives the SDK the recorded message
    with that text changed and nothing else."""
    request, response = pair["request"], pair["response"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # see dump()
        with toolreplay.record(trace):
            original = sdk_message(instrument(sync_client(serving(response, httpx2))), request)
        texts = [i for i, block in enumerate(original["content"]) if block["type"] == "text"]
        if not texts:
            return  # tool uses only: no text to edit
        expected = copy.deepcopy(original)
        expected["content"][texts[-1]]["text"] = EDITED_TEXT
        patch = toolreplay.replace_output(
            at=0, value=edit({f"$.content[{texts[-1]}].text": EDITED_TEXT})
        )
        with toolreplay.fork(trace, trace.with_suffix(".fork.trp"), patches=[patch]):
            edited = sdk_message(instrument(sync_client(refusing(http=httpx2))), request)
    assert edited == expected


@pytest.mark.parametrize("pair", one_per_shape(MESSAGES, shape_of))
def test_a_real_answer_of_each_shape_adds_up_as_the_sdk_adds_it(
    pair: dict[str, Any], tmp_path: Path
) -> None:
    adds_up_as_the_sdk_does(pair, tmp_path / "pair.trp")


@pytest.mark.parametrize("pair", one_per_shape(MESSAGES, shape_of))
def test_an_edit_of_a_real_answer_of_each_shape_is_what_the_sdk_reads(
    pair: dict[str, Any], tmp_path: Path
) -> None:
    edits_as_the_sdk_reads_them(pair, tmp_path / "pair.trp")


def test_every_real_answer_adds_up_as_the_sdk_adds_it(tmp_path: Path) -> None:
    assert not failures(MESSAGES, adds_up_as_the_sdk_does, tmp_path)


def test_an_edit_of_every_real_answer_is_what_the_sdk_reads(tmp_path: Path) -> None:
    assert not failures(MESSAGES, edits_as_the_sdk_reads_them, tmp_path)
