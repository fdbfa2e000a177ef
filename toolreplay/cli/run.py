"""`toolreplay record | replay | fork`: run an application under a session.

With `--format json` each command prints exactly one JSON document on stdout,
the run protocol (RFC 0004) that the terminal UI and CI scripts read. The
application's own output goes to stderr, at the file-descriptor level, so
nothing it prints (or a child process of it) can corrupt that document.

Exit status: 0 when the run succeeded, 1 when it ran and failed (application
error or exit, replay contract error, session error) or its trace could not be
written (storage error: a full disk), 2 when it was refused
before the application ran (bad runner, trace, patch file or paths); a refused
command writes no file.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Generator
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.command import FormatOption
from toolreplay.cli.output import OutputFormat, application_output_to_stderr, one_line_fields
from toolreplay.cli.privacy import SecretRule, secret_pattern_option, secret_scanner
from toolreplay.cli.traces import shown, trace_file
from toolreplay.errors import (
    ForkOptionError,
    NetworkOptionError,
    NonPortableValueError,
    ObjectStoreError,
    PatchError,
    RedactionError,
    ReplayContractError,
    ReplayMiss,
    RunnerError,
    RunnerImportError,
    SecretInTraceError,
    SecretScanError,
    SessionError,
    ToolReplayError,
    TraceError,
    TraceWriteError,
)
from toolreplay.patches import Patch, read_patches
from toolreplay.portable import ensure_portable
from toolreplay.protocol import ErrorReport, RunDocument
from toolreplay.runners import Runner, import_from_working_directory, load_runner
from toolreplay.runtime.fork import DEFAULT_LIVE_LIMIT, ForkSession
from toolreplay.runtime.network import NetworkOption, network_guard, network_policy
from toolreplay.runtime.recording import RecordSession
from toolreplay.runtime.replaying import ReplaySession
from toolreplay.terminal import terminal_safe
from toolreplay.trace.reader import Trace, read_trace

__all__ = ["fork", "record", "replay"]


class SecretModeChoice(StrEnum):
    """`record --secrets`: the secret modes of RFC 0007 §4."""

    error = "error"
    warn = "warn"
    abandon = "abandon"
    off = "off"


class NetworkChoice(StrEnum):
    """`replay --network`, `fork --network`: RFC 0001 §10."""

    block = "block"
    allow = "allow"


class _Refused(Exception):
    """The command was refused before the application ran."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _run(report: RunDocument, runner: Runner, session: RecordSession | ReplaySession) -> None:
    """Open the session, call the runner, and fill in the report's outcome."""
    try:
        session.__enter__()
    except (ToolReplayError, OSError) as error:
        raise _Refused(error) from error
    # A recording's application prints as it wrote it: nothing it reads is from a trace.
    with application_output_to_stderr(from_trace=not isinstance(session, RecordSession)):
        _call(report, runner, session)
    storage = session.write_error
    if storage is not None:
        # Not the application's failure, whatever it raised after: the disk's.
        ended = report.error
        report.outcome, report.error = "storage_error", ErrorReport.from_exception(storage)
        if ended is not None and (ended.type, ended.message) != (
            report.error.type,
            report.error.message,
        ):
            report.error = replace(
                report.error,
                notes=(
                    *report.error.notes,
                    f"The run then ended on {ended.type}: {ended.message}",
                ),
            )


def _with_caught_miss(error: ErrorReport, session: RecordSession | ReplaySession) -> ErrorReport:
    """`error`, with the call the run left the recording at when the application caught
    that `ReplayMiss` and then failed in another way (an agent framework turns a tool's
    exception into a message to the model): its identity, inputs and candidates, and a
    note, so the miss can be answered (RFC 0004 §4.6)."""
    miss = session.violation
    if not isinstance(miss, ReplayMiss) or error.identity is not None:
        return error
    caught = ErrorReport.from_exception(miss)
    return replace(
        error,
        identity=caught.identity,
        inputs=caught.inputs,
        candidates=caught.candidates,
        notes=(
            *error.notes,
            f"Before this, the application caught a ReplayMiss: {miss.identity.effect} "
            f"occurrence {miss.identity.occurrence} was called, and neither the trace nor a "
            "patch answers it (its identity, inputs and candidates are in this report).",
        ),
    )


def _call(report: RunDocument, runner: Runner, session: RecordSession | ReplaySession) -> None:
    """Call the runner in the opened session and classify how it ended."""
    try:
        with _closing(session):
            value = runner()
    except ReplayContractError as error:
        report.outcome, report.error = "replay_contract_error", ErrorReport.from_exception(error)
        return
    except (SessionError, NonPortableValueError, SecretInTraceError, RedactionError) as error:
        report.outcome, report.error = "session_error", ErrorReport.from_exception(error)
        return
    except SystemExit as error:
        report.outcome = "application_exit"
        report.error = _with_caught_miss(ErrorReport.from_exception(error), session)
        return
    except Exception as error:
        report.outcome = "application_error"
        report.error = _with_caught_miss(
            ErrorReport.from_exception(error, with_traceback=True), session
        )
        return
    try:
        report.return_value = ensure_portable(value)
    except NonPortableValueError:
        report.return_value, report.return_value_portable = repr(value)[:2000], False


@contextlib.contextmanager
def _closing(session: RecordSession | ReplaySession) -> Generator[None]:
    """Exit an already entered session with whatever the block raised."""
    try:
        yield
    except BaseException as error:
        session.__exit__(type(error), error, error.__traceback__)
        raise
    session.__exit__(None, None, None)


def _kept(report: RunDocument) -> str | None:
    """Where a failed record or fork left its trace, if it left one."""
    if report.command == "record":
        trace = report.paths.get("trace")
        if trace is not None and Path(trace).is_file():
            return f"the trace recorded up to the failure is kept at {trace}"
    elif report.command == "fork":
        branch, source = report.paths.get("branch"), report.paths.get("source")
        if branch is not None and Path(branch).is_file():
            return (
                f"the branch, holding what the application observed up to the failure, is "
                f"kept at {branch}; compare: toolreplay diff {source} {branch}"
            )
    return None


def _emit(report: RunDocument, output_format: OutputFormat, summary: list[str]) -> int:
    """Print the report; return the exit status."""
    # The files and the runner the lines quote are one line each, whatever their names hold.
    fields = (*report.paths.values(), report.runner)
    if output_format is OutputFormat.json:
        sys.stdout.write(report.to_json() + "\n")
    elif report.outcome == "ok":
        for line in summary:
            sys.stdout.write(one_line_fields(line, fields) + "\n")
        if report.return_value_portable:
            shown = json.dumps(report.return_value, ensure_ascii=False, sort_keys=True)
        else:
            shown = f"{report.return_value} (not portable JSON)"
        sys.stdout.write(f"returned {shown}\n")
    else:
        assert report.error is not None
        captured = report.error.traceback  # an application error's, or a runner import's
        if captured:
            sys.stderr.write(captured if captured.endswith("\n") else captured + "\n")
        # The error's type, and the application's own message (which may quote a trace it
        # replays; its traceback above shows it whole), are one line each.
        message = report.error.message
        if report.outcome in ("application_error", "application_exit"):
            message = terminal_safe(message)
        sys.stderr.write(f"error: {report.outcome}: {terminal_safe(report.error.type)}: ")
        sys.stderr.write(one_line_fields(message, fields) + "\n")
        for note in report.error.notes:
            sys.stderr.write(one_line_fields(note, fields) + "\n")
        if report.outcome != "invalid_arguments":
            kept = _kept(report)
            if kept is not None:
                sys.stderr.write(one_line_fields(kept, fields) + "\n")
    sys.stdout.flush()
    return {"ok": 0, "invalid_arguments": 2}.get(report.outcome, 1)


def _refuse(report: RunDocument, error: BaseException, output_format: OutputFormat) -> int:
    # A trace that cannot be created for lack of space is no bad argument.
    report.outcome = "storage_error" if isinstance(error, TraceWriteError) else "invalid_arguments"
    report.error = ErrorReport.from_exception(error)
    if isinstance(error, RunnerImportError):
        # Where the application's import failed is the one thing to show (RFC 0004 §4.6).
        report.error = replace(report.error, traceback=error.import_traceback() or None)
    return _emit(report, output_format, [])


def _network(network: NetworkChoice, allow_hosts: list[str] | None) -> NetworkOption:
    """The session's `network=` from `--network` and `--allow-host`."""
    if not allow_hosts:
        return network.value
    if network is NetworkChoice.allow:
        raise NetworkOptionError(
            "--allow-host lets hosts through a blocked network, and --network allow blocks "
            "nothing: give one or the other"
        )
    return list(allow_hosts)


def _import_offline(given: str | None, trace: Trace, network: NetworkOption) -> Runner:
    """Import the runner with the network blocked as the session will block it, so that
    nothing its modules do when imported reaches a real service either."""
    with network_guard.holding(network_policy(network), what="import of the runner's module"):
        return _resolve_runner(given, trace)


def _report_refusals(report: RunDocument, session: ReplaySession) -> None:
    """Put where the network guard refused connections in the report (each once)."""
    report.network_refused = tuple(
        dict.fromkeys(refusal.destination for refusal in session.network_refusals)
    )


def _refused_line(session: ReplaySession) -> list[str]:
    refused = sorted({refusal.destination for refusal in session.network_refusals})
    if not refused:
        return []
    return [
        f"the network is blocked: {len(session.network_refusals)} outbound connection(s) "
        f"refused, to {', '.join(refused)}"
    ]


NetworkChoiceOption = Annotated[
    NetworkChoice,
    typer.Option(
        "--network",
        help="block (the default) refuses every outbound connection the application makes "
        "while it runs, from any thread (a fork's --live calls excepted); allow lets them "
        "through.",
    ),
]
"""`replay --network`, `fork --network` (parameter `network`)."""

AllowHostOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-host",
        metavar="HOST[:PORT]",
        help="With the network blocked, let connections to this host (any port, or PORT) "
        "through; repeatable.",
    ),
]
"""`replay --allow-host`, `fork --allow-host` (parameter `allow_hosts`)."""

RunnerOption = Annotated[
    str | None,
    typer.Option(
        "--runner",
        "-r",
        metavar="MODULE:CALLABLE",
        help="The application entry point, called with no arguments (default: the trace's).",
    ),
]
"""`replay --runner`, `fork --runner`: optional, as the trace records one."""


def _resolve_runner(given: str | None, trace: Trace | None) -> Runner:
    spec = given or (trace.header.runner if trace is not None else None)
    if spec is None:
        raise RunnerError(
            "the trace records no runner; pass --runner MODULE:CALLABLE (the application "
            "entry point that takes no arguments)"
        )
    import_from_working_directory()
    return load_runner(spec)


def record(
    runner: Annotated[
        str,
        typer.Option(
            "--runner", "-r", metavar="MODULE:CALLABLE", help="The application entry point."
        ),
    ],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", metavar="PATH", help="The trace file to create."),
    ],
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an existing trace at --output.")
    ] = False,
    secrets: Annotated[
        SecretModeChoice | None,
        typer.Option(
            "--secrets",
            help="What a value matching a secret rule does: error (the default, or "
            "TOOLREPLAY_SECRETS) fails the effect call, warn writes it with a warning, "
            "abandon removes the trace, off does not scan.",
        ),
    ] = None,
    patterns: Annotated[
        list[SecretRule] | None,
        secret_pattern_option(
            "An extra secret rule for the scan, such as national-id='NID-\\d{9}' (repeatable)."
        ),
    ] = None,
    output_format: FormatOption = OutputFormat.text,
) -> int:
    """Exit 0 when the run succeeded; 1 when the application ran and failed (its
    error or exit, a session error) or the trace could not be written (a full
    disk: storage_error), the trace recorded up to the failure being kept; 2
    when the command was refused before the application ran (bad runner or
    output path), nothing being written.
    """
    report = RunDocument("record", runner=runner, paths={"trace": str(output)})
    try:
        session = RecordSession(
            output,
            overwrite=overwrite,
            metadata={"runner": runner},
            secrets=None if secrets is None else secrets.value,
            scanner=secret_scanner(patterns),
        )
        session.check_before_run()  # before the import: a refused --output runs no app code
        with application_output_to_stderr(from_trace=False):  # the import may print
            resolved = _resolve_runner(runner, None)
        _run(report, resolved, session)
    except (_Refused, RunnerError, TraceError, SecretScanError) as refusal:
        return _refuse(
            report, refusal.error if isinstance(refusal, _Refused) else refusal, output_format
        )
    report.counts = {"operations_recorded": session.operation_count}
    return _emit(
        report,
        output_format,
        [f"recorded {runner} to {output}: {session.operation_count} operations"],
    )


def replay(
    trace_path: Annotated[
        str,
        typer.Argument(metavar="TRACE", help="The trace to replay (a file, or its URL)."),
    ],
    runner: RunnerOption = None,
    network: NetworkChoiceOption = NetworkChoice.block,
    allow_hosts: AllowHostOption = None,
    output_format: FormatOption = OutputFormat.text,
) -> int:
    """Exit 0 when the run succeeded; 1 when the application ran and failed (a
    replay miss or other contract error, its own error or exit, a session
    error); 2 when the command was refused before the application ran (bad
    trace, runner or --allow-host; a trace URL that cannot be fetched). Replay
    never writes a file (a trace URL is fetched into the local cache).

    The network is blocked while the application runs (--network): every
    outbound connection it makes, from any thread, is refused, and the refused
    destinations are reported (network_refused in the JSON document).
    """
    report = RunDocument("replay", runner=runner, paths={"trace": shown(trace_path)})
    try:
        trace = read_trace(trace_file(trace_path))
        blocked = _network(network, allow_hosts)
        session = ReplaySession(trace, network=blocked)
        with application_output_to_stderr():  # the import may print
            resolved = _import_offline(runner, trace, blocked)
        report.runner = resolved.spec
        _run(report, resolved, session)
    except (_Refused, RunnerError, TraceError, NetworkOptionError, ObjectStoreError) as refusal:
        return _refuse(
            report, refusal.error if isinstance(refusal, _Refused) else refusal, output_format
        )
    report.counts = {
        "operations_in_trace": len(trace),
        "operations_consumed": session.consumed_count,
    }
    _report_refusals(report, session)
    return _emit(
        report,
        output_format,
        [
            f"replayed {shown(trace_path)} with {resolved.spec}: {session.consumed_count} of "
            f"{len(trace)} operations served, no effect body ran",
            *_refused_line(session),
        ],
    )


def fork(
    source_path: Annotated[
        str, typer.Argument(metavar="SOURCE", help="The trace to fork (a file, or its URL).")
    ],
    patches_path: Annotated[
        Path,
        typer.Option("--patches", "-p", metavar="PATH", help="A patch file (toolreplay.patches)."),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            metavar="PATH",
            help="The branch trace to create (a local file, also when SOURCE is a URL).",
        ),
    ],
    runner: RunnerOption = None,
    live: Annotated[
        list[str] | None,
        typer.Option(
            "--live",
            metavar="EFFECT",
            help="Let this effect (or namespace.*) run its real body for calls the source "
            "does not hold (an instrumented OpenAI client's effect, such as "
            "openai.responses.create, sends its request); repeatable. Off by default.",
        ),
    ] = None,
    live_limit: Annotated[
        int,
        typer.Option(
            "--live-limit",
            min=0,
            metavar="N",
            help="Stop the fork when a live call would be the N+1th.",
        ),
    ] = DEFAULT_LIVE_LIMIT,
    allow_unobserved: Annotated[
        bool,
        typer.Option(
            "--allow-unobserved",
            help="Complete even if the application no longer calls some source operations; "
            "the branch footer lists them.",
        ),
    ] = False,
    network: NetworkChoiceOption = NetworkChoice.block,
    allow_hosts: AllowHostOption = None,
    output_format: FormatOption = OutputFormat.text,
) -> int:
    """A patch replaces an outcome the trace recorded or supplies one it lacks.

    Exit 0 when the run succeeded and every patch was applied; 1 when the
    application ran and failed (a call nothing answers, an unapplied patch, its
    own error or exit, a session error) or the branch could not be written (a
    full disk: storage_error), the branch holding what it observed up to the
    failure being kept; 2 when the command was refused before the application
    ran (bad trace or trace URL, patch file, runner, --live, --allow-host or output path, or a
    supply patch for an effect the application does not declare), nothing being
    written.

    The network is blocked while the application runs (--network), except for
    the --live calls; a fork stops when a live call would exceed --live-limit.
    """
    report = RunDocument(
        "fork",
        runner=runner,
        paths={"source": shown(source_path), "patches": str(patches_path), "branch": None},
    )
    try:
        trace = read_trace(trace_file(source_path))
        patches: list[Patch] = read_patches(patches_path)
        blocked = _network(network, allow_hosts)
        session = ForkSession(
            trace,
            output,
            patches,
            live=live or (),
            live_limit=live_limit,
            unobserved="allow" if allow_unobserved else "error",
            network=blocked,
        )
        session.check_before_run(trace)  # before the import: refusals run no app code
        with application_output_to_stderr():  # the import may print
            resolved = _import_offline(runner, trace, blocked)
        report.runner = resolved.spec
        _run(report, resolved, session)
    except (
        _Refused,
        RunnerError,
        TraceError,
        PatchError,
        ForkOptionError,
        NetworkOptionError,
        ObjectStoreError,
    ) as refusal:
        return _refuse(
            report, refusal.error if isinstance(refusal, _Refused) else refusal, output_format
        )
    report.paths["branch"] = str(output)
    report.counts = {
        "operations_in_trace": len(trace),
        "operations_consumed": session.consumed_count,
        "operations_patched": session.patched_count,
        "operations_live": session.live_count,
        "operations_unobserved": len(trace) - session.consumed_count,
        "patches": len(patches),
    }
    _report_refusals(report, session)
    live_calls = f", {session.live_count} live calls" if session.live_count else ""
    return _emit(
        report,
        output_format,
        [
            f"forked {shown(source_path)} into {output} with {resolved.spec}: "
            f"{session.consumed_count} of {len(trace)} operations served, "
            f"{session.patched_count} of {len(patches)} patches applied{live_calls}",
            *_refused_line(session),
            f"compare: toolreplay diff {shown(source_path)} {output}",
        ],
    )
