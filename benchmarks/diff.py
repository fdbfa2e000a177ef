"""Diff benchmark: what loading two traces costs, and what comparing them costs.

Run with `uv run python -m benchmarks.diff` (see benchmarks/README.md). For each
trace size N it writes two real `.trp` files of about N operations each, a
source and a target that is the source with a handful of injected changes, and
measures, side by side in one run:

- `toolreplay.read_trace()` of both files;
- the floor: `difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()`
  over the two traces' per-operation digests (each operation's input
  fingerprint, `identity.fingerprint`), the lists built from the loaded traces:
  matching two sequences of digests in the standard library, with nothing
  compared or reported;
- `toolreplay.diff()` of the two already loaded traces, alone and followed by
  `report.to_dict()`, each also as a ratio to the floor.

It then checks, outside any timing, that the report shows every injected
change, and prints how the alignment classified each one.

With `--million` it also measures N = 1,000,000 (one repeat), and, first, in a
fresh child process that only loads the two 1M traces and diffs them (the
garbage collector on, as an application runs it), the time and the peak
memory (`ru_maxrss`) against the two files' size.

The machine is assumed noisy, so the targets are ratios of figures measured
in the same run (the 1M targets excepted). Targets are informational: the
process exits 0 whether they are met or not.
"""

from __future__ import annotations

import argparse
import difflib
import gc
import itertools
import json
import math
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import toolreplay
from benchmarks import measure
from benchmarks.runtime import REFERENCE_NS_PER_BYTE
from toolreplay import DiffReport, JsonValue
from toolreplay.comparison import DIFFERENCE_TYPES, AlignmentRow, DifferenceType
from toolreplay.trace import (
    Operation,
    OperationIdentity,
    Raised,
    Returned,
    SessionEnding,
    Trace,
    TraceHeader,
    TraceWriter,
)

__all__ = ["main"]

SIZES = (1_000, 10_000, 100_000)
MILLION = 1_000_000
"""The size `--million` adds, measured once (a repeat of it takes minutes)."""
SEED = 20240611
"""Seeds the placement of the injected changes: every run diffs the same traces."""
CHANGES_PER_KIND = 10
"""Output changes, input changes, insertions and removals injected at N >= 1,000 (each)."""

FLOOR_RATIO_TARGET = 0.5 / 0.22
"""`diff()` + `to_dict()` at N = 100,000 per side, in times the floor: issue 28's 0.5 s
where the floor took 0.22 s (2.27x)."""
DIFF_TARGET_N = 100_000
GROWTH_TARGET = 1.5
"""Time ratio between the two largest sizes: at most this times the n log n ratio."""
MILLION_SECONDS_TARGET = 10.0
"""Loading and diffing two 1M traces, end to end: under this many seconds."""
MILLION_MEMORY_TARGET = 3.0
"""The peak memory of loading and diffing them: under this many times the files' size."""
CHILD_TIMEOUT = 3600
"""Seconds a child writing or diffing the 1M traces may take (a guard against a hang)."""

InjectedKind = Literal[
    "output change", "input change", "status change", "insertion", "removal", "swap"
]
INJECTED_KINDS: tuple[InjectedKind, ...] = (
    "output change",
    "input change",
    "status change",
    "insertion",
    "removal",
    "swap",
)
EXPECTED: dict[InjectedKind, str] = {
    "output change": "output_changed",
    "input change": "input_changed (structural)",
    "status change": "status_changed",
    "insertion": "operation_added",
    "removal": "operation_missing",
    "swap": "order_changed",
}
"""How each injected change reads in a report when the alignment pairs it as intended."""


# --- the workload -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One effect call before it is numbered: what it was and how it ended."""

    namespace: str
    name: str
    inputs: dict[str, JsonValue]
    outcome: Returned | Raised
    fingerprint: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fingerprint", toolreplay.fingerprint(self.inputs))

    @property
    def key(self) -> tuple[str, str, str]:
        """What occurrences count: (namespace, name, fingerprint)."""
        return (self.namespace, self.name, self.fingerprint)


def _call(effect: str, inputs: dict[str, JsonValue], outcome: Returned | Raised) -> Call:
    namespace, _, name = effect.partition(".")
    return Call(namespace, name, inputs, outcome)


def _timeout(service: str) -> Raised:
    message = f"{service} did not answer within 5.0 s"
    return Raised("builtins.TimeoutError", message, [message])


def workload(n: int) -> list[Call]:
    """n calls of a support agent handling refund tickets, deterministic in n.

    Per ticket: fetch the customer, list their open orders, ask the model, then
    refund or escalate and add a note. Every 40th ticket is a returning customer
    (the same `crm.customer.get` call again, occurrence 1); every 61st customer
    fetch times out once and is retried identically (occurrence 1); every 37th
    refund is rejected; every 53rd ticket searches the knowledge base.
    """
    calls: list[Call] = []
    ticket = 0
    while len(calls) < n:
        customer = 10_000 + (ticket - 7 if ticket % 40 == 39 else ticket)
        order = 500_000 + ticket
        amount = round(5 + (ticket * 7919 % 20_000) / 100, 2)
        if ticket % 61 == 60:
            calls.append(_call("crm.customer.get", {"customer_id": customer}, _timeout("crm")))
        calls.append(
            _call(
                "crm.customer.get",
                {"customer_id": customer},
                Returned(
                    {
                        "id": customer,
                        "name": f"Customer {customer}",
                        "tier": ("free", "pro", "enterprise")[customer % 3],
                        "since": f"20{10 + customer % 14}-0{1 + customer % 9}-15",
                    }
                ),
            )
        )
        orders: list[JsonValue] = [
            {"id": order, "total": amount, "currency": "EUR"},
            {"id": order + 1, "total": 12.5, "currency": "EUR"},
        ]
        calls.append(
            _call(
                "crm.orders.list",
                {"customer_id": customer, "status": "open"},
                Returned({"orders": orders[: 1 + ticket % 2]}),
            )
        )
        if ticket % 53 == 52:
            calls.append(
                _call(
                    "kb.search",
                    {"query": f"refund policy for order {order}", "limit": 3},
                    Returned({"hits": ["kb/refunds", "kb/escalation"], "took_ms": ticket % 90}),
                )
            )
        refund = ticket % 5 != 4
        calls.append(
            _call(
                "llm.decide",
                {
                    "model": "gpt-4o-mini",
                    "temperature": 0,
                    "prompt": f"Ticket {ticket}: customer {customer} asks a refund of "
                    f"{amount} EUR on order {order}. Refund or escalate?",
                },
                Returned(
                    {
                        "action": "refund" if refund else "escalate",
                        "amount": amount if refund else None,
                        "reason": "within policy" if refund else "above auto-refund limit",
                    }
                ),
            )
        )
        if refund:
            rejected = ticket % 37 == 36
            calls.append(
                _call(
                    "billing.refund.create",
                    {"order_id": order, "amount": amount, "currency": "EUR"},
                    Raised(
                        "myapp.billing.RefundRejected",
                        f"order {order} was already refunded",
                        None,
                    )
                    if rejected
                    else Returned({"refund_id": f"re_{ticket:07d}", "status": "succeeded"}),
                )
            )
        calls.append(
            _call(
                "crm.notes.add",
                {
                    "customer_id": customer,
                    "text": f"Ticket {ticket}: {'refunded' if refund else 'escalated'}",
                },
                Returned({"note_id": 900_000 + ticket, "ok": True}),
            )
        )
        ticket += 1
    return calls[:n]


def number(calls: Sequence[Call]) -> list[Operation]:
    """Operations as a recording would write them: ids by position, occurrences counted."""
    seen: Counter[tuple[str, str, str]] = Counter()
    operations: list[Operation] = []
    for logical_id, call in enumerate(calls):
        occurrence = seen[call.key]
        seen[call.key] += 1
        identity = OperationIdentity(call.namespace, call.name, call.fingerprint, occurrence)
        operations.append(Operation(logical_id, identity, call.inputs, call.outcome))
    return operations


# --- injected changes -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Injected:
    """One change made to the target: where it sits in the source and in the target."""

    kind: InjectedKind
    sources: tuple[int, ...]
    targets: tuple[int, ...]


def _edited(value: dict[str, JsonValue], tag: str) -> dict[str, JsonValue]:
    """`value` with its first field (in key order) changed; `tag` makes the change unique."""
    edited = dict(value)
    key = min(edited)
    old = edited[key]
    if isinstance(old, bool) or old is None:
        edited[key] = not old
    elif isinstance(old, int | float):
        edited[key] = old + 1_000_000 + len(tag)
    elif isinstance(old, str):
        edited[key] = f"{old} [{tag}]"
    else:
        edited[key] = tag
    return edited


def inject(source: Sequence[Call], per_kind: int, seed: int) -> tuple[list[Call], list[Injected]]:
    """The target calls: `source` with `per_kind` output changes, input changes,
    insertions and removals, one status change (ok -> error) and one swap of two
    adjacent calls, at deterministic scattered places.

    Changes never touch neighbouring calls. Input changes and removals only touch
    calls whose (effect, fingerprint) is unique in the source, and edited and
    inserted inputs are new fingerprints, so no other call's occurrence shifts:
    every difference in the report comes from one injected change.
    """
    rng = random.Random(seed)
    n = len(source)
    counts = Counter(call.key for call in source)
    fingerprints = {call.fingerprint for call in source}
    order = list(range(1, n - 2))
    rng.shuffle(order)
    used: set[int] = set()
    changed: dict[int, Call] = {}
    removed: set[int] = set()
    inserted_before: dict[int, Call] = {}
    swapped: set[int] = set()  # p: source p and p + 1 change places
    kinds: dict[int, InjectedKind] = {}

    def take(kind: InjectedKind, fits: Callable[[int], bool], width: int = 1) -> int | None:
        for p in order:
            if any(q in used for q in range(p - 1, p + width + 1)) or not fits(p):
                continue
            used.update(range(p - 1, p + width + 1))
            kinds[p] = kind
            return p
        return None

    def unique(p: int) -> bool:
        return counts[source[p].key] == 1

    def fresh(call: Call) -> bool:
        if call.fingerprint in fingerprints:
            return False
        fingerprints.add(call.fingerprint)
        return True

    for k in range(per_kind):

        def edit_output(p: int, k: int = k) -> bool:
            call = source[p]
            if not isinstance(call.outcome, Returned) or not isinstance(call.outcome.value, dict):
                return False
            outcome = Returned(_edited(call.outcome.value, f"output edit {k}"))
            changed[p] = Call(call.namespace, call.name, call.inputs, outcome)
            return True

        take("output change", edit_output)

        def edit_inputs(p: int, k: int = k) -> bool:
            call = source[p]
            edited = Call(
                call.namespace, call.name, _edited(call.inputs, f"input edit {k}"), call.outcome
            )
            if not unique(p) or not fresh(edited):
                return False
            changed[p] = edited
            return True

        take("input change", edit_inputs)
        p = take("removal", unique)
        if p is not None:
            removed.add(p)

        def insert(p: int, k: int = k) -> bool:
            customer = 90_000 + k
            call = (
                _call(
                    "crm.notes.add",
                    {"customer_id": customer, "text": f"Follow-up {k} for customer {customer}"},
                    Returned({"note_id": 990_000 + k, "ok": True}),
                )
                if k % 2 == 0
                else _call(
                    "kb.search",
                    {"query": f"follow-up {k}: partial refunds", "limit": 3},
                    Returned({"hits": ["kb/partial-refunds"], "took_ms": 7}),
                )
            )
            if not fresh(call):
                return False
            inserted_before[p] = call
            return True

        take("insertion", insert)

    p = take("status change", lambda p: isinstance(source[p].outcome, Returned))
    if p is not None:
        call = source[p]
        changed[p] = Call(call.namespace, call.name, call.inputs, _timeout(call.namespace))

    def swappable(p: int) -> bool:
        first, second = source[p], source[p + 1]
        return (first.namespace, first.name) != (second.namespace, second.name)

    p = take("swap", swappable, width=2)
    if p is not None:
        swapped.add(p)

    target: list[Call] = []
    injected: list[Injected] = []
    p = 0
    while p < n:
        if p in inserted_before:
            injected.append(Injected("insertion", (), (len(target),)))
            target.append(inserted_before[p])
        if p in swapped:
            injected.append(Injected("swap", (p, p + 1), (len(target) + 1, len(target))))
            target += [source[p + 1], source[p]]
            p += 2
            continue
        if p in removed:
            injected.append(Injected("removal", (p,), ()))
        elif p in changed:
            injected.append(Injected(kinds[p], (p,), (len(target),)))
            target.append(changed[p])
        else:
            target.append(source[p])
        p += 1
    return target, injected


def per_kind_for(n: int) -> int:
    """Up to CHANGES_PER_KIND changes of each kind, fewer for tiny traces (one per 100 calls)."""
    return max(1, min(CHANGES_PER_KIND, n // 100))


def write_trace(path: Path, operations: Sequence[Operation], label: str) -> None:
    header = TraceHeader(
        trace_id=f"bench-diff-{label}-{len(operations)}",
        mode="record",
        library_version=toolreplay.__version__,
        metadata={"benchmark": "benchmarks.diff", "side": label},
    )
    writer = TraceWriter(path, header)
    for operation in operations:
        writer.append(operation)
    writer.close(SessionEnding("completed"))


# --- checking the report ----------------------------------------------------------------


def _reads_as(rows: Sequence[AlignmentRow]) -> str:
    """How the rows that hold one injected change read: their difference types."""
    found = {kind for row in rows for kind in row.differences}
    text = " + ".join(kind for kind in DIFFERENCE_TYPES if kind in found) or "nothing"
    if any(row.match == "structural" for row in rows):
        text += " (structural)"
    return text


def _structural_key(operation: Operation | None) -> tuple[str, str, int]:
    """What alignment phase 2 pairs unpaired operations on."""
    assert operation is not None
    return (operation.identity.namespace, operation.identity.name, operation.identity.occurrence)


@dataclass(slots=True)
class Check:
    """How the report of one size accounts for the injected changes."""

    injected: Counter[InjectedKind]
    reads_as: dict[InjectedKind, Counter[str]]
    unexplained: list[str]
    unpaired_inputs: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])
    """Per input change left unpaired: how many unpaired source and target operations
    share its structural key (namespace, name, occurrence), itself included."""

    @property
    def all_reported(self) -> bool:
        return all("nothing" not in reads for reads in self.reads_as.values())

    @property
    def as_intended(self) -> bool:
        return all(set(reads) <= {EXPECTED[kind]} for kind, reads in self.reads_as.items())


def check(report: DiffReport, injected: Sequence[Injected]) -> Check:
    by_source = {row.source.logical_id: row for row in report.rows if row.source is not None}
    by_target = {row.target.logical_id: row for row in report.rows if row.target is not None}
    reads_as: dict[InjectedKind, Counter[str]] = {kind: Counter() for kind in INJECTED_KINDS}
    unpaired_source = Counter(
        _structural_key(row.source) for row in report.rows if row.target is None
    )
    unpaired_target = Counter(
        _structural_key(row.target) for row in report.rows if row.source is None
    )
    unpaired_inputs: list[tuple[int, int]] = []
    explained: set[int] = set()
    for change in injected:
        rows = {by_source[s].index: by_source[s] for s in change.sources}
        rows |= {by_target[t].index: by_target[t] for t in change.targets}
        reads_as[change.kind][_reads_as(list(rows.values()))] += 1
        explained |= rows.keys()
        if change.kind == "input change" and len(rows) == 2:
            key = _structural_key(by_source[change.sources[0]].source)
            unpaired_inputs.append((unpaired_source[key], unpaired_target[key]))
    unexplained = [
        difference.describe()
        for difference in report.differences
        if difference.row not in explained
    ]
    injected_kinds: Counter[InjectedKind] = Counter(change.kind for change in injected)
    return Check(injected_kinds, reads_as, unexplained, unpaired_inputs)


# --- measurements -----------------------------------------------------------------------


@dataclass(slots=True)
class SizeResult:
    """Best-of-repeats timings (seconds) and the report's findings for one size."""

    n: int
    target_n: int
    rows: int
    report_bytes: int
    trace_bytes: int
    load: float
    floor: float
    diff: float
    diff_to_dict: float
    counts: dict[DifferenceType, int]
    check: Check


def trace_paths(n: int, directory: Path) -> tuple[Path, Path]:
    """Where the source and target traces of size N are written."""
    return directory / f"source-{n}.trp", directory / f"target-{n}.trp"


def prepare(n: int, directory: Path) -> list[Injected]:
    """The injected changes of size N, writing the two traces unless they are there."""
    source_calls = workload(n)
    target_calls, injected = inject(source_calls, per_kind_for(n), SEED + n)
    source_path, target_path = trace_paths(n, directory)
    if not (source_path.exists() and target_path.exists()):
        write_trace(source_path, number(source_calls), "source")
        write_trace(target_path, number(target_calls), "target")
    return injected


def floor(source: Trace, target: Trace) -> Sequence[tuple[str, int, int, int, int]]:
    """difflib over the two traces' per-operation digests (their input fingerprints)."""
    return difflib.SequenceMatcher(
        None,
        [operation.identity.fingerprint for operation in source.operations],
        [operation.identity.fingerprint for operation in target.operations],
        autojunk=False,
    ).get_opcodes()


def measure_size(n: int, repeats: int, directory: Path) -> SizeResult:
    """All timings for one N; each is the best of `repeats`, variants interleaved."""
    injected = prepare(n, directory)
    source_path, target_path = trace_paths(n, directory)
    source, target = toolreplay.read_trace(source_path), toolreplay.read_trace(target_path)
    report = toolreplay.diff(source, target)
    found = check(report, injected)
    rows, counts = len(report.rows), dict(report.counts())
    report_bytes = len(json.dumps(report.to_dict(), ensure_ascii=False).encode("utf-8"))
    del report  # gigabytes at N = 1,000,000: not to be held through the timings

    def load() -> tuple[Trace, Trace]:
        return toolreplay.read_trace(source_path), toolreplay.read_trace(target_path)

    load_time, floor_time, diff_time, diff_to_dict_time = measure.best_of(
        repeats,
        load,
        lambda: floor(source, target),
        lambda: toolreplay.diff(source, target),
        lambda: toolreplay.diff(source, target).to_dict(),
    )

    result = SizeResult(
        n=n,
        target_n=len(target),
        rows=rows,
        report_bytes=report_bytes,
        trace_bytes=source_path.stat().st_size + target_path.stat().st_size,
        load=load_time,
        floor=floor_time,
        diff=diff_time,
        diff_to_dict=diff_to_dict_time,
        counts=counts,
        check=found,
    )
    source_path.unlink()
    target_path.unlink()
    return result


@dataclass(slots=True)
class EndToEnd:
    """Loading two traces and diffing them in a fresh process: seconds, and peak bytes."""

    n: int
    trace_bytes: int
    load: float
    diff: float
    diff_gc: float
    """Of `diff`, the seconds the garbage collector's passes took."""
    json_loads: float
    """`json.loads` of every line of both files, in the same process after the diff."""
    load_peak_rss: int
    """The peak once both traces were loaded, before the diff."""
    peak_rss: int
    parent_peak_rss: int
    """The benchmark's own peak when it started the child (a floor to the child's)."""

    @property
    def total(self) -> float:
        return self.load + self.diff


def _in_child(*args: str) -> str:
    """`python -m benchmarks.diff ARGS` in a fresh process: what it printed last."""
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.diff", *args],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"the child {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""


def measure_end_to_end(n: int, directory: Path) -> EndToEnd:
    """Write the two traces of size N in one child, load and diff them in another.

    Linux carries a process's peak RSS over to the children it starts, so the
    second child's peak is its own only where it tops this process's: that one is
    kept (`parent_peak_rss`) to show it does. Both run before this process loads
    the traces of size N itself.
    """
    parent_peak_rss = _peak_rss()
    _in_child("--child-write", str(n), str(directory))
    source_path, target_path = trace_paths(n, directory)
    figures = json.loads(_in_child("--child-load-diff", str(source_path), str(target_path)))
    return EndToEnd(
        n=n,
        trace_bytes=source_path.stat().st_size + target_path.stat().st_size,
        load=figures["load"],
        diff=figures["diff"],
        diff_gc=figures["diff_gc"],
        json_loads=figures["json_loads"],
        load_peak_rss=figures["load_peak_rss"],
        peak_rss=figures["peak_rss"],
        parent_peak_rss=parent_peak_rss,
    )


def child_load_diff(source_path: Path, target_path: Path) -> dict[str, float]:
    """Load the two traces and diff them, as an application would (gc on), timing the
    garbage collector's passes during the diff apart."""
    start = time.perf_counter()
    source, target = toolreplay.read_trace(source_path), toolreplay.read_trace(target_path)
    loaded = time.perf_counter()
    load_peak_rss = _peak_rss()
    passes: list[float] = []

    def time_pass(phase: str, info: dict[str, int]) -> None:
        passes.append(time.perf_counter() if phase == "start" else -time.perf_counter())

    gc.callbacks.append(time_pass)
    try:
        toolreplay.diff(source, target)
    finally:
        gc.callbacks.remove(time_pass)
    done = time.perf_counter()
    peak_rss = _peak_rss()
    del source, target
    return {
        "load": loaded - start,
        "diff": done - loaded,
        "diff_gc": -sum(passes),
        "load_peak_rss": load_peak_rss,
        "peak_rss": peak_rss,
        "json_loads": _json_loads_seconds(source_path) + _json_loads_seconds(target_path),
    }


def _json_loads_seconds(path: Path) -> float:
    """The floor of loading a trace: `json.loads` of each of its lines (each value freed)."""
    with path.open("rb") as file:
        lines = file.readlines()
    with measure.gc_paused():
        start = time.perf_counter()
        for line in lines:
            json.loads(line)
        return time.perf_counter() - start


def _peak_rss() -> int:
    """This process's peak resident set size, in bytes (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


# --- report -----------------------------------------------------------------------------


def _span(values: Iterable[int]) -> str:
    """ "3" or "3-6": the range of some counts."""
    ordered = sorted(values)
    low, high = ordered[0], ordered[-1]
    return str(low) if low == high else f"{low}-{high}"


def _n_log_n(n: int) -> float:
    return n * math.log2(max(n, 2))


def _growth(small: SizeResult, large: SizeResult) -> tuple[float, float, float, float, float]:
    """N ratio, n log n ratio, and the load, diff and diff+to_dict time ratios."""
    return (
        large.n / small.n,
        _n_log_n(large.n) / _n_log_n(small.n),
        large.load / small.load,
        large.diff / small.diff,
        large.diff_to_dict / small.diff_to_dict,
    )


def repeats_for(n: int, repeats: int) -> int:
    """`measure.repeats_for`, but one for the million: a repeat of it takes minutes."""
    return 1 if n >= MILLION else measure.repeats_for(n, repeats)


def report(
    results: Sequence[SizeResult], end_to_end: EndToEnd | None, repeats: int, elapsed: float
) -> str:
    out = [
        measure.environment(),
        measure.repeats_line(((r.n, repeats_for(r.n, repeats)) for r in results), "figure"),
        "gc disabled during every timed section (gc.collect() first); traces written to a "
        "temporary directory",
        "source: N calls of a refund-handling agent (crm.customer.get, crm.orders.list, "
        "llm.decide, billing.refund.create, crm.notes.add, kb.search; repeated calls and "
        "failures included); target: the source with injected changes (seed "
        f"{SEED} + N). load = read_trace of both files; floor = difflib.SequenceMatcher(None, "
        "a, b, autojunk=False).get_opcodes() over the per-operation digests (identity."
        "fingerprint) of the loaded traces; diff = toolreplay.diff(source, target) of the "
        "loaded traces; x floor = time / floor time.",
        "",
    ]
    headers = [
        "N",
        "target ops",
        "both traces MB",
        "load s",
        "floor s",
        "diff s",
        "diff+to_dict s",
        "diff x floor",
        "diff+to_dict x floor",
        f"diff+to_dict {measure.us_unit()}/op",
    ]
    rows = [
        [
            f"{r.n:,}",
            f"{r.target_n:,}",
            f"{r.trace_bytes / 1e6:.2f}",
            f"{r.load:.4f}",
            f"{r.floor:.4f}",
            f"{r.diff:.4f}",
            f"{r.diff_to_dict:.4f}",
            f"{r.diff / r.floor:.2f}x",
            f"{r.diff_to_dict / r.floor:.2f}x",
            f"{r.diff_to_dict / r.n * 1e6:.2f}",
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))

    if len(results) >= 2:
        out += [
            "",
            "growth between successive sizes (time ratios; near-linear is near N ratio)",
            "",
        ]
        headers = ["step", "N ratio", "n log n ratio", "load", "floor", "diff", "diff+to_dict"]
        rows = []
        for small, large in itertools.pairwise(results):
            n_ratio, reference, load, diff, to_dict = _growth(small, large)
            rows.append(
                [
                    f"{small.n:,} -> {large.n:,}",
                    f"{n_ratio:.2f}x",
                    f"{reference:.2f}x",
                    f"{load:.2f}x",
                    f"{large.floor / small.floor:.2f}x",
                    f"{diff:.2f}x",
                    f"{to_dict:.2f}x",
                ]
            )
        out.extend(measure.table(headers, rows))

    out += [
        "",
        "differences found (report.counts()), alignment rows, and the size of "
        "json.dumps(report.to_dict())",
        "",
    ]
    headers = ["N", "rows", "JSON MB", "total", *DIFFERENCE_TYPES]
    rows = [
        [
            f"{r.n:,}",
            f"{r.rows:,}",
            f"{r.report_bytes / 1e6:.2f}",
            f"{sum(r.counts.values()):,}",
            *(f"{r.counts[kind]:,}" for kind in DIFFERENCE_TYPES),
        ]
        for r in results
    ]
    out.extend(measure.table(headers, rows))

    out += ["", "injected changes, and how the report reads them (intended reading marked *)", ""]
    headers = ["N", "injected", "count", "reported as"]
    rows = []
    for r in results:
        for kind in INJECTED_KINDS:
            reads = r.check.reads_as[kind]
            shown = ", ".join(
                f"{'*' if text == EXPECTED[kind] else ''}{text} x{count}"
                for text, count in sorted(reads.items(), key=lambda item: -item[1])
            )
            rows.append([f"{r.n:,}", kind, str(r.check.injected[kind]), shown or "-"])
    out.extend(measure.table(headers, rows))
    for r in results:
        if r.check.unpaired_inputs:
            count = len(r.check.unpaired_inputs)
            out.append(
                f"N={r.n:,}: {count} input change{'s' if count > 1 else ''} left unpaired: the "
                "(effect, occurrence) key of each is held, across the whole trace, by "
                f"{_span(c for c, _ in r.check.unpaired_inputs)} unpaired source and "
                f"{_span(c for _, c in r.check.unpaired_inputs)} unpaired target operations "
                "(itself included); alignment phase 2 pairs a key only when it is unique "
                "on each side"
            )
        if r.check.unexplained:
            out.append(f"N={r.n:,}: {len(r.check.unexplained)} differences at no injected change:")
            out += [f"  {text}" for text in r.check.unexplained[:10]]

    if end_to_end is not None:
        out += [
            "",
            f"load + diff of two {end_to_end.n:,}-operation traces end to end, in a fresh "
            "process that does nothing else (gc on, as an application runs it; one run): "
            "read_trace of both files, then toolreplay.diff of the loaded traces; peak = the "
            "process's ru_maxrss, once loaded and at the end (it counts from the peak of the "
            f"process that started it, {end_to_end.parent_peak_rss / 1e6:.0f} MB, so it is "
            f"the child's own only above that)",
            "",
        ]
        headers = [
            "N",
            "both traces MB",
            "load s",
            "diff s",
            "gc in diff s",
            "load+diff s",
            "json.loads of both s",
            "peak loaded MB",
            "peak RSS MB",
            "peak / files",
        ]
        row = [
            f"{end_to_end.n:,}",
            f"{end_to_end.trace_bytes / 1e6:.1f}",
            f"{end_to_end.load:.2f}",
            f"{end_to_end.diff:.2f}",
            f"{end_to_end.diff_gc:.2f}",
            f"{end_to_end.total:.2f}",
            f"{end_to_end.json_loads:.2f}",
            f"{end_to_end.load_peak_rss / 1e6:.0f}",
            f"{end_to_end.peak_rss / 1e6:.0f}",
            f"{end_to_end.peak_rss / end_to_end.trace_bytes:.2f}x",
        ]
        out.extend(measure.table(headers, [row]))

    out += ["", measure.TARGETS_HEADING]
    at_target = [r for r in results if r.n == DIFF_TARGET_N]
    if at_target:
        r = at_target[0]
        ratio = r.diff_to_dict / r.floor
        out.append(
            measure.target_line(
                ratio <= FLOOR_RATIO_TARGET,
                f"diff+to_dict, N={DIFF_TARGET_N:,} per side: {r.diff_to_dict:.3f} s = "
                f"{ratio:.2f}x the floor's {r.floor:.3f} s (target <= {FLOOR_RATIO_TARGET:.2f}x: "
                "issue 28's 0.5 s where the floor took 0.22 s)",
            )
        )
    else:
        out.append(
            measure.skip_line(
                f"diff+to_dict within {FLOOR_RATIO_TARGET:.2f}x the floor at "
                f"N={DIFF_TARGET_N:,}: that size was not measured"
            )
        )
    if len(results) >= 2:
        small, large = results[-2], results[-1]
        _, reference, _, diff, to_dict = _growth(small, large)
        for label, ratio in (("diff", diff), ("diff+to_dict", to_dict)):
            out.append(
                measure.target_line(
                    ratio <= reference * GROWTH_TARGET,
                    f"{label} growth N={small.n:,} -> {large.n:,}: {ratio:.2f}x (target <= "
                    f"n log n ratio {reference:.2f}x * {GROWTH_TARGET:g} = "
                    f"{reference * GROWTH_TARGET:.2f}x)",
                )
            )
    for r in results:
        out.append(
            measure.target_line(
                r.check.all_reported and not r.check.unexplained,
                f"N={r.n:,}: every injected change ({r.check.injected.total()}) shows in the "
                f"report, and nothing else does ({len(r.check.unexplained)} other differences)",
            )
        )
    for r in results:
        out.append(
            measure.target_line(
                r.check.as_intended,
                f"N={r.n:,}: every injected change reads as intended (input changes paired "
                "structurally, swap as one order_changed, ...)",
            )
        )
    if end_to_end is None:
        out.append(
            measure.skip_line(
                f"load + diff of two 1M traces < {MILLION_SECONDS_TARGET:g} s, peak memory < "
                f"{MILLION_MEMORY_TARGET:g}x files: run with --million"
            )
        )
    else:
        memory = end_to_end.peak_rss / end_to_end.trace_bytes
        out.append(
            measure.target_line(
                end_to_end.total < MILLION_SECONDS_TARGET and memory < MILLION_MEMORY_TARGET,
                f"load + diff of two 1M traces < {MILLION_SECONDS_TARGET:g} s, peak memory < "
                f"{MILLION_MEMORY_TARGET:g}x files: {end_to_end.total:.1f} s (load "
                f"{end_to_end.load:.1f} s, diff {end_to_end.diff:.1f} s of which gc "
                f"{end_to_end.diff_gc:.1f} s), peak "
                f"{end_to_end.peak_rss / 1e9:.2f} GB = {memory:.2f}x the "
                f"{end_to_end.trace_bytes / 1e9:.2f} GB of the two files (loaded: "
                f"{end_to_end.load_peak_rss / 1e9:.2f} GB)",
            )
        )
        ns_per_byte = end_to_end.json_loads / end_to_end.trace_bytes * 1e9
        reference = end_to_end.trace_bytes * REFERENCE_NS_PER_BYTE / 1e9
        out.append(
            f"  floor: json.loads of every line of the two files alone takes "
            f"{end_to_end.json_loads:.1f} s here ({ns_per_byte:.1f} ns a byte), "
            f"{reference:.1f} s at the {REFERENCE_NS_PER_BYTE:g} ns a byte of the machine the "
            "targets were set on: loading parses every line, so under "
            f"{MILLION_SECONDS_TARGET:g} s holds only if that does"
        )
    out += ["", measure.total_run_time(elapsed)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.diff",
        description="Benchmark loading two traces and diffing them (toolreplay.diff, to_dict).",
    )
    measure.add_repeats(parser)
    measure.add_sizes(parser, SIZES, "operations per trace, smallest first")
    measure.add_million(
        parser,
        MILLION,
        "once, and loading and diffing those two traces end to end in a fresh process "
        "with its peak memory; takes several minutes",
    )
    parser.add_argument("--child-write", nargs=2, metavar=("N", "DIR"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--child-load-diff", nargs=2, metavar=("SOURCE", "TARGET"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child_write:
        prepare(int(args.child_write[0]), Path(args.child_write[1]))
        return 0
    if args.child_load_diff:
        source_path, target_path = (Path(path) for path in args.child_load_diff)
        print(json.dumps(child_load_diff(source_path, target_path)))
        return 0
    repeats: int = args.repeats
    sizes: list[int] = sorted({*args.sizes, *([MILLION] if args.million else [])})
    if repeats < 1 or sizes[0] < 10:
        parser.error("--repeats must be at least 1 and every size at least 10")

    started = time.perf_counter()
    results: list[SizeResult] = []
    end_to_end: EndToEnd | None = None
    with tempfile.TemporaryDirectory(prefix="toolreplay-bench-diff-") as temporary:
        directory = Path(temporary)
        for n in sizes:
            if n == MILLION and args.million:
                # Before this process loads the million itself (see measure_end_to_end), and
                # after the smaller sizes: a child freeing gigabytes leaves the next minute
                # of timings here noisy.
                measure.progress(f"load + diff of two {n:,}-operation traces in a child ...")
                end_to_end = measure_end_to_end(n, directory)
            measure.progress(f"measuring N={n:,} ...")
            results.append(measure_size(n, repeats_for(n, repeats), directory))
    print(report(results, end_to_end, repeats, time.perf_counter() - started))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
