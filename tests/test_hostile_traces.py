"""Hostile traces through every command that prints one: nothing reaches the terminal raw.

Each trace is the bundled incident edited by hand (`tests/support/hostile.py`): every
field of `FIELDS` holds its tag and every character class of `CHARACTER_CLASSES`, the
fingerprints and footer fixed up so that the trace reads as valid (`complete`), or
without a footer (`incomplete`), or with the old digest (`tampered`, refused). The
commands run as a person runs them, in child processes; their output, text and json,
must hold no character a terminal acts on (checked by Unicode category, not by the code
under test), every field they show must read escaped, and json must stay valid and read
back as exactly what the trace holds. The same traces in a real terminal, and through
the debugger, are in `tests/tui/test_hostile_terminal.py`; the demo page in
`tests/test_incident_demo.py`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolreplay
from tests.support.hostile import (
    CHARACTER_CLASSES,
    CLIPBOARD,
    FIELDS,
    FILE_NAME,
    INCIDENT,
    EditableTrace,
    hostile,
    hostile_trace,
    shown,
    unsafe_characters,
)
from toolreplay.cli.show import trace_summary
from toolreplay.portable import canonical_json

ROOT = Path(__file__).resolve().parent.parent
RUNNER = "examples.incident.app:run_incident"
RETURNED = {"order_id": "ord_1042", "amount": 1200.0, "decision": "approved"}
SECRET = "AKIAIOSFODNN7EXAMPLE"  # the aws-access-key-id rule's documented example

# What each command's text shows of a trace whole, so each of these fields must read
# escaped there; the fields it shows cut to a column are only checked for their tag.
SHOW_WHOLE = [
    "effect-namespace",
    "effect-name",
    "trace-id",
    "library-version",
    "runner",
]
SHOW_COMPLETE_WHOLE = ["ending-error-type", "ending-message"]
SHOW_CUT = ["input-key", "input-value", "output-key", "error-type"]
FIND_WHOLE = ["runner", "metadata-key", "metadata-value", "ending-error-type"]


def toolreplay_cli(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",  # a lone surrogate printed raw would show here
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", **env},
    )


def assert_terminal_safe(result: subprocess.CompletedProcess[str]) -> None:
    command = " ".join(map(str, result.args[3:]))
    assert "Traceback" not in result.stderr, f"{command}:\n{result.stderr}"
    for name, output in (("stdout", result.stdout), ("stderr", result.stderr)):
        found = unsafe_characters(output)
        assert found == [], f"{command} printed {found} raw on {name}:\n{output[:2000]}"


def assert_shows(output: str, fields: list[str]) -> None:
    for name in fields:
        assert shown(name) in output, f"{name} is not shown escaped:\n{output[:3000]}"


def assert_tags(output: str, fields: list[str]) -> None:
    for name in fields:
        assert f"<{name}>" in output, f"{name} is not shown:\n{output[:3000]}"


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    for state in ("complete", "incomplete", "tampered"):
        hostile_trace(folder / f"{state}.trp", state)
    shutil.copy(folder / "complete.trp", folder / FILE_NAME)
    return folder


def test_every_field_and_character_class_is_in_the_hostile_trace(traces: Path) -> None:
    # The suite tests what it claims: the trace reads, and every field holds every class.
    trace = toolreplay.read_trace(traces / "complete.trp")
    assert trace.complete
    lines = (traces / "complete.trp").read_text(encoding="utf-8")
    for name in FIELDS:
        encoded = json.dumps(hostile(name), ensure_ascii=False)[1:-1]
        assert encoded in lines, name
    assert not toolreplay.read_trace(traces / "incomplete.trp").complete
    for raw, _ in CHARACTER_CLASSES.values():
        assert raw.replace("/", "").replace("\x00", "") in FILE_NAME or raw == "\x00"


@pytest.mark.parametrize("state", ["complete", "incomplete"])
def test_show_text(traces: Path, state: str) -> None:
    result = toolreplay_cli("show", str(traces / f"{state}.trp"))
    assert result.returncode == 0, result.stderr
    assert_terminal_safe(result)
    whole = SHOW_WHOLE + (SHOW_COMPLETE_WHOLE if state == "complete" else [])
    assert_shows(result.stdout, whole)
    assert_tags(result.stdout, SHOW_CUT)


@pytest.mark.parametrize("state", ["complete", "incomplete"])
def test_show_json_is_valid_and_reads_back_exactly(traces: Path, state: str) -> None:
    path = traces / f"{state}.trp"
    result = toolreplay_cli("show", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert_terminal_safe(result)
    assert json.loads(result.stdout) == trace_summary(toolreplay.read_trace(path))


def test_a_refused_trace_and_a_hostile_file_name_are_named_escaped(
    traces: Path, tmp_path: Path
) -> None:
    tampered = toolreplay_cli("show", str(traces / "tampered.trp"))
    assert tampered.returncode == 2
    assert_terminal_safe(tampered)
    assert "does not match the content" in tampered.stderr
    shutil.copy(traces / "tampered.trp", tmp_path / FILE_NAME)
    refused = toolreplay_cli("show", str(tmp_path / FILE_NAME))
    assert refused.returncode == 2
    assert_terminal_safe(refused)
    assert f"<file-name>\\u001b[2J\\u001b]0;pwned\\u0007\\u001b]52;c;{CLIPBOARD}" in refused.stderr
    for option in ([], ["--format", "json"]):
        opened = toolreplay_cli("show", str(traces / FILE_NAME), *option)
        assert opened.returncode == 0
        assert_terminal_safe(opened)
        assert "<file-name>\\u001b[2J" in opened.stdout


def test_find_text(traces: Path) -> None:
    result = toolreplay_cli("find", str(traces))
    assert result.returncode == 0, result.stderr
    assert_terminal_safe(result)
    assert_shows(result.stdout, FIND_WHOLE)
    name = FILE_NAME.replace("<file-name>", "")
    escaped = "".join(
        shown for cls, (raw, shown) in CHARACTER_CLASSES.items() if raw in name and "/" not in raw
    )
    assert f"<file-name>{escaped}" in result.stdout
    assert result.stdout.count("\n") == 5  # one line a trace (4), one count: no line break


def test_find_json_is_valid_and_reads_back_exactly(traces: Path) -> None:
    result = toolreplay_cli("find", str(traces), "--where", "$.inputs.region exists", "-f", "json")
    assert result.returncode == 0, result.stderr
    assert_terminal_safe(result)
    document: dict[str, Any] = json.loads(result.stdout)
    assert {trace["path"] for trace in document["traces"]} == {
        "complete.trp",
        "incomplete.trp",
        "tampered.trp",
        FILE_NAME,
    }
    header = EditableTrace.read(traces / "complete.trp").header
    for trace in document["traces"]:
        assert trace["metadata"] == header["metadata"]


def test_a_skipped_file_is_named_escaped(traces: Path, tmp_path: Path) -> None:
    folder = tmp_path / "skipping"
    folder.mkdir()
    (folder / FILE_NAME).write_text("no header\n")
    for option in ([], ["--format", "json"]):
        result = toolreplay_cli("find", str(folder), *option)
        assert result.returncode == 3
        assert_terminal_safe(result)
        assert "<file-name>\\u001b[2J" in result.stderr + result.stdout


def test_scan_names_findings_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "scanned"
    folder.mkdir()
    trace = EditableTrace.read(INCIDENT)
    for name, edit in FIELDS.items():
        edit(trace, hostile(name))
    trace.operations[0]["inputs"][hostile("secret-key")] = SECRET
    trace.write(folder / FILE_NAME, "complete")
    for option in ([], ["--format", "json"]):
        result = toolreplay_cli("scan", str(folder), *option)
        assert result.returncode == 1, result.stdout + result.stderr
        assert_terminal_safe(result)
        assert SECRET not in result.stdout + result.stderr
    text = toolreplay_cli("scan", str(folder)).stdout
    assert_shows(text, ["effect-namespace"])
    assert f"<secret-key>\\u001b[2J\\u001b]0;pwned\\u0007\\u001b]52;c;{CLIPBOARD}" in text
    assert text.count("\n") == 3  # the count, the finding, the advice: no line break
    document = json.loads(toolreplay_cli("scan", str(folder), "-f", "json").stdout)
    (finding,) = document["findings"]
    assert finding["file"] == str(folder / FILE_NAME)
    assert finding["path"] == toolreplay.format_path([hostile("secret-key")])


def test_diff_text_and_json(traces: Path, tmp_path: Path) -> None:
    changed = EditableTrace.read(traces / "complete.trp")
    changed.operations[0]["outcome"]["value"]["name"] = hostile("changed-output")
    changed.operations[1]["inputs"]["region"] = hostile("changed-input")
    target = changed.write(tmp_path / "changed.trp", "complete")
    source = traces / "complete.trp"
    text = toolreplay_cli("diff", str(source), str(target))
    assert text.returncode == 0, text.stderr
    assert_terminal_safe(text)
    assert_shows(text.stdout, ["effect-namespace", "ending-error-type"])
    assert_tags(text.stdout, ["changed-output", "output-value"])
    as_json = toolreplay_cli("diff", str(source), str(target), "--format", "json")
    assert_terminal_safe(as_json)
    assert json.loads(as_json.stdout) == toolreplay.diff(source, target).to_dict()


# --- verify: cases whose manifest or trace an attacker edited -------------------------------


def promoted_case(folder: Path) -> Path:
    case = folder / "base"
    promoted = toolreplay_cli(
        "promote", str(INCIDENT), "--output", str(case), "--name", "base", "--runner", RUNNER,
        "--expect-json", json.dumps({**RETURNED, "refund_id": "rf_ord_1042"}),
    )  # fmt: skip
    assert promoted.returncode == 0, promoted.stderr
    return case


def edited_case(base: Path, folder: Path, *, trace: Path | None = None, **changes: Any) -> Path:
    """A copy of the case `base` as `folder`, its manifest changed (`name`, `expected`)
    and its trace replaced by `trace`, the manifest fixed up to match it."""
    shutil.copytree(base, folder)
    manifest: dict[str, Any] = json.loads((folder / "case.json").read_text())
    if trace is not None:
        (folder / manifest["trace"]["path"]).unlink()
        data = trace.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        name = f"trace-sha256-{digest}.trp"
        (folder / name).write_bytes(data)
        manifest["trace"] = {"path": name, "sha256": digest, "size_bytes": len(data)}
        effects = sorted({op.effect for op in toolreplay.read_trace(trace).operations})
        manifest["scope"].update(effects=effects, operation_count=5)
    if "name" in changes:
        manifest["name"] = changes["name"]
    if "expected" in changes:
        manifest["expectation"]["value"] = changes["expected"]
    (folder / "case.json").write_bytes(canonical_json(manifest) + b"\n")
    return folder


def test_verify_text_and_json(traces: Path, tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    base = promoted_case(tmp_path / "promoted")
    # A case folder named as an attacker names it, holding a trace whose effects,
    # inputs and outputs are hostile: its replay misses, and the message quotes them.
    edited_case(base, cases / FILE_NAME.removesuffix(".trp"), trace=traces / "complete.trp")
    # A hostile expected value: the case fails, and the message quotes the difference.
    edited_case(base, cases / "expected", expected={**RETURNED, "decision": hostile("expected")})
    # A hostile case name: refused by the manifest's rules, and the message quotes it.
    edited_case(base, cases / "name", name=hostile("case-name"))

    text = toolreplay_cli("verify", str(cases))
    assert text.returncode == 1, text.stdout + text.stderr
    assert_terminal_safe(text)
    assert text.stdout.count("FAIL  ") == 3, text.stdout
    assert_tags(text.stdout, ["case-name", "expected", "file-name"])
    assert "\\u001b]52;c;" in text.stdout

    as_json = toolreplay_cli("verify", str(cases), "--format", "json")
    assert as_json.returncode == 1
    assert_terminal_safe(as_json)
    document = json.loads(as_json.stdout)
    messages = " ".join(case["error"]["message"] for case in document["cases"])
    assert_tags(messages, ["case-name", "expected", "file-name"])


@pytest.mark.parametrize(
    "command",
    [
        "replay {trace}",  # the trace's own (hostile) runner: refused, and named
        f"replay {{trace}} --runner {RUNNER}",  # it misses: the candidates are quoted
        f"fork {{trace}} --runner {RUNNER} --output {{out}}/branch.trp --patches {{out}}/fix.json",
        f"promote {{trace}} --runner {RUNNER} --output {{out}}/case --name c --expect-json 1",
        "migrate {trace} --output {out}/migrated.trp",
        "redact {trace} {out}/redacted.trp --rule $..name",
    ],
    ids=lambda command: " ".join(command.split()[:3:2]),
)
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_run_and_write_commands_quote_a_hostile_trace_escaped(
    traces: Path, tmp_path: Path, command: str, output_format: str
) -> None:
    trace = traces / FILE_NAME
    patch = toolreplay.replace_output(
        effect="crm.customer.get", inputs={"customer_id": 5817}, value={"id": 5817}
    )
    toolreplay.write_patches(tmp_path / "fix.json", [patch])
    arguments = [part.format(trace=trace, out=tmp_path) for part in command.split()]
    key = "a-redaction-key-for-the-hostile-suite"
    result = toolreplay_cli(*arguments, "--format", output_format, TOOLREPLAY_REDACTION_KEY=key)
    assert result.returncode in (0, 1, 2), result.stderr
    assert_terminal_safe(result)
    if output_format == "json" and result.stdout:
        json.loads(result.stdout)
    # The trace's text is quoted (file name, runner, effects...), escaped in some spelling.
    assert f"]52;c;{CLIPBOARD}" in result.stdout + result.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="needs file names of any bytes (Linux)")
def test_a_file_name_that_is_not_utf8_is_shown_escaped(traces: Path, tmp_path: Path) -> None:
    # Python holds the byte 0xff of such a name as a lone surrogate, which UTF-8 cannot
    # print: escaped, it prints, and json reads it back as the same string.
    name = os.fsdecode(b"bad\xff\x1bname.trp")
    shutil.copy(traces / "complete.trp", tmp_path / name)
    for command in (["find", str(tmp_path)], ["show", str(tmp_path / name)]):
        for option in ([], ["--format", "json"]):
            result = toolreplay_cli(*command, *option)
            assert result.returncode == 0, result.stderr
            assert_terminal_safe(result)
            assert "bad\\udcff\\u001bname.trp" in result.stdout
    document = json.loads(toolreplay_cli("find", str(tmp_path), "--format", "json").stdout)
    assert [trace["path"] for trace in document["traces"]] == [name]


# --- line breaks inside a field ---------------------------------------------------------------

FORGED = "\nerror: forged line\t"
"""A field's line break, then what would read as a line of the command's own."""


def starts_a_line(output: str) -> bool:
    return any(line.startswith("error: forged line") for line in output.splitlines())


def test_a_line_break_in_a_field_never_starts_a_line_of_its_own(tmp_path: Path) -> None:
    # The file name, the footer's error type and a recorded failure's type and message
    # all hold a newline: every command prints each of them on one line.
    trace = EditableTrace.read(INCIDENT)
    assert trace.footer is not None
    trace.footer["ending"].update(status="raised", error_type=f"X{FORGED}", message="m")
    error = {"type": f"Y{FORGED}", "message": f"recorded{FORGED}", "args": None}
    trace.operations[3]["outcome"] = {"status": "error", "error": error}
    named = trace.write(tmp_path / f"named{FORGED}.trp", "complete")

    diff = toolreplay_cli("diff", str(INCIDENT), str(named))
    assert diff.returncode == 0, diff.stderr
    assert not starts_a_line(diff.stdout), diff.stdout
    assert "named\\u000aerror: forged line\\u0009.trp" in diff.stdout
    assert "ended with X\\u000aerror: forged line\\u0009" in diff.stdout

    for command in (["show"], ["diff", str(INCIDENT)], ["migrate", "--output", "x.trp"]):
        missing = toolreplay_cli(*command, str(tmp_path / f"missing{FORGED}.trp"), cwd=tmp_path)
        assert missing.returncode == 2
        assert not starts_a_line(missing.stderr), missing.stderr
        assert "missing\\u000aerror: forged line" in missing.stderr

    # The replayed failure is the application's error: its type and message are one line.
    replayed = toolreplay_cli("replay", str(named), "--runner", RUNNER)
    assert replayed.returncode == 1
    _, _, error_line = replayed.stderr.partition("error: application_error: ")
    assert error_line, replayed.stderr
    assert not starts_a_line(error_line), replayed.stderr
    assert "recorded\\u000aerror: forged line\\u0009" in error_line
