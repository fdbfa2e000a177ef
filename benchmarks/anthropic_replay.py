"""Anthropic adapter benchmark: replay and record against the bare SDK, in CPU time.

Run with `uv run python -m benchmarks.anthropic_replay` (see benchmarks/README.md).
Two workloads, each N distinct calls:

- `messages+tool`: `messages.create` with a tool, answered by a tool use;
- `stream50`: `messages.stream(...)` read to its end through `text_stream`, 50 events.

For each workload and N, side by side in one run, each call timed alone in CPU time
(`time.process_time_ns`), the bare call and the instrumented one alternating call by
call (medians per call):

- the floor: the bare SDK client over an in-memory transport serving pre-serialised
  bodies (the same SDK parsing the same bodies);
- replay: `instrument(a client whose transport refuses every request)` under
  `toolreplay.replay()` of a trace of the N calls;
- record: `instrument(the floor's client)` under `toolreplay.record()`.

Load from other processes moves both calls of a pair alike, so their ratio holds on a
shared machine where wall-clock figures do not. The targets are informational: the
process exits 0 whether they are met or not.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version as distribution_version
from pathlib import Path
from typing import Any

import anthropic
import httpx2

import toolreplay
from benchmarks import measure
from examples.local_anthropic import API_KEY, MODEL, sse
from toolreplay.adapters.anthropic import instrument

__all__ = ["main"]

SIZES = (100, 1_000, 10_000)
FLOOR_RATIO_TARGET = 1.2
"""Replay per call over the floor (the bare SDK over an in-memory transport): at most this."""
FLATNESS_TARGET = 1.2
"""Replay/floor at the largest N over the smallest: at most this (ideal 1.0)."""
TOOLS: Any = [{"name": "issue_refund", "input_schema": {"type": "object"}}]
_ORDER = re.compile(rb"order (\d+)")


def _message(i: int, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": f"msg_bench{i:08d}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6-20260217",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 40, "output_tokens": 30},
    }


def _tool_body(i: int) -> bytes:
    use = {"type": "tool_use", "id": f"toolu_{i:08d}", "name": "issue_refund",
           "input": {"order_id": i, "reason": "lost in transit"}}  # fmt: skip
    text = {"type": "text", "text": f"Refunding order {i}."}
    return json.dumps(_message(i, [text, use], "tool_use")).encode()


def _stream_body(i: int) -> bytes:
    final = _message(i, [], "end_turn")
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**final, "stop_reason": None}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}}
        for word in (f"w{i}.{k} " for k in range(45))
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 30}},
        {"type": "message_stop"},
    ]  # fmt: skip
    assert len(events) == 50
    return sse(events)


def _ask(i: int) -> Any:
    return [{"role": "user", "content": f"Refund order {i}, it never arrived."}]


def _call_tool(client: Any, i: int) -> object:
    message = client.messages.create(model=MODEL, max_tokens=256, messages=_ask(i), tools=TOOLS)
    return message.content[-1].input


def _call_stream(client: Any, i: int) -> object:
    with client.messages.stream(model=MODEL, max_tokens=256, messages=_ask(i)) as stream:
        return "".join(stream.text_stream)


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    body: Callable[[int], bytes]
    media_type: str
    call: Callable[[Any, int], object]


WORKLOADS = (
    Workload("messages+tool", _tool_body, "application/json", _call_tool),
    Workload("stream50", _stream_body, "text/event-stream; charset=utf-8", _call_stream),
)


def _client(handler: Callable[[Any], Any]) -> anthropic.Anthropic:
    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    return anthropic.Anthropic(api_key=API_KEY, http_client=http, max_retries=0)


def bare_client(workload: Workload, bodies: list[bytes]) -> anthropic.Anthropic:
    headers = {"content-type": workload.media_type, "request-id": "req_bench"}

    def handle(request: Any) -> Any:
        found = _ORDER.search(request.content)
        assert found is not None
        return httpx2.Response(200, content=bodies[int(found.group(1))], headers=headers)

    return _client(handle)


def refusing_client() -> anthropic.Anthropic:
    def refuse(request: Any) -> Any:
        raise AssertionError(f"a replayed call reached the transport: {request.url}")

    return _client(refuse)


@dataclass(frozen=True, slots=True)
class SizeResult:
    """One workload at one N: medians per call (seconds) of CPU time."""

    workload: str
    n: int
    floor: float
    replay: float
    record_floor: float
    record: float

    @property
    def replay_ratio(self) -> float:
        return self.replay / self.floor

    @property
    def record_ratio(self) -> float:
        return self.record / self.record_floor


def _median(values: list[int]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] / 1e9


def _alternating(
    n: int, first: Callable[[int], object], second: Callable[[int], object]
) -> tuple[float, float, list[object], list[object]]:
    clock = time.process_time_ns
    times: tuple[list[int], list[int]] = ([], [])
    results: tuple[list[object], list[object]] = ([], [])
    with measure.gc_paused():
        for i in range(n):
            for call, spent, kept in zip((first, second), times, results, strict=True):
                started = clock()
                value = call(i)
                spent.append(clock() - started)
                kept.append(value)
    return _median(times[0]), _median(times[1]), results[0], results[1]


def measure_size(workload: Workload, n: int, directory: Path) -> SizeResult:
    bare = bare_client(workload, [workload.body(i) for i in range(n)])
    recording = instrument(bare)
    trace = directory / f"{workload.name}-{n}.trp"
    with toolreplay.record(trace):
        record_floor, record, expected, recorded = _alternating(
            n, lambda i: workload.call(bare, i), lambda i: workload.call(recording, i)
        )
    replaying = instrument(refusing_client())
    with toolreplay.replay(trace):  # checks on exit that every operation was replayed
        floor, replay, _, replayed = _alternating(
            n, lambda i: workload.call(bare, i), lambda i: workload.call(replaying, i)
        )
    if replayed != expected or recorded != expected:
        raise RuntimeError(f"{workload.name}: the adapter's results differ from the bare SDK's")
    trace.unlink()
    return SizeResult(workload.name, n, floor, replay, record_floor, record)


def report(results: list[SizeResult], elapsed: float) -> str:
    unit = measure.us_unit()
    lines = [
        measure.environment(
            f"anthropic {distribution_version('anthropic')}",
            f"httpx2 {distribution_version('httpx2')}",
        ),
        "CPU time per call (time.process_time_ns), the bare and the instrumented call "
        "alternating call by call: medians; gc paused; traces in a temporary directory",
        "floor: the bare SDK client over an in-memory MockTransport serving pre-serialised "
        "bodies; replay: instrument(a client whose transport refuses every request) under "
        "replay(); record: instrument(the floor's client) under record()",
        "",
    ]
    headers = ["workload", "N", f"floor cpu {unit}", f"replay cpu {unit}", "replay/floor",
               f"record floor cpu {unit}", f"record cpu {unit}", "record/floor"]  # fmt: skip
    rows = [
        [
            r.workload,
            f"{r.n:,}",
            f"{r.floor * 1e6:.1f}",
            f"{r.replay * 1e6:.1f}",
            f"{r.replay_ratio:.3f}x",
            f"{r.record_floor * 1e6:.1f}",
            f"{r.record * 1e6:.1f}",
            f"{r.record_ratio:.3f}x",
        ]
        for r in results
    ]
    lines += measure.table(headers, rows)
    lines += ["", "targets (informational; the exit status is 0 either way):"]
    for workload in WORKLOADS:
        mine = [r for r in results if r.workload == workload.name]
        for r in mine:
            lines.append(
                measure.target_line(
                    r.replay_ratio <= FLOOR_RATIO_TARGET,
                    f"{r.workload}, N={r.n:,}: replay vs the floor {r.replay_ratio:.2f}x in CPU "
                    f"time alternating (target <= {FLOOR_RATIO_TARGET}x)",
                )
            )
        if len(mine) > 1:
            flat = mine[-1].replay_ratio / mine[0].replay_ratio
            lines.append(
                measure.target_line(
                    flat <= FLATNESS_TARGET,
                    f"{workload.name}: replay flat in N, replay/floor at N={mine[-1].n:,} over "
                    f"N={mine[0].n:,}: {flat:.2f}x (target <= {FLATNESS_TARGET}x)",
                )
            )
    lines += ["", measure.total_run_time(elapsed)]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.anthropic_replay",
        description="Benchmark the Anthropic adapter's replay and record against the bare SDK.",
    )
    measure.add_sizes(parser, SIZES, "numbers of calls per workload, smallest first")
    args = parser.parse_args(argv)
    sizes: list[int] = sorted(args.sizes)
    if sizes[0] < 1:
        parser.error("every size must be at least 1")
    started = time.perf_counter()
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-anthropic-") as temporary:
        directory = Path(temporary)
        for workload in WORKLOADS:  # warm the SDK's and pydantic's lazy state
            measure_size(workload, 10, directory)
        for workload in WORKLOADS:
            for n in sizes:
                measure.progress(f"measuring {workload.name} at N={n:,} ...")
                results.append(measure_size(workload, n, directory))
    print(report(results, time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
