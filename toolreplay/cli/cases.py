"""`toolreplay promote` and `toolreplay verify`: make regression cases, and check them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cases import MANIFEST_NAME, CaseResult, PromotedCase, verify_cases
from toolreplay.cases.publishing import promote_any_runner
from toolreplay.cli.command import FormatOption
from toolreplay.cli.output import (
    Output,
    OutputFormat,
    application_output_to_stderr,
    error_fields,
    one_line_fields,
)
from toolreplay.cli.traces import trace_file
from toolreplay.errors import (
    CaseSearchError,
    JsonTextError,
    ObjectStoreError,
    PromotionError,
    RunnerError,
    RunnerImportError,
    SecretInTraceError,
    ToolReplayError,
    TraceError,
)
from toolreplay.portable import JsonValue, parse_json_text
from toolreplay.protocol import (
    CaseVerification,
    ErrorSummary,
    PromoteDocument,
    PublishedCase,
    VerifyDocument,
)
from toolreplay.runners import import_from_working_directory

__all__ = ["promote", "verify"]

_DETAIL_LINES = 20  # lines of a failure's message shown under its FAIL line
_TRACEBACK_LINES = 40  # last lines of a runner import's traceback shown under it


def _expected_value(expect_json: str | None, expect_file: Path | None) -> JsonValue:
    if (expect_json is None) == (expect_file is None):
        raise PromotionError(
            "give the expected return value with exactly one of --expect-json and --expect-file"
        )
    if expect_file is not None:
        try:
            text = expect_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise PromotionError(f"--expect-file {expect_file}: cannot read it ({error})") from None
        source = f"--expect-file {expect_file}"
    else:
        assert expect_json is not None
        text, source = expect_json, "--expect-json"
    try:
        return parse_json_text(text, what="the expected value")
    except JsonTextError as error:
        raise PromotionError(f"{source}: {error}") from None


def promote(
    trace: Annotated[
        str,
        typer.Argument(
            metavar="TRACE",
            help="The trace to promote (often a fork's branch): a file, or its URL.",
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", metavar="DIR", help="The case folder to create (must not exist)."
        ),
    ],
    name: Annotated[str, typer.Option("--name", "-n", metavar="NAME", help="The case's name.")],
    runner: Annotated[
        str,
        typer.Option(
            "--runner", "-r", metavar="MODULE:CALLABLE", help="The no-argument entry point."
        ),
    ],
    expect_json: Annotated[
        str | None,
        typer.Option("--expect-json", metavar="JSON", help="The expected return value."),
    ] = None,
    expect_file: Annotated[
        Path | None,
        typer.Option(
            "--expect-file", metavar="FILE", help="A file holding the expected return value."
        ),
    ] = None,
    allow_secret_findings: Annotated[
        bool,
        typer.Option(
            "--allow-secret-findings",
            help="Promote even though the secret scanner flags the trace (they are not real "
            "secrets). Without it such a trace is refused.",
        ),
    ] = False,
    output_format: FormatOption = OutputFormat.text,
) -> int:
    """Give the expected return value with exactly one of --expect-json and
    --expect-file. Exit 0 on success, 1 when the case does not hold (nothing is
    written), 2 when the arguments are refused (nothing is written).
    """
    status = 0
    case: PromotedCase | None = None
    error: BaseException | None = None
    try:
        expected = _expected_value(expect_json, expect_file)
        trace_path = trace_file(trace)  # a URL's copy is fetched and checked first
        import_from_working_directory()
        # Every argument is checked before the runner's module is imported (RFC 0005 §2.2).
        with application_output_to_stderr():  # importing or running the app may print
            case = promote_any_runner(
                trace_path,
                output,
                name=name,
                runner=runner,
                expected=expected,
                allow_secret_findings=allow_secret_findings,
            )
    except (
        PromotionError,
        RunnerError,
        TraceError,
        SecretInTraceError,
        ObjectStoreError,
    ) as refused:
        status, error = 2, refused
    except ToolReplayError as failed:  # the case does not hold, or the runner misused sessions
        status, error = 1, failed
    if output_format is OutputFormat.json:
        document = PromoteDocument(
            outcome="ok" if case else ("invalid_arguments" if status == 2 else "case_failed"),
            case=None
            if case is None
            else PublishedCase(
                directory=str(case.directory),
                name=case.name,
                trace_path=str(case.trace_path),
                trace_sha256=case.trace_sha256,
                test_path=str(case.test_path),
            ),
            error=None if error is None else ErrorSummary.from_exception(error),
        )
        sys.stdout.write(document.to_json() + "\n")
    elif case is not None:
        out = Output()
        out.fields(
            [
                ("case", str(case.directory)),
                ("name", case.name),
                ("trace", str(case.trace_path)),
                ("sha256", case.trace_sha256),
                ("test", str(case.test_path)),
            ]
        )
        out.line(
            f"promoted: the case replays offline and returns the expected value; run it "
            f"with python -m pytest {case.directory}"
        )
    else:
        assert error is not None
        if isinstance(error, RunnerImportError):
            sys.stderr.write(error.import_traceback())
        Output.error(f"{type(error).__name__}: {error}", (*error_fields(error), trace, output))
        sys.stderr.write("nothing was written\n")
    return status


def _nothing_to_verify(message: str, output_format: OutputFormat, *, missing: bool = False) -> int:
    """Report that no case could be verified; return the exit status, 2."""
    if output_format is OutputFormat.json:
        sys.stdout.write(VerifyDocument(error=message).to_json() + "\n")
        return 2
    if missing:  # a usage error: the usage line, then the message
        raise typer.BadParameter(message, param_hint="'PATH'")
    Output.error(message)
    return 2


def _print_result(out: Output, result: CaseResult) -> None:
    """`PASS  <name>  (<path>)`, or `FAIL ...` with the first lines of the error."""
    if result.error is None:
        out.line(f"PASS  {result.name}  ({result.path})")
        return
    first, *rest = str(result.error).splitlines() or [""]
    out.line(f"FAIL  {result.name}  ({result.path}): {type(result.error).__name__}: {first}")
    for line in rest[:_DETAIL_LINES]:
        out.line(f"      {line}")
    hidden = len(rest) - _DETAIL_LINES
    if hidden > 0:
        out.line(f"      ... {hidden} more {'line' if hidden == 1 else 'lines'}")
    if isinstance(result.error, RunnerImportError):
        traceback = result.error.import_traceback().splitlines()
        if traceback:
            out.line("      the import's traceback (innermost last):")
            if len(traceback) > _TRACEBACK_LINES:
                earlier = len(traceback) - _TRACEBACK_LINES
                out.line(f"      ... {earlier} earlier {'line' if earlier == 1 else 'lines'}")
            for line in traceback[-_TRACEBACK_LINES:]:
                out.line(f"      {line}")


def verify(
    paths: Annotated[
        list[Path],
        typer.Argument(metavar="PATH", help="Case folders, or folders to search."),
    ],
    output_format: FormatOption = OutputFormat.text,
) -> int:
    """Exit 0 when every case holds, 1 when any fails, 2 when no case is found or a
    PATH is missing or cannot be searched.
    """
    import_from_working_directory()
    try:
        with application_output_to_stderr():
            results = verify_cases(paths)
    except CaseSearchError as error:
        message = one_line_fields(error.args[0], (error.path, *paths))
        return _nothing_to_verify(message, output_format, missing=error.missing)
    if not results:
        return _nothing_to_verify(
            f"no case folder (a folder holding {MANIFEST_NAME}) under "
            + ", ".join(one_line_fields(str(path), [path]) for path in paths),
            output_format,
        )
    failed = sum(1 for result in results if not result.ok)
    if output_format is OutputFormat.json:
        verified = VerifyDocument(
            cases=tuple(
                CaseVerification(
                    path=str(result.path),
                    name=result.name,
                    outcome=result.outcome,
                    error=None
                    if result.error is None
                    else ErrorSummary.from_exception(result.error),
                )
                for result in results
            )
        )
        sys.stdout.write(verified.to_json() + "\n")
    else:
        out = Output()
        for result in results:
            _print_result(out, result)
        held = len(results) - failed
        out.line(f"{held} {'case' if held == 1 else 'cases'} held, {failed} failed")
    return 1 if failed else 0
