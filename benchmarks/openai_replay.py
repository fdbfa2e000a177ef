"""OpenAI adapter benchmark: record and replay against the bare SDK, and against vcrpy.

Run with `uv run python -m benchmarks.openai_replay` (see benchmarks/README.md).
Three workloads, each N distinct calls:

- `responses+tools`: `responses.create` with a function tool, answered by a
  function call;
- `chat`: `chat.completions.create`;
- `stream50`: `responses.create(stream=True)` read to its end, 50 events.

For each workload and N, side by side in one run:

- the floor: the bare SDK client over an in-memory transport serving
  pre-serialised bodies (the same SDK parsing the same bodies);
- record: `instrument(that client)` under `toolreplay.record()`;
- replay: `instrument(a client whose transport refuses every request)` under
  `toolreplay.replay()` of the trace just recorded.

And for `--vcr-sizes` (the `responses+tools` workload only): vcrpy replaying a
cassette recorded off a real local HTTP server serving the same bodies.

The machine is assumed noisy, so the targets are ratios of figures measured in
the same run, and they are informational: the process exits 0 whether they are
met or not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import version as distribution_version
from pathlib import Path
from typing import Any, cast
from unittest.mock import patch

import openai
import vcr
from vcr.record_mode import RecordMode

import toolreplay
from benchmarks import measure
from examples.local_openai import (
    HTTP,
    chat_completion_body,
    event_stream,
    function_call_item,
    response_body,
    response_events,
)
from toolreplay.adapters.capture.transport import _Capture  # pyright: ignore[reportPrivateUsage]
from toolreplay.adapters.openai import instrument
from toolreplay.runtime.recording import RecordSession

__all__ = ["main"]

SIZES = (100, 1_000, 10_000)
VCR_SIZES = (100, 1_000)
DEFAULT_REPEATS = 3
SMALL_SIZE = 1_000
"""Sizes below this get more repeats (see `benchmarks.measure.repeats_for`)."""

FLATNESS_TARGET = 1.2
"""Replay per call at the largest N over the smallest: at most this (ideal 1.0)."""
FLOOR_RATIO_TARGET = 1.2
"""Replay per call over the floor (the bare SDK over an in-memory transport): at most this."""
VCR_SPEEDUP_TARGET = 1_000.0
"""vcrpy replay per call over adapter replay per call, at `VCR_TARGET_N`: at least this."""
VCR_TARGET_N = 1_000
BREAKDOWN_N = 200
"""Calls per workload when splitting the floor into its parts."""
RECORD_OVERHEAD_TARGET = 0.05
"""Record per call over the floor, minus 1: at most this."""

API_KEY = "sk-bench"
TOOLS: list[Any] = [
    {
        "type": "function",
        "name": "issue_refund",
        "description": "Issue a refund for an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
            "required": ["order_id", "amount"],
            "additionalProperties": False,
        },
        "strict": True,
    }
]


# --- workloads ------------------------------------------------------------------------


def _index(request_body: bytes) -> int:
    """Which call a request is: every input ends with `#<i>`."""
    payload = json.loads(request_body)
    text = payload["input"] if "input" in payload else payload["messages"][0]["content"]
    return int(text.rsplit("#", 1)[1])


@dataclass(frozen=True, slots=True)
class Workload:
    """N calls of one kind: how to make call i, and the body the API answers it with."""

    name: str
    call: Callable[[Any, int], object]
    body: Callable[[int], bytes]
    content_type: str
    path: str


def _responses_body(i: int) -> bytes:
    item = function_call_item(
        "issue_refund", {"order_id": f"ord_{i}", "amount": 12.5 + i % 400}, call_id=f"call_{i}"
    )
    return json.dumps(response_body(output=[item], id=f"resp_{i:040x}", tools=TOOLS)).encode()


def _chat_body(i: int) -> bytes:
    return json.dumps(chat_completion_body(f"Refund #{i} approved.", id=f"chatcmpl-{i}")).encode()


def _stream_body(i: int) -> bytes:
    return event_stream(list(response_events(f"Refund #{i} needs manual review.", deltas=42)))


WORKLOADS = (
    Workload(
        "responses+tools",
        lambda client, i: client.responses.create(
            model="gpt-5-mini", input=f"refund #{i}", tools=TOOLS
        ),
        _responses_body,
        "application/json",
        "/v1/responses",
    ),
    Workload(
        "chat",
        lambda client, i: client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": f"refund #{i}"}]
        ),
        _chat_body,
        "application/json",
        "/v1/chat/completions",
    ),
    Workload(
        "stream50",
        lambda client, i: list(
            client.responses.create(model="gpt-5-mini", input=f"refund #{i}", stream=True)
        ),
        _stream_body,
        "text/event-stream",
        "/v1/responses",
    ),
)


def _request_id(i: int) -> str:
    return f"req_{i:032x}"


def mock_client(bodies: list[bytes], workload: Workload, requests: list[Any]) -> openai.OpenAI:
    """A bare `OpenAI` client whose transport serves `bodies` from memory, in order.

    The k-th request (counted in `requests`, which the caller clears between runs)
    gets `bodies[k % N]`: the transport does no more than hand over bytes it holds,
    so the floor is the SDK's own cost. Results are compared with the floor's, so a
    request answered out of turn would show.
    """
    count = len(bodies)

    def handle(request: Any) -> Any:
        i = len(requests) % count
        requests.append(request)
        headers = {"content-type": workload.content_type, "x-request-id": _request_id(i)}
        return HTTP.Response(200, content=bodies[i], headers=headers)

    return openai.OpenAI(
        api_key=API_KEY,
        http_client=HTTP.Client(transport=HTTP.MockTransport(handle)),
        max_retries=0,
    )


def refusing_client(requests: list[Any]) -> openai.OpenAI:
    def refuse(request: Any) -> Any:
        requests.append(request)
        raise RuntimeError(f"replay sent a request: {request.method} {request.url}")

    return openai.OpenAI(
        api_key=API_KEY,
        http_client=HTTP.Client(transport=HTTP.MockTransport(refuse)),
        max_retries=0,
    )


def _time_calls(function: Callable[[int], object], n: int) -> tuple[float, list[object]]:
    """Seconds to call `function(i)` for i in range(n), gc paused; results kept past the clock."""
    results: list[object] = []
    append = results.append
    with measure.gc_paused():
        start = time.perf_counter()
        for i in range(n):
            append(function(i))
        elapsed = time.perf_counter() - start
    return elapsed, results


# --- measurements ---------------------------------------------------------------------


@dataclass(slots=True)
class SizeResult:
    """Best-of-repeats timings (seconds) for one workload and N, and one call's CPU time
    (seconds) for the floor and replay alternating call by call (medians)."""

    workload: str
    n: int
    repeats: int
    floor: float
    record: float
    replay: float
    trace_bytes: int
    floor_cpu: float
    replay_cpu: float

    def us(self, seconds: float) -> float:
        return seconds / self.n * 1e6

    @property
    def replay_ratio_cpu(self) -> float:
        return self.replay_cpu / self.floor_cpu


def measure_size(workload: Workload, n: int, repeats: int, directory: Path) -> SizeResult:
    bodies = [workload.body(i) for i in range(n)]
    live: list[Any] = []
    bare = mock_client(bodies, workload, live)
    recording = instrument(bare)
    refused: list[Any] = []
    replaying = instrument(refusing_client(refused))
    floors: list[float] = []
    records: list[float] = []
    replays: list[float] = []
    kept = directory / f"{workload.name}-{n}.trp"
    for repeat in range(repeats):
        live.clear()
        elapsed, expected = _time_calls(lambda i: workload.call(bare, i), n)
        floors.append(elapsed)
        path = kept if repeat == 0 else directory / f"{workload.name}-{n}-{repeat}.trp"
        with toolreplay.record(path):
            elapsed, recorded = _time_calls(lambda i: workload.call(recording, i), n)
        records.append(elapsed)
        if len(live) != 2 * n or recorded != expected:
            raise RuntimeError(f"{workload.name}: record differs from the bare SDK")
        with toolreplay.replay(path):  # checks on exit that every operation was replayed
            elapsed, replayed = _time_calls(lambda i: workload.call(replaying, i), n)
        replays.append(elapsed)
        if refused or replayed != expected:
            raise RuntimeError(f"{workload.name}: replay differs, or sent {len(refused)} requests")
        if path != kept:
            path.unlink()
        del expected, recorded, replayed
    return SizeResult(
        workload.name,
        n,
        repeats,
        min(floors),
        min(records),
        min(replays),
        kept.stat().st_size,
        *replay_against_floor(workload, bare, replaying, kept, n),
    )


def replay_against_floor(
    workload: Workload, bare: Any, replaying: Any, trace: Path, n: int
) -> tuple[float, float]:
    """One bare and one replayed call alternating, each timed alone in CPU time
    (`time.process_time_ns`), for all N calls of `trace`: the medians (seconds).

    Load from other processes, which moves wall-clock figures by tens of percent on a
    shared machine, moves both alike, so their ratio holds where the best-of-repeats
    wall-clock ratio does not.
    """
    clock = time.process_time_ns
    floors: list[int] = []
    replays: list[int] = []
    with toolreplay.replay(trace), measure.gc_paused():
        for i in range(n):
            started = clock()
            workload.call(bare, i)
            floors.append(clock() - started)
            started = clock()
            workload.call(replaying, i)
            replays.append(clock() - started)
    return _median(floors), _median(replays)


@dataclass(slots=True)
class VcrResult:
    """vcrpy replaying one cassette of N interactions, with either set of matchers (seconds)."""

    n: int
    default_matchers: float
    body_matchers: float


class _BodyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, bodies: list[bytes]) -> None:
        super().__init__(("127.0.0.1", 0), _BodyHandler)
        self.bodies = bodies

    @property
    def port(self) -> int:
        return cast(int, self.server_address[1])


class _BodyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        server = cast(_BodyServer, self.server)
        request_body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        i = _index(request_body)
        body, request_id = server.bodies[i], _request_id(i)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", request_id)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the base signature
        pass


@contextmanager
def serving(bodies: list[bytes]) -> Iterator[_BodyServer]:
    server = _BodyServer(bodies)
    thread = threading.Thread(target=server.serve_forever, name="bench-http", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


VCR_DEFAULT_MATCHERS = ["method", "scheme", "host", "port", "path", "query"]
"""vcrpy's default `match_on`: every request of a workload matches every interaction,
so interactions are played in the order they were recorded."""
VCR_BODY_MATCHERS = [*VCR_DEFAULT_MATCHERS, "body"]
"""The defaults plus the body: requests matched on what they say, as the adapter does."""


def _vcr_replay(cassette: Path, base_url: str, matchers: list[str], n: int) -> tuple[float, Any]:
    client = openai.OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
    player = vcr.VCR(record_mode=RecordMode.NONE, match_on=matchers)
    try:
        with player.use_cassette(str(cassette)) as played:  # loading it is not timed
            elapsed, responses = _time_calls(lambda i: WORKLOADS[0].call(client, i), n)
            if not played.all_played:
                raise RuntimeError(f"vcrpy ({matchers}) left interactions unplayed")
    finally:
        client.close()
    return elapsed, responses


def measure_vcr(n: int, directory: Path) -> VcrResult:
    """Record one cassette of N calls off a local HTTP server, stop the server, and replay
    it as a test would: once with vcrpy's default matchers, once matching bodies too."""
    workload = WORKLOADS[0]
    bodies = [workload.body(i) for i in range(n)]
    cassette = directory / f"vcr-{n}.yaml"
    with serving(bodies) as server:
        base_url = f"http://127.0.0.1:{server.port}/v1"
        client = openai.OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
        recorder = vcr.VCR(record_mode=RecordMode.ONCE, match_on=VCR_BODY_MATCHERS)
        with recorder.use_cassette(str(cassette)):
            _, expected = _time_calls(lambda i: workload.call(client, i), n)
        client.close()
    timings: list[float] = []
    for matchers in (VCR_DEFAULT_MATCHERS, VCR_BODY_MATCHERS):
        elapsed, responses = _vcr_replay(cassette, base_url, matchers, n)
        if responses != expected:
            raise RuntimeError(f"vcrpy ({matchers}) replay differs from its recording")
        timings.append(elapsed)
    return VcrResult(n, timings[0], timings[1])


@dataclass(slots=True)
class FloorBreakdown:
    """Where one bare SDK call's time goes (seconds per call, best of the repeats)."""

    workload: str
    total: float
    transport: float
    parse: float

    @property
    def build_and_send(self) -> float:
        """The SDK building the request and the HTTP client sending it, around the transport."""
        return self.total - self.transport - self.parse


def floor_breakdown(workload: Workload, n: int, repeats: int) -> FloorBreakdown:
    """Split the floor: the transport's own time, the SDK's response parsing, the rest.

    The transport is timed inside its handler; parsing is `_process_response`, the
    SDK method that turns the HTTP response into the returned object (for a stream:
    the Stream object, whose events are parsed while the caller iterates, so that
    part lands in the rest).
    """
    bodies = [workload.body(i) for i in range(n)]
    requests: list[Any] = []
    count = len(bodies)
    transport_seconds = 0.0

    def handle(request: Any) -> Any:
        nonlocal transport_seconds
        started = time.perf_counter()
        i = len(requests) % count
        requests.append(request)
        headers = {"content-type": workload.content_type, "x-request-id": _request_id(i)}
        response = HTTP.Response(200, content=bodies[i], headers=headers)
        transport_seconds += time.perf_counter() - started
        return response

    client = openai.OpenAI(
        api_key=API_KEY,
        http_client=HTTP.Client(transport=HTTP.MockTransport(handle)),
        max_retries=0,
    )
    parse_seconds = 0.0
    process_response = openai.OpenAI._process_response  # pyright: ignore[reportPrivateUsage]

    def timed_process_response(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal parse_seconds
        started = time.perf_counter()
        try:
            return process_response(self, *args, **kwargs)
        finally:
            parse_seconds += time.perf_counter() - started

    best: FloorBreakdown | None = None
    with patch.object(openai.OpenAI, "_process_response", timed_process_response):
        for _ in range(repeats):
            transport_seconds = parse_seconds = 0.0
            requests.clear()
            elapsed, _ = _time_calls(lambda i: workload.call(client, i), n)
            split = FloorBreakdown(
                workload.name, elapsed / n, transport_seconds / n, parse_seconds / n
            )
            if best is None or split.total < best.total:
                best = split
    assert best is not None
    return best


RECORD_PHASES = (
    ("request->inputs", _Capture, "exchange"),
    ("body->output", _Capture, "recorded_output"),
    ("begin", RecordSession, "begin"),
    ("scan output", RecordSession, "_check_secrets"),
    ("write", RecordSession, "_append"),
)
"""What `call_costs` times inside a recorded call: the capturing transport turning the
request into inputs and the received body into the output; the session giving the call
its identity (redacting, fingerprinting and scanning the inputs); scanning the output
for secrets; encoding, hashing and writing the trace line."""

_CANONICAL = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False
)
_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def least_recording_client(
    bodies: list[bytes], workload: Workload, requests: list[Any], sink: int
) -> openai.OpenAI:
    """`mock_client` plus the least any recording that keeps this issue's contract does
    per call, written inline with the standard library and none of Tool Replay.

    The inputs are the request's JSON body as JSON (so that a recorded call can be
    matched, diffed and patched by what it says), fingerprinted by a SHA-256 of their
    canonical encoding, and each call is one trace line written to the operating system
    when it completes. Everything else a recording does is left out, so this errs low:
    no redaction, no secret scan, no second response object, and the body is kept as
    the text received instead of parsed.
    """
    count = len(bodies)

    def handle(request: Any) -> Any:
        i = len(requests) % count
        requests.append(request)
        headers = {"content-type": workload.content_type, "x-request-id": _request_id(i)}
        inputs = {
            "method": request.method,
            "path": request.url.path,
            "body": json.loads(request.content),
        }
        fingerprint = hashlib.sha256(_CANONICAL.encode(inputs).encode()).hexdigest()
        output = {"status": 200, "headers": headers, "text": bodies[i].decode()}
        line = {"fingerprint": fingerprint, "inputs": inputs, "output": output}
        os.write(sink, (_LINE.encode(line) + "\n").encode())
        return HTTP.Response(200, content=bodies[i], headers=headers)

    return openai.OpenAI(
        api_key=API_KEY,
        http_client=HTTP.Client(transport=HTTP.MockTransport(handle)),
        max_retries=0,
    )


@dataclass(slots=True)
class CallCosts:
    """One call's cost three ways, in CPU seconds per call (medians of the three kinds of
    call rotating call by call), and the means of the recorded call's phases."""

    workload: str
    floor: float
    least: float
    record: float
    phases: dict[str, float]

    @property
    def rest(self) -> float:
        """The gap the phases leave: the extra HTTP response layer, the session lookups."""
        return self.record - self.floor - sum(self.phases.values())


def _median(values: list[int]) -> float:
    """The median of nanosecond timings, in seconds."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2] / 1e9


def call_costs(workload: Workload, n: int, directory: Path) -> CallCosts:
    """The recorded call and the least recording, side by side with the bare call.

    The three rotate call by call under one record session, each timed alone in CPU
    time (`time.process_time_ns`; see `replay_against_floor`); medians are reported.
    Inside the recorded calls each phase of `RECORD_PHASES` is timed by wrapping the
    method that does it (the output's scan only: the inputs' is in `begin`).
    """
    bodies = [workload.body(i) for i in range(n)]
    bare = mock_client(bodies, workload, [])
    recording = instrument(bare)
    sink = os.open(directory / f"least-{workload.name}.lines", os.O_WRONLY | os.O_CREAT, 0o600)
    least = least_recording_client(bodies, workload, [], sink)
    spent = dict.fromkeys((name for name, _, _ in RECORD_PHASES), 0.0)
    clock = time.process_time_ns

    def timed(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            if name == "scan output" and kwargs.get("part") != "output":
                return method(*args, **kwargs)
            started = clock()
            try:
                return method(*args, **kwargs)
            finally:
                spent[name] += (clock() - started) / 1e9

        return run

    timings: dict[str, list[int]] = {"floor": [], "least": [], "record": []}
    rotation = (("floor", bare), ("least", least), ("record", recording))
    patches = [
        patch.object(owner, attribute, timed(name, getattr(owner, attribute)))
        for name, owner, attribute in RECORD_PHASES
    ]
    trace = directory / f"costs-{workload.name}.trp"
    for active in patches:
        active.start()
    try:
        with toolreplay.record(trace), measure.gc_paused():
            for i in range(n):
                for kind, client in rotation:
                    started = clock()
                    workload.call(client, i)
                    timings[kind].append(clock() - started)
    finally:
        for active in reversed(patches):
            active.stop()
        os.close(sink)
    return CallCosts(
        workload.name,
        _median(timings["floor"]),
        _median(timings["least"]),
        _median(timings["record"]),
        {name: seconds / n for name, seconds in spent.items()},
    )


# --- report ---------------------------------------------------------------------------


def report(
    results: Sequence[SizeResult],
    vcr_results: Sequence[VcrResult],
    breakdowns: Sequence[FloorBreakdown],
    costs: Sequence[CallCosts],
    elapsed: float,
    breakdown_n: int,
) -> str:
    us = measure.us_unit()
    out = [
        measure.environment(
            f"openai {openai.__version__}",
            f"{HTTP.__name__} {HTTP.__version__}",
            f"vcrpy {distribution_version('vcrpy')}",
        ),
        measure.repeats_line(
            sorted({(r.n, r.repeats) for r in results}), "figure, 1 run per vcrpy figure"
        ),
        "gc paused during every timed section; traces written to a temporary directory; "
        "opening and closing sessions are not timed",
        "floor: the bare SDK client over an in-memory MockTransport serving pre-serialised "
        "bodies; record: instrument(that client) under record(); replay: instrument(a client "
        "whose transport refuses every request) under replay()",
        "",
    ]
    headers = [
        "workload",
        "N",
        f"floor {us}",
        f"replay {us}",
        "replay/floor",
        f"record {us}",
        "record/floor",
        f"floor cpu {us}",
        f"replay cpu {us}",
        "replay/floor cpu",
        "trace MB",
    ]
    rows = [
        [
            r.workload,
            f"{r.n:,}",
            f"{r.us(r.floor):.1f}",
            f"{r.us(r.replay):.1f}",
            f"{r.replay / r.floor:.2f}x",
            f"{r.us(r.record):.1f}",
            f"{r.record / r.floor:.3f}x",
            f"{r.floor_cpu * 1e6:.1f}",
            f"{r.replay_cpu * 1e6:.1f}",
            f"{r.replay_ratio_cpu:.3f}x",
            f"{r.trace_bytes / 1e6:.2f}",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))
    if breakdowns:
        out += [
            "",
            "where a floor call's time goes (per call; transport: inside the MockTransport "
            "handler; parse: the SDK's _process_response; the rest: the SDK building the "
            "request and the HTTP client sending it, and for a stream the events parsed "
            "while iterating)",
            "",
        ]
        out.extend(
            measure.table(
                ["workload", f"floor {us}", f"build+send {us}", f"transport {us}", f"parse {us}"],
                [
                    [
                        b.workload,
                        f"{b.total * 1e6:.1f}",
                        f"{b.build_and_send * 1e6:.1f}",
                        f"{b.transport * 1e6:.1f}",
                        f"{b.parse * 1e6:.1f}",
                    ]
                    for b in breakdowns
                ],
            )
        )
    if costs:
        out += [
            "",
            f"one call in CPU time (N={breakdown_n} per workload; the bare, least and recorded "
            "call rotating call by call: medians). least: the bare call plus the least any "
            "recording that keeps the contract does (the request body parsed, canonically "
            "encoded and hashed, one trace line with the body as text written per call; no "
            "redaction, no scan), a lower bound on record/floor for any implementation of the "
            "contract. Phases: means inside the recorded calls; rest: the gap they leave",
            "",
        ]
        phase_names = [name for name, _, _ in RECORD_PHASES]
        out.extend(
            measure.table(
                [
                    "workload",
                    f"floor cpu {us}",
                    f"least cpu {us}",
                    "least/floor",
                    f"record cpu {us}",
                    "record/floor",
                    *(f"{name} {us}" for name in phase_names),
                    f"rest {us}",
                ],
                [
                    [
                        cost.workload,
                        f"{cost.floor * 1e6:.1f}",
                        f"{cost.least * 1e6:.1f}",
                        f"{cost.least / cost.floor:.3f}x",
                        f"{cost.record * 1e6:.1f}",
                        f"{cost.record / cost.floor:.3f}x",
                        *(f"{cost.phases[name] * 1e6:.1f}" for name in phase_names),
                        f"{cost.rest * 1e6:.1f}",
                    ]
                    for cost in costs
                ],
            )
        )
    tools = {r.n: r for r in results if r.workload == WORKLOADS[0].name}
    if vcr_results:
        out += [
            "",
            "vcrpy (responses+tools): one cassette of N interactions recorded off a local HTTP "
            "server, replayed by the N calls with record_mode=none; 'defaults' is vcrpy's "
            "match_on, '+body' adds the body (the adapter's matching); '+body matching' is "
            "vcrpy per call minus the floor; 'defaults/floor' and '+body/floor' (vcrpy per call "
            "over the floor) bound what any replay that keeps the SDK's own work can reach",
            "",
        ]
        vcr_rows = []
        for v in vcr_results:
            adapter = tools.get(v.n)
            default_us, body_us = v.default_matchers / v.n * 1e6, v.body_matchers / v.n * 1e6
            row = [f"{v.n:,}", f"{default_us:,.1f}", f"{body_us:,.1f}"]
            if adapter is None:
                row += ["-"] * 6
            else:
                floor_us, replay_us = adapter.us(adapter.floor), adapter.us(adapter.replay)
                row += [
                    f"{replay_us:,.1f}",
                    f"{body_us - floor_us:,.1f}",
                    f"{v.default_matchers / adapter.replay:,.1f}x",
                    f"{v.default_matchers / adapter.floor:,.1f}x",
                    f"{v.body_matchers / adapter.replay:,.1f}x",
                    f"{v.body_matchers / adapter.floor:,.1f}x",
                ]
            vcr_rows.append(row)
        out.extend(
            measure.table(
                [
                    "N",
                    f"vcrpy defaults {us}",
                    f"vcrpy +body {us}",
                    f"adapter replay {us}",
                    f"+body matching {us}",
                    "defaults/adapter",
                    "defaults/floor",
                    "+body/adapter",
                    "+body/floor",
                ],
                vcr_rows,
            )
        )

    out += ["", measure.TARGETS_HEADING]
    for workload in WORKLOADS:
        mine = [r for r in results if r.workload == workload.name]
        if len(mine) >= 2:
            small, large = mine[0], mine[-1]
            # Tool Replay's own growth with N: the replay/floor ratio at the largest N over
            # that at the smallest, each from calls alternating with bare ones.
            flatness = large.replay_ratio_cpu / small.replay_ratio_cpu
            out.append(
                measure.target_line(
                    flatness <= FLATNESS_TARGET,
                    f"{workload.name}: replay flat in N, replay/floor cpu at N={large.n:,} over "
                    f"N={small.n:,}: {flatness:.2f}x (target <= {FLATNESS_TARGET:g}x; replay "
                    f"cpu per call {large.replay_cpu / small.replay_cpu:.2f}x)",
                )
            )
        for r in mine:
            out.append(
                measure.target_line(
                    r.replay_ratio_cpu <= FLOOR_RATIO_TARGET,
                    f"{workload.name}, N={r.n:,}: replay vs the floor {r.replay_ratio_cpu:.2f}x "
                    f"in CPU time alternating (target <= {FLOOR_RATIO_TARGET:g}x)",
                )
            )
    for cost in costs:
        overhead, least = cost.record / cost.floor - 1, cost.least / cost.floor - 1
        out.append(
            measure.target_line(
                overhead <= RECORD_OVERHEAD_TARGET,
                f"{cost.workload}, CPU time alternating: record overhead {overhead:+.1%} "
                f"(target <= {RECORD_OVERHEAD_TARGET:+.0%}; the least recording: {least:+.1%})",
            )
        )
    at_target = [v for v in vcr_results if v.n == VCR_TARGET_N and v.n in tools]
    if at_target:
        adapter = tools[VCR_TARGET_N]
        for label, seconds in (
            ("default matchers", at_target[0].default_matchers),
            ("matching bodies", at_target[0].body_matchers),
        ):
            speedup = seconds / adapter.replay
            out.append(
                measure.target_line(
                    speedup >= VCR_SPEEDUP_TARGET,
                    f"replay vs vcrpy replay ({label}), N={VCR_TARGET_N:,}: {speedup:,.0f}x "
                    f"faster (target >= {VCR_SPEEDUP_TARGET:g}x; at most "
                    f"{seconds / adapter.floor:,.0f}x for any replay that keeps the SDK's work)",
                )
            )
    else:
        out.append(
            measure.skip_line(
                f"replay vs vcrpy replay at N={VCR_TARGET_N:,}: not run (needs "
                f"N={VCR_TARGET_N:,} in both --sizes and --vcr-sizes)"
            )
        )
    out += ["", measure.total_run_time(elapsed)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.openai_replay",
        description="Benchmark the OpenAI adapter's record and replay against the bare SDK "
        "and vcrpy.",
    )
    measure.add_repeats(parser, per="figure", default=DEFAULT_REPEATS, small=SMALL_SIZE)
    measure.add_sizes(parser, SIZES, "numbers of calls per workload, smallest first")
    parser.add_argument(
        "--vcr-sizes",
        type=int,
        nargs="*",
        default=list(VCR_SIZES),
        metavar="N",
        help="numbers of calls for vcrpy (default: 100 1000)",
    )
    parser.add_argument(
        "--breakdown-n",
        type=int,
        default=BREAKDOWN_N,
        metavar="N",
        help=f"calls per workload for the floor split and the record phases (default: "
        f"{BREAKDOWN_N}; the smoke test uses a handful)",
    )
    args = parser.parse_args(argv)
    sizes: list[int] = sorted(args.sizes)
    vcr_sizes: list[int] = sorted(args.vcr_sizes)
    if args.repeats < 1 or sizes[0] < 1 or (vcr_sizes and vcr_sizes[0] < 1) or args.breakdown_n < 1:
        parser.error("--repeats, --breakdown-n and every size must be at least 1")
    started = time.perf_counter()
    results: list[SizeResult] = []
    vcr_results: list[VcrResult] = []
    breakdowns: list[FloorBreakdown] = []
    costs: list[CallCosts] = []
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-openai-") as temporary:
        directory = Path(temporary)
        warm = directory / "warm-up"
        warm.mkdir()
        for workload in WORKLOADS:  # warm the SDK's and pydantic's lazy state
            measure_size(workload, 10, 1, warm)
        measure.freeze_survivors()
        for workload in WORKLOADS:
            for n in sizes:
                measure.progress(f"measuring {workload.name} at N={n:,} ...")
                repeats = measure.repeats_for(n, args.repeats, small=SMALL_SIZE)
                results.append(measure_size(workload, n, repeats, directory))
        measure.progress("splitting the floor ...")
        breakdowns = [
            floor_breakdown(workload, args.breakdown_n, args.repeats) for workload in WORKLOADS
        ]
        measure.progress("splitting the record overhead ...")
        costs = [call_costs(workload, args.breakdown_n, directory) for workload in WORKLOADS]
        for n in vcr_sizes:
            measure.progress(f"measuring vcrpy at N={n:,} ...")
            vcr_results.append(measure_vcr(n, directory))
    elapsed = time.perf_counter() - started
    print(report(results, vcr_results, breakdowns, costs, elapsed, args.breakdown_n))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
