"""`toolreplay scan PATH...` and `toolreplay redact IN OUT --rule ...` (RFC 0007 §6)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NamedTuple

import typer

from toolreplay.cli.command import SKIPPED_EXIT_CODE, FormatOption
from toolreplay.cli.output import Output, OutputFormat, error_fields
from toolreplay.errors import ToolReplayError
from toolreplay.redaction.files import ScannedFiles, redact_trace, scan_paths
from toolreplay.redaction.policy import RedactionPolicy
from toolreplay.redaction.scanner import (
    DEFAULT_SCANNER,
    SecretScanner,
    describe_findings,
)
from toolreplay.terminal import terminal_safe

__all__ = [
    "RedactionRule",
    "SecretRule",
    "redact",
    "scan",
    "secret_pattern_option",
    "secret_scanner",
]


class SecretRule(NamedTuple):
    """A `--pattern NAME=REGEX` value: an extra rule of the secret scanner."""

    name: str
    regex: str

    @classmethod
    def parse(cls, text: str) -> SecretRule:
        name, equals, regex = text.partition("=")
        if not equals or not name or not regex:
            raise ValueError(
                f"{text!r}: write NAME=REGEX, such as national-id='\\d{{3}}-\\d{{2}}-\\d{{4}}'"
            )
        return cls(name, regex)


def secret_pattern_option(help_text: str) -> Any:
    """`--pattern NAME=REGEX` (parameter `patterns: list[SecretRule] | None`): extra
    secret rules, repeatable."""
    return typer.Option("--pattern", metavar="NAME=REGEX", parser=SecretRule.parse, help=help_text)


def secret_scanner(patterns: list[SecretRule] | None) -> SecretScanner | None:
    """The built-in rules plus the `--pattern NAME=REGEX` rules (None when there are none)."""
    return SecretScanner(dict(patterns)) if patterns else None


def _fail(error: ToolReplayError) -> int:
    Output.error(str(error), error_fields(error))
    return 2


def _findings_document(scanned: ScannedFiles) -> str:
    document = {
        "findings": [finding.to_dict() for finding in scanned.findings],
        "files_scanned": scanned.files_scanned,
        "skipped": [{"path": str(path), "reason": reason} for path, reason in scanned.skipped],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def scan(
    paths: Annotated[
        list[Path],
        typer.Argument(metavar="PATH", help="Traces, patch files, case folders, folders."),
    ],
    patterns: Annotated[
        list[SecretRule] | None,
        secret_pattern_option(
            "An extra secret rule, such as national-id='\\b\\d{3}-\\d{2}-\\d{4}\\b' (repeatable)."
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.text,
) -> int:
    """Folders are scanned recursively (*.trp, *.json, *.jsonl). Each finding names
    the file, line, effect, part (inputs, output, error, ...), JSON path and
    rule, never the value. A file that cannot be read is skipped (a "skipped:
    PATH: reason" line on stderr) and the others are still scanned. Exit 0 when
    nothing was found, 1 with findings, 2 when a PATH does not exist or an
    option is malformed, 3 when nothing was found but some files were skipped.
    """
    try:
        scanned = scan_paths(paths, secret_scanner(patterns) or DEFAULT_SCANNER)
    except ToolReplayError as error:
        return _fail(error)
    if output_format is OutputFormat.json:
        sys.stdout.write(_findings_document(scanned))
    else:
        for path, reason in scanned.skipped:
            Output.skipped(path, reason)
        if scanned.findings:
            sys.stdout.write(
                f"{len(scanned.findings)} secret finding(s) in {scanned.files_scanned} file(s) "
                "(values are not shown):\n"
            )
            for finding in scanned.findings:  # one line each, whatever a trace's keys hold
                sys.stdout.write(f"  {terminal_safe(finding.describe())}\n")
            sys.stdout.write(
                "Redact them into a new trace with `toolreplay redact IN OUT --rule PATH`.\n"
            )
        else:
            sys.stdout.write(f"no secrets found in {scanned.files_scanned} file(s)\n")
    if scanned.findings:
        return 1
    return SKIPPED_EXIT_CODE if scanned.skipped else 0


class RedactionRule(NamedTuple):
    """A `--rule [EFFECT:]PATH` value: a JSON path, in the effects matching a glob or
    (`effects` None) in every effect."""

    effects: str | None
    path: str

    @classmethod
    def parse(cls, text: str) -> RedactionRule:
        if text.startswith("$"):
            return cls(None, text)
        glob, separator, path = text.partition(":$")
        if not separator or not glob:
            raise ValueError(
                f"{text!r}: write a JSON path ('$..email') or EFFECT:PATH "
                "('crm.customer.get:$.card.number')"
            )
        return cls(glob, "$" + path)


def _policy(
    rules: list[RedactionRule], patterns: list[str], redact_secrets: bool
) -> RedactionPolicy:
    paths: list[str] = []
    effects: dict[str, list[str]] = {}
    for glob, path in rules:
        if glob is None:
            paths.append(path)
        else:
            effects.setdefault(glob, []).append(path)
    return RedactionPolicy(
        paths=paths, effects=effects, patterns=patterns, redact_secrets=redact_secrets
    )


def redact(
    source: Annotated[Path, typer.Argument(metavar="IN", help="The trace to redact (only read).")],
    output: Annotated[Path, typer.Argument(metavar="OUT", help="The new, redacted trace.")],
    rules: Annotated[
        list[RedactionRule] | None,
        typer.Option(
            "--rule",
            metavar="[EFFECT:]PATH",
            parser=RedactionRule.parse,
            help="A JSON path to redact in every effect ('$..email') or in effects matching "
            "a glob ('crm.*:$.card.number'); repeatable.",
        ),
    ] = None,
    patterns: Annotated[
        list[str] | None,
        typer.Option(
            "--pattern",
            metavar="REGEX",
            help="Redact every match inside every string (group 1 if it has groups); repeatable.",
        ),
    ] = None,
    redact_secrets: Annotated[
        bool,
        typer.Option(
            "--redact-secrets", help="Also redact whatever the secret scanner's rules match."
        ),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing file at OUT.")
    ] = False,
    output_format: FormatOption = OutputFormat.text,
) -> int:
    """The key comes from TOOLREPLAY_REDACTION_KEY (never from a flag); replaying
    the new trace needs the same key. IN is never changed; OUT is written
    atomically and private (0600). Exit 0 when OUT was written and holds no
    secret finding, 1 when it still has findings (listed, values not shown), 2
    when nothing was written.
    """
    try:
        policy = _policy(rules or [], patterns or [], redact_secrets)
        result = redact_trace(source, output, policy, overwrite=overwrite)
    except ToolReplayError as error:
        return _fail(error)
    if output_format is OutputFormat.json:
        document = {
            "output": str(result.path),
            "source": str(source),
            "key_id": result.key_id,
            "operations": result.operations,
            "operations_changed": result.changed,
            "findings": [finding.to_dict() for finding in result.findings],
        }
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(
            f"wrote {result.path}: {result.changed} of {result.operations} operations redacted "
            f"(key id {result.key_id}); {source} is unchanged\n"
        )
        if result.findings:
            sys.stdout.write(
                f"{len(result.findings)} secret finding(s) remain (values are not shown):\n"
                f"{describe_findings(result.findings)}\n"
            )
    return 1 if result.findings else 0
