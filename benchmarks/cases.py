"""Case benchmark: what verifying a promoted case costs, alone and in pytest suites.

Run with `uv run python -m benchmarks.cases` (see benchmarks/README.md). It
writes a small application module (the runner) into a temporary folder, records
its traces with `toolreplay.record()`, promotes them with `toolreplay.promote()`
and measures, in one run:

- `toolreplay.verify_case()` of one case per trace size N (operations in its
  trace), and of one realistic case (`benchmarks.triage_app`: a runner module
  of 11 effects and 3 OpenAI-adapter calls, 14 operations, shaped like the
  bundled incident), split into `read_trace()` of the case trace, SHA-256 of its
  bytes and the strict replay of the runner alone;
- three suites of promoted cases run by pytest in a child process, serially and
  with `-n 2` (pytest-xdist), collected by Tool Replay's pytest plugin from their
  `case.json`: tiny cases (5 operations), realistic ones (the triage) and large
  ones (200 operations). Each run loads `benchmarks.pytest_phases`, which
  records where each pytest process (serial, or the xdist controller and each
  worker) spends its time; the report breaks each suite's runs down with it.
  Context rows: the plugin's `--collect-only` and the tiny suite run through
  each case's generated `test_case.py`; the realistic suite with this
  repository's own autoloaded pytest plugins;
- the plugin's collection of a much larger suite (`--collect`, 10,000 cases by
  default, byte copies of one promoted case under new names), `--collect-only`.

The suites run as in a project that depends on Tool Replay: pytest with only
pytest-xdist and Tool Replay's plugin (`PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 -p xdist
-p toolreplay`), since every plugin a process autoloads is a fixed cost that
each xdist worker pays again. Child pytest processes cache bytecode under a
temporary `PYTHONPYCACHEPREFIX` (as a developer's or CI's pytest does, even
where the environment sets `PYTHONDONTWRITEBYTECODE`), after untimed warm-up
runs.

The machine is assumed noisy; targets are informational: the process exits 0
whether they are met or not.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import toolreplay
from benchmarks import measure, pytest_phases, triage_app

__all__ = ["main"]

SIZES = (100, 1_000, 10_000)
SUITE_CASES = 2_000
SUITE_OPERATIONS = (5, 200)
"""Operations in the trace of each case of the synthetic suites (`--suite-operations`)."""
COLLECT_CASES = 10_000
"""Cases in the suite whose collection alone is timed (`--collect`)."""
COLLECT_SECONDS_TARGET = 2.0
"""pytest's own collection time for `COLLECT_CASES` cases: under this."""
SUITE_REPEATS = 3
"""Child pytest runs per mode, at most (and at most `--repeats`); the best is kept."""
PYTEST_TIMEOUT = 900
"""Seconds a child pytest run may take before the benchmark gives up on it."""

VERIFY_SECONDS_TARGET = 1.0
"""`verify_case` of the case whose trace has `VERIFY_TARGET_N` operations: under this."""
VERIFY_TARGET_N = 10_000
SPEEDUP_TARGET = 1.7
"""Realistic suite, wall clock serial over `-n 2`: at least this."""

APP_MODULE = "toolreplay_bench_cases_app"
"""The runner module written into the temporary folder (a name no real module has)."""
APP_HEAD = '''\
"""The application the benchmark's promoted cases replay (written by benchmarks.cases)."""

import toolreplay


@toolreplay.effect("bench.lookup")
def lookup(i: int) -> dict:
    return {"i": i, "double": 2 * i}


def _run(n: int) -> dict:
    total = 0
    for i in range(n):
        total += lookup(i)["double"]
    return {"calls": n, "total": total}
'''
REPOSITORY = Path(__file__).resolve().parent.parent
"""The checkout: on the children's `PYTHONPATH` for `benchmarks.*` and `examples.*`."""
PROJECT_PLUGINS = ("-p", "xdist", "-p", "toolreplay")
"""With autoloading off: the plugins a project that runs its cases with -n needs."""
PYTEST_FLAGS = ("-p", "no:cacheprovider", "-q", "-p", "benchmarks.pytest_phases")


# --- the applications -----------------------------------------------------------------


def write_app(folder: Path, sizes: Sequence[int]) -> ModuleType:
    """Write the runner module, with one `run_<n>` per size, and import it from `folder`."""
    functions = "".join(
        f"\n\ndef run_{n}() -> dict:\n    return _run({n})\n" for n in sorted(set(sizes))
    )
    folder.mkdir()
    (folder / f"{APP_MODULE}.py").write_text(APP_HEAD + functions, encoding="utf-8")
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    return importlib.import_module(APP_MODULE)


def forget_app(folder: Path) -> None:
    sys.modules.pop(APP_MODULE, None)
    if str(folder) in sys.path:
        sys.path.remove(str(folder))


@dataclass(frozen=True, slots=True)
class Scenario:
    """What one kind of case replays: its runner, and how to record its trace."""

    label: str
    operations: int
    runner: str
    run: Callable[[], object]
    record: Callable[[Path], object]
    """Record the scenario into a new trace at the path given; its return value."""


def synthetic(app: ModuleType, n: int) -> Scenario:
    run: Callable[[], object] = getattr(app, f"run_{n}")

    def record(path: Path) -> object:
        with toolreplay.record(path):
            return run()

    return Scenario(f"N={n:,}", n, f"{APP_MODULE}:run_{n}", run, record)


REALISTIC = Scenario(
    "triage",
    triage_app.OPERATIONS,
    triage_app.RUNNER,
    triage_app.run_triage,
    triage_app.record_triage,
)


# --- step 1: one case per scenario ------------------------------------------------------


@dataclass(slots=True)
class SizeResult:
    """Best-of-repeats timings (seconds) for the case of one scenario."""

    label: str
    n: int
    repeats: int
    trace_bytes: int
    promote: float
    verify: float
    verify_gc_on: float
    read_trace: float
    sha256: float
    replay: float

    def per_op_us(self, seconds: float) -> float:
        return seconds / self.n * 1e6

    @property
    def rest(self) -> float:
        """What verify spends beyond load, hash and replay: manifest, runner, expectation."""
        return self.verify - self.read_trace - self.sha256 - self.replay


def measure_case(scenario: Scenario, repeats: int, directory: Path) -> SizeResult:
    trace_path = directory / "traces" / f"{scenario.label}.trp"
    expected = scenario.record(trace_path)
    case_dir = directory / "cases" / scenario.label
    with measure.gc_paused():
        start = time.perf_counter()
        promoted = toolreplay.promote(
            trace_path, case_dir, name="case", runner=scenario.runner, expected=expected
        )
        promote = time.perf_counter() - start
    case_trace = promoted.trace_path
    data = case_trace.read_bytes()
    n = scenario.operations
    loaded = toolreplay.read_trace(case_trace)
    if len(loaded) != n:
        raise RuntimeError(f"{case_trace}: expected {n} operations, got {loaded.describe_state()}")

    def replay_only() -> object:
        with toolreplay.replay(loaded):
            return scenario.run()

    if replay_only() != expected or toolreplay.verify_case(case_dir).operations_replayed != n:
        raise RuntimeError(f"{case_dir}: replay does not give back the recorded value")

    def verify_gc_on() -> float:
        gc.collect()
        start = time.perf_counter()
        toolreplay.verify_case(case_dir)
        return time.perf_counter() - start

    verify: list[float] = []
    verify_gc: list[float] = []
    reads: list[float] = []
    hashes: list[float] = []
    replays: list[float] = []
    for _ in range(repeats):
        # Round-robin, so that a noisy moment hurts one repeat of every figure.
        verify.append(measure.time_action(lambda: toolreplay.verify_case(case_dir)))
        verify_gc.append(verify_gc_on())
        reads.append(measure.time_action(lambda: toolreplay.read_trace(case_trace)))
        hashes.append(measure.time_action(lambda: hashlib.sha256(data).hexdigest()))
        replays.append(measure.time_action(replay_only))
    return SizeResult(
        label=scenario.label,
        n=n,
        repeats=repeats,
        trace_bytes=len(data),
        promote=promote,
        verify=min(verify),
        verify_gc_on=min(verify_gc),
        read_trace=min(reads),
        sha256=min(hashes),
        replay=min(replays),
    )


# --- step 2: suites under pytest --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mode:
    """One way of running a suite under pytest (always with `PYTEST_FLAGS`)."""

    label: str
    args: tuple[str, ...] = PROJECT_PLUGINS
    collect_only: bool = False
    autoload: bool = False
    """Let pytest load every installed plugin (this repository's development set)."""


SERIAL = Mode("serial")
PARALLEL = Mode("-n 2", (*PROJECT_PLUGINS, "-n", "2"))
COLLECT = Mode("serial --collect-only", (*PROJECT_PLUGINS, "--collect-only"), collect_only=True)
OLD_SERIAL = Mode("generated modules, serial", ("-p", "xdist", "--import-mode=importlib"))
OLD_PARALLEL = Mode(
    "generated modules, -n 2", ("-p", "xdist", "--import-mode=importlib", "-n", "2")
)
REPO_SERIAL = Mode("repository plugins, serial", (), autoload=True)
REPO_PARALLEL = Mode("repository plugins, -n 2", ("-n", "2"), autoload=True)
MEASURED = (SERIAL, PARALLEL)


@dataclass(frozen=True, slots=True)
class ProcessPhases:
    """One pytest process of a run, as `benchmarks.pytest_phases` recorded it."""

    role: str
    started: float | None
    marks: dict[str, tuple[float, float]]
    call_seconds: float
    call_cpu_seconds: float
    first_call_cpu_seconds: float
    """CPU of the first item call alone: the runner's imports and first-use set-up."""
    calls: int
    loop_threads: dict[str, tuple[float, float]]
    """At "loop start" and "loop end": CPU of the main thread and of the other threads."""
    module_count: int
    modules_at_configure: list[str]
    modules_at_exit: list[str]

    def span(self, first: str, last: str) -> tuple[float, float] | None:
        """(wall, CPU) seconds between two marks, None when one is missing."""
        if first not in self.marks or last not in self.marks:
            return None
        return (
            self.marks[last][0] - self.marks[first][0],
            self.marks[last][1] - self.marks[first][1],
        )

    @property
    def startup(self) -> tuple[float | None, float]:
        """Wall (None without a start time) and CPU from process start to configured."""
        wall, cpu = self.marks["configured"]
        return (None if self.started is None else wall - self.started), cpu

    @property
    def cpu(self) -> float:
        return self.marks["unconfigure"][1]

    def parts(self) -> dict[str, float]:
        """This process's CPU seconds, split as `ADDED_PARTS` names them."""
        collect = self.span("collection start", "collection finish")
        loop = self.span("loop start", "loop end")
        start, collected = self.marks["configured"][1], collect[1] if collect else 0.0
        looped = loop[1] if loop else 0.0
        first = self.first_call_cpu_seconds
        return {
            "start-up": start,
            "collection": collected,
            "first case": first,
            "other cases": self.call_cpu_seconds - first,
            "per-test protocol": looped - self.call_cpu_seconds,
            "the rest": self.cpu - start - collected - looped,
        }

    @property
    def loop_threads_cpu(self) -> tuple[float, float] | None:
        """CPU of the run loop in the main thread and in the other threads (for an xdist
        controller, execnet's receiving threads); None when not recorded."""
        if "loop start" not in self.loop_threads or "loop end" not in self.loop_threads:
            return None
        (main_start, others_start) = self.loop_threads["loop start"]
        (main_end, others_end) = self.loop_threads["loop end"]
        return main_end - main_start, others_end - others_start


def read_phases(folder: Path) -> list[ProcessPhases]:
    processes: list[ProcessPhases] = []
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        processes.append(
            ProcessPhases(
                role=record["role"],
                started=record["started"],
                marks={name: (wall, cpu) for name, (wall, cpu) in record["marks"].items()},
                call_seconds=record["call_seconds"],
                call_cpu_seconds=record["call_cpu_seconds"],
                first_call_cpu_seconds=record["first_call_cpu_seconds"],
                calls=record["calls"],
                loop_threads={
                    name: (main, others) for name, (main, others) in record["loop_threads"].items()
                },
                module_count=record["module_count_at_configure"],
                modules_at_configure=record["modules_at_configure"],
                modules_at_exit=record["modules_at_exit"],
            )
        )
    order = {"serial": 0, "controller": 1}
    return sorted(processes, key=lambda p: (order.get(p.role, 2), p.role))


@dataclass(slots=True)
class PytestRun:
    wall: float
    returncode: int
    summary: str
    reported: float | None
    """The seconds pytest itself reports on its summary line ("... in 3.21s")."""
    tail: str
    processes: list[ProcessPhases] = field(default_factory=list[ProcessPhases])


_SUMMARY_SECONDS = re.compile(r" in (?P<seconds>[0-9.]+)s\b")


def run_pytest(suite: Path, app_folder: Path, mode: Mode) -> PytestRun:
    """Run pytest on `suite` in a child process; its wall clock, as the parent sees it."""
    phases = Path(tempfile.mkdtemp(prefix="phases-", dir=app_folder.parent))
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join([str(app_folder), str(REPOSITORY)])
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    environment["PYTHONPYCACHEPREFIX"] = str(app_folder.parent / "pycache")
    environment[pytest_phases.ENVIRONMENT_VARIABLE] = str(phases)
    if mode.autoload:
        environment.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
    else:
        environment["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    command = [sys.executable, "-m", "pytest", *PYTEST_FLAGS, *mode.args, str(suite)]
    start = time.perf_counter()
    result = subprocess.run(
        command,
        cwd=suite.parent,
        env=environment,
        capture_output=True,
        text=True,
        timeout=PYTEST_TIMEOUT,
        check=False,
    )
    wall = time.perf_counter() - start
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    summary = lines[-1] if lines else "(no output)"
    found = _SUMMARY_SECONDS.search(summary)
    return PytestRun(
        wall=wall,
        returncode=result.returncode,
        summary=summary,
        reported=float(found["seconds"]) if found else None,
        tail=(result.stdout[-1500:] + result.stderr[-1500:]).strip(),
        processes=read_phases(phases),
    )


@dataclass(slots=True)
class Suite:
    """A folder of promoted cases of one scenario, and the modes it is run in."""

    scenario: Scenario
    folder: Path
    cases: int
    modes: tuple[Mode, ...]
    in_process: float = 0.0
    runs: dict[Mode, list[PytestRun]] = field(default_factory=dict[Mode, list[PytestRun]])

    def best(self, mode: Mode) -> PytestRun:
        return min(self.runs[mode], key=lambda run: run.wall)

    def speedup(self, serial: Mode = SERIAL, parallel: Mode = PARALLEL) -> float:
        return self.best(serial).wall / self.best(parallel).wall

    def expected_summary(self, mode: Mode) -> str:
        if mode.collect_only:
            return f"{self.cases} test{'s' if self.cases > 1 else ''} collected"
        return f"{self.cases} passed"

    def passed(self, mode: Mode, run: PytestRun) -> bool:
        """The run exited 0 and its summary line is exactly "<cases> passed in ..."."""
        return run.returncode == 0 and run.summary.startswith(f"{self.expected_summary(mode)} in ")

    def all_passed(self, mode: Mode) -> bool:
        return all(self.passed(mode, run) for run in self.runs[mode])


def build_suite(scenario: Scenario, cases: int, modes: tuple[Mode, ...], directory: Path) -> Suite:
    """Promote one case of `scenario` and copy it to `cases` folders under new names."""
    trace_path = directory / "traces" / f"suite-{scenario.label}.trp"
    expected = scenario.record(trace_path)
    folder = directory / f"suite-{scenario.label}"
    first = directory / "promoted" / scenario.label
    toolreplay.promote(trace_path, first, name="case", runner=scenario.runner, expected=expected)
    copy_case(first, folder, cases, prefix="case")
    return Suite(scenario, folder, cases, modes)


def copy_case(case: Path, destination: Path, copies: int, *, prefix: str = "copy") -> None:
    """`copies` byte copies of a promoted case, each under its own name (a valid case)."""
    manifest = toolreplay.read_case_manifest(case)
    trace = (case / manifest.trace_path).read_bytes()
    test_module = (case / "test_case.py").read_bytes()
    for index in range(copies):
        name = f"{prefix}_{index:05d}"
        folder = destination / name
        folder.mkdir(parents=True)
        (folder / "case.json").write_bytes(dataclasses.replace(manifest, name=name).to_json())
        (folder / manifest.trace_path).write_bytes(trace)
        (folder / "test_case.py").write_bytes(test_module)


def verify_in_process(suite: Suite) -> float:
    """`verify_case` of every case of the suite in this process, once, gc as under pytest."""
    folders = sorted(suite.folder.iterdir())
    start = time.perf_counter()
    for folder in folders:
        toolreplay.verify_case(folder)
    return time.perf_counter() - start


@dataclass(slots=True)
class CollectionResult:
    """`--collect-only` of a large suite through the plugin (best of `runs`)."""

    cases: int
    runs: list[PytestRun]

    @property
    def best(self) -> PytestRun:
        return min(self.runs, key=lambda run: run.wall)

    @property
    def expected_summary(self) -> str:
        return f"{self.cases} test{'s' if self.cases > 1 else ''} collected in "

    def all_collected(self) -> bool:
        return all(
            run.returncode == 0 and run.summary.startswith(self.expected_summary)
            for run in self.runs
        )


def measure_suites(
    suites: Sequence[Suite],
    collect_cases: int,
    repeats: int,
    app_folder: Path,
    directory: Path,
) -> CollectionResult:
    for suite in suites:
        measure.progress(f"verify_case of the {suite.scenario.label} suite in this process ...")
        suite.in_process = verify_in_process(suite)
    measure.progress("warm-up pytest runs (bytecode caches) ...")
    for suite in suites:
        first = sorted(suite.folder.iterdir())[0]
        for mode in suite.modes:
            if "-n" in mode.args:  # the controller and workers import what serial runs do
                run_pytest(first, app_folder, mode)
    for repeat in range(repeats):
        # Round-robin, so that a noisy moment hurts one run of every mode.
        for suite in suites:
            measure.progress(
                f"pytest runs, {suite.scenario.label} suite, round {repeat + 1}/{repeats} "
                f"(load average {os.getloadavg()[0]:.2f}) ..."
            )
            for mode in suite.modes:
                suite.runs.setdefault(mode, []).append(run_pytest(suite.folder, app_folder, mode))

    large = directory / "collect"
    measure.progress(f"copying one case to {collect_cases:,} folders ...")
    copy_case(sorted(suites[0].folder.iterdir())[0], large, collect_cases)
    collected = [run_pytest(large, app_folder, COLLECT) for _ in range(repeats)]
    return CollectionResult(collect_cases, collected)


# --- report ---------------------------------------------------------------------------


def _share(part: float, whole: float) -> str:
    return f"{part:.4f} ({part / whole:.0%})"


def _pair(span: tuple[float | None, float] | None) -> str:
    """ "wall (cpu)" seconds, or "-"."""
    if span is None:
        return "-"
    wall, cpu = span
    return f"{'?' if wall is None else f'{wall:.2f}'} ({cpu:.2f})"


def breakdown(suite: Suite) -> list[str]:
    """Where each process of the best serial and -n 2 runs spent its time."""
    headers = [
        "run",
        "process",
        "start-up s",
        "collect s",
        "run loop s",
        "item calls s",
        "first call s",
        "items",
        "loop - calls ms/item",
        "finish s",
        "CPU s",
        "modules",
    ]
    rows: list[list[str]] = []
    totals: dict[Mode, float] = {}
    for mode in MEASURED:
        run = suite.best(mode)
        totals[mode] = sum(process.cpu for process in run.processes)
        for process in run.processes:
            loop = process.span("loop start", "loop end")
            per_item = "-"
            if loop is not None:
                items = process.calls or suite.cases
                per_item = f"{(loop[1] - process.call_cpu_seconds) / items * 1e3:.2f}"
            deferred = [m for m in pytest_phases.WATCHED_MODULES if m != "openai"]
            loaded = [m for m in deferred if m in process.modules_at_configure]
            rows.append(
                [
                    mode.label,
                    process.role,
                    _pair(process.startup),
                    _pair(process.span("collection start", "collection finish")),
                    _pair(loop),
                    "-"
                    if not process.calls
                    else f"{process.call_seconds:.2f} ({process.call_cpu_seconds:.2f})",
                    "-" if not process.calls else f"({process.first_call_cpu_seconds:.2f})",
                    f"{process.calls:,}",
                    per_item,
                    _pair(process.span("loop end", "unconfigure")),
                    f"{process.cpu:.2f}",
                    f"{process.module_count}" + (f" +{','.join(loaded)}" if loaded else ""),
                ]
            )
    if not rows:
        return ["(no phase records: benchmarks.pytest_phases did not run)"]
    lines = measure.table(headers, rows)
    serial, parallel = totals[SERIAL], totals[PARALLEL]
    lines.append(
        f"CPU of all processes: serial {serial:.2f} s, -n 2 {parallel:.2f} s "
        f"({parallel - serial:+.2f} s, {parallel / serial:.2f}x); on 2 cores the -n 2 run "
        f"cannot take less than {parallel / 2:.2f} s of wall, so the most -n 2 can gain on "
        f"two otherwise idle cores is {cpu_bound_speedup(suite):.2f}x"
    )
    return lines + speedup_floor(suite)


ADDED_PARTS: tuple[str, ...] = (
    "start-up",
    "collection",
    "first case",
    "per-test protocol",
    "other cases",
    "the rest",
)
"""How the CPU of a run is split to say what -n 2 adds to a serial run."""
FIXED_PARTS: tuple[str, ...] = ("start-up", "collection", "first case", "the rest")
"""What each extra process adds once, however many cases the suite holds."""


def added_by_workers(suite: Suite) -> dict[str, float]:
    """CPU seconds the -n 2 run spends beyond the serial one, by `ADDED_PARTS`."""
    added: dict[str, float] = dict.fromkeys(ADDED_PARTS, 0.0)
    for mode, sign in ((PARALLEL, 1.0), (SERIAL, -1.0)):
        for process in suite.best(mode).processes:
            for name, seconds in process.parts().items():
                added[name] += sign * seconds
    return added


def speedup_floor(suite: Suite) -> list[str]:
    """What -n 2 adds, part by part, and how long a case must be for 1.7x on two cores."""
    added = added_by_workers(suite)
    serial = sum(p.cpu for p in suite.best(SERIAL).processes)
    controller = [p for p in suite.best(PARALLEL).processes if p.role == "controller"]
    lines = [
        f"-n 2 adds {sum(added.values()):+.2f} s of CPU to the serial run: "
        + ", ".join(f"{name} {seconds:+.2f}" for name, seconds in added.items())
        + " (start-up: the controller and a second worker; collection: each worker "
        "collects every case; first case: each worker imports the runner's modules; "
        "per-test protocol: the controller's run loop and the workers' sending of "
        "reports; other cases: the same cases run side by side on two cores)"
    ]
    if controller and (threads := controller[0].loop_threads_cpu) is not None:
        main, receiving = threads
        lines.append(
            f"the controller's run loop: {(main + receiving) / suite.cases * 1e3:.2f} ms of "
            f"CPU per test, {receiving / suite.cases * 1e3:.2f} ms in execnet's receiving "
            "threads (reading and unpacking the six messages a test costs: logstart, three "
            "reports, logfinish, protocol complete) and "
            f"{main / suite.cases * 1e3:.2f} ms in its main thread (scheduling, report "
            "hooks, terminal)"
        )
    fixed = sum(added[name] for name in FIXED_PARTS)
    per_test = added["per-test protocol"] / suite.cases
    # 2 * serial / (serial + added) >= target  <=>  serial >= target / (2 - target) * added
    factor = SPEEDUP_TARGET / (2 - SPEEDUP_TARGET)
    needed = factor * (fixed / suite.cases + per_test)
    lines.append(
        f"for {SPEEDUP_TARGET:g}x on two idle cores a serial run must take {factor:.2f}x the "
        f"CPU -n 2 adds; leaving out the side-by-side slow-down, -n 2 adds {fixed:.2f} s "
        f"once and {per_test * 1e3:.2f} ms per case, so at {suite.cases:,} cases a case "
        f"needs at least {needed * 1e3:.1f} ms of CPU in a serial run (these take "
        f"{serial / suite.cases * 1e3:.1f} ms)"
    )
    return lines


def cpu_bound_speedup(suite: Suite) -> float:
    """Serial CPU over half the -n 2 run's CPU: the wall-clock speed-up of two idle cores,
    each busy all the time. Unlike the wall clock, CPU seconds hardly change with the load
    other programs put on the machine."""
    serial = sum(p.cpu for p in suite.best(SERIAL).processes)
    parallel = sum(p.cpu for p in suite.best(PARALLEL).processes)
    return serial / (parallel / 2) if parallel else 0.0


def report(
    results: Sequence[SizeResult],
    suites: Sequence[Suite],
    collection: CollectionResult,
    repeats: int,
    elapsed: float,
) -> str:
    us = measure.us_unit()
    runs = min(len(runs) for suite in suites for runs in suite.runs.values())
    load = os.getloadavg()
    out = [
        measure.environment(cpus=True),
        f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (/proc/loadavg)",
        measure.repeats_line(
            ((r.n, r.repeats) for r in results),
            f"in-process figure, best of {runs} per pytest run",
        ),
        "gc disabled during every in-process timed section (gc.collect() first), except the "
        "'verify gc on' column; everything is written to a temporary directory",
        f"runner {APP_MODULE}:run_<N> calls the effect bench.lookup(i) -> "
        "{'i': i, 'double': 2 * i} for i in range(N) and returns {'calls': N, 'total': ...}; "
        f"runner {triage_app.RUNNER} (triage) makes {triage_app.OPERATIONS} calls: 11 effects "
        "and 3 responses.create through the OpenAI adapter, with a client built per run",
        "",
        "verify_case of one promoted case per scenario (runner module already imported)",
        "",
    ]
    headers = [
        "case",
        "N",
        "trace KB",
        "verify s",
        f"verify {us}/op",
        "verify gc on s",
        "promote s",
    ]
    rows = [
        [
            r.label,
            f"{r.n:,}",
            f"{r.trace_bytes / 1e3:,.1f}",
            f"{r.verify:.4f}",
            f"{r.per_op_us(r.verify):.2f}",
            f"{r.verify_gc_on:.4f}",
            f"{r.promote:.4f}",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))
    out += [
        "",
        "where verify_case spends its time (seconds, share of 'verify s'); measured "
        "separately, on the case's own trace",
        "",
    ]
    headers = ["case", "read_trace s", "sha256 s", "replay s", f"replay {us}/op", "rest s"]
    rows = [
        [
            r.label,
            _share(r.read_trace, r.verify),
            _share(r.sha256, r.verify),
            _share(r.replay, r.verify),
            f"{r.per_op_us(r.replay):.2f}",
            _share(r.rest, r.verify),
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))
    out += [
        "read_trace: read + parse + footer digest check; sha256: hashlib.sha256 of the bytes "
        "(verify_case's own integrity check, done before parsing); replay: replay(loaded trace) "
        "of the runner alone (for the triage, its OpenAI client and the SDK's request and "
        "response handling included); rest: verify minus the three (manifest, runner lookup, "
        "expectation, timing noise)",
        "",
        f"suites of {suites[0].cases:,} promoted cases each, pytest in a child process: "
        + " ".join(PYTEST_FLAGS)
        + " "
        + " ".join(PROJECT_PLUGINS)
        + ", PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 (rows in parentheses: context)",
        "",
    ]
    headers = ["suite", "pytest", "wall s", "per case ms", "pytest-reported s", "start+exit s"]
    rows = []
    for suite in suites:
        for mode in suite.modes:
            best = suite.best(mode)
            rows.append(
                [
                    suite.scenario.label,
                    mode.label if mode in MEASURED else f"({mode.label})",
                    f"{best.wall:.2f}",
                    f"{best.wall / suite.cases * 1e3:.2f}",
                    "-" if best.reported is None else f"{best.reported:.2f}",
                    "-" if best.reported is None else f"{best.wall - best.reported:.2f}",
                ]
            )
        rows.append(
            [
                suite.scenario.label,
                "(verify_case in this process)",
                f"{suite.in_process:.2f}",
                f"{suite.in_process / suite.cases * 1e3:.2f}",
                "-",
                "-",
            ]
        )
    out.extend(measure.table(headers, rows))
    out += [
        "wall s: the child process as the parent sees it (interpreter start, plugins, "
        "collection, the run); pytest-reported s: the time on pytest's summary line; "
        "start+exit s: the difference. Context: --collect-only is the plugin's collection "
        "alone (every -n 2 worker collects every case again); generated modules runs the "
        "suite without the plugin (--import-mode=importlib), each case imported from its "
        "test_case.py; repository plugins lets pytest autoload every plugin installed here "
        "(hypothesis, syrupy, pytest-textual-snapshot, pytest-asyncio, anyio: a fixed cost "
        "in every process, so paid three times with -n 2); verify_case in this process is "
        "the floor: the cases alone, one after another, no pytest",
        "",
    ]
    speedups = [
        f"{suite.scenario.label} {suite.speedup():.2f}x"
        + (
            f" (repository plugins {suite.speedup(REPO_SERIAL, REPO_PARALLEL):.2f}x)"
            if REPO_PARALLEL in suite.modes
            else ""
        )
        for suite in suites
    ]
    out.append("speed-up serial / -n 2 (wall): " + ", ".join(speedups))
    out.append(
        "most -n 2 can gain on two idle cores (serial CPU / half the -n 2 CPU): "
        + ", ".join(f"{suite.scenario.label} {cpu_bound_speedup(suite):.2f}x" for suite in suites)
    )
    for suite in suites:
        out += [
            "",
            f"{suite.scenario.label} suite: where each process of the best serial and -n 2 "
            "runs spends its time (wall (CPU) seconds)",
            "",
        ]
        out.extend(breakdown(suite))
    out += [
        "start-up: process start to pytest configured (interpreter, pytest, plugins; for a "
        "worker also execnet's bootstrap and waiting for the controller to start it); "
        "collect: pytest's collection of every case (each -n 2 worker collects all of them); "
        "run loop: pytest_runtestloop, for the controller the scheduling and every report "
        "the workers send (logstart, setup, call and teardown reports, logfinish, one message "
        "each); item calls: inside pytest_runtest_call, i.e. verify_case; first call: the "
        "CPU of the first item call alone (it imports the runner's modules, for the triage "
        "openai); loop - calls: the "
        "per-item cost of pytest's protocol, and with -n 2 of sending or receiving the "
        "reports; finish: loop end to unconfigure (for the controller: waiting for the "
        "workers to exit); modules: imported when configured, with any of the plugin's "
        "deferred imports (" + ", ".join(pytest_phases.WATCHED_MODULES[:-1]) + ") that were",
    ]
    for suite in suites:
        for mode in suite.modes:
            failed = [run for run in suite.runs[mode] if not suite.passed(mode, run)]
            if failed:
                out += [
                    "",
                    f"a pytest run ({suite.scenario.label}, {mode.label}) did not report "
                    f'"{suite.expected_summary(mode)}" (exit {failed[0].returncode}):',
                ]
                out += [f"  {line}" for line in failed[0].tail.splitlines()]
    best = collection.best
    collect_cpu = [
        span[1]
        for process in best.processes
        if (span := process.span("collection start", "collection finish")) is not None
    ]
    out += [
        "",
        f"the plugin collecting {collection.cases:,} cases (--collect-only, best of "
        f"{len(collection.runs)}): pytest reports {best.reported or 0:.2f} s of "
        f"collection ({collect_cpu[0] if collect_cpu else 0:.2f} s of CPU), {best.wall:.2f} s "
        f"wall with interpreter start and exit; summary line: {best.summary}",
    ]

    out += ["", measure.TARGETS_HEADING]
    at_target = [r for r in results if r.n == VERIFY_TARGET_N and r.label.startswith("N=")]
    if at_target:
        seconds = at_target[0].verify
        out.append(
            measure.target_line(
                seconds < VERIFY_SECONDS_TARGET,
                f"verify_case, N={VERIFY_TARGET_N:,}: {seconds:.3f} s "
                f"(target < {VERIFY_SECONDS_TARGET:g} s)",
            )
        )
    else:
        out.append(
            measure.skip_line(
                f"verify_case under {VERIFY_SECONDS_TARGET:g} s at N={VERIFY_TARGET_N:,}: "
                "that size was not measured"
            )
        )
    for suite in suites:
        speedup = suite.speedup()
        text = (
            f"pytest -n 2 faster than serial, {suite.cases:,} {suite.scenario.label} cases: "
            f"{speedup:.2f}x (target >= {SPEEDUP_TARGET:g}x on 2 cores; this machine has "
            f"{os.cpu_count()})"
        )
        if suite.scenario is REALISTIC:
            out.append(measure.target_line(speedup >= SPEEDUP_TARGET, text))
        else:
            out.append(f"  [INFO] {text}; not a target for this suite, see the README")
    reported = collection.best.reported
    out.append(
        measure.target_line(
            reported is not None and reported < COLLECT_SECONDS_TARGET,
            f"collection of {collection.cases:,} cases, as pytest reports it: "
            f"{reported or 0:.2f} s (target < {COLLECT_SECONDS_TARGET:g} s)",
        )
    )
    out.append(
        measure.target_line(
            collection.all_collected(),
            f'every --collect-only run reports "{collection.expected_summary}..."',
        )
    )
    for suite in suites:
        for mode in suite.modes:
            if mode.collect_only:
                continue
            out.append(
                measure.target_line(
                    suite.all_passed(mode),
                    f"every {suite.scenario.label} {mode.label} run reports "
                    f'"{suite.expected_summary(mode)}" ({runs} run{"s" if runs > 1 else ""})',
                )
            )
    out += ["", measure.total_run_time(elapsed)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cases",
        description="Benchmark verify_case of promoted cases, and suites of them under pytest.",
    )
    measure.add_repeats(
        parser,
        per="in-process measurement",
        note=f"; pytest runs get at most {SUITE_REPEATS}",
    )
    measure.add_sizes(parser, SIZES, "operations in the trace of each verified case")
    parser.add_argument(
        "--suite",
        type=int,
        default=SUITE_CASES,
        metavar="CASES",
        help=f"number of promoted cases in each pytest suite (default {SUITE_CASES})",
    )
    parser.add_argument(
        "--suite-operations",
        type=int,
        nargs="+",
        default=list(SUITE_OPERATIONS),
        metavar="N",
        help="operations in each case of the synthetic suites, one suite per N "
        f"(default: {' '.join(str(n) for n in SUITE_OPERATIONS)}); the realistic suite "
        "always runs",
    )
    parser.add_argument(
        "--collect",
        type=int,
        default=COLLECT_CASES,
        metavar="CASES",
        help=f"number of cases whose collection alone is timed (default {COLLECT_CASES})",
    )
    args = parser.parse_args(argv)
    repeats: int = args.repeats
    sizes: list[int] = sorted(set(args.sizes))
    cases: int = args.suite
    collect_cases: int = args.collect
    suite_operations: list[int] = sorted(set(args.suite_operations))
    if min(repeats, sizes[0], cases, collect_cases, suite_operations[0]) < 1:
        parser.error(
            "--repeats, --suite, --collect, every size and every --suite-operations must be "
            "at least 1"
        )

    started = time.perf_counter()
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-cases-") as temporary:
        directory = Path(temporary)
        (directory / "traces").mkdir()
        app_folder = directory / "app"
        app = write_app(app_folder, [*sizes, *suite_operations])
        try:
            for n in sizes:
                measure.progress(f"measuring verify_case, N={n:,} ...")
                results.append(
                    measure_case(synthetic(app, n), measure.repeats_for(n, repeats), directory)
                )
            measure.progress("measuring verify_case, triage ...")
            results.append(
                measure_case(
                    REALISTIC, measure.repeats_for(REALISTIC.operations, repeats), directory
                )
            )
            tiny, *larger = suite_operations
            context = (COLLECT, OLD_SERIAL, OLD_PARALLEL)
            suites = [
                build_suite(synthetic(app, tiny), cases, (*MEASURED, *context), directory),
                build_suite(REALISTIC, cases, (*MEASURED, REPO_SERIAL, REPO_PARALLEL), directory),
                *(build_suite(synthetic(app, n), cases, MEASURED, directory) for n in larger),
            ]
            collection = measure_suites(
                suites, collect_cases, min(repeats, SUITE_REPEATS), app_folder, directory
            )
        finally:
            forget_app(app_folder)
    print(report(results, suites, collection, repeats, time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
