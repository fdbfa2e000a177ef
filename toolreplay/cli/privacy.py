"""`toolreplay scan PATH...` and `toolreplay redact IN OUT --rule ...` (RFC 0007 §6)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.output import FormatOption, OutputFormat
from toolreplay.errors import ToolReplayError
from toolreplay.redaction.files import redact_trace, scan_paths
from toolreplay.redaction.policy import RedactionPolicy
from toolreplay.redaction.scanner import (
    DEFAULT_SCANNER,
    SecretFinding,
    SecretScanner,
    describe_findings,
)

__all__ = ["redact", "scan", "secret_scanner"]

PatternOption = Annotated[
    list[str] | None,
    typer.Option(
        "--pattern",
        metavar="NAME=REGEX",
        help="An extra secret rule, such as national-id='\\b\\d{3}-\\d{2}-\\d{4}\\b' (repeatable).",
    ),
]


def secret_scanner(patterns: list[str] | None) -> SecretScanner | None:
    """The built-in rules plus `--pattern NAME=REGEX` rules (None when there are none)."""
    rules: dict[str, str] = {}
    for given in patterns or []:
        name, equals, regex = given.partition("=")
        if not equals or not name or not regex:
            raise typer.BadParameter(
                f"{given!r}: write NAME=REGEX, such as national-id='\\d{{3}}-\\d{{2}}-\\d{{4}}'",
                param_hint="--pattern",
            )
        rules[name] = regex
    return SecretScanner(rules) if rules else None


def _fail(error: ToolReplayError) -> typer.Exit:
    sys.stderr.write(f"error: {error}\n")
    return typer.Exit(2)


def _findings_document(findings: tuple[SecretFinding, ...], files: int) -> str:
    document = {"findings": [finding.to_dict() for finding in findings], "files_scanned": files}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def scan(
    paths: Annotated[
        list[Path],
        typer.Argument(metavar="PATH...", help="Traces, patch files, case folders, folders."),
    ],
    patterns: PatternOption = None,
    output_format: FormatOption = OutputFormat.text,
) -> None:
    """Scan files for secrets: API keys, tokens, private keys, JWTs, card numbers.

    Folders are scanned recursively (*.trp, *.json, *.jsonl). Each finding names
    the file, line, effect, part (inputs, output, error, ...), JSON path and
    rule, never the value. Exit 0 when nothing was found, 1 with findings, 2
    when a path cannot be read or an option is malformed.
    """
    try:
        scanned = scan_paths(paths, secret_scanner(patterns) or DEFAULT_SCANNER)
    except ToolReplayError as error:
        raise _fail(error) from None
    if output_format is OutputFormat.json:
        sys.stdout.write(_findings_document(scanned.findings, scanned.files_scanned))
    elif scanned.findings:
        sys.stdout.write(
            f"{len(scanned.findings)} secret finding(s) in {scanned.files_scanned} file(s) "
            "(values are not shown):\n"
        )
        sys.stdout.write("\n".join(f"  {f.describe()}" for f in scanned.findings) + "\n")
        sys.stdout.write(
            "Redact them into a new trace with `toolreplay redact IN OUT --rule PATH`.\n"
        )
    else:
        sys.stdout.write(f"no secrets found in {scanned.files_scanned} file(s)\n")
    raise typer.Exit(1 if scanned.findings else 0)


def _policy(rules: list[str], patterns: list[str], redact_secrets: bool) -> RedactionPolicy:
    paths: list[str] = []
    effects: dict[str, list[str]] = {}
    for rule in rules:
        if rule.startswith("$"):
            paths.append(rule)
            continue
        glob, separator, path = rule.partition(":$")
        if not separator or not glob:
            raise typer.BadParameter(
                f"{rule!r}: write a JSON path ('$..email') or EFFECT:PATH "
                "('crm.customer.get:$.card.number')",
                param_hint="--rule",
            )
        effects.setdefault(glob, []).append("$" + path)
    return RedactionPolicy(
        paths=paths, effects=effects, patterns=patterns, redact_secrets=redact_secrets
    )


def redact(
    source: Annotated[Path, typer.Argument(metavar="IN", help="The trace to redact (only read).")],
    output: Annotated[Path, typer.Argument(metavar="OUT", help="The new, redacted trace.")],
    rules: Annotated[
        list[str] | None,
        typer.Option(
            "--rule",
            metavar="[EFFECT:]PATH",
            help="A JSON path to redact in every effect ('$..email') or in effects matching a "
            "glob ('crm.*:$.card.number'); repeatable.",
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
) -> None:
    """Write a redacted copy of a trace: placeholders instead of the selected values.

    The key comes from TOOLREPLAY_REDACTION_KEY (never from a flag); replaying
    the new trace needs the same key. IN is never changed; OUT is written
    atomically and private (0600). Exit 0 when OUT was written and holds no
    secret finding, 1 when it still has findings (listed, values not shown), 2
    when nothing was written.
    """
    try:
        policy = _policy(rules or [], patterns or [], redact_secrets)
        result = redact_trace(source, output, policy, overwrite=overwrite)
    except ToolReplayError as error:
        raise _fail(error) from None
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
    raise typer.Exit(1 if result.findings else 0)
