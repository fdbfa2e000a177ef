"""Privacy for files at rest: scanning traces and other files, redacting a trace into a new one.

`scan_paths` backs `toolreplay scan` and `promote`'s check; `redact_trace`
backs `toolreplay redact` (RFC 0007 §6).
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from toolreplay._version import __version__
from toolreplay.errors import RedactionError, RedactionKeyError, TraceError
from toolreplay.files import UnreadableFileError, read_regular_file, skip_reason
from toolreplay.portable import JsonValue, fingerprint, same_value
from toolreplay.redaction.keys import KEY_ENVIRONMENT_VARIABLE, key_from_environment
from toolreplay.redaction.policy import METADATA_KEY, RedactionPolicy, SessionRedaction
from toolreplay.redaction.scanner import DEFAULT_SCANNER, SecretFinding, SecretScanner
from toolreplay.trace.model import (
    Operation,
    OperationIdentity,
    Raised,
    Returned,
    SessionEnding,
    operation_location,
)
from toolreplay.trace.reader import read_trace
from toolreplay.trace.writer import check_copy_path, write_whole_trace

__all__ = [
    "RedactedTrace",
    "ScannedFiles",
    "redact_trace",
    "scan_bytes",
    "scan_file",
    "scan_paths",
]

SCANNED_SUFFIXES = (".trp", ".json", ".jsonl")


@dataclass(frozen=True, slots=True)
class ScannedFiles:
    """What `scan_paths` found, in file order, how many files it read, and which files
    (or folders) it skipped and why."""

    findings: tuple[SecretFinding, ...]
    files_scanned: int
    skipped: tuple[tuple[Path, str], ...] = ()


def scan_paths(
    paths: Iterable[str | os.PathLike[str]], scanner: SecretScanner = DEFAULT_SCANNER
) -> ScannedFiles:
    """Scan files, and folders recursively (`*.trp`, `*.json`, `*.jsonl`), for secrets.

    Raises `TraceError` naming a path that does not exist, before scanning anything. A
    file that cannot be read (permissions, not a regular file, anything reading it
    raises) or a folder that cannot be listed is skipped, with the reason, and the
    others are still scanned.
    """
    given = [Path(path) for path in paths]
    for path in given:
        if not path.exists():
            raise TraceError(f"{path}: no such file or folder to scan", path=path)
    findings: list[SecretFinding] = []
    skipped: list[tuple[Path, str]] = []
    count = 0
    for path in _files(given, skipped):
        try:
            found = scan_bytes(read_regular_file(path, "scanned"), str(path), scanner)
        except UnreadableFileError as error:
            skipped.append((path, error.problem))
            continue
        except Exception as error:  # one file that breaks the scan is skipped, not fatal
            skipped.append((path, skip_reason(error)))
            continue
        findings.extend(found)
        count += 1
    return ScannedFiles(tuple(findings), count, tuple(skipped))


def _files(paths: list[Path], skipped: list[tuple[Path, str]]) -> Iterator[Path]:
    def unlisted(error: OSError) -> None:
        folder = Path(error.filename) if error.filename else Path("?")
        skipped.append((folder, skip_reason(error)))

    for path in paths:
        if path.is_dir():
            for root, folders, names in os.walk(path, onerror=unlisted):
                folders.sort()
                for name in sorted(names):
                    if name.endswith(SCANNED_SUFFIXES):
                        yield Path(root, name)
        else:
            yield path


def scan_file(path: Path, scanner: SecretScanner = DEFAULT_SCANNER) -> list[SecretFinding]:
    """Findings in one file: a trace line by line (whatever its state), else JSON, else text."""
    try:
        data = read_regular_file(path, "scanned")
    except UnreadableFileError as error:
        raise TraceError(f"{path}: {error.problem}", path=path) from None
    return scan_bytes(data, str(path), scanner)


def scan_bytes(
    data: bytes, name: str, scanner: SecretScanner = DEFAULT_SCANNER
) -> list[SecretFinding]:
    """`scan_file` for bytes already read; `name` is the file named in the findings."""
    text = data.decode("utf-8", "replace")
    found: list[SecretFinding] = []
    lines = text.split("\n")
    if _is_trace(lines[0]):
        for number, line in enumerate(lines, start=1):
            if line.strip():
                found.extend(_scan_trace_line(line, scanner, name, number))
        return found
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply: text
        for number, line in enumerate(lines, start=1):
            found.extend(
                replace(finding, file=name, line=number)
                for finding in scanner.scan_value(line, part="text")
            )
        return found
    return [replace(f, file=name) for f in scanner.scan_value(document, part="value")]


def _is_trace(first_line: str) -> bool:
    try:
        header: object = json.loads(first_line)
    except (ValueError, RecursionError):
        return False
    return isinstance(header, dict) and cast(dict[str, Any], header).get("format") == (
        "toolreplay.trace"
    )


def _scan_trace_line(
    line: str, scanner: SecretScanner, name: str, number: int
) -> list[SecretFinding]:
    try:
        obj: Any = json.loads(line)
    except (ValueError, RecursionError):  # a torn, edited or too deep line is still text
        return [
            replace(finding, file=name, line=number)
            for finding in scanner.scan_value(line, part="text")
        ]
    if not isinstance(obj, dict):
        return [replace(f, file=name, line=number) for f in scanner.scan_value(obj, part="text")]
    record = cast(dict[str, Any], obj)
    kind = record.get("kind")
    found: list[SecretFinding] = []
    if kind == "operation":
        effect = f"{record.get('namespace')}.{record.get('name')}"
        found += scanner.scan_value(record.get("inputs"), part="inputs", effect=effect)
        outcome = record.get("outcome")
        if isinstance(outcome, dict):
            outcome = cast(dict[str, Any], outcome)
            if "value" in outcome:
                found += scanner.scan_value(outcome["value"], part="output", effect=effect)
            error = outcome.get("error")
            if isinstance(error, dict):
                found += scanner.scan_value(cast(JsonValue, error), part="error", effect=effect)
    elif kind == "header":
        found += scanner.scan_value(record.get("metadata"), part="metadata")
    elif kind == "footer":
        ending = record.get("ending")
        if isinstance(ending, dict):
            message = cast(dict[str, Any], ending).get("message")
            found += scanner.scan_value(message, part="ending", effect=None)
    else:
        found += scanner.scan_value(cast(JsonValue, record), part="text")
    return [replace(finding, file=name, line=number) for finding in found]


@dataclass(frozen=True, slots=True)
class RedactedTrace:
    """What `redact_trace` wrote: where, how many operations changed, what still matches."""

    path: Path
    operations: int
    changed: int
    key_id: str
    findings: tuple[SecretFinding, ...]


def redact_trace(
    source: str | os.PathLike[str],
    output: str | os.PathLike[str],
    policy: RedactionPolicy,
    *,
    overwrite: bool = False,
    scanner: SecretScanner = DEFAULT_SCANNER,
) -> RedactedTrace:
    """Write a redacted copy of `source` to `output` (RFC 0007 §6.2); `source` is only read.

    Each operation's inputs and outcome are redacted as a record session with
    `policy` would have (fingerprints recomputed; occurrences, lanes, times and
    lineage kept). The copy has a new trace id and records its origin in its
    metadata. The key is `policy.key` or `TOOLREPLAY_REDACTION_KEY`.
    """
    source_path, output_path = Path(source), Path(output)
    check_copy_path(source_path, output_path, operation="a redaction", copy="the redacted copy")
    if not policy.has_rules:
        raise RedactionError(
            "no redaction rule was given: name at least one path (--rule '$..email'), "
            "pattern or --redact-secrets"
        )
    key = policy.key or key_from_environment()
    if key is None:
        raise RedactionKeyError(
            f"redacting needs a key: set {KEY_ENVIRONMENT_VARIABLE} (at least 16 bytes; the "
            "key that later replays of the new trace will use)"
        )
    trace = read_trace(source_path)
    previous = trace.header.metadata.get(METADATA_KEY)
    previous_id = previous.get("key_id") if isinstance(previous, dict) else None
    if previous_id is not None and previous_id != key.key_id:
        raise RedactionKeyError(
            f"{source_path} was redacted with the key whose id is {previous_id}, and this key "
            f"has id {key.key_id}; one trace takes one key (replay redacts with it). Use the "
            "same key"
        )
    session = SessionRedaction(policy, key, scanner)
    operations: list[Operation] = []
    seen: dict[OperationIdentity, Operation] = {}
    changed = 0
    for operation in trace.operations:
        redacted = _redact_operation(operation, session)
        if redacted is not operation:
            changed += 1
        other = seen.setdefault(redacted.identity, operation)
        if other is not operation:
            raise RedactionError(
                f"{operation_location(operation)} and {operation_location(other)} "
                f"({operation.effect}) become the same call once redacted, so replay could not "
                "tell them apart; redact fewer fields of this effect"
            )
        operations.append(redacted)
    source_digest = hashlib.sha256(source_path.read_bytes()).hexdigest()
    entry: dict[str, JsonValue] = {
        "algorithm": "hmac-sha256",
        "key_id": key.key_id,
        "redacted_from": {"trace_id": trace.header.trace_id, "sha256": source_digest},
    }
    header = replace(
        trace.header,
        trace_id=uuid.uuid4().hex,
        library_version=__version__,
        metadata={**trace.header.metadata, METADATA_KEY: entry},
    )
    ending = None if trace.footer is None else trace.footer.ending
    if ending is not None and ending.message is not None:
        ending = SessionEnding(ending.status, ending.error_type, session.text(ending.message))
    write_whole_trace(
        output_path, header, operations, ending, overwrite=overwrite, what="redacted trace"
    )
    findings = tuple(scan_file(output_path, scanner))
    return RedactedTrace(output_path, len(operations), changed, key.key_id, findings)


def _redact_operation(operation: Operation, session: SessionRedaction) -> Operation:
    rules = session.for_effect(operation.effect, ())
    if rules is None:
        return operation
    redacted, known = rules.value(cast(JsonValue, operation.inputs))
    inputs = cast(dict[str, JsonValue], redacted)
    outcome = operation.outcome
    if isinstance(outcome, Returned):
        value, _ = rules.value(outcome.value, known)
        new_outcome: Returned | Raised = Returned(value)
    else:
        new_outcome = rules.failure(outcome, known)
    if same_value(inputs, operation.inputs) and _same_outcome(new_outcome, outcome):
        return operation
    identity = operation.identity
    return replace(
        operation,
        identity=OperationIdentity(
            identity.namespace,
            identity.name,
            fingerprint(cast(JsonValue, inputs)),
            identity.occurrence,
        ),
        inputs=inputs,
        outcome=new_outcome,
        line=None,
    )


def _same_outcome(left: Returned | Raised, right: Returned | Raised) -> bool:
    if isinstance(left, Returned) and isinstance(right, Returned):
        return same_value(left.value, right.value)
    if isinstance(left, Raised) and isinstance(right, Raised):
        return same_value(left.to_dict(), right.to_dict())
    return False
