"""A pytest plugin for the case benchmark: where each pytest process spends its time.

Loaded with `-p benchmarks.pytest_phases` when `TOOLREPLAY_BENCH_PHASES` names
a folder. Every pytest process of the run (the serial one, or the xdist
controller and each worker, which get the same `-p`) writes one JSON file there
at exit: wall-clock marks (`time.time()`, comparable across processes) and this
process's CPU seconds (`time.process_time()`) at each mark, the seconds spent
in item calls (`pytest_runtest_call`, which for a promoted case is
`verify_case`), wall and CPU, and the CPU of the first call alone (which pays for
importing the runner's modules), the CPU each thread spent in the run loop
(`/proc/self/task`: for an xdist controller the main thread apart from execnet's
receiving threads), and how many modules the process had imported when it was
configured, with which of `WATCHED_MODULES` were among them then and at exit.
The benchmark turns these files into its breakdown table.

Its cost is one hook wrapper around each item's call (a few microseconds).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path

import pytest

__all__ = ["ENVIRONMENT_VARIABLE", "process_started_at", "thread_cpu_seconds"]

ENVIRONMENT_VARIABLE = "TOOLREPLAY_BENCH_PHASES"
"""The folder each process writes its `<role>-<pid>.json` to."""
WATCHED_MODULES = (
    "asyncio",
    "toolreplay.pytest_plugin.reports",
    "toolreplay.pytest_plugin.update",
    "openai",
)
"""Modules the breakdown reports as loaded (or not) at configure time and at exit: what
the plugin defers, and the realistic runner's SDK."""

_marks: dict[str, tuple[float, float]] = {"plugin imported": (time.time(), time.process_time())}
_call_seconds = 0.0
_call_cpu_seconds = 0.0
_first_call_cpu_seconds = 0.0
_calls = 0
_loop_threads: dict[str, tuple[float, float]] = {}
"""At "loop start" and "loop end": CPU seconds of the main thread and of all the others."""


def process_started_at() -> float | None:
    """When this process started (`time.time()` scale, 10 ms steps), or None off Linux."""
    try:
        with open("/proc/self/stat", encoding="ascii") as file:
            fields = file.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as file:
            uptime = float(file.read().split()[0])
    except (OSError, IndexError, ValueError):
        return None
    # Field 22 of /proc/<pid>/stat (the 20th after the command name) is the start time,
    # in clock ticks after boot; /proc/uptime is the time since boot, now.
    return time.time() - uptime + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def _mark(name: str) -> None:
    _marks[name] = (time.time(), time.process_time())


def thread_cpu_seconds() -> tuple[float, float] | None:
    """CPU seconds (user + system) of this process's main thread, and of its other live
    threads together; None where `/proc/self/task` cannot be read."""
    main = threading.main_thread().native_id
    ticks = os.sysconf("SC_CLK_TCK")
    own = others = 0.0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/stat", encoding="ascii") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        # Fields 14 and 15 of stat (the 12th and 13th after the command name): utime, stime.
        seconds = (int(fields[11]) + int(fields[12])) / ticks
        if int(task) == main:
            own += seconds
        else:
            others += seconds
    return own, others


def _role(config: pytest.Config) -> str:
    worker = getattr(config, "workerinput", None)
    if isinstance(worker, dict):
        return str(worker.get("workerid", "worker"))  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    uses_xdist = config.pluginmanager.hasplugin("dsession")
    return "controller" if uses_xdist else "serial"


def pytest_configure(config: pytest.Config) -> None:
    _mark("configured")
    config.stash[_MODULES] = [name for name in WATCHED_MODULES if name in sys.modules]
    config.stash[_IMPORTED] = len(sys.modules)


_MODULES = pytest.StashKey[list[str]]()
_IMPORTED = pytest.StashKey[int]()


def pytest_collection() -> None:
    _mark("collection start")


def pytest_collection_finish() -> None:
    _mark("collection finish")


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop() -> Generator[None, object, object]:
    _mark("loop start")
    _snapshot_threads("loop start")
    try:
        return (yield)
    finally:
        _mark("loop end")
        _snapshot_threads("loop end")


def _snapshot_threads(name: str) -> None:
    threads = thread_cpu_seconds()
    if threads is not None:
        _loop_threads[name] = threads


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish() -> Generator[None, object, object]:
    _mark("session finish start")
    try:
        return (yield)
    finally:
        _mark("session finish end")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call() -> Generator[None, object, object]:
    global _call_seconds, _call_cpu_seconds, _first_call_cpu_seconds, _calls
    start, start_cpu = time.perf_counter(), time.process_time()
    try:
        return (yield)
    finally:
        cpu = time.process_time() - start_cpu
        _call_seconds += time.perf_counter() - start
        _call_cpu_seconds += cpu
        if not _calls:
            _first_call_cpu_seconds = cpu
        _calls += 1


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    folder = os.environ.get(ENVIRONMENT_VARIABLE)
    if not folder:
        return
    _mark("unconfigure")
    role = _role(config)
    record = {
        "role": role,
        "pid": os.getpid(),
        "started": process_started_at(),
        "marks": _marks,
        "call_seconds": _call_seconds,
        "call_cpu_seconds": _call_cpu_seconds,
        "first_call_cpu_seconds": _first_call_cpu_seconds,
        "calls": _calls,
        "loop_threads": _loop_threads,
        "modules_at_configure": config.stash.get(_MODULES, []),
        "modules_at_exit": [name for name in WATCHED_MODULES if name in sys.modules],
        "module_count_at_configure": config.stash.get(_IMPORTED, 0),
    }
    path = Path(folder) / f"{role}-{os.getpid()}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
