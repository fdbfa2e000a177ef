"""Case benchmark: what verifying a promoted case costs, alone and as a pytest suite.

Run with `uv run python -m benchmarks.cases` (see benchmarks/README.md). It
writes a small application module (the runner) into a temporary folder, records
its traces with `toolreplay.record()`, promotes them with `toolreplay.promote()`
and measures, in one run:

- `toolreplay.verify_case()` of one case per trace size N (operations in its
  trace), split into `read_trace()` of the case trace, SHA-256 of its bytes and
  the strict replay of the runner alone;
- a suite of promoted cases with small traces run by pytest in a child process,
  serially and with `-n 2` (pytest-xdist), collected by Tool Replay's pytest
  plugin from their `case.json`: the child's wall clock, and the time promoting
  the suite took. Context rows: the plugin's `--collect-only`, and the same
  suite run the old way, through each case's generated `test_case.py`
  (`-p no:toolreplay --import-mode=importlib`);
- the plugin's collection of a much larger suite (`--collect`, 10,000 cases by
  default, byte copies of one promoted case under new names), `--collect-only`.

Child pytest processes cache bytecode under a temporary `PYTHONPYCACHEPREFIX`
(as a developer's or CI's pytest does, even where the environment sets
`PYTHONDONTWRITEBYTECODE`), after one untimed warm-up run.

The machine is assumed noisy; targets are informational: the process exits 0
whether they are met or not.
"""

from __future__ import annotations

import argparse
import dataclasses
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
SUITE_CASES = 2_000
COLLECT_CASES = 10_000
"""Cases in the suite whose collection alone is timed (`--collect`)."""
COLLECT_SECONDS_TARGET = 2.0
"""pytest's own collection time for `COLLECT_CASES` cases: under this."""
SUITE_OPERATIONS = 5
"""Operations in the trace of each suite case (default of `--suite-operations`)."""
SUITE_REPEATS = 3
"""Child pytest runs per mode, at most (and at most `--repeats`); the best is kept."""
PYTEST_TIMEOUT = 600
"""Seconds a child pytest run may take before the benchmark gives up on it."""

VERIFY_SECONDS_TARGET = 1.0
"""`verify_case` of the case whose trace has `VERIFY_TARGET_N` operations: under this."""
VERIFY_TARGET_N = 10_000
SPEEDUP_TARGET = 1.7
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
PYTEST_FLAGS = ("-p", "no:cacheprovider", "-q")
GENERATED_MODULES = ("-p", "no:toolreplay", "--import-mode=importlib")
"""Run a suite without the plugin: each case through its generated test_case.py."""


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
    collect_only: bool = False


SERIAL = Mode("serial")
PARALLEL = Mode("-n 2", ("-n", "2"))
COLLECT = Mode("serial --collect-only", ("--collect-only",), collect_only=True)
OLD_SERIAL = Mode("generated modules, serial", GENERATED_MODULES)
OLD_PARALLEL = Mode("generated modules, -n 2", (*GENERATED_MODULES, "-n", "2"))
CONTEXT_MODES = (COLLECT, OLD_SERIAL, OLD_PARALLEL)
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


@dataclass(slots=True)
class SuiteResult:
    cases: int
    operations: int
    promote: float
    in_process: float
    runs: dict[Mode, list[PytestRun]]
    collection: CollectionResult

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
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    environment["PYTHONPYCACHEPREFIX"] = str(app_folder.parent / "pycache")
    environment.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
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


def measure_suite(
    app: ModuleType,
    cases: int,
    operations: int,
    collect_cases: int,
    repeats: int,
    directory: Path,
) -> SuiteResult:
    trace_path = directory / "traces" / f"suite-{operations}.trp"
    expected = record_trace(app, operations, trace_path)
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
                runner=runner(operations),
                expected=expected,
            )
        promote = time.perf_counter() - start

    def verify_all() -> None:
        for name in names:
            toolreplay.verify_case(suite / name)

    in_process = min(measure.time_action(verify_all) for _ in range(repeats))

    app_folder = Path(app.__file__ or "").parent
    measure.progress("warm-up pytest run (bytecode caches) ...")
    run_pytest(suite / names[0], app_folder, PARALLEL)
    runs: dict[Mode, list[PytestRun]] = {mode: [] for mode in MODES}
    for repeat in range(repeats):
        # Round-robin, so that a noisy moment hurts one run of every mode.
        measure.progress(f"pytest runs, round {repeat + 1}/{repeats} ...")
        for mode in MODES:
            runs[mode].append(run_pytest(suite, app_folder, mode))

    large = directory / "collect"
    measure.progress(f"copying one case to {collect_cases:,} folders ...")
    copy_case(suite / names[0], large, collect_cases)
    collected = [run_pytest(large, app_folder, COLLECT) for _ in range(repeats)]
    return SuiteResult(
        cases,
        operations,
        promote,
        in_process,
        runs,
        CollectionResult(collect_cases, collected),
    )


def copy_case(case: Path, destination: Path, copies: int) -> None:
    """`copies` byte copies of a promoted case, each under its own name (a valid case)."""
    manifest = toolreplay.read_case_manifest(case)
    trace = (case / manifest.trace_path).read_bytes()
    test_module = (case / "test_case.py").read_bytes()
    for index in range(copies):
        name = f"copy_{index:05d}"
        folder = destination / name
        folder.mkdir(parents=True)
        (folder / "case.json").write_bytes(dataclasses.replace(manifest, name=name).to_json())
        (folder / manifest.trace_path).write_bytes(trace)
        (folder / "test_case.py").write_bytes(test_module)


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
        "rows in parentheses are context, not targets: --collect-only is the plugin's "
        "collection alone (every -n 2 worker collects every case again); generated modules "
        "runs the suite without the plugin (" + " ".join(GENERATED_MODULES) + "), each case "
        "imported from its test_case.py",
    ]
    out += [
        f"summary line, {mode.label}: {suite.best(mode).summary}" for mode in (SERIAL, PARALLEL)
    ]
    old_serial, old_parallel = suite.best(OLD_SERIAL).wall, suite.best(OLD_PARALLEL).wall
    collection = suite.collection.best
    out += [
        f"context: through the generated modules (no plugin) the same suite takes "
        f"{old_serial:.2f} s serially and {old_parallel:.2f} s with -n 2 "
        f"({old_serial / old_parallel:.2f}x); the plugin's collection alone takes "
        f"{suite.best(COLLECT).wall:.2f} s of its serial run's {suite.best(SERIAL).wall:.2f} s",
        "",
        f"the plugin collecting {suite.collection.cases:,} cases (--collect-only, best of "
        f"{len(suite.collection.runs)}): pytest reports {collection.reported or 0:.2f} s of "
        f"collection, {collection.wall:.2f} s wall with interpreter start and exit; "
        f"summary line: {collection.summary}",
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
    reported = suite.collection.best.reported
    out.append(
        measure.target_line(
            reported is not None and reported < COLLECT_SECONDS_TARGET,
            f"collection of {suite.collection.cases:,} cases, as pytest reports it: "
            f"{reported or 0:.2f} s (target < {COLLECT_SECONDS_TARGET:g} s)",
        )
    )
    out.append(
        measure.target_line(
            suite.collection.all_collected(),
            f'every --collect-only run reports "{suite.collection.expected_summary}..."',
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
    parser.add_argument(
        "--collect",
        type=int,
        default=COLLECT_CASES,
        metavar="CASES",
        help=f"number of cases whose collection alone is timed (default {COLLECT_CASES})",
    )
    parser.add_argument(
        "--suite-operations",
        type=int,
        default=SUITE_OPERATIONS,
        metavar="N",
        help=f"operations in the trace of each suite case (default {SUITE_OPERATIONS})",
    )
    args = parser.parse_args(argv)
    repeats: int = args.repeats
    sizes: list[int] = sorted(set(args.sizes))
    cases: int = args.suite
    collect_cases: int = args.collect
    suite_operations: int = args.suite_operations
    if min(repeats, sizes[0], cases, collect_cases, suite_operations) < 1:
        parser.error(
            "--repeats, --suite, --collect, --suite-operations and every size must be at least 1"
        )

    started = time.perf_counter()
    results: list[SizeResult] = []
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-cases-") as temporary:
        directory = Path(temporary)
        (directory / "traces").mkdir()
        app_folder = directory / "app"
        app = write_app(app_folder, [*sizes, suite_operations])
        try:
            for n in sizes:
                measure.progress(f"measuring verify_case, N={n:,} ...")
                results.append(measure_size(app, n, measure.repeats_for(n, repeats), directory))
            suite = measure_suite(
                app,
                cases,
                suite_operations,
                collect_cases,
                min(repeats, SUITE_REPEATS),
                directory,
            )
        finally:
            forget_app(app_folder)
    print(report(results, suite, repeats, time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
