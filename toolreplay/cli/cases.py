"""`toolreplay promote` and `toolreplay verify`: make regression cases, and check them."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cases import (
    MANIFEST_NAME,
    PromotedCase,
    promote_async,
    read_case_manifest,
    verify_case,
    verify_case_async,
)
from toolreplay.cases import (
    promote as promote_case,
)
from toolreplay.cli.output import (
    FormatOption,
    Output,
    OutputFormat,
    application_output_to_stderr,
)
from toolreplay.errors import (
    PromotionError,
    RunnerError,
    ToolReplayError,
    TraceError,
)
from toolreplay.portable import JsonValue
from toolreplay.protocol import (
    CaseVerification,
    ErrorSummary,
    PromoteDocument,
    PublishedCase,
    VerifyDocument,
)
from toolreplay.runners import import_from_working_directory, load_runner

__all__ = ["promote", "verify"]

_DETAIL_LINES = 20  # lines of a failure's message shown under its FAIL line


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
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise PromotionError(
            f"{source} is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None


def promote(
    trace: Annotated[
        Path, typer.Argument(metavar="TRACE", help="The trace to promote (often a fork's branch).")
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The case folder to create (must not exist).")
    ],
    name: Annotated[str, typer.Option("--name", "-n", help="The case's name.")],
    runner: Annotated[
        str,
        typer.Option(
            "--runner", "-r", metavar="MODULE:CALLABLE", help="The no-argument entry point."
        ),
    ],
    expect_json: Annotated[
        str | None, typer.Option("--expect-json", metavar="JSON", help="The expected return value.")
    ] = None,
    expect_file: Annotated[
        Path | None,
        typer.Option(
            "--expect-file", metavar="FILE", help="A file holding the expected return value."
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.text,
) -> None:
    """Turn a trace into a self-contained pytest case, verified before it is published.

    Exit 0 on success, 1 when the case does not hold (nothing is written), 2 when the
    arguments are refused (nothing is written).
    """
    status = 0
    case: PromotedCase | None = None
    error: BaseException | None = None
    try:
        expected = _expected_value(expect_json, expect_file)
        import_from_working_directory()
        with application_output_to_stderr():  # importing or running the app may print
            if load_runner(runner).is_async:
                case = asyncio.run(
                    promote_async(trace, output, name=name, runner=runner, expected=expected)
                )
            else:
                case = promote_case(trace, output, name=name, runner=runner, expected=expected)
    except (PromotionError, RunnerError, TraceError) as refused:
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
        Output.error(f"{type(error).__name__}: {error}")
        sys.stderr.write("nothing was written\n")
    raise typer.Exit(status)


class _NothingToVerify(Exception):
    """`verify` cannot run: a PATH is missing or cannot be searched, or holds no case."""

    def __init__(self, message: str, *, missing: Path | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.missing = missing


def _discover(paths: list[Path]) -> list[Path]:
    found: set[Path] = set()
    for path in paths:
        try:
            if not path.exists():
                if path.is_symlink():
                    raise _NothingToVerify(
                        f"cannot search {path} for cases: it is a symbolic link to nothing, "
                        "or a loop of links"
                    )
                raise _NothingToVerify(f"{path} does not exist", missing=path)
            if (path / MANIFEST_NAME).is_file():
                found.add(path)
                continue
            for manifest in path.rglob(MANIFEST_NAME):
                if not any(part.startswith(".") for part in manifest.relative_to(path).parts):
                    found.add(manifest.parent)
        except OSError as error:  # a name too long, a loop of links, a folder it cannot read
            reason = error.strerror or str(error)
            raise _NothingToVerify(f"cannot search {path} for cases: {reason}") from None
    if not found:
        raise _NothingToVerify(
            f"no case folder (a folder holding {MANIFEST_NAME}) under {', '.join(map(str, paths))}"
        )
    return sorted(found)


def _verify_one(folder: Path) -> tuple[str, BaseException | None]:
    name = folder.name
    try:
        manifest = read_case_manifest(folder)
        name = manifest.name
        if manifest.runner_kind == "async":
            asyncio.run(verify_case_async(folder))
        else:
            verify_case(folder)
    except ToolReplayError as error:
        return name, error
    return name, None


def verify(
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATH...", help="Case folders, or folders to search.")
    ],
    output_format: FormatOption = OutputFormat.text,
) -> None:
    """Find promoted cases under PATH (recursively) and verify each one.

    Exit 0 when every case holds, 1 when any fails, 2 when no case is found or a
    PATH is missing or cannot be searched.
    """
    try:
        cases = _discover(paths)
    except _NothingToVerify as nothing:
        if output_format is OutputFormat.json:
            sys.stdout.write(VerifyDocument(error=nothing.message).to_json() + "\n")
            raise typer.Exit(2) from None
        if nothing.missing is not None:
            raise typer.BadParameter(nothing.message, param_hint="PATH") from None
        Output.error(nothing.message)
        raise typer.Exit(2) from None
    import_from_working_directory()
    results: list[tuple[Path, str, BaseException | None]] = []
    with application_output_to_stderr():
        for folder in cases:
            name, error = _verify_one(folder)
            results.append((folder, name, error))
    failed = sum(1 for _, _, error in results if error is not None)
    if output_format is OutputFormat.json:
        verified = VerifyDocument(
            cases=tuple(
                CaseVerification(
                    path=str(folder),
                    name=name,
                    outcome="failed" if error else "passed",
                    error=None if error is None else ErrorSummary.from_exception(error),
                )
                for folder, name, error in results
            )
        )
        sys.stdout.write(verified.to_json() + "\n")
    else:
        out = Output()
        for folder, name, error in results:
            if error is None:
                out.line(f"PASS  {name}  ({folder})")
                continue
            first, *rest = str(error).splitlines() or [""]
            out.line(f"FAIL  {name}  ({folder}): {type(error).__name__}: {first}")
            for line in rest[:_DETAIL_LINES]:
                out.line(f"      {line}")
            hidden = len(rest) - _DETAIL_LINES
            if hidden > 0:
                out.line(f"      ... {hidden} more {'line' if hidden == 1 else 'lines'}")
        held = len(results) - failed
        out.line(f"{held} {'case' if held == 1 else 'cases'} held, {failed} failed")
    raise typer.Exit(1 if failed else 0)
