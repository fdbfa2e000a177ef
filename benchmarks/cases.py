"""Case benchmark: what verifying a promoted case costs, alone and as a pytest suite.

Run with `uv run python -m benchmarks.cases` (see benchmarks/README.md). It
writes a small application module (the runner) into a temporary folder, records
its traces with `toolreplay.record()`, promotes them with `toolreplay.promote()`
and measures, in one run:

- `toolreplay.verify_case()` of one case per trace size N (operations in its
  trace), split into `read_trace()` of the case trace, SHA-256 of its bytes and
  the strict replay of the runner alone;
- a suite of promoted cases with small traces run by pytest in a child process,
  serially and with `-n 2` (pytest-xdist): the child's wall clock, and the
  time promoting the suite took. Three context runs without autoloaded pytest
  plugins (one of them `--collect-only`) show where the child's time goes.

The machine is assumed noisy; targets are informational: the process exits 0
whether they are met or not.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import toolreplay
from benchmarks import measure

__all__ = ["main"]

SIZES = (100, 1_000, 10_000)
SUITE_CASES = 500
SUITE_OPERATIONS = 5
"""Operations in the trace of each suite case."""
SUITE_REPEATS = 3
"""Child pytest runs per mode, at most (and at most `--repeats`); the best is kept."""
PYTEST_TIMEOUT = 600
"""Seconds a child pytest run may take before the benchmark gives up on it."""

VERIFY_SECONDS_TARGET = 1.0
"""`verify_case` of the case whose trace has `VERIFY_TARGET_N` operations: under this."""
VERIFY_TARGET_N = 10_000
SPEEDUP_TARGET = 1.3
"""Suite wall clock serial over `-n 2`: above this."""

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
PYTEST_FLAGS = ("--import-mode=importlib", "-p", "no:cacheprovider", "-q")


# --- the application ------------------------------------------------------------------


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


def runner(n: int) -> str:
    return f"{APP_MODULE}:run_{n}"


def record_trace(app: ModuleType, n: int, path: Path) -> object:
    """Record `run_<n>` into a new trace at `path`; its return value."""
    run: Callable[[], object] = getattr(app, f"run_{n}")
    with toolreplay.record(path):
        return run()


# --- step 1: one case per size ----------------------------------------------------------


@dataclass(slots=True)
class SizeResult:
    """Best-of-repeats timings (seconds) for the case of one trace size."""

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


def measure_size(app: ModuleType, n: int, repeats: int, directory: Path) -> SizeResult:
    trace_path = directory / "traces" / f"ops-{n}.trp"
    expected = record_trace(app, n, trace_path)
    case_dir = directory / "cases" / f"ops-{n}"
    with measure.gc_paused():
        start = time.perf_counter()
        promoted = toolreplay.promote(
            trace_path, case_dir, name=f"ops_{n}", runner=runner(n), expected=expected
        )
        promote = time.perf_counter() - start
    case_trace = promoted.trace_path
    data = case_trace.read_bytes()
    run: Callable[[], object] = getattr(app, f"run_{n}")
    loaded = toolreplay.read_trace(case_trace)
    if len(loaded) != n:
        raise RuntimeError(f"{case_trace}: expected {n} operations, got {loaded.describe_state()}")

    def replay_only() -> object:
        with toolreplay.replay(loaded):
            return run()

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


# --- step 2: a suite under pytest -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Mode:
    """One way of running the suite under pytest (always with `PYTEST_FLAGS`)."""

    label: str
    args: tuple[str, ...] = ()
    autoload: bool = True
    """False: `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`, so no installed plugin loads unless named."""
    collect_only: bool = False


SERIAL = Mode("serial")
PARALLEL = Mode("-n 2", ("-n", "2"))
COLLECT = Mode(
    "serial --collect-only, no autoload", ("--collect-only",), autoload=False, collect_only=True
)
SERIAL_BARE = Mode("serial, no autoload", autoload=False)
PARALLEL_BARE = Mode("-n 2, no autoload", ("-p", "xdist", "-n", "2"), autoload=False)
CONTEXT_MODES = (COLLECT, SERIAL_BARE, PARALLEL_BARE)
"""Informational runs that show where the time of the two measured ones goes."""
MODES = (SERIAL, PARALLEL, *CONTEXT_MODES)


@dataclass(slots=True)
class PytestRun:
    wall: float
    returncode: int
    summary: str
    reported: float | None
    """The seconds pytest itself reports on its summary line ("... in 3.21s")."""
    tail: str


@dataclass(slots=True)
class SuiteResult:
    cases: int
    operations: int
    promote: float
    in_process: float
    runs: dict[Mode, list[PytestRun]]

    def best(self, mode: Mode) -> PytestRun:
        return min(self.runs[mode], key=lambda run: run.wall)

    @property
    def speedup(self) -> float:
        return self.best(SERIAL).wall / self.best(PARALLEL).wall

    def expected_summary(self, mode: Mode) -> str:
        if mode.collect_only:
            return f"{self.cases} test{'s' if self.cases > 1 else ''} collected"
        return f"{self.cases} passed"

    def passed(self, mode: Mode, run: PytestRun) -> bool:
        """The run exited 0 and its summary line is exactly "<cases> passed in ..."."""
        return run.returncode == 0 and run.summary.startswith(f"{self.expected_summary(mode)} in ")

    def all_passed(self, mode: Mode) -> bool:
        return all(self.passed(mode, run) for run in self.runs[mode])


_SUMMARY_SECONDS = re.compile(r" in (?P<seconds>[0-9.]+)s\b")


def run_pytest(suite: Path, app_folder: Path, mode: Mode) -> PytestRun:
    """Run pytest on `suite` in a child process; its wall clock, as the parent sees it."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = str(app_folder)
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
    )


def measure_suite(app: ModuleType, cases: int, repeats: int, directory: Path) -> SuiteResult:
    trace_path = directory / "traces" / f"suite-{SUITE_OPERATIONS}.trp"
    expected = record_trace(app, SUITE_OPERATIONS, trace_path)
    suite = directory / "suite"
    names = [f"case_{index:04d}" for index in range(cases)]
    measure.progress(f"promoting {cases:,} cases ...")
    with measure.gc_paused():
        start = time.perf_counter()
        for name in names:
            toolreplay.promote(
                trace_path,
                suite / name,
                name=name,
                runner=runner(SUITE_OPERATIONS),
                expected=expected,
            )
        promote = time.perf_counter() - start

    def verify_all() -> None:
        for name in names:
            toolreplay.verify_case(suite / name)

    in_process = min(measure.time_action(verify_all) for _ in range(repeats))

    app_folder = Path(app.__file__ or "").parent
    runs: dict[Mode, list[PytestRun]] = {mode: [] for mode in MODES}
    for repeat in range(repeats):
        # Round-robin, so that a noisy moment hurts one run of every mode.
        measure.progress(f"pytest runs, round {repeat + 1}/{repeats} ...")
        for mode in MODES:
            runs[mode].append(run_pytest(suite, app_folder, mode))
    return SuiteResult(cases, SUITE_OPERATIONS, promote, in_process, runs)


# --- report ---------------------------------------------------------------------------


def _share(part: float, whole: float) -> str:
    return f"{part:.4f} ({part / whole:.0%})"


def report(results: Sequence[SizeResult], suite: SuiteResult, repeats: int, elapsed: float) -> str:
    us = measure.us_unit()
    runs = len(suite.runs[SERIAL])
    out = [
        measure.environment(cpus=True),
        measure.repeats_line(
            ((r.n, r.repeats) for r in results),
            f"in-process figure, best of {runs} per pytest run",
        ),
        "gc disabled during every in-process timed section (gc.collect() first), except the "
        "'verify gc on' column; everything is written to a temporary directory",
        f"runner {APP_MODULE}:run_<N> calls the effect bench.lookup(i) -> "
        "{'i': i, 'double': 2 * i} for i in range(N) and returns {'calls': N, 'total': ...}",
        "",
        "verify_case of one promoted case per trace size (runner module already imported)",
        "",
    ]
    headers = ["N", "trace KB", "verify s", f"verify {us}/op", "verify gc on s", "promote s"]
    rows = [
        [
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
    headers = ["N", "read_trace s", "sha256 s", "replay s", f"replay {us}/op", "rest s"]
    rows = [
        [
            f"{r.n:,}",
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
        "of the runner alone; rest: verify minus the three (manifest, runner lookup, "
        "expectation, timing noise)",
        "",
        f"a suite of {suite.cases:,} promoted cases ({suite.operations} operations each, one "
        "runner), pytest in a child process: "
        + " ".join(PYTEST_FLAGS)
        + ", PYTHONPATH=<runner folder>",
        "",
    ]
    headers = ["pytest", "wall s", "per case ms", "pytest-reported s", "start+exit s"]
    rows = []
    for mode in MODES:
        best = suite.best(mode)
        rows.append(
            [
                mode.label if mode in (SERIAL, PARALLEL) else f"({mode.label})",
                f"{best.wall:.2f}",
                f"{best.wall / suite.cases * 1e3:.2f}",
                "-" if best.reported is None else f"{best.reported:.2f}",
                "-" if best.reported is None else f"{best.wall - best.reported:.2f}",
            ]
        )
    out.extend(measure.table(headers, rows))
    out += [
        f"speed-up serial / -n 2: {suite.speedup:.2f}x",
        "wall s: the child process as the parent sees it (interpreter start, plugins, "
        "collection, the run); pytest-reported s: the time on pytest's summary line; "
        "start+exit s: the difference",
        "rows in parentheses are context, not targets: --collect-only is the collection "
        "alone (every -n 2 worker collects every case again); no autoload runs with "
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 (and -p xdist), so no other installed pytest "
        "plugin loads",
    ]
    out += [
        f"summary line, {mode.label}: {suite.best(mode).summary}" for mode in (SERIAL, PARALLEL)
    ]
    bare_serial, bare_parallel = suite.best(SERIAL_BARE).wall, suite.best(PARALLEL_BARE).wall
    out += [
        f"context: autoloaded plugins cost {suite.best(SERIAL).wall - bare_serial:.2f} s "
        f"serial and {suite.best(PARALLEL).wall - bare_parallel:.2f} s with -n 2; without them "
        f"--collect-only takes {suite.best(COLLECT).wall:.2f} s of the serial run's "
        f"{bare_serial:.2f} s, and the speed-up is {bare_serial / bare_parallel:.2f}x",
        "",
        f"promote {suite.cases:,} cases (one run, gc disabled): {suite.promote:.2f} s, "
        f"{suite.promote / suite.cases * 1e3:.2f} ms per case",
        f"verify_case of the {suite.cases:,} cases in this process (best of {runs}, "
        f"gc disabled): {suite.in_process:.2f} s, "
        f"{suite.in_process / suite.cases * 1e3:.2f} ms per case",
    ]
    for mode in MODES:
        failed = [run for run in suite.runs[mode] if not suite.passed(mode, run)]
        if failed:
            out += [
                "",
                f'a pytest run ({mode.label}) did not report "{suite.expected_summary(mode)}" '
                f"(exit {failed[0].returncode}):",
            ]
            out += [f"  {line}" for line in failed[0].tail.splitlines()]

    out += ["", measure.TARGETS_HEADING]
    at_target = [r for r in results if r.n == VERIFY_TARGET_N]
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
    out.append(
        measure.target_line(
            suite.speedup > SPEEDUP_TARGET,
            f"pytest -n 2 faster than serial, {suite.cases:,} cases: {suite.speedup:.2f}x "
            f"(target > {SPEEDUP_TARGET:g}x on 2 cores; this machine has {os.cpu_count()})",
        )
    )
    for mode in (SERIAL, PARALLEL):
        out.append(
            measure.target_line(
                suite.all_passed(mode),
                f'every {mode.label} run reports "{suite.expected_summary(mode)}" '
                f"({runs} run{'s' if runs > 1 else ''})",
            )
        )
    out += ["", measure.total_run_time(elapsed)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cases",
        description="Benchmark verify_case of promoted cases, and a suite of them under pytest.",
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
        help=f"number of promoted cases in the pytest suite (default {SUITE_CASES})",
    )
    args = parser.parse_args(argv)
    repeats: int = args.repeats
    sizes: list[int] = sorted(set(args.sizes))
    cases: int = args.suite
    if repeats < 1 or sizes[0] < 1 or cases < 1:
        parser.error("--repeats, --suite and every size must be at least 1")

    started = time.perf_counter()
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-cases-") as temporary:
        directory = Path(temporary)
        (directory / "traces").mkdir()
        app_folder = directory / "app"
        app = write_app(app_folder, [*sizes, SUITE_OPERATIONS])
        try:
            for n in sizes:
                measure.progress(f"measuring verify_case, N={n:,} ...")
                results.append(measure_size(app, n, measure.repeats_for(n, repeats), directory))
            suite = measure_suite(app, cases, min(repeats, SUITE_REPEATS), directory)
        finally:
            forget_app(app_folder)
    print(report(results, suite, repeats, time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
