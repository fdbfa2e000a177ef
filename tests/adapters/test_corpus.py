"""Real traffic: every pair of the corpus round-trips through `instrument()` identically.

Each pair (`corpus/openai/*.json`, recorded against the real API by other projects; the
README lists the sources) is served three ways through the SDK's own resource method
for its endpoint: to the plain SDK, to an instrumented client under `record`, and to
an instrumented client under `replay` whose transport refuses every request. The
three results (the parsed object's `model_dump`, every event of a stream, the text or
bytes of any other body, or the error's class, status and body) must be identical, and
the replay must send nothing. A multipart upload sends placeholder bytes for its files
(the corpus keeps their names only), the same in all three.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

import toolreplay
from examples.local_openai import HTTP, refusing
from tests.adapters.corpus_pairs import (
    body_mode,
    failures,
    load_pairs,
    one_per_shape,
    readme_lists_every_file,
)
from tests.adapters.corpus_pairs import serving as serving_with
from tests.adapters.support import async_client, sync_client
from toolreplay.adapters.openai import instrument

BASE_URL = "https://api.openai.com/v1"
PAIRS = load_pairs("openai")


def serving(response: dict[str, Any]) -> Callable[[Any], Any]:
    """A handler answering every request with the recorded response."""
    return serving_with(response, HTTP)


# Each endpoint of the corpus: method, path pattern (its parameters named as the SDK
# method's arguments) and the SDK resource method that sends it.
ROUTES: tuple[tuple[str, str, Callable[[Any], Callable[..., Any]]], ...] = (
    ("POST", r"/v1/responses", lambda c: c.responses.create),
    ("POST", r"/v1/responses/compact", lambda c: c.responses.compact),
    ("POST", r"/v1/responses/input_tokens", lambda c: c.responses.input_tokens.count),
    ("GET", r"/v1/responses/(?P<response_id>[^/]+)", lambda c: c.responses.retrieve),
    ("POST", r"/v1/chat/completions", lambda c: c.chat.completions.create),
    ("POST", r"/v1/completions", lambda c: c.completions.create),
    ("POST", r"/v1/embeddings", lambda c: c.embeddings.create),
    ("POST", r"/v1/audio/speech", lambda c: c.audio.speech.create),
    ("POST", r"/v1/audio/transcriptions", lambda c: c.audio.transcriptions.create),
    ("POST", r"/v1/files", lambda c: c.files.create),
    ("GET", r"/v1/files/(?P<file_id>[^/]+)/content", lambda c: c.files.content),
    ("POST", r"/v1/realtime/calls", lambda c: c.realtime.calls.create),
    ("POST", r"/v1/images/generations", lambda c: c.images.generate),
    ("POST", r"/v1/moderations", lambda c: c.moderations.create),
    ("POST", r"/v1/conversations", lambda c: c.conversations.create),
    ("DELETE", r"/v1/conversations/(?P<conversation_id>[^/]+)", lambda c: c.conversations.delete),
    ("GET", r"/v1/files", lambda c: c.files.list),
    ("GET", r"/v1/files/(?P<file_id>[^/]+)", lambda c: c.files.retrieve),
    ("DELETE", r"/v1/files/(?P<file_id>[^/]+)", lambda c: c.files.delete),
    ("GET", r"/v1/models", lambda c: c.models.list),
    ("GET", r"/v1/models/(?P<model>[^/]+)", lambda c: c.models.retrieve),
    ("DELETE", r"/v1/models/(?P<model>[^/]+)", lambda c: c.models.delete),
    ("POST", r"/v1/vector_stores", lambda c: c.vector_stores.create),
    ("DELETE", r"/v1/vector_stores/(?P<vector_store_id>[^/]+)", lambda c: c.vector_stores.delete),
    (
        "POST",
        r"/v1/vector_stores/(?P<vector_store_id>[^/]+)/files",
        lambda c: c.vector_stores.files.create,
    ),
    ("POST", r"/v1/realtime/client_secrets", lambda c: c.realtime.client_secrets.create),
    ("POST", r"/v1/assistants", lambda c: c.beta.assistants.create),
    ("GET", r"/v1/assistants/(?P<assistant_id>[^/]+)", lambda c: c.beta.assistants.retrieve),
    ("POST", r"/v1/threads", lambda c: c.beta.threads.create),
    (
        "POST",
        r"/v1/threads/(?P<thread_id>[^/]+)/messages",
        lambda c: c.beta.threads.messages.create,
    ),
    ("GET", r"/v1/threads/(?P<thread_id>[^/]+)/messages", lambda c: c.beta.threads.messages.list),
    ("POST", r"/v1/threads/(?P<thread_id>[^/]+)/runs", lambda c: c.beta.threads.runs.create),
    (
        "GET",
        r"/v1/threads/(?P<thread_id>[^/]+)/runs/(?P<run_id>[^/]+)",
        lambda c: c.beta.threads.runs.retrieve,
    ),
    (
        "POST",
        r"/v1/threads/(?P<thread_id>[^/]+)/runs/(?P<run_id>[^/]+)/submit_tool_outputs",
        lambda c: c.beta.threads.runs.submit_tool_outputs,
    ),
)


def method_for(client: Any, request: dict[str, Any]) -> tuple[Callable[..., Any], dict[str, Any]]:
    """The SDK resource method of the request's endpoint, and its keyword arguments.

    Body fields the installed SDK's method does not name go through `extra_body`, and
    query parameters it does not name through `extra_query`, as an application on an
    older SDK would send them.
    """
    matches = [
        (resource, found.groupdict())
        for method, pattern, resource in ROUTES
        if method == request["method"] and (found := re.fullmatch(pattern, request["path"]))
    ]
    if not matches:
        raise LookupError(f"no SDK method known for {request['method']} {request['path']}")
    (resource, path_arguments), *_ = matches
    function = resource(client)
    query = {k: {"true": True, "false": False}.get(v, v) for k, v in request["query"].items()}
    fields: dict[str, Any] = {**(request["body"] or {}), **query}
    accepted = inspect.signature(function).parameters
    arguments = {k: v for k, v in fields.items() if k in accepted}
    extra = {k: v for k, v in fields.items() if k not in accepted}
    if extra:
        arguments["extra_query" if request["body"] is None else "extra_body"] = extra
    # The corpus keeps an upload's file names, not its bytes: a placeholder stands in.
    uploads = {
        name: (filename, b"bytes of " + filename.encode())
        for name, filename in request.get("files", {}).items()
    }
    return function, {**arguments, **path_arguments, **uploads}


def dump(value: Any) -> Any:
    # Bodies the SDK types narrowly still parse (its models allow extra fields); the
    # dump of such a value warns, which says nothing about the round trip.
    # A body the SDK does not parse into a model (an event stream answering a request
    # that did not ask for one) comes back as the text it is.
    # A binary answer (audio, a file's content) comes back as its bytes.
    if isinstance(value, str):
        return value
    content = getattr(value, "content", None)
    if isinstance(content, bytes):
        return content
    return value.model_dump(mode="json", warnings=False)


def observe(client: openai.OpenAI, request: dict[str, Any]) -> dict[str, Any]:
    """What the application sees: the parsed value, the stream's events, or the error."""
    function, arguments = method_for(client, request)
    try:
        result = function(**arguments)
    except openai.APIStatusError as error:
        return {"error": type(error).__name__, "status": error.status_code, "body": error.body}
    if isinstance(result, openai.Stream):
        return {"events": [dump(event) for event in result]}
    return {"value": dump(result)}


async def observe_async(client: openai.AsyncOpenAI, request: dict[str, Any]) -> dict[str, Any]:
    function, arguments = method_for(client, request)
    try:
        result = await function(**arguments)
    except openai.APIStatusError as error:
        return {"error": type(error).__name__, "status": error.status_code, "body": error.body}
    if isinstance(result, openai.AsyncStream):
        return {"events": [dump(event) async for event in result]}
    return {"value": dump(result)}


def round_trip(pair: dict[str, Any], trace: Path) -> None:
    """Serve the pair to the plain SDK, to an instrumented client under `record` and to
    one under `replay` that refuses every request: all three see the same."""
    request, response = pair["request"], pair["response"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # see dump()
        plain = observe(sync_client(serving(response), base_url=BASE_URL), request)
        with toolreplay.record(trace):
            recorded = observe(
                instrument(sync_client(serving(response), base_url=BASE_URL)), request
            )
        refused: list[Any] = []
        with toolreplay.replay(trace):
            replayed = observe(
                instrument(sync_client(refusing(refused), base_url=BASE_URL)), request
            )
    assert recorded == plain
    assert replayed == plain
    assert refused == []
    (operation,) = toolreplay.read_trace(trace).operations
    assert operation.effect.startswith("openai.")


def round_trip_async(pair: dict[str, Any], trace: Path) -> None:
    """`round_trip` through the async client (for streams: its own stream classes)."""
    request, response = pair["request"], pair["response"]

    async def three_ways() -> tuple[Any, Any, Any, list[Any]]:
        plain = await observe_async(async_client(serving(response), base_url=BASE_URL), request)
        with toolreplay.record(trace):
            recorded = await observe_async(
                instrument(async_client(serving(response), base_url=BASE_URL)), request
            )
        refused: list[Any] = []
        with toolreplay.replay(trace):
            replayed = await observe_async(
                instrument(async_client(refusing(refused), base_url=BASE_URL)), request
            )
        return plain, recorded, replayed, refused

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # see dump()
        plain, recorded, replayed, sent = asyncio.run(three_ways())
    assert recorded == plain
    assert replayed == plain
    assert sent == []


def shape_of(pair: dict[str, Any]) -> tuple[str, str, int, str]:
    """What makes two pairs exercise different code: the endpoint (its route), the
    status class, and how the body is encoded (JSON, an event stream, text, bytes)."""
    request, response = pair["request"], pair["response"]
    route = next(
        pattern
        for method, pattern, _ in ROUTES
        if method == request["method"] and re.fullmatch(pattern, request["path"])
    )
    return request["method"], route, response["status"] // 100, body_mode(response)


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
    assert len(PAIRS) >= 150
    assert readme_lists_every_file("openai") > 0


MODEL_CALLS = [
    param
    for param in PAIRS
    if param.values[0]["request"]["path"] in ("/v1/responses", "/v1/chat/completions")
]


def test_every_recorded_model_call_reads_as_a_transcript(tmp_path: Path) -> None:
    """The debugger's transcript of real calls: every received value it shows is where
    its path says, in the output as recorded."""
    from toolreplay_tui.model.jsonpaths import get_at
    from toolreplay_tui.model.transcript import transcript_of

    shown = 0
    for number, param in enumerate(MODEL_CALLS):
        request, response = param.values[0]["request"], param.values[0]["response"]
        trace = tmp_path / f"{number}.trp"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # see dump()
            with toolreplay.record(trace):
                observe(instrument(sync_client(serving(response), base_url=BASE_URL)), request)
        (operation,) = toolreplay.read_trace(trace).operations
        output = operation.outcome.value  # type: ignore[union-attr]  # recorded as returned
        transcript = transcript_of(operation.effect, operation.inputs, output)
        assert transcript is not None, param.id
        assert transcript.status == response["status"], param.id
        shown_here = 0
        for entry in transcript.response:
            if entry.path is not None and entry.kind in ("text", "refusal", "reasoning"):
                assert get_at(output, entry.path) == entry.text, (param.id, entry)
                shown_here += 1
        assert shown_here or not answers_with_text(response), param.id
        shown += shown_here
    assert shown > 0


def answers_with_text(response: dict[str, Any]) -> bool:
    """Whether a JSON answer holds assistant text (a message's content or output text)."""
    body = response.get("body")
    if not isinstance(body, dict):
        return False
    texts = [
        (choice.get("message") or {}).get("content") for choice in body.get("choices") or []
    ] + [
        part.get("text")
        for item in body.get("output") or []
        if item.get("type") == "message"
        for part in item.get("content") or []
        if part.get("type") == "output_text"
    ]
    return any(isinstance(text, str) and text for text in texts)
