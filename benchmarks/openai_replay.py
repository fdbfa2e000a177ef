"""OpenAI adapter benchmark: replaying `responses.create` against its floor and vcrpy.

Run with `uv run python -m benchmarks.openai_replay` (see benchmarks/README.md).
It needs the `openai` extra (openai==2.20.0) and vcrpy. For each size N it
measures, side by side in one run:

- the bare SDK call `client.responses.create` over an `httpx.MockTransport`,
  and the same call through `instrument(client)` under `toolreplay.record()`;
- `instrument(...)` under `toolreplay.replay()` of the trace just recorded,
  with a client whose transport refuses every request;
- the floor: `json.loads` of the response body plus
  `openai.types.responses.Response.model_validate`, per call;
- for the `--vcr-sizes` only: vcrpy replaying a cassette recorded off a real
  local HTTP server serving the same bodies.

The machine is assumed noisy, so the targets are ratios of figures measured in
the same run, and they are informational: the process exits 0 whether they are
met or not.
"""

from __future__ import annotations

import argparse
import json
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

import openai
import vcr
from openai.types.responses import Response
from openai.types.shared_params import Reasoning
from vcr.record_mode import RecordMode

import toolreplay
from benchmarks import measure
from examples.local_openai import HTTP as httpx
from toolreplay.adapters.openai import instrument

__all__ = ["main"]

SIZES = (100, 1_000, 5_000)
VCR_SIZES = (100, 1_000)
DEFAULT_REPEATS = 3
"""Fewer than the other benchmarks' 5: vcrpy at N=1,000 alone takes well over a minute."""
SMALL_SIZE = 1_000
"""Sizes below this get more repeats (see `benchmarks.measure.repeats_for`)."""

FLATNESS_TARGET = 1.5
"""Adapter replay per call at the largest N over the smallest: at most this (ideal 1.0)."""
FLOOR_RATIO_TARGET = 1.5
"""Adapter replay per call over `json.loads` + `Response.model_validate`: at most this."""
VCR_SPEEDUP_TARGET = 100.0
"""vcrpy replay per call over adapter replay per call, at `VCR_TARGET_N`: at least this."""
VCR_TARGET_N = 1_000
RECORD_OVERHEAD_TARGET = 0.10
"""Record per call over the bare SDK call, minus 1: at most this."""

MODEL = "gpt-5-mini"
REASONING: Reasoning = {"effort": "low"}
CREATED_AT = 1_760_000_000
API_KEY = "sk-bench"


# --- the recorded calls ---------------------------------------------------------------


def request_input(i: int) -> str:
    """The distinct input of call i."""
    return f"refund #{i}"


def response_id(i: int) -> str:
    return f"resp_68e1{i:046x}"


def request_id(i: int) -> str:
    return f"req_{i:032x}"


def output_text(i: int) -> str:
    """The assistant's answer to call i (about 800 characters)."""
    decision = ("approve", "deny", "escalate")[i % 3]
    return (
        f"Decision for refund #{i}: {decision}.\n\n"
        f"The order was placed {3 + i % 27} days ago, which is inside the 30-day return "
        "window, and the customer reports that the item arrived damaged, with photos "
        "attached to the ticket. The account has no refunds in the last 12 months and the "
        f"order total of {19 + i % 480}.{i % 100:02d} EUR is below the automatic approval "
        "limit of 500.00 EUR for this tier. The payment was captured by card, so the refund "
        "goes back to the original payment method and needs no manual bank transfer. "
        "Suggested reply to the customer: apologise for the damaged item, confirm the refund "
        "amount and the expected 5 to 10 business days for it to appear on the statement, "
        "and tell them that they do not need to return the damaged item. Add an internal "
        "note tagging the carrier for a damage claim."
    )


def response_body(i: int) -> dict[str, object]:
    """A Responses API body as the API sends it: a reasoning item and a message item."""
    created = CREATED_AT + 7 * i
    return {
        "id": response_id(i),
        "object": "response",
        "created_at": created,
        "status": "completed",
        "background": False,
        "billing": {"payer": "developer"},
        "completed_at": created + 4,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "model": "gpt-5-mini-2025-08-07",
        "output": [
            {"id": f"rs_68e1{i:046x}", "type": "reasoning", "summary": []},
            {
                "id": f"msg_68e1{i:046x}",
                "type": "message",
                "status": "completed",
                "content": [
                    {
                        "type": "output_text",
                        "annotations": [],
                        "logprobs": [],
                        "text": output_text(i),
                    }
                ],
                "role": "assistant",
            },
        ],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "prompt_cache_key": None,
        "prompt_cache_retention": None,
        "reasoning": {"effort": REASONING.get("effort"), "summary": None},
        "safety_identifier": None,
        "service_tier": "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": 0,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": 9 + len(str(i)),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 212 + i % 64,
            "output_tokens_details": {"reasoning_tokens": 64 + i % 64},
            "total_tokens": 221 + len(str(i)) + i % 64,
        },
        "user": None,
        "metadata": {},
    }


@dataclass(frozen=True, slots=True)
class Corpus:
    """The N calls: inputs, and each body pre-serialised to the bytes the API would send."""

    inputs: list[str]
    bodies: list[bytes]
    by_input: dict[str, tuple[bytes, str]]
    """input -> (body, request id), for the servers."""

    @classmethod
    def build(cls, n: int) -> Corpus:
        inputs = [request_input(i) for i in range(n)]
        bodies = [json.dumps(response_body(i)).encode() for i in range(n)]
        by_input = {inputs[i]: (bodies[i], request_id(i)) for i in range(n)}
        return cls(inputs, bodies, by_input)

    def answer(self, request_body: bytes) -> tuple[bytes, str]:
        """The body and request id for a `responses.create` request body."""
        payload = json.loads(request_body)
        return self.by_input[payload["input"]]


def check_responses(responses: Sequence[object], n: int, *, request_ids: bool = True) -> None:
    """Outside any timing: call i got body i back, as a `Response`."""
    if len(responses) != n:
        raise RuntimeError(f"expected {n} responses, got {len(responses)}")
    for i, response in enumerate(responses):
        if not isinstance(response, Response):
            raise RuntimeError(f"call {i}: got a {type(response).__name__}, not a Response")
        if response.id != response_id(i) or response.output_text != output_text(i):
            raise RuntimeError(f"call {i}: got the response {response.id}")
        if request_ids and response._request_id != request_id(i):  # pyright: ignore[reportPrivateUsage]
            raise RuntimeError(f"call {i}: request id {response._request_id!r}")  # pyright: ignore[reportPrivateUsage]


# --- clients --------------------------------------------------------------------------


def mock_client(corpus: Corpus, requests: list[Any]) -> openai.OpenAI:
    """An `OpenAI` client whose transport answers from `corpus` in process."""

    def handle(request: Any) -> Any:
        requests.append(request)
        body, rid = corpus.answer(request.content)
        return httpx.Response(
            200,
            content=body,
            headers={"content-type": "application/json", "x-request-id": rid},
        )

    return openai.OpenAI(
        api_key=API_KEY,
        http_client=httpx.Client(transport=httpx.MockTransport(handle)),
        max_retries=0,
    )


def offline_client(requests: list[Any]) -> openai.OpenAI:
    """An `OpenAI` client whose transport refuses (and counts) every request."""

    def refuse(request: Any) -> Any:
        requests.append(request)
        raise RuntimeError(f"replay sent a request: {request.method} {request.url}")

    return openai.OpenAI(
        api_key=API_KEY,
        http_client=httpx.Client(transport=httpx.MockTransport(refuse)),
        max_retries=0,
    )


class _BodyServer(ThreadingHTTPServer):
    """A local HTTP server answering POST /v1/responses from a corpus."""

    daemon_threads = True

    def __init__(self, corpus: Corpus) -> None:
        super().__init__(("127.0.0.1", 0), _BodyHandler)
        self.corpus = corpus
        self.hits = 0
        self.hits_lock = threading.Lock()

    @property
    def port(self) -> int:
        return cast(int, self.server_address[1])


class _BodyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms stall

    def do_POST(self) -> None:
        server = cast(_BodyServer, self.server)
        request_body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/responses":
            self.send_error(404)
            return
        with server.hits_lock:
            server.hits += 1
        body, rid = server.corpus.answer(request_body)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-request-id", rid)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # the base signature
        pass


@contextmanager
def serving(corpus: Corpus) -> Iterator[_BodyServer]:
    """A `_BodyServer` on 127.0.0.1 (port 0), stopped and closed on exit."""
    server = _BodyServer(corpus)
    thread = threading.Thread(target=server.serve_forever, name="bench-http", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# --- timing ---------------------------------------------------------------------------


def _time_calls(function: Callable[[int], object], n: int) -> tuple[float, list[object]]:
    """Seconds to call `function(i)` for i in range(n), gc disabled, and the results.

    Every variant keeps its results until the clock has stopped, so none pays
    for freeing them inside its timing.
    """
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
    """Best-of-repeats timings (seconds) for one N, and its trace."""

    n: int
    repeats: int
    floor: float
    bare: float
    record: float
    replay: float
    trace_load: float
    trace_bytes: int
    body_bytes: int

    def us(self, seconds: float) -> float:
        return seconds / self.n * 1e6

    @property
    def floor_ratio(self) -> float:
        return self.replay / self.floor

    @property
    def record_ratio(self) -> float:
        return self.record / self.bare


@dataclass(slots=True)
class VcrResult:
    """One vcrpy record (over loopback HTTP) and one replay of its cassette, for one N."""

    n: int
    record: float
    replay: float
    cassette_load: float
    cassette_bytes: int

    def us(self, seconds: float) -> float:
        return seconds / self.n * 1e6


def measure_size(n: int, repeats: int, directory: Path) -> SizeResult:
    """All adapter timings for one N; each is the best of `repeats`, variants interleaved."""
    corpus = Corpus.build(n)
    inputs = corpus.inputs
    bodies = corpus.bodies
    live_requests: list[Any] = []
    client = mock_client(corpus, live_requests)
    recording = instrument(client)
    offline_requests: list[Any] = []
    replaying = instrument(offline_client(offline_requests))

    def bare(i: int) -> object:
        return client.responses.create(model=MODEL, input=inputs[i], reasoning=REASONING)

    def record(i: int) -> object:
        return recording.responses.create(model=MODEL, input=inputs[i], reasoning=REASONING)

    def replay(i: int) -> object:
        return replaying.responses.create(model=MODEL, input=inputs[i], reasoning=REASONING)

    floors: list[float] = []
    bares: list[float] = []
    records: list[float] = []
    replays: list[float] = []
    loads: list[float] = []
    kept = directory / f"responses-{n}.trp"
    for repeat in range(repeats):
        # Round-robin, so that a noisy moment hurts one repeat of every variant
        # rather than every repeat of one variant.
        live_requests.clear()
        elapsed, responses = _time_calls(bare, n)
        bares.append(elapsed)
        floors.append(elapsed)  # the floor: the same SDK parsing the same bodies in process
        check_responses(responses, n)
        if len(live_requests) != n:
            raise RuntimeError(f"bare SDK: {len(live_requests)} requests for {n} calls")

        live_requests.clear()
        path = kept if repeat == 0 else directory / f"responses-{n}-{repeat}.trp"
        with toolreplay.record(path):
            elapsed, responses = _time_calls(record, n)
        records.append(elapsed)
        check_responses(responses, n)
        if len(live_requests) != n:
            raise RuntimeError(f"record: {len(live_requests)} requests for {n} calls")

        opened = time.perf_counter()
        with toolreplay.replay(path):  # checks on exit that every operation was replayed
            loads.append(time.perf_counter() - opened)
            elapsed, responses = _time_calls(replay, n)
        replays.append(elapsed)
        check_responses(responses, n)
        if offline_requests:
            raise RuntimeError(f"replay sent {len(offline_requests)} requests")
        if path != kept:
            path.unlink()
        del responses

    trace = toolreplay.read_trace(kept)
    if len(trace) != n or not trace.complete:
        raise RuntimeError(f"{kept}: expected {n} operations, got {trace.describe_state()}")
    client.close()
    replaying.original_client.close()
    return SizeResult(
        n=n,
        repeats=repeats,
        floor=min(floors),
        bare=min(bares),
        record=min(records),
        replay=min(replays),
        trace_load=min(loads),
        trace_bytes=kept.stat().st_size,
        body_bytes=sum(len(body) for body in bodies),
    )


def _creator(client: openai.OpenAI, inputs: list[str]) -> Callable[[int], object]:
    def create(i: int) -> object:
        return client.responses.create(model=MODEL, input=inputs[i], reasoning=REASONING)

    return create


def measure_vcr(n: int, directory: Path) -> VcrResult:
    """Record a cassette off a local HTTP server, stop the server, replay it once."""
    corpus = Corpus.build(n)
    inputs = corpus.inputs
    cassette = directory / f"responses-{n}.yaml"
    recorder = vcr.VCR(
        record_mode=RecordMode.ONCE,
        match_on=["method", "path", "body"],
        filter_headers=["authorization"],
    )
    with serving(corpus) as server:
        base_url = f"http://127.0.0.1:{server.port}/v1"
        client = openai.OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
        with recorder.use_cassette(str(cassette)):
            recorded, responses = _time_calls(_creator(client, inputs), n)
        check_responses(responses, n)
        client.close()  # ends its keep-alive connections before the server stops
        if server.hits != n:
            raise RuntimeError(f"vcrpy record: the server saw {server.hits} requests for {n}")

    # The server is stopped: a request the cassette cannot answer fails.
    player = vcr.VCR(record_mode=RecordMode.NONE, match_on=["method", "path", "body"])
    client = openai.OpenAI(base_url=base_url, api_key=API_KEY, max_retries=0)
    opened = time.perf_counter()
    with player.use_cassette(str(cassette)) as played:
        load = time.perf_counter() - opened
        replayed, responses = _time_calls(_creator(client, inputs), n)
        if not played.all_played:
            raise RuntimeError("vcrpy replay left cassette interactions unplayed")
    check_responses(responses, n)
    client.close()
    return VcrResult(
        n=n,
        record=recorded,
        replay=replayed,
        cassette_load=load,
        cassette_bytes=cassette.stat().st_size,
    )


def warm_up(directory: Path) -> None:
    """Build the SDK's and pydantic's lazy state, and exercise every path once."""
    measure_size(20, 1, directory)
    (directory / "responses-20.trp").unlink()


# --- report ---------------------------------------------------------------------------


def report(results: Sequence[SizeResult], vcr_results: Sequence[VcrResult], elapsed: float) -> str:
    us = measure.us_unit()
    out = [
        measure.environment(
            f"openai {openai.__version__}",
            f"pydantic {distribution_version('pydantic')}",
            f"httpx {httpx.__version__}",
            f"vcrpy {distribution_version('vcrpy')}",
        ),
        measure.repeats_line(
            ((r.n, r.repeats) for r in results), "adapter figure, 1 run per vcrpy figure"
        ),
        "gc disabled during every timed section (gc.collect() first); traces and cassettes "
        "written to a temporary directory",
        f"calls: responses.create(model={MODEL!r}, input='refund #<i>', "
        f"reasoning={REASONING!r}), i distinct; bodies: a reasoning item and a message item, "
        f"{results[0].body_bytes / results[0].n:,.0f} B of JSON on average",
        "per-call figures time only the calls: opening a session or cassette (loading the "
        "trace or cassette) and closing it are not timed",
        "",
        "adapter (bare and record: httpx.MockTransport answering in process; replay: a "
        "client whose transport refuses every request)",
        "",
    ]
    headers = [
        "N",
        f"floor {us}",
        f"replay {us}",
        "replay/floor",
        f"bare SDK {us}",
        f"record {us}",
        "record/bare",
        "trace MB",
        "trace load s",
    ]
    rows = [
        [
            f"{r.n:,}",
            f"{r.us(r.floor):.1f}",
            f"{r.us(r.replay):.1f}",
            f"{r.floor_ratio:.2f}x",
            f"{r.us(r.bare):.1f}",
            f"{r.us(r.record):.1f}",
            f"{r.record_ratio:.3f}x",
            f"{r.trace_bytes / 1e6:.2f}",
            f"{r.trace_load:.4f}",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))

    by_n = {r.n: r for r in results}
    if vcr_results:
        out += [
            "",
            "vcrpy (cassette recorded off a local ThreadingHTTPServer, replayed with "
            "record_mode='none' and the server stopped; match_on method, path, body)",
            "",
        ]
        headers = [
            "N",
            f"adapter replay {us}",
            f"vcrpy replay {us}",
            "vcrpy/adapter",
            "cassette MB",
            "cassette load s",
            f"vcrpy record {us} (loopback HTTP)",
        ]
        rows = []
        for v in vcr_results:
            adapter = by_n.get(v.n)
            rows.append(
                [
                    f"{v.n:,}",
                    f"{adapter.us(adapter.replay):.1f}" if adapter else "-",
                    f"{v.us(v.replay):,.1f}",
                    f"{v.replay / adapter.replay:,.0f}x" if adapter else "-",
                    f"{v.cassette_bytes / 1e6:.2f}",
                    f"{v.cassette_load:.3f}",
                    f"{v.us(v.record):,.1f}",
                ]
            )
        out.extend(measure.table(headers, rows))

    out += ["", measure.TARGETS_HEADING]
    if len(results) >= 2:
        small, large = results[0], results[-1]
        flatness = large.us(large.replay) / small.us(small.replay)
        out.append(
            measure.target_line(
                flatness <= FLATNESS_TARGET,
                f"adapter replay per call flat in trace size, N={large.n:,} vs N={small.n:,}: "
                f"{flatness:.2f}x (target near 1.0, <= {FLATNESS_TARGET:g}x)",
            )
        )
    else:
        out.append(
            measure.skip_line("adapter replay per call flat in trace size: needs two --sizes")
        )
    for r in results:
        out.append(
            measure.target_line(
                r.floor_ratio <= FLOOR_RATIO_TARGET,
                f"adapter replay vs json.loads + Response.model_validate, N={r.n:,}: "
                f"{r.floor_ratio:.2f}x (target <= {FLOOR_RATIO_TARGET:g}x)",
            )
        )
    vcr_at_target = [v for v in vcr_results if v.n == VCR_TARGET_N and v.n in by_n]
    if vcr_at_target:
        v = vcr_at_target[0]
        speedup = v.replay / by_n[v.n].replay
        out.append(
            measure.target_line(
                speedup >= VCR_SPEEDUP_TARGET,
                f"adapter replay vs vcrpy replay, N={v.n:,}: {speedup:,.0f}x faster "
                f"(target >= {VCR_SPEEDUP_TARGET:g}x)",
            )
        )
    else:
        out.append(
            measure.skip_line(
                f"adapter replay vs vcrpy replay at N={VCR_TARGET_N:,}: not run "
                f"(needs N={VCR_TARGET_N:,} in both --sizes and --vcr-sizes)"
            )
        )
    for r in results:
        overhead = r.record_ratio - 1
        out.append(
            measure.target_line(
                overhead <= RECORD_OVERHEAD_TARGET,
                f"record overhead over the bare SDK call, N={r.n:,}: {overhead:+.1%} "
                f"(target <= {RECORD_OVERHEAD_TARGET:+.0%})",
            )
        )
    out += ["", measure.total_run_time(elapsed)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.openai_replay",
        description=(
            "Benchmark the OpenAI adapter's record and replay of responses.create against "
            "the bare SDK, json.loads + Response.model_validate, and vcrpy."
        ),
    )
    measure.add_repeats(
        parser,
        per="adapter measurement",
        default=DEFAULT_REPEATS,
        small=SMALL_SIZE,
        note=". vcrpy runs once.",
    )
    measure.add_sizes(parser, SIZES, "numbers of recorded calls, smallest first")
    parser.add_argument(
        "--vcr-sizes",
        type=int,
        nargs="*",
        default=list(VCR_SIZES),
        metavar="N",
        help="numbers of calls for vcrpy, whose replay grows quadratically (default: 100 1000)",
    )
    args = parser.parse_args(argv)
    repeats: int = args.repeats
    sizes: list[int] = sorted(args.sizes)
    vcr_sizes: list[int] = sorted(args.vcr_sizes)
    if repeats < 1 or sizes[0] < 1 or (vcr_sizes and vcr_sizes[0] < 1):
        parser.error("--repeats and every size must be at least 1")

    started = time.perf_counter()
    results: list[SizeResult] = []
    vcr_results: list[VcrResult] = []
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-openai-") as temporary:
        directory = Path(temporary)
        warm_up(directory)
        for n in sizes:
            measure.progress(f"measuring the adapter at N={n:,} ...")
            results.append(
                measure_size(n, measure.repeats_for(n, repeats, small=SMALL_SIZE), directory)
            )
        for n in vcr_sizes:
            measure.progress(f"measuring vcrpy at N={n:,} ...")
            vcr_results.append(measure_vcr(n, directory))
    print(report(results, vcr_results, time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
