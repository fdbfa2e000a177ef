"""Per-request capture: one trace per request, and the application never notices.

Handlers are real functions calling real effects; traces are real files read
back with `read_trace` and replayed. Storage faults are real: a directory the
process cannot write, and a full disk (`RLIMIT_FSIZE` in a child process, as in
tests/test_storage_faults.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from toolreplay.capturing import ENVIRONMENT_VARIABLES, captured_at
from toolreplay.capturing.names import CAPTURE_NAME, new_trace_name
from toolreplay.capturing.store import sweep

CANARY = "canary-7f3a9c2e-do-not-log"
LIVE_CALLS: list[int] = []


@toolreplay.effect("orders.fetch")
def fetch(order_id: int) -> dict[str, object]:
    LIVE_CALLS.append(order_id)
    return {"order_id": order_id, "total": 10 * order_id}


@toolreplay.effect("billing.charge")
def charge(order_id: int, card: str) -> dict[str, object]:
    if order_id < 0:
        raise ValueError(f"card {card} declined")
    return {"charged": order_id}


@toolreplay.effect("orders.pending")
def pending(order_id: int) -> object:
    return {1, 2} if order_id == 13 else [order_id]  # a set is not portable JSON


@toolreplay.effect("orders.outer")
def outer(order_id: int) -> dict[str, object]:
    return {"inner": fetch(order_id)}  # an effect inside an effect: nested


class CheckoutFailed(Exception):
    pass


def checkout(order_id: int, *, request_id: str = "r-1") -> dict[str, object]:
    order = fetch(order_id)
    receipt = charge(order_id, card=CANARY)
    if order_id == 99:
        raise CheckoutFailed(f"order {order_id} failed")
    return {"order": order, "receipt": receipt, "request_id": request_id}


def traces(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.trp"))


@pytest.fixture(autouse=True)
def _no_capture_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ENVIRONMENT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    LIVE_CALLS.clear()
    yield
    LIVE_CALLS.clear()


def capture_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "toolreplay.capture"]


# --- one trace per request ----------------------------------------------------------------


def test_a_decorated_handler_writes_one_named_trace_per_request_with_its_metadata(
    tmp_path: Path,
) -> None:
    capture = toolreplay.capture(
        tmp_path, metadata=lambda order_id, request_id: {"request_id": request_id}
    )
    handler = capture(checkout)
    first = handler(1, request_id="r-1")
    second = handler(2, request_id="r-2")
    assert first == checkout(1, request_id="r-1")  # the result is the handler's own
    assert second["receipt"] == {"charged": 2}

    kept = traces(tmp_path)
    assert len(kept) == 2
    assert not list(tmp_path.glob("*.part"))
    names = [path.name.removesuffix(".trp") for path in kept]
    assert all(CAPTURE_NAME.fullmatch(name) for name in names)
    read = [toolreplay.read_trace(path) for path in kept]
    assert [t.header.metadata["request_id"] for t in read] == ["r-1", "r-2"]  # time order
    for trace, name in zip(read, names, strict=True):
        assert trace.complete
        assert trace.header.metadata["capture"] == {
            "name": name,
            "started_at": trace.header.metadata["capture"]["started_at"],  # type: ignore[index]
        }
        assert [op.effect for op in trace.operations] == ["orders.fetch", "billing.charge"]


def test_a_captured_trace_replays_through_the_decorated_handler(tmp_path: Path) -> None:
    handler = toolreplay.capture(tmp_path)(checkout)
    expected = handler(5)
    (trace,) = traces(tmp_path)
    LIVE_CALLS.clear()
    # Inside the replay session capture steps aside: the replay answers every effect.
    with toolreplay.replay(trace):
        assert handler(5) == expected
    assert LIVE_CALLS == []
    assert traces(tmp_path) == [trace]


def test_inside_an_open_session_capture_steps_aside_and_the_session_records(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "captured"
    handler = toolreplay.capture(folder)(checkout)
    with toolreplay.record(tmp_path / "test.trp"):
        handler(3)
        with toolreplay.capture(folder) as request:
            fetch(4)
    assert request.skipped == "session open"
    assert not folder.exists() or traces(folder) == []
    recorded = toolreplay.read_trace(tmp_path / "test.trp")
    assert [op.inputs["order_id"] for op in recorded.operations] == [3, 3, 4]


def test_the_context_manager_form_captures_a_block_and_reports_where_it_went(
    tmp_path: Path,
) -> None:
    capture = toolreplay.capture(tmp_path, metadata={"job": "nightly-refunds"})
    with capture as request:
        assert request.recording
        fetch(1)
        fetch(2)
    assert request.path is not None
    assert request.path.exists()
    assert request.name is not None
    assert request.path.name == request.name + ".trp"
    trace = toolreplay.read_trace(request.path)
    assert trace.header.metadata["job"] == "nightly-refunds"
    assert len(trace) == 2
    # Nested `with` of the same capture: the inner one steps aside, the outer records both.
    with capture as outer_request, capture as inner_request:
        fetch(3)
    assert inner_request.skipped == "session open"
    assert outer_request.path is not None
    assert len(toolreplay.read_trace(outer_request.path)) == 1


def test_async_handlers_running_concurrently_each_get_their_own_trace(tmp_path: Path) -> None:
    capture = toolreplay.capture(tmp_path, metadata=lambda order_id: {"order": order_id})

    @capture
    async def handle(order_id: int) -> list[dict[str, object]]:
        await asyncio.sleep(0.01 * (order_id % 3))
        first = await asyncio.to_thread(fetch, order_id)
        return [first, fetch(order_id + 100)]

    async def serve() -> list[list[dict[str, object]]]:
        return await asyncio.gather(*(handle(order_id) for order_id in range(6)))

    results = asyncio.run(serve())
    assert results[4] == [{"order_id": 4, "total": 40}, {"order_id": 104, "total": 1040}]
    by_order = {}
    for path in traces(tmp_path):
        trace = toolreplay.read_trace(path)
        by_order[trace.header.metadata["order"]] = [
            op.inputs["order_id"] for op in trace.operations
        ]
    assert by_order == {order_id: [order_id, order_id + 100] for order_id in range(6)}


def test_handlers_run_in_a_thread_pool_each_capture_their_request_and_its_fan_out(
    tmp_path: Path,
) -> None:
    capture = toolreplay.capture(tmp_path, metadata=lambda batch: {"batch": batch})

    @capture
    def handle(batch: int) -> list[dict[str, object]]:
        with toolreplay.SessionExecutor(max_workers=3) as fan_out:
            return list(fan_out.map(fetch, range(batch * 10, batch * 10 + 4)))

    with ThreadPoolExecutor(max_workers=4) as server:
        results = list(server.map(handle, range(8)))
    assert results[2][3] == {"order_id": 23, "total": 230}
    seen = {}
    for path in traces(tmp_path):
        trace = toolreplay.read_trace(path)
        seen[trace.header.metadata["batch"]] = sorted(
            int(str(op.inputs["order_id"])) for op in trace.operations
        )
    assert seen == {batch: list(range(batch * 10, batch * 10 + 4)) for batch in range(8)}


def test_a_plain_thread_in_a_captured_request_runs_live_and_is_not_refused(
    tmp_path: Path,
) -> None:
    results: list[object] = []

    @toolreplay.capture(tmp_path)
    def handle() -> None:
        worker = threading.Thread(target=lambda: results.append(fetch(7)))
        worker.start()
        worker.join()
        fetch(8)

    handle()
    # A record session would refuse the unpropagated call; capture must not change the
    # application, so it runs live and the trace lacks it.
    assert results == [{"order_id": 7, "total": 70}]
    (trace,) = traces(tmp_path)
    assert [op.inputs["order_id"] for op in toolreplay.read_trace(trace).operations] == [8]


# --- what is kept ------------------------------------------------------------------------


def test_keep_error_keeps_only_requests_that_raised_and_their_exception_is_untouched(
    tmp_path: Path,
) -> None:
    handler = toolreplay.capture(tmp_path, keep="error")(checkout)
    assert handler(1)["receipt"] == {"charged": 1}
    assert traces(tmp_path) == []
    with pytest.raises(CheckoutFailed) as raised:
        handler(99)
    assert str(raised.value) == "order 99 failed"
    assert not getattr(raised.value, "__notes__", None)
    (kept,) = traces(tmp_path)
    trace = toolreplay.read_trace(kept)
    assert trace.footer is not None
    assert trace.footer.ending.error_type == "tests.test_capture.CheckoutFailed"
    assert not list(tmp_path.glob("*.part"))


def test_a_keep_predicate_sees_the_result_and_a_raising_predicate_keeps_the_evidence(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def server_error(response: dict[str, object]) -> bool:
        return response["status"] == 500

    @toolreplay.capture(tmp_path / "by-status", keep=server_error)
    def respond(status: int) -> dict[str, object]:
        fetch(status)
        return {"status": status}

    assert respond(200) == {"status": 200}
    assert respond(500) == {"status": 500}
    (kept,) = traces(tmp_path / "by-status")
    assert toolreplay.read_trace(kept).operations[0].inputs == {"order_id": 500}

    def broken(result: object) -> bool:
        raise RuntimeError("predicate bug")

    with toolreplay.capture(tmp_path / "broken", keep=broken) as request:
        fetch(1)
        request.result = "anything"
    assert request.path is not None
    assert any("keep predicate raised RuntimeError" in m for m in capture_warnings(caplog))


def test_sampling_by_rate_and_by_callable(tmp_path: Path) -> None:
    never = toolreplay.capture(tmp_path / "never", sample=0)(checkout)
    never(1)
    assert not (tmp_path / "never").exists()

    decisions = iter([True, False, True])
    chosen = toolreplay.capture(tmp_path / "chosen", sample=lambda: next(decisions))(checkout)
    for order_id in (1, 2, 3):
        chosen(order_id)
    orders = [
        toolreplay.read_trace(p).operations[0].inputs["order_id"]
        for p in traces(tmp_path / "chosen")
    ]
    assert orders == [1, 3]


def test_sampling_does_not_draw_from_the_applications_random_sequence(tmp_path: Path) -> None:
    import random

    random.seed(1234)
    expected = [random.random() for _ in range(3)]
    random.seed(1234)
    handler = toolreplay.capture(tmp_path, sample=0.5)(checkout)
    drawn = []
    for order_id in range(3):
        handler(order_id)
        drawn.append(random.random())
    assert drawn == expected


def test_a_trace_past_max_bytes_is_discarded_and_the_request_carries_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    @toolreplay.capture(tmp_path, max_bytes=1500)
    def big() -> list[dict[str, object]]:
        return [fetch(order_id) for order_id in range(20)]

    assert big() == [{"order_id": i, "total": 10 * i} for i in range(20)]
    assert list(range(20)) == LIVE_CALLS
    assert list(tmp_path.iterdir()) == []
    big()
    warnings = capture_warnings(caplog)
    assert len(warnings) == 1  # once per folder and reason
    assert "max_bytes=1500" in warnings[0]


# --- what capture gives up on, the application never sees ---------------------------------


def test_unrecordable_values_and_nested_effects_discard_the_trace_not_the_answer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    capture = toolreplay.capture(tmp_path)

    @capture
    def odd_output() -> object:
        return pending(13)

    @capture
    def odd_input() -> object:
        return fetch({1, 2})  # type: ignore[arg-type]

    @capture
    def nested() -> object:
        return outer(4)

    assert odd_output() == {1, 2}
    with pytest.raises(TypeError):  # what the undecorated call raises, from its own body
        odd_input()
    assert nested() == {"inner": {"order_id": 4, "total": 40}}
    assert list(tmp_path.iterdir()) == []
    warnings = capture_warnings(caplog)
    assert warnings
    assert all(CANARY not in m for m in warnings)


def test_the_effects_own_failures_are_recorded_and_reach_the_caller_unchanged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    @toolreplay.capture(tmp_path)
    def declined() -> str:
        try:
            charge(-1, card=CANARY)
        except ValueError as error:
            return str(error)
        return "charged"

    assert declined() == f"card {CANARY} declined"
    (kept,) = traces(tmp_path)
    (operation,) = toolreplay.read_trace(kept).operations
    assert operation.outcome.status == "error"  # type: ignore[union-attr]
    assert capture_warnings(caplog) == []


def test_an_unwritable_directory_is_logged_once_and_changes_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    with unwritable(folder):
        handler = toolreplay.capture(folder)(checkout)
        assert handler(1) == checkout(1)
        with pytest.raises(CheckoutFailed, match="order 99 failed") as raised:
            handler(99)
        assert not getattr(raised.value, "__notes__", None)
        nested = toolreplay.capture(folder / "sub")(checkout)  # cannot even be created
        assert nested(2)["receipt"] == {"charged": 2}
    assert list(folder.iterdir()) == []
    warnings = capture_warnings(caplog)
    assert len(warnings) == 2, warnings  # once per folder, for three requests
    assert f"capture to {folder}: cannot create a trace" in warnings[0]
    assert "Operation not permitted" in warnings[0] or "Permission denied" in warnings[0]
    assert f"capture to {folder / 'sub'}: cannot create a trace" in warnings[1]
    assert CANARY not in caplog.text


class unwritable:
    """Make `folder` unwritable for this process: chmod, or `chattr +i` for root."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.root = os.geteuid() == 0

    def __enter__(self) -> None:
        if self.root:
            done = subprocess.run(
                ["chattr", "+i", str(self.folder)], capture_output=True, check=False
            )
            if done.returncode != 0:
                pytest.skip(
                    "running as root, where only an immutable flag makes a folder unwritable, "
                    f"and chattr +i failed: {done.stderr.decode().strip()}"
                )
        else:
            self.folder.chmod(0o500)
        with pytest.raises(OSError):
            (self.folder / "probe").touch()

    def __exit__(self, *exc: object) -> None:
        if self.root:
            subprocess.run(["chattr", "-i", str(self.folder)], check=True)
        else:
            self.folder.chmod(0o700)


FULL_DISK_CHILD = textwrap.dedent(
    """
    import json
    import logging
    import resource
    import signal
    import sys
    from pathlib import Path

    import toolreplay

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail with EFBIG rather than die
    HARD = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    FOLDER = Path(sys.argv[1])
    CANARY = "canary-7f3a9c2e-do-not-log"
    messages = []

    class Collect(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    logging.getLogger("toolreplay.capture").addHandler(Collect())


    @toolreplay.effect("orders.fetch")
    def fetch(order_id, card):
        return {"order_id": order_id, "note": "x" * 300}


    class CheckoutFailed(Exception):
        pass


    @toolreplay.capture(FOLDER, metadata=lambda name, fill: {"request": name})
    def checkout(name, fill):
        answers = [fetch(i, CANARY) for i in range(3)]
        if fill == "mid":  # the disk fills while the request runs: the next line fails
            part = toolreplay.current_session().path
            resource.setrlimit(resource.RLIMIT_FSIZE, (part.stat().st_size + 40, HARD))
            answers += [fetch(i, CANARY) for i in range(3, 6)]
            raise CheckoutFailed(answers)
        return answers


    def run(name, fill):
        if fill == "full":
            resource.setrlimit(resource.RLIMIT_FSIZE, (10, HARD))
        try:
            return {"returned": checkout(name, fill)}
        except CheckoutFailed as error:
            return {"raised": error.args[0], "notes": getattr(error, "__notes__", [])}
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (HARD, HARD))


    result = {
        "mid": run("mid", "mid"),
        "full": run("full", "full"),
        "after_full": list(messages),
        "recovered": run("recovered", None),
        "full_again": run("full-again", "full"),
        "messages": messages,
    }
    print(json.dumps(result))
    """
)


def test_a_full_disk_is_logged_once_until_recovery_and_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    script = tmp_path / "child.py"
    script.write_text(FULL_DISK_CHILD)
    completed = subprocess.run(
        [sys.executable, str(script), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    answer = [{"order_id": i, "note": "x" * 300} for i in range(3)]

    # Mid-request: every effect answered, the application's exception as raised, no note.
    assert result["mid"] == {
        "raised": answer + [{"order_id": i, "note": "x" * 300} for i in range(3, 6)],
        "notes": [],
    }
    # The disk still full when the next request starts: it runs uncaptured.
    assert result["full"] == {"returned": answer}
    assert len(result["after_full"]) == 1  # logged once for both
    assert "a line of the trace could not be written" in result["after_full"][0]
    assert "File too large" in result["after_full"][0]
    # Space again: the next request is kept; the next failure is logged again.
    assert result["recovered"] == {"returned": answer}
    assert result["full_again"] == {"returned": answer}
    assert len(result["messages"]) == 2
    assert "cannot create a trace" in result["messages"][1]
    assert all(CANARY not in message for message in result["messages"])

    (kept,) = traces(folder)
    assert list(folder.iterdir()) == [kept]  # nothing half-written left behind
    trace = toolreplay.read_trace(kept)
    assert trace.header.metadata["request"] == "recovered"
    assert trace.complete
    assert len(trace) == 3


# --- naming and retention ------------------------------------------------------------------


def test_names_sort_in_time_order_and_are_unique() -> None:
    start = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
    moments = [start + timedelta(microseconds=7 * i) for i in range(500)] * 2
    names = [new_trace_name(moment) for moment in moments]
    assert len(set(names)) == len(names)
    ordered = sorted(names)
    assert [captured_at(name) for name in ordered] == sorted(moments)
    assert captured_at(names[0] + ".trp") == start
    assert captured_at("incident.trp") is None


def test_retention_by_count_keeps_the_newest_captures_and_nothing_else_is_touched(
    tmp_path: Path,
) -> None:
    (tmp_path / "incident.trp").write_text("not a capture, never deleted")
    handler = toolreplay.capture(tmp_path, metadata=lambda order_id: {"order": order_id}, retain=3)(
        checkout
    )
    for order_id in range(6):
        handler(order_id)
    kept = [p for p in traces(tmp_path) if p.name != "incident.trp"]
    assert [toolreplay.read_trace(p).header.metadata["order"] for p in kept] == [3, 4, 5]
    assert (tmp_path / "incident.trp").exists()


def test_retention_by_age_removes_old_traces_and_stale_partial_files(tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    old = new_trace_name(now - timedelta(days=8))
    recent = new_trace_name(now - timedelta(days=1))
    for name in (f"{old}.trp", f"{old}.trp.part", f"{recent}.trp", f"{recent}.trp.part"):
        (tmp_path / name).write_text("x")
    removed = sweep(tmp_path, toolreplay.Retention(age=timedelta(days=7)), now)
    assert sorted(p.name for p in removed) == [f"{old}.trp", f"{old}.trp.part"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{recent}.trp", f"{recent}.trp.part"]


# --- settings --------------------------------------------------------------------------


def test_environment_variables_override_the_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler = toolreplay.capture(metadata=lambda order_id: {"order": order_id})(checkout)
    handler(1)  # no directory in code or environment: capture is off
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_DIR", str(tmp_path / "env"))
    handler(2)
    assert len(traces(tmp_path / "env")) == 1
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_RATE", "0")
    handler(3)
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_RATE", "1")
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_KEEP", "error")
    handler(4)
    with pytest.raises(CheckoutFailed):
        handler(99)
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_DISABLED", "yes")
    with pytest.raises(CheckoutFailed):
        handler(99)
    monkeypatch.delenv("TOOLREPLAY_CAPTURE_DISABLED")
    monkeypatch.delenv("TOOLREPLAY_CAPTURE_KEEP")
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_RETAIN", "2,7d")
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_MAX_BYTES", "64K")
    handler(5)
    orders = [toolreplay.read_trace(p).header.metadata["order"] for p in traces(tmp_path / "env")]
    assert orders == [99, 5]


def test_a_bad_environment_variable_is_logged_and_the_request_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("TOOLREPLAY_CAPTURE_RATE", "lots")
    handler = toolreplay.capture(tmp_path)(checkout)
    assert handler(1)["receipt"] == {"charged": 1}
    assert list(tmp_path.iterdir()) == []
    (warning,) = capture_warnings(caplog)
    assert (
        'the environment: TOOLREPLAY_CAPTURE_RATE: expected a rate from 0 to 1, found "lots"'
        in warning
    )


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"sample": 1.5}, "sampling rate from 0 to 1"),
        ({"sample": True}, "sampling rate from 0 to 1"),
        ({"keep": "sometimes"}, "keep must be 'always', 'error'"),
        ({"max_bytes": 0}, "max_bytes must be a positive number"),
        ({"retain": 0}, "keep at least 1 trace"),
        ({"retain": "7d"}, "retain takes a count"),
        ({"metadata": {"capture": 1}}, "reserved"),
        ({"metadata": {"when": float("nan")}}, "not portable"),
    ],
)
def test_bad_settings_in_code_are_refused_at_once(
    tmp_path: Path, settings: dict[str, object], words: str
) -> None:
    with pytest.raises((toolreplay.CaptureConfigError, toolreplay.NonPortableValueError)) as raised:
        toolreplay.capture(tmp_path, **settings)  # type: ignore[arg-type]
    assert words in str(raised.value)


def test_generators_are_refused_at_decoration(tmp_path: Path) -> None:
    def stream() -> Iterator[int]:
        yield 1

    with pytest.raises(toolreplay.CaptureConfigError, match="generator"):
        toolreplay.capture(tmp_path)(stream)


def test_capture_logs_nothing_on_success(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolreplay.capture")
    toolreplay.capture(tmp_path)(checkout)(1)
    assert capture_warnings(caplog) == []


# --- the adapters under capture -------------------------------------------------------------


def _openai_app() -> tuple[Callable[[], str], Any, Callable[[], int], str]:
    from examples.local_openai import LocalOpenAI, response_body
    from tests.adapters.support import sync_client
    from toolreplay.adapters.openai import instrument

    api = LocalOpenAI(response_body(), "approve")
    client = instrument(sync_client(api))

    def decide() -> str:
        return client.responses.create(model="gpt-5-mini", input="Refund?").output_text

    return decide, client, lambda: api.calls, "openai.responses.create"


def _anthropic_app() -> tuple[Callable[[], str], Any, Callable[[], int], str]:
    import anthropic
    import httpx2

    from examples.local_anthropic import API_KEY, MODEL, LocalAnthropic
    from toolreplay.adapters.anthropic import instrument

    api = LocalAnthropic(final_text=lambda _results: "approve")
    http = httpx2.Client(transport=httpx2.MockTransport(api))
    client = instrument(anthropic.Anthropic(api_key=API_KEY, http_client=http, max_retries=0))

    def decide() -> str:
        # Streamed: the capture records the events when the application has read them.
        asked: Any = [{"role": "user", "content": "Refund?"}]
        with client.messages.stream(model=MODEL, max_tokens=64, messages=asked) as stream:
            return stream.get_final_text()

    return decide, client, lambda: len(api.requests), "anthropic.messages.create"


@pytest.mark.parametrize("app", [_openai_app, _anthropic_app], ids=["openai", "anthropic"])
def test_an_instrumented_client_is_captured_and_never_refused(
    app: Callable[[], tuple[Callable[[], str], Any, Callable[[], int], str]], tmp_path: Path
) -> None:
    decide, client, calls, effect = app()
    assert toolreplay.capture(tmp_path)(decide)() == "approve"
    (kept,) = traces(tmp_path)
    (operation,) = toolreplay.read_trace(kept).operations
    assert operation.effect == effect
    with toolreplay.replay(kept):  # the captured call replays with nothing sent
        sent = calls()
        assert decide() == "approve"
        assert calls() == sent

    # A request the adapter cannot record (outside the base URL): a recording refuses it;
    # a capture sends it as the plain client would and keeps no trace.
    def elsewhere() -> str:
        try:
            client.get("https://elsewhere.example/tokens", cast_to=object)
        except Exception as error:
            return type(error).__name__
        return "answered"

    plain = elsewhere()
    before = calls()
    assert toolreplay.capture(tmp_path / "other")(elsewhere)() == plain
    assert calls() == before + 1
    assert not (tmp_path / "other").exists() or traces(tmp_path / "other") == []


# --- redaction and secrets pass through (RFC 0007) ---------------------------------------

TOKEN = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3"  # shaped like an OpenAI key


@toolreplay.effect("vault.token")
def token() -> str:
    return TOKEN


def test_capture_redacts_before_writing_and_the_trace_replays_with_the_key(
    tmp_path: Path,
) -> None:
    policy = toolreplay.RedactionPolicy(paths=["$..card"], key="k" * 32)
    handler = toolreplay.capture(tmp_path, redaction=policy)(checkout)
    expected = handler(5)
    assert expected["receipt"] == {"charged": 5}
    (kept,) = traces(tmp_path)
    assert CANARY.encode() not in kept.read_bytes()
    (charged,) = [
        op for op in toolreplay.read_trace(kept).operations if op.effect == "billing.charge"
    ]
    assert str(charged.inputs["card"]).startswith("<redacted:")
    LIVE_CALLS.clear()
    with toolreplay.replay(kept, redaction=policy):
        assert handler(5) == expected
    assert LIVE_CALLS == []


def test_a_secret_abandons_the_requests_trace_and_the_request_carries_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREPLAY_SECRETS", "error")  # a capture abandons all the same

    @toolreplay.capture(tmp_path)
    def handle() -> list[object]:
        return [fetch(1), token(), fetch(2)]

    assert handle() == [fetch(1), TOKEN, fetch(2)]
    assert list(tmp_path.iterdir()) == []
    (warning,) = capture_warnings(caplog)
    assert "openai-api-key" in warning
    assert "vault.token" in warning
    assert TOKEN not in caplog.text
    with pytest.raises(toolreplay.CaptureConfigError, match="never fails the application"):
        toolreplay.capture(tmp_path, secrets="error")  # type: ignore[arg-type]


def test_a_redaction_policy_without_its_key_is_logged_and_the_request_runs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLREPLAY_REDACTION_KEY", raising=False)
    policy = toolreplay.RedactionPolicy(paths=["$..card"])
    handler = toolreplay.capture(tmp_path, redaction=policy)(checkout)
    assert handler(1)["receipt"] == {"charged": 1}
    assert list(tmp_path.iterdir()) == []
    (warning,) = capture_warnings(caplog)
    assert "RedactionKeyError" in warning
