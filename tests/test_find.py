"""`toolreplay find` and `toolreplay.find_traces` over a real capture folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolreplay
from toolreplay.capturing.names import new_trace_name
from toolreplay.search import TraceSearch, parse_condition, parse_time

ROOT = Path(__file__).resolve().parent.parent


@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict[str, object]:
    return {"id": customer_id, "email": f"c{customer_id}@example.com", "tier": "pro"}


@toolreplay.effect("billing.refund.create")
def create_refund(order_id: int, amount: float, note: str) -> dict[str, object]:
    if amount > 1000:
        raise TimeoutError("billing timed out")
    return {"refund_id": f"rf-{order_id}", "status": "issued", "tags": ["auto", note]}


def handle(request_id: str, customer_id: int, amount: float) -> str:
    get_customer(customer_id)
    try:
        create_refund(customer_id * 10, amount, note=f'say "hi" {request_id}')
    except TimeoutError:
        return "retry later"
    return "refunded"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    traces = tmp_path / "traces"
    capture = toolreplay.capture(
        traces, metadata=lambda request_id, customer_id, amount: {"request_id": request_id}
    )
    captured = capture(handle)
    captured("r-1", 1, 20.0)
    captured("r-2", 2, 5000.0)  # the incident: the refund timed out
    captured("r-3", 3, 30.0)
    with toolreplay.capture(traces, metadata={"request_id": "r-4"}):
        get_customer(4)  # a request that never refunds
    # A recording outside capture, in a subfolder, and one without its footer.
    (traces / "manual").mkdir()
    with toolreplay.record(traces / "manual" / "by-hand.trp", metadata={"who": "dev"}):
        create_refund(70, 1.0, note="manual")
    incomplete = traces / "manual" / "cut.trp"
    lines = (traces / "manual" / "by-hand.trp").read_bytes().splitlines(keepends=True)
    incomplete.write_bytes(b"".join(lines[:-1]))
    # Not traces: skipped (hidden folder), or reported (not a trace).
    (traces / ".toolreplay").mkdir()
    (traces / ".toolreplay" / "branch.trp").write_bytes(lines[0])
    (traces / "notes.trp").write_text("these are my notes\n")
    return traces


def request_ids(search: TraceSearch) -> list[object]:
    return [match.metadata.get("request_id", match.path.name) for match in search]


def test_an_effect_finds_the_requests_that_called_it_newest_first(folder: Path) -> None:
    search = toolreplay.find_traces(folder, effect="billing.refund.create")
    found = list(search)
    captured = [m.metadata["request_id"] for m in found if "request_id" in m.metadata]
    assert captured == ["r-3", "r-2", "r-1"]
    assert {m.path.name for m in found if "request_id" not in m.metadata} == {
        "by-hand.trp",
        "cut.trp",
    }
    assert all(m.matching == (1,) for m in found if "request_id" in m.metadata)
    assert search.scanned == 7
    assert search.unreadable == [(folder / "notes.trp", "it does not start with a trace header")]


def test_where_conditions_on_an_operation_all_hold_for_one_operation(folder: Path) -> None:
    incident = toolreplay.find_traces(
        folder, effect="billing.refund.create", where=["$.outcome.status == error"]
    )
    (match,) = incident
    assert match.metadata["request_id"] == "r-2"
    assert match.ending == {"status": "completed", "error_type": None, "message": None}
    assert match.operation_count == 2

    def ids(*where: str, effect: str | None = None) -> list[object]:
        return request_ids(toolreplay.find_traces(folder, effect=effect, where=where))

    assert ids("$.inputs.amount > 1000") == ["r-2"]
    assert ids("$.inputs.customer_id == 3", "$.outcome.value.tier == pro") == ["r-3"]
    assert ids("$.inputs.customer_id == 3", "$.inputs.order_id == 30") == []  # two operations
    assert ids('$.inputs.note contains "hi" r-1') == ["r-1"]  # quotes escaped in the file
    # Newest first: the hand-made traces by modification time, after the captures.
    assert ids("$.outcome.value.tags[*] == auto", effect="billing.refund.create") == [
        "cut.trp",
        "by-hand.trp",
        "r-3",
        "r-1",
    ]
    assert ids("$.outcome.value.tags contains manual") == ["cut.trp", "by-hand.trp"]
    assert ids("$.outcome.error.message matches ^billing t") == ["r-2"]
    assert ids("$.outcome.error exists") == ["r-2"]


def test_numbers_compare_as_numbers_and_types_are_not_confused(folder: Path) -> None:
    def ids(where: str) -> list[object]:
        return request_ids(toolreplay.find_traces(folder, where=[where]))

    assert ids("$.inputs.customer_id == 4.0") == ["r-4"]
    assert ids('$.inputs.customer_id == "4"') == []
    assert ids("$.inputs.amount >= 30") == ["r-3", "r-2"]
    assert ids("$.inputs.customer_id != 1")[:3] == ["r-4", "r-3", "r-2"]


def test_header_and_footer_conditions(folder: Path) -> None:
    search = toolreplay.find_traces(folder, where=["$.metadata.request_id == r-4"])
    (match,) = search
    assert match.matching == ()
    assert match.operation_count == 1
    assert request_ids(toolreplay.find_traces(folder, where=["$.metadata.who exists"])) == [
        "cut.trp",
        "by-hand.trp",
    ]
    incomplete = [m for m in toolreplay.find_traces(folder) if not m.complete]
    assert [(m.path.name, m.operation_count, m.ending) for m in incomplete] == [
        ("cut.trp", 1, None)
    ]
    # An ending condition never holds for a trace without a footer.
    completed = toolreplay.find_traces(folder, where=["$.ending.status == completed"])
    assert "cut.trp" not in {m.path.name for m in completed}


def test_since_and_until_use_the_captured_time(folder: Path) -> None:
    old = folder / (new_trace_name(datetime(2020, 1, 1, tzinfo=UTC)) + ".trp")
    newest = next(iter(toolreplay.find_traces(folder, where=["$.metadata.request_id == r-4"])))
    old.write_bytes(newest.path.read_bytes())
    everything = request_ids(toolreplay.find_traces(folder, where=["$.metadata.request_id == r-4"]))
    assert everything == ["r-4", "r-4"]
    recent = toolreplay.find_traces(folder, where=["$.metadata.request_id == r-4"], since="1d")
    assert [m.path for m in recent] == [newest.path]
    early = toolreplay.find_traces(folder, until="2021-01-01")
    assert [m.path for m in early] == [old]


def test_a_large_trace_is_read_in_blocks_with_the_same_answer(folder: Path) -> None:
    small = toolreplay.find_traces(
        folder, effect="crm.customer.get", where=["$.inputs.customer_id <= 2"]
    )
    blocks = TraceSearch(
        folder,
        effect="crm.customer.get",
        conditions=(parse_condition("$.inputs.customer_id <= 2"),),
        block_size=64,
    )
    assert [(m.path, m.matching, m.operation_count, m.ending) for m in blocks] == [
        (m.path, m.matching, m.operation_count, m.ending) for m in small
    ]


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ("inputs.x == 1", "starts with a JSON path"),
        ("$.inputs.[x] == 1", "--where path '$.inputs.[x] == 1', at character 10"),
        ("$.inputs['x == 1", "expected .name, ['name'], [N], [*], .* or ..name"),
        ("$.inputs.x ~ 1", "one of ==, !=, <, <=, >, >=, contains, matches, exists"),
        ("$.inputs.x ==", "== needs a value"),
        ("$.inputs.x exists 1", "exists takes no value"),
        ("$.inputs.x matches (", "not a regular expression"),
    ],
)
def test_malformed_conditions_say_what_is_wrong(where: str, words: str) -> None:
    with pytest.raises(toolreplay.TraceSearchError, match=None) as raised:
        parse_condition(where)
    assert words in str(raised.value)
    assert where in str(raised.value)


def test_where_reads_every_path_a_redaction_rule_can_be_written_in(folder: Path) -> None:
    # Quoted keys in either quotes and recursive descent: the one JSON path grammar
    # (toolreplay.jsonpath), which redaction rules were written in before `find` read it.
    def ids(*where: str) -> list[object]:
        return request_ids(toolreplay.find_traces(folder, where=where))

    assert ids("$['inputs']['amount'] > 1000") == ["r-2"]
    assert ids('$["inputs"].amount > 1000') == ["r-2"]
    assert ids("$..amount > 1000") == ["r-2"]  # at any depth of the operation
    assert ids("$..tier == pro") == ["r-4", "r-3", "r-2", "r-1"]
    assert ids("$.outcome..tags[*] == manual") == ["cut.trp", "by-hand.trp"]
    assert ids("$..* == rf-30") == ["r-3"]
    assert ids("$['metadata']['request_id'] == r-4") == ["r-4"]


def test_times_read_as_dates_times_or_ages() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert parse_time("2h", now=now) == now - timedelta(hours=2)
    # Ages are read as a retention reads them (toolreplay.durations): any case, a space.
    assert parse_time("7D", now=now) == now - timedelta(days=7)
    assert parse_time("12 H", now=now) == now - timedelta(hours=12)
    assert parse_time("2026-11-30", now=now) == datetime(2026, 11, 30, tzinfo=UTC)
    assert parse_time("2026-11-30T10:00+02:00").hour == 10
    with pytest.raises(toolreplay.TraceSearchError, match="neither a date"):
        parse_time("yesterday")


def test_matches_are_named_relative_to_the_folder_however_it_was_given(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def names(root: Path) -> set[str]:
        return {match.relative_path(root) for match in toolreplay.find_traces(root)}

    expected = {path.relative_to(folder).as_posix() for path in folder.rglob("*.trp")}
    expected -= {"notes.trp", ".toolreplay/branch.trp"}  # not a trace; a hidden folder
    assert "manual/by-hand.trp" in expected
    assert names(folder) == expected
    assert names(Path(f"{folder}{os.sep}")) == expected
    monkeypatch.chdir(folder)
    assert names(Path(".")) == expected
    monkeypatch.chdir(folder / "manual")
    assert names(Path("..")) == expected
    match = next(iter(toolreplay.find_traces(Path("."))))
    # Outside the folder it was asked about: the path as found, whole.
    assert match.relative_path(folder / "elsewhere") == os.fspath(match.path)


def run_find(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", "find", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_the_command_lists_matches_as_text_and_json_with_grep_like_exit_codes(
    folder: Path,
) -> None:
    text = run_find(
        str(folder), "--effect", "billing.refund.create", "-w", "$.outcome.status == error"
    )
    assert text.returncode == 0, text.stderr
    first, summary = text.stdout.splitlines()
    assert first.endswith("2 ops  completed  1 matching  request_id=r-2")
    assert summary == "1 of 7 traces scanned matched"
    assert text.stderr == "skipped: notes.trp: it does not start with a trace header\n"

    as_json = run_find(str(folder), "-w", "$.metadata.request_id == r-1", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    document = json.loads(as_json.stdout)
    assert document["format_version"] == 2
    assert document["skipped"] == [
        {"path": "notes.trp", "reason": "it does not start with a trace header"}
    ]
    assert document["scanned"] == 7
    (trace,) = document["traces"]
    assert trace["metadata"]["request_id"] == "r-1"
    assert trace["path"].endswith(".trp")
    assert not trace["path"].startswith("/")
    assert trace["ending"]["status"] == "completed"

    # Nothing matched, but notes.trp was skipped: "nothing" is not certain (3).
    nothing = run_find(str(folder), "--effect", "crm.nothing")
    assert nothing.returncode == 3
    assert nothing.stdout.strip() == "0 of 7 traces scanned matched"

    limited = run_find(str(folder), "--limit", "2")
    assert limited.returncode == 0
    # The newest file, notes.trp, was scanned (and skipped) on the way.
    assert limited.stdout.splitlines()[-1] == "2 of 3 traces scanned matched"

    (folder / "notes.trp").unlink()  # every file read, none matched: 1, as grep
    nothing = run_find(str(folder), "--effect", "crm.nothing")
    assert (nothing.returncode, nothing.stderr) == (1, "")


def test_the_command_refuses_a_bad_query_or_folder(tmp_path: Path) -> None:
    missing = run_find(str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr
    bad = run_find(str(tmp_path), "--effect", "nodot")
    assert bad.returncode == 2
    assert "not an effect name" in bad.stderr
    when = run_find(str(tmp_path), "--since", "yesterday")
    assert when.returncode == 2
    assert "neither a date" in when.stderr
    # What a retention accepts, --since accepts: nothing matched (1), not refused (2).
    age = run_find(str(tmp_path), "--since", "7D", "--where", "$..password exists")
    assert age.returncode == 1, age.stderr
    quoted = run_find(str(tmp_path), "--where", "$['a key'] == 1")
    assert quoted.returncode == 1, quoted.stderr
    # Usage errors: the option and the value.
    for option, value, words in [
        ("--limit", "0", "'--limit': 0 is less than the minimum, 1"),
        ("--limit", "many", "'--limit': 'many' is not a whole number"),
        ("--format", "xml", "'--format' / '-f': invalid choice: 'xml' (choose from"),
    ]:
        refused = run_find(str(tmp_path), option, value)
        assert refused.returncode == 2, refused.stderr
        assert refused.stderr.startswith("Usage: toolreplay find [OPTIONS]")
        assert f"Error: Invalid value for {words}" in refused.stderr


def deep_copy_of(trace: Path, where: str) -> bytes:
    """`trace` with a value nested 100,000 levels deep in its `where` line (header or
    the first operation), as a hand edit could leave it: a line no JSON decoder reads."""
    header, operation, *rest = trace.read_bytes().splitlines(keepends=True)
    deep = b"[" * 100_000 + b"]" * 100_000
    if where == "header":
        header = header.replace(b'"metadata":{', b'"metadata":{"deep":' + deep + b",", 1)
    else:
        operation = operation.replace(b'"inputs":{', b'"inputs":{"deep":' + deep + b",", 1)
    return b"".join([header, operation, *rest])


@pytest.mark.parametrize("where", ["operation", "header"])
def test_a_trace_too_deep_to_read_is_skipped_and_the_others_still_match(
    folder: Path, where: str
) -> None:
    # The audit's case: one good matching trace beside one 100,000-deep trace.
    alone = folder.parent / "alone"
    alone.mkdir()
    good = next((folder / "manual").glob("by-hand.trp"))
    (alone / "good.trp").write_bytes(good.read_bytes())
    (alone / "deep.trp").write_bytes(deep_copy_of(good, where))
    reason = "a value nests too deeply to read (RecursionError)"

    text = run_find(str(alone), "--effect", "billing.refund.create")
    assert "Traceback" not in text.stderr
    assert text.stderr == f"skipped: deep.trp: {reason}\n"
    assert text.stdout.splitlines()[0].startswith("good.trp  ")
    assert text.stdout.splitlines()[-1] == "1 of 2 traces scanned matched"
    assert text.returncode == 0

    as_json = run_find(str(alone), "--effect", "billing.refund.create", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    document = json.loads(as_json.stdout)
    assert [trace["path"] for trace in document["traces"]] == ["good.trp"]
    assert document["skipped"] == [{"path": "deep.trp", "reason": reason}]

    # Nothing else matches: the deep trace might have, so the answer is 3, not 1.
    (alone / "good.trp").unlink()
    nothing = run_find(str(alone), "--effect", "billing.refund.create")
    assert (nothing.returncode, nothing.stderr) == (3, f"skipped: deep.trp: {reason}\n")

    search = toolreplay.find_traces(alone, effect="billing.refund.create")
    assert list(search) == []
    assert search.unreadable == [(alone / "deep.trp", reason)]


def test_the_find_benchmark_runs_at_a_small_size() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.find", "--traces", "60", "--repeats", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "find/grep" in result.stdout
    assert "60 traces of 100 operations" in result.stdout
    assert "targets" in result.stdout


# --- the byte prefilters never change the answer -------------------------------------------

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**17), max_value=10**17)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
)


@toolreplay.effect("probe.value")
def probe(value: object) -> object:
    return {"echo": value}


def naive(trace: Path, condition: str) -> bool:
    """Decode every operation and check the condition: what find must agree with."""
    check = parse_condition(condition)
    return any(
        check.holds(
            {"inputs": op.inputs, "outcome": {"status": "ok", "value": op.outcome.value}}  # type: ignore[union-attr]
        )
        for op in toolreplay.read_trace(trace).operations
    )


@given(
    recorded=st.lists(SCALARS | st.lists(SCALARS, max_size=3), min_size=1, max_size=4),
    wanted=SCALARS,
    operator=st.sampled_from(["==", "!=", "contains", "<", ">="]),
    path=st.sampled_from(["$.inputs.value", "$.outcome.value.echo", "$.inputs.value[*]"]),
)
def test_find_agrees_with_decoding_every_line(
    tmp_path_factory: pytest.TempPathFactory,
    recorded: list[object],
    wanted: object,
    operator: str,
    path: str,
) -> None:
    folder = tmp_path_factory.mktemp("property")
    # Scanning off: a generated number can pass for a card number (23518570919773 did).
    with toolreplay.record(folder / "t.trp", secrets="off"):
        for value in recorded:
            probe(value)
    if operator == "contains" and not isinstance(wanted, str):
        wanted = str(wanted)
    condition = f"{path} {operator} {json.dumps(wanted, ensure_ascii=False)}"
    found = list(toolreplay.find_traces(folder, effect="probe.value", where=[condition]))
    assert bool(found) == naive(folder / "t.trp", condition), condition


def test_the_command_imports_only_what_find_needs(tmp_path: Path) -> None:
    # The command line builds a command from its module only when it runs: `find` pays
    # for neither the other commands, the runtime, Rich (piped) nor pydantic.
    code = (
        "import sys\n"
        "import toolreplay.cli\n"
        f"sys.argv = ['toolreplay', 'find', {str(tmp_path)!r}]\n"
        "try:\n"
        "    toolreplay.cli.main()\n"
        "except SystemExit as exit_:\n"
        "    print(exit_.code, file=sys.stderr)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.stderr.strip().splitlines()[-1] == "1", result.stderr  # nothing matched
    loaded = set(result.stdout.split())
    assert "toolreplay.cli.find" in loaded
    unneeded = {
        "toolreplay.cli.run",
        "toolreplay.cli.cases",
        "toolreplay.cli.diff",
        "toolreplay.runtime",  # recording is capture's, not find's
        "toolreplay.capturing.api",
        "toolreplay.redaction",
        "rich",
        "pydantic",
    }
    assert sorted(loaded & unneeded) == []
    # One parser, Typer's, which converts the values without pydantic (`cli.command`).
    roots = {name.partition(".")[0] for name in loaded}
    assert "typer" in roots
    assert sorted(roots & {"pydantic", "pydantic_core"}) == []


@pytest.fixture
def large_folder(folder: Path) -> Path:
    """Over a thousand traces: copies of the captured ones, and two files that are not
    traces, one among the newest and one among the oldest."""

    sources = sorted(path for path in folder.glob("2*.trp"))
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    for index in range(1_010):
        source = sources[index % len(sources)]
        copy = folder / "bulk" / f"{new_trace_name(moment + timedelta(minutes=index))}.trp"
        copy.parent.mkdir(exist_ok=True)
        copy.write_bytes(source.read_bytes())
    newest = folder / "bulk" / f"{new_trace_name(moment + timedelta(days=400))}.trp"
    oldest = folder / "bulk" / f"{new_trace_name(moment - timedelta(days=400))}.trp"
    newest.write_text("not a trace\n")
    oldest.write_text("not a trace either\n")
    return folder


def find_json(folder: Path, *args: str, prelude: str = "") -> tuple[dict[str, Any], str]:
    """`toolreplay find FOLDER ARGS --format json` in a child Python process that runs
    `prelude` first: its JSON document and its stderr."""
    code = (
        f"{prelude}\nfrom toolreplay.cli import main\n"
        f"main(['find', {str(folder)!r}, *{list(args)!r}, '--format', 'json'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document, result.stderr


def library_answer(folder: Path, **query: Any) -> tuple[list[dict[str, Any]], int, list[str]]:
    search = toolreplay.find_traces(folder, **query)
    traces = [match.to_dict(folder) for match in search]
    skipped = sorted(str(path.relative_to(folder)) for path, _ in search.unreadable)
    return traces, search.scanned, skipped


def command_answer(document: dict[str, Any]) -> tuple[list[dict[str, Any]], int, list[str]]:
    skipped = sorted(entry["path"] for entry in document["skipped"])
    return document["traces"], document["scanned"], skipped


OPENING = (
    "import atexit, os, sys\nreal_open = os.open\nopened = []\n"
    "def counting_open(path, *args, **kwargs):\n"
    "    if str(path).endswith('.trp'):\n        opened.append(path)\n"
    "    return real_open(path, *args, **kwargs)\n"
    "os.open = counting_open\n"
    "atexit.register(lambda: print(f'opened={len(opened)}', file=sys.stderr))\n"
)
"""A prelude that counts the traces the command opens."""


def test_a_large_folder_gives_the_library_answer(large_folder: Path) -> None:
    query = {"effect": "billing.refund.create"}
    expected = library_answer(large_folder, **query)
    assert len(expected[0]) > 400
    assert len(expected[2]) == 3  # notes.trp and the two in bulk/
    document, stderr = find_json(large_folder, "--effect", "billing.refund.create", prelude=OPENING)
    assert command_answer(document) == expected
    files = len(toolreplay.find_traces(large_folder).selected_files())
    assert stderr.splitlines()[-1] == f"opened={files}"  # each file read once


def test_a_limit_stops_the_scan(large_folder: Path) -> None:
    document, stderr = find_json(large_folder, "--limit", "5", prelude=OPENING)
    newest_five = library_answer(large_folder)[0][:5]
    assert document["traces"] == newest_five
    opened = int(stderr.splitlines()[-1].removeprefix("opened="))
    # Only the newest files were read, not the thousand behind them.
    assert document["scanned"] == opened < 20, stderr
