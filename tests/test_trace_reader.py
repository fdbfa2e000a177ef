"""Reading traces: completeness, torn tails, integrity, and precise format errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import toolreplay
from tests.support import crm
from toolreplay import TraceFormatError, TraceNotFoundError


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "refund.trp"
    with toolreplay.record(path):
        crm.handle_refund(42, 120.0)
    return path


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def write_lines(path: Path, lines: list[str], *, terminated: bool = True) -> Path:
    path.write_text("\n".join(lines) + ("\n" if terminated else ""), encoding="utf-8")
    return path


def format_error(path: Path) -> TraceFormatError:
    with pytest.raises(TraceFormatError) as caught:
        toolreplay.read_trace(path)
    assert caught.value.path == path
    return caught.value


def test_a_closed_recording_is_complete(recorded: Path) -> None:
    trace = toolreplay.read_trace(recorded)
    assert trace.complete
    assert trace.torn_line is None
    assert len(trace) == 3
    assert trace.describe_state() == "complete, 3 operations"


def test_a_missing_trace_says_so(tmp_path: Path) -> None:
    with pytest.raises(TraceNotFoundError, match="no such trace file") as caught:
        toolreplay.read_trace(tmp_path / "nope.trp")
    assert str(tmp_path / "nope.trp") in str(caught.value)
    with (
        pytest.raises(TraceNotFoundError, match="no such trace file"),
        toolreplay.replay(tmp_path / "nope.trp"),
    ):
        pass


def test_a_directory_is_not_a_trace(tmp_path: Path) -> None:
    with pytest.raises(TraceNotFoundError, match="is a directory"):
        toolreplay.read_trace(tmp_path)


def test_an_empty_file_is_not_a_trace(tmp_path: Path) -> None:
    (tmp_path / "empty.trp").write_bytes(b"")
    assert "the file is empty" in str(format_error(tmp_path / "empty.trp"))


def test_a_file_that_is_not_a_trace_is_named(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "other.jsonl", ['{"hello": "world"}'])
    error = format_error(path)
    assert error.line == 1
    assert str(error).startswith(f"{path}:1: not a Tool Replay trace")


def test_an_unknown_format_version_is_refused_with_what_to_do(recorded: Path) -> None:
    lines = lines_of(recorded)
    header = json.loads(lines[0])
    header["format_version"] = 6
    header["library_version"] = "9.0.0"
    path = write_lines(recorded.with_name("v6.trp"), [json.dumps(header), *lines[1:]])
    message = str(format_error(path))
    assert "trace format version 6 is not supported" in message
    assert "reads versions 3, 4 and 5" in message
    assert '"9.0.0"' in message


def test_a_malformed_line_is_named_by_file_and_line(recorded: Path) -> None:
    lines = lines_of(recorded)
    lines[2] = lines[2][:40]  # cut in the middle, but not the last line: not a torn tail
    path = write_lines(recorded.with_name("bad.trp"), lines)
    error = format_error(path)
    assert error.line == 3
    assert str(error).startswith(f"{path}:3: not valid JSON")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda op: op.update(extra=1), "operation: unknown extra"),
        (lambda op: op.pop("inputs"), "operation: missing inputs"),
        (
            lambda op: op.update(occurrence=-1),
            "occurrence must be a non-negative integer, found -1",
        ),
        (
            lambda op: op.update(occurrence="0"),
            'occurrence must be a non-negative integer, found "0"',
        ),
        (lambda op: op.update(fingerprint="abc"), "fingerprint must be 64 lowercase hex digits"),
        (lambda op: op.update(origin="invented"), 'origin must be "recorded" or "patched"'),
        (lambda op: op.update(inputs=[1]), "inputs must be an object, found list"),
        (lambda op: op["outcome"].update(status="maybe"), 'status must be "ok" or "error"'),
        (lambda op: op.update(kind="operatoin"), 'kind must be "operation" or "footer"'),
    ],
)
def test_a_wrong_operation_field_is_named(recorded: Path, edit: object, message: str) -> None:
    lines = lines_of(recorded)
    operation = json.loads(lines[1])
    edit(operation)  # type: ignore[operator]  # the parametrised edit
    path = write_lines(recorded.with_name("edited.trp"), [lines[0], json.dumps(operation)])
    error = format_error(path)
    assert error.line == 2
    assert message in str(error)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_portable_numbers_in_a_trace_are_refused(recorded: Path, constant: str) -> None:
    lines = lines_of(recorded)
    lines[1] = lines[1].replace('"customer_id":42', f'"customer_id":{constant}', 1)
    path = write_lines(recorded.with_name("nan.trp"), lines[:-1])
    error = format_error(path)
    assert error.line == 2
    assert "not portable JSON" in str(error)


def test_a_killed_recording_is_incomplete_and_every_operation_is_kept(recorded: Path) -> None:
    path = write_lines(recorded.with_name("killed.trp"), lines_of(recorded)[:-1])
    trace = toolreplay.read_trace(path)
    assert not trace.complete
    assert len(trace) == 3
    assert trace.describe_state().startswith("incomplete: 3 operations and no footer")


def test_a_torn_last_line_is_set_aside_not_misparsed(recorded: Path) -> None:
    lines = lines_of(recorded)
    torn = lines[3][: len(lines[3]) // 2]
    path = write_lines(recorded.with_name("torn.trp"), [*lines[:3], torn], terminated=False)
    trace = toolreplay.read_trace(path)
    assert not trace.complete
    assert trace.torn_line == 4
    assert [op.logical_id for op in trace.operations] == [0, 1]
    assert "a torn last line 4 was set aside" in trace.describe_state()


def test_an_unterminated_but_whole_last_line_is_kept(recorded: Path) -> None:
    lines = lines_of(recorded)
    path = write_lines(recorded.with_name("whole.trp"), lines, terminated=False)
    trace = toolreplay.read_trace(path)
    assert trace.complete
    assert trace.torn_line is None


def test_a_changed_complete_trace_fails_its_digest(recorded: Path) -> None:
    text = recorded.read_text().replace('"name":"Ada"', '"name":"Eve"')
    path = recorded.with_name("tampered.trp")
    path.write_text(text)
    error = format_error(path)
    assert error.line == 5
    assert "footer digest" in str(error)
    assert "delete its last line (the footer)" in str(error)


def test_a_complete_trace_missing_an_operation_fails_its_count(recorded: Path) -> None:
    lines = lines_of(recorded)
    path = write_lines(recorded.with_name("short.trp"), [lines[0], *lines[2:]])
    assert "the footer counts 3 operations but the trace holds 2" in str(format_error(path))


def test_an_edited_incomplete_trace_fails_its_fingerprints(recorded: Path) -> None:
    lines = lines_of(recorded)[:-1]
    lines[1] = lines[1].replace('"customer_id":42', '"customer_id":43', 1)
    path = write_lines(recorded.with_name("edited.trp"), lines)
    error = format_error(path)
    assert error.line == 2
    assert "operation 0 (crm.customer.get) has fingerprint" in str(error)


def test_structure_errors_after_the_header(recorded: Path) -> None:
    lines = lines_of(recorded)
    after_footer = write_lines(recorded.with_name("a.trp"), [*lines, lines[1]])
    assert "an operation follows the footer" in str(format_error(after_footer))
    twice = json.loads(lines[2])
    twice["logical_id"] = 0
    duplicate_id = write_lines(recorded.with_name("b.trp"), [lines[0], lines[1], json.dumps(twice)])
    assert "logical_id 0 appears twice" in str(format_error(duplicate_id))
    second_header = write_lines(recorded.with_name("c.trp"), [lines[0], lines[0]])
    assert format_error(second_header).line == 2
    binary = recorded.with_name("d.trp")
    binary.write_bytes(lines[0].encode() + b"\n\xff\xfe\n")
    assert "not UTF-8" in str(format_error(binary))


def test_replaying_an_incomplete_trace_serves_what_was_recorded(recorded: Path) -> None:
    path = write_lines(recorded.with_name("killed.trp"), lines_of(recorded)[:2])
    with toolreplay.replay(path):
        assert crm.get_customer(42)["name"] == "Ada"
    with (
        pytest.raises(toolreplay.ReplayMiss, match="The trace is incomplete"),
        toolreplay.replay(path),
    ):
        crm.handle_refund(42, 120.0)


def test_bytes_after_the_footer_are_an_error_not_a_torn_line(recorded: Path) -> None:
    path = recorded.with_name("trailing.trp")
    path.write_bytes(recorded.read_bytes() + b'{"kind": "oper')
    error = format_error(path)
    assert error.line == 6


@pytest.mark.parametrize(
    ("replacement", "message"),
    [
        ('"name":"\\ud800"', "lone surrogate"),
        ('"name":' + "9" * 5000, "not portable JSON"),
        ('"name":' + "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_unreadable_values_are_format_errors_with_a_line(
    recorded: Path, replacement: str, message: str
) -> None:
    lines = lines_of(recorded)[:-1]  # incomplete: fingerprints are recomputed
    lines[1] = lines[1].replace('"name":"Ada"', replacement, 1)
    path = write_lines(recorded.with_name("odd.trp"), lines)
    error = format_error(path)
    assert error.line == 2
    assert message in str(error)


def test_values_as_deep_as_portable_json_allows_are_written_and_read_back(tmp_path: Path) -> None:
    from toolreplay.portable import MAX_DEPTH, JsonValue

    deep: JsonValue = "leaf"
    for _ in range(MAX_DEPTH - 1):
        deep = [deep]

    @toolreplay.effect("deep.echo")
    def echo(value: JsonValue) -> JsonValue:
        return value

    path = tmp_path / "deep.trp"
    with toolreplay.record(path):
        echo(deep)
    for incomplete in (False, True):
        if incomplete:
            path.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
        with toolreplay.replay(path):
            assert echo(deep) == deep


def test_a_pipe_is_refused_instead_of_read_forever(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe.trp"
    os.mkfifo(fifo)
    with pytest.raises(TraceNotFoundError, match="not a regular file"):
        toolreplay.read_trace(fifo)


def test_crlf_line_endings_are_named_as_the_cause(recorded: Path) -> None:
    converted = recorded.with_name("crlf.trp")
    converted.write_bytes(recorded.read_bytes().replace(b"\n", b"\r\n"))
    assert '"*.trp -text"' in str(format_error(converted))


def test_long_lines_with_brackets_in_strings_stay_on_the_fast_path(tmp_path: Path) -> None:
    @toolreplay.effect("llm.text")
    def text() -> str:
        return "[" * 500 + "{" * 500

    path = tmp_path / "brackets.trp"
    with toolreplay.record(path):
        text()
    with toolreplay.replay(path):
        assert text() == "[" * 500 + "{" * 500


FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("name", ["sequential-v3.trp", "concurrent-v4.trp"])
def test_traces_of_earlier_formats_read_without_branch_fields(name: str) -> None:
    trace = toolreplay.read_trace(FIXTURES / name)
    assert trace.header.format_version == int(name[-5])
    assert trace.complete
    assert trace.footer is not None
    assert (trace.footer.unobserved, trace.footer.attempted) == ((), None)


@pytest.mark.parametrize("name", ["sequential-v3.trp", "concurrent-v4.trp"])
def test_traces_of_earlier_formats_refuse_format_5_fields(name: str, tmp_path: Path) -> None:
    lines = lines_of(FIXTURES / name)
    operation = json.loads(lines[1]) | {"origin": "supplied"}
    path = write_lines(tmp_path / "mixed.trp", [lines[0], json.dumps(operation)])
    assert 'origin must be "recorded" or "patched"' in str(format_error(path))
    footer = json.loads(lines[-1]) | {"unobserved": [], "attempted": None}
    path = write_lines(tmp_path / "footer.trp", [*lines[:-1], json.dumps(footer)])
    assert "footer: unknown attempted, unobserved" in str(format_error(path))


def test_a_recording_footer_lists_no_branch_fields(recorded: Path) -> None:
    footer = json.loads(lines_of(recorded)[-1])
    assert (footer["unobserved"], footer["attempted"]) == ([], None)
