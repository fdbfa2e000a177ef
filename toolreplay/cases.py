"""Promoted cases: a trace, a runner and an expected return value, as a pytest module.

A case folder holds exactly three files: `case.json` (the manifest, canonical
JSON), `trace-sha256-<digest>.trp` (a byte copy of the trace, named after its
own SHA-256) and `test_case.py` (a static module that calls `verify_case` on
its own folder). It refers to nothing outside itself except the runner, which
is imported by name, so the folder can be copied anywhere the application is
importable, and a suite of thousands of cases runs in parallel unchanged.

`verify_case` checks integrity (manifest shape, trace path, size, digest)
before it imports any application module, then replays the trace strictly
under the runner and compares the return value with the expectation. Each
failure has its own error type (see `toolreplay.errors`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, cast

from toolreplay.errors import (
    ApplicationExecutionError,
    BehavioralRegressionError,
    CaseIntegrityError,
    NonPortableValueError,
    PromotionError,
    ReplayContractError,
    RunnerError,
    SessionError,
    SessionNestingError,
    TraceError,
)
from toolreplay.portable import (
    JsonValue,
    canonical_json,
    ensure_portable,
    same_value,
    value_differences,
)
from toolreplay.runners import RUNNER_PATTERN, Runner, load_runner
from toolreplay.runtime.session import ReplaySession
from toolreplay.trace.reader import Trace, parse_trace

__all__ = [
    "CASE_FORMAT",
    "CASE_FORMAT_VERSION",
    "MANIFEST_NAME",
    "TEST_NAME",
    "CaseManifest",
    "PromotedCase",
    "VerifiedCase",
    "promote",
    "promote_async",
    "read_case_manifest",
    "verify_case",
    "verify_case_async",
]

CASE_FORMAT = "toolreplay.case"
CASE_FORMAT_VERSION = 1
MANIFEST_NAME = "case.json"
TEST_NAME = "test_case.py"

RunnerKind = Literal["sync", "async"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_TRACE_NAME = re.compile(r"trace-sha256-(?P<digest>[0-9a-f]{64})\.trp")

_TEST_MODULES: dict[RunnerKind, str] = {
    "sync": '''"""A regression case promoted by Tool Replay. It replays its trace offline."""

from pathlib import Path

import toolreplay


def test_toolreplay_case() -> None:
    toolreplay.verify_case(Path(__file__).resolve().parent)
''',
    "async": '''"""A regression case promoted by Tool Replay. It replays its trace offline."""

import asyncio
from pathlib import Path

import toolreplay


def test_toolreplay_case() -> None:
    asyncio.run(toolreplay.verify_case_async(Path(__file__).resolve().parent))
''',
}


@dataclass(frozen=True, slots=True)
class CaseManifest:
    """What `case.json` says. `expected` is the return value the runner must produce."""

    name: str
    trace_path: str
    trace_sha256: str
    trace_size_bytes: int
    runner: str
    runner_kind: RunnerKind
    expected: JsonValue
    effects: tuple[str, ...]
    operation_count: int

    def to_json(self) -> bytes:
        """The canonical JSON bytes of the manifest (what `case.json` holds)."""
        document: dict[str, JsonValue] = {
            "format": CASE_FORMAT,
            "format_version": CASE_FORMAT_VERSION,
            "name": self.name,
            "trace": {
                "path": self.trace_path,
                "sha256": self.trace_sha256,
                "size_bytes": self.trace_size_bytes,
            },
            "runner": {"target": self.runner, "kind": self.runner_kind},
            "replay": {"mode": "strict"},
            "expectation": {"kind": "return_equals", "value": self.expected},
            "scope": {
                "effects": list(self.effects),
                "operation_count": self.operation_count,
                "covers": "the instrumented effects recorded in the trace, and nothing else",
            },
        }
        return canonical_json(document) + b"\n"


@dataclass(frozen=True, slots=True)
class PromotedCase:
    """The case `promote()` published."""

    directory: Path
    name: str
    trace_path: Path
    trace_sha256: str
    test_path: Path
    manifest: CaseManifest


@dataclass(frozen=True, slots=True)
class VerifiedCase:
    """A case that held: its manifest, and the value the runner returned."""

    directory: Path
    manifest: CaseManifest
    returned: JsonValue
    operations_replayed: int


# --- reading a case -------------------------------------------------------------------


def _integrity_error(directory: Path, message: str) -> CaseIntegrityError:
    return CaseIntegrityError(f"case {directory}: {message}")


def _expect_object(
    directory: Path, value: object, where: str, keys: frozenset[str]
) -> dict[str, Any]:
    if type(value) is not dict:
        raise _integrity_error(directory, f"{where} must be a JSON object")
    obj = cast(dict[str, Any], value)
    if obj.keys() != keys:
        problems: list[str] = []
        if keys - obj.keys():
            problems.append(f"missing {', '.join(sorted(keys - obj.keys()))}")
        if obj.keys() - keys:
            problems.append(f"unknown {', '.join(sorted(obj.keys() - keys))}")
        raise _integrity_error(directory, f"{where}: {'; '.join(problems)}")
    return obj


_MANIFEST_KEYS = frozenset(
    {"format", "format_version", "name", "trace", "runner", "replay", "expectation", "scope"}
)


def read_case_manifest(directory: str | os.PathLike[str]) -> CaseManifest:
    """Read and check `case.json` of a case folder (no trace or application is touched)."""
    return _read_manifest(Path(directory), Path(directory))


def _read_manifest(folder: Path, display: Path) -> CaseManifest:
    """`display` is the folder errors name (a staged case is named by its destination)."""
    manifest_path = folder / MANIFEST_NAME
    try:
        if not folder.is_dir():
            raise _integrity_error(
                display, "is not a folder (a case is a folder holding case.json)"
            )
        if manifest_path.is_symlink() or not manifest_path.is_file():
            raise _integrity_error(display, f"has no {MANIFEST_NAME} (a regular file)")
    except OSError as error:  # a name too long, a folder that cannot be searched
        raise _integrity_error(display, f"cannot be read: {error.strerror or error}") from None
    try:
        document: object = json.loads(manifest_path.read_text(encoding="utf-8"))
    except OSError as error:
        raise _integrity_error(
            display, f"cannot read {MANIFEST_NAME}: {error.strerror or error}"
        ) from None
    except RecursionError:
        raise _integrity_error(display, f"{MANIFEST_NAME} is nested too deeply to read") from None
    except ValueError as error:  # not UTF-8, not JSON, or an integer too long to parse
        raise _integrity_error(display, f"{MANIFEST_NAME} is not valid JSON: {error}") from None
    raw = cast(dict[str, Any], document) if type(document) is dict else {}
    if raw.get("format") != CASE_FORMAT:
        raise _integrity_error(
            display, f'{MANIFEST_NAME} is not a case manifest ("format" must be "{CASE_FORMAT}")'
        )
    if raw.get("format_version") != CASE_FORMAT_VERSION:
        raise _integrity_error(
            display,
            f"{MANIFEST_NAME} has format_version {json.dumps(raw.get('format_version'))}; this "
            f"toolreplay reads version {CASE_FORMAT_VERSION}. Promote the case again, or use "
            "the toolreplay release that wrote it",
        )
    raw = _expect_object(display, raw, MANIFEST_NAME, _MANIFEST_KEYS)
    name = raw["name"]
    if type(name) is not str or not _NAME.fullmatch(name):
        raise _integrity_error(display, f"name {json.dumps(name)} is not a valid case name")
    trace = _expect_object(
        display, raw["trace"], "trace", frozenset({"path", "sha256", "size_bytes"})
    )
    runner = _expect_object(display, raw["runner"], "runner", frozenset({"target", "kind"}))
    replay = _expect_object(display, raw["replay"], "replay", frozenset({"mode"}))
    expectation = _expect_object(
        display, raw["expectation"], "expectation", frozenset({"kind", "value"})
    )
    scope = _expect_object(
        display, raw["scope"], "scope", frozenset({"effects", "operation_count", "covers"})
    )
    path, digest, size = trace["path"], trace["sha256"], trace["size_bytes"]
    if type(path) is not str or type(digest) is not str or type(size) is not int:
        raise _integrity_error(
            display, "trace must have a string path and sha256 and an int size_bytes"
        )
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise _integrity_error(display, f"trace sha256 {digest!r} is not 64 lowercase hex digits")
    _check_trace_path(folder, display, path, digest)
    if type(runner["target"]) is not str or not RUNNER_PATTERN.fullmatch(runner["target"]):
        raise _integrity_error(
            display, f"runner target {json.dumps(runner['target'])} is not module:callable"
        )
    if runner["kind"] not in ("sync", "async"):
        raise _integrity_error(
            display, f'runner kind must be "sync" or "async", not {runner["kind"]!r}'
        )
    if replay["mode"] != "strict":
        raise _integrity_error(display, f'replay mode must be "strict", not {replay["mode"]!r}')
    if expectation["kind"] != "return_equals":
        raise _integrity_error(
            display, f'expectation kind must be "return_equals", not {expectation["kind"]!r}'
        )
    try:
        expected = ensure_portable(expectation["value"], what="expectation value")
    except NonPortableValueError as error:
        raise _integrity_error(display, str(error)) from None
    effects = scope["effects"]
    if type(effects) is not list or not all(type(e) is str for e in cast(list[Any], effects)):
        raise _integrity_error(display, "scope effects must be a list of effect names")
    if type(scope["operation_count"]) is not int:
        raise _integrity_error(display, "scope operation_count must be an int")
    return CaseManifest(
        name=name,
        trace_path=path,
        trace_sha256=digest,
        trace_size_bytes=size,
        runner=runner["target"],
        runner_kind=runner["kind"],
        expected=expected,
        effects=tuple(cast(list[str], effects)),
        operation_count=scope["operation_count"],
    )


def _check_trace_path(folder: Path, display: Path, path: str, digest: str) -> None:
    pure = PurePosixPath(path)
    if pure.is_absolute() or "\\" in path or re.match(r"[A-Za-z]:", path):
        raise _integrity_error(
            display, f"trace path {path!r} is absolute; it must name a file in the case folder"
        )
    if ".." in pure.parts or len(pure.parts) != 1:
        raise _integrity_error(
            display, f"trace path {path!r} leaves the case folder; it must be a bare file name"
        )
    match = _TRACE_NAME.fullmatch(path)
    if match is None or match["digest"] != digest:
        raise _integrity_error(
            display, f"trace path {path!r} must be trace-sha256-<its sha256>.trp ({digest[:12]}...)"
        )
    if (folder / path).is_symlink():
        raise _integrity_error(
            display, f"trace {path} is a symbolic link; a case holds a real copy"
        )


def _load_case_trace(folder: Path, display: Path, manifest: CaseManifest) -> Trace:
    """Read the trace asset once, check size and digest, and parse those very bytes."""
    trace_file = folder / manifest.trace_path
    try:
        data = trace_file.read_bytes()
    except FileNotFoundError:
        raise _integrity_error(display, f"trace {manifest.trace_path} is missing") from None
    except IsADirectoryError:
        raise _integrity_error(display, f"trace {manifest.trace_path} is a folder") from None
    except OSError as error:
        raise _integrity_error(
            display, f"cannot read trace {manifest.trace_path}: {error.strerror or error}"
        ) from None
    if len(data) != manifest.trace_size_bytes:
        raise _integrity_error(
            display,
            f"trace {manifest.trace_path} is {len(data)} bytes but the manifest says "
            f"{manifest.trace_size_bytes}; the trace was changed after promotion",
        )
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.trace_sha256:
        raise _integrity_error(
            display,
            f"trace {manifest.trace_path} has SHA-256 {digest[:16]}... but the manifest says "
            f"{manifest.trace_sha256[:16]}...; the trace was changed after promotion",
        )
    try:
        # Named by where the case is published, so messages never show a staging folder.
        trace = parse_trace(display / manifest.trace_path, data)
    except TraceError as error:
        raise _integrity_error(display, f"trace asset is not a valid trace: {error}") from error
    recorded_effects = tuple(sorted({op.effect for op in trace.operations}))
    if recorded_effects != manifest.effects or len(trace) != manifest.operation_count:
        raise _integrity_error(
            display,
            "the manifest's scope (effects and operation count) does not describe its trace",
        )
    return trace


# --- verifying ------------------------------------------------------------------------


def _prepare(folder: Path, display: Path, kind: RunnerKind) -> tuple[CaseManifest, Trace, Runner]:
    manifest = _read_manifest(folder, display)
    if manifest.runner_kind != kind:
        other = "verify_case_async" if kind == "sync" else "verify_case"
        raise _integrity_error(
            display,
            f"its runner {manifest.runner} is {manifest.runner_kind}; verify it with {other}()",
        )
    trace = _load_case_trace(folder, display, manifest)
    # Integrity holds: only now is any application module imported.
    try:
        runner = load_runner(manifest.runner)
    except RunnerError as error:
        raise _integrity_error(display, str(error)) from error
    if runner.is_async != (kind == "async"):
        actual = "an async" if runner.is_async else "a sync"
        raise _integrity_error(
            display,
            f"runner {manifest.runner} is {actual} function but the case was promoted for "
            f"{'an async' if manifest.runner_kind == 'async' else 'a sync'} one; promote it "
            "again",
        )
    return manifest, trace, runner


def _contract_error(display: Path, manifest: CaseManifest, error: Exception) -> ReplayContractError:
    return ReplayContractError(
        f"case {manifest.name} ({display}): strict replay of its trace under {manifest.runner} "
        f"failed, so the application no longer makes the recorded calls:\n{error}"
    )


def _root_cause(error: Exception) -> BaseException:
    """The miss or ambiguity itself, also when the application swallowed it."""
    return error.__cause__ if isinstance(error.__cause__, ReplayContractError) else error


@contextlib.contextmanager
def _replaying(display: Path, manifest: CaseManifest, trace: Trace) -> Generator[ReplaySession]:
    """Open a strict `ReplaySession` on `trace` and map what leaves it to the case errors.

    `SessionNestingError` passes through (a usage error: a case verified inside a
    session, or a runner that opens its own), as do `BaseException`s that are not
    `Exception`s. A replay contract or session error means the application no
    longer makes the recorded calls; anything else the runner raised is its own
    failure.
    """
    try:
        with ReplaySession(trace) as session:
            yield session
    except SessionNestingError:
        raise
    except (ReplayContractError, SessionError) as error:
        raise _contract_error(display, manifest, error) from _root_cause(error)
    except Exception as error:
        raise ApplicationExecutionError(
            f"case {manifest.name}: {manifest.runner} raised {type(error).__name__}: {error}"
        ) from error


def _check_expectation(
    folder: Path, manifest: CaseManifest, returned: object, consumed: int
) -> VerifiedCase:
    try:
        actual = ensure_portable(returned, what=f"the return value of {manifest.runner}")
    except NonPortableValueError as error:
        raise ApplicationExecutionError(
            f"case {manifest.name}: {error}; a runner must return portable JSON"
        ) from error
    if not same_value(actual, manifest.expected):
        differences = value_differences(manifest.expected, actual)
        shown = "\n".join(f"  {d.describe('expected', 'actual')}" for d in differences[:20])
        more = f"\n  ... and {len(differences) - 20} more" if len(differences) > 20 else ""
        raise BehavioralRegressionError(
            f"case {manifest.name}: replay succeeded (every recorded call matched, no effect "
            f"ran), but {manifest.runner} returned a different value:\n{shown}{more}",
            expected=manifest.expected,
            actual=actual,
            differences=differences,
        )
    return VerifiedCase(folder, manifest, actual, consumed)


def verify_case(directory: str | os.PathLike[str]) -> VerifiedCase:
    """Re-run a promoted case offline, and raise if it does not hold.

    Order: manifest and trace integrity (`CaseIntegrityError`, before any
    application module is imported), runner resolution (`CaseIntegrityError`),
    strict replay (`ReplayContractError`, the miss or ambiguity as
    `__cause__`), the runner's own errors (`ApplicationExecutionError`, the
    original as `__cause__`; KeyboardInterrupt and SystemExit pass through),
    then the expectation (`BehavioralRegressionError`). Never writes to the
    case folder.
    """
    return _verify(Path(directory), Path(directory))


def _verify(folder: Path, display: Path) -> VerifiedCase:
    manifest, trace, runner = _prepare(folder, display, "sync")
    with _replaying(display, manifest, trace) as session:
        returned = runner.function()
    return _check_expectation(folder, manifest, returned, session.consumed_count)


async def verify_case_async(directory: str | os.PathLike[str]) -> VerifiedCase:
    """`verify_case` for a case whose runner is `async def`; awaits it in the current loop."""
    return await _verify_async(Path(directory), Path(directory))


async def _verify_async(folder: Path, display: Path) -> VerifiedCase:
    manifest, trace, runner = _prepare(folder, display, "async")
    with _replaying(display, manifest, trace) as session:
        returned = await cast(Callable[[], Awaitable[object]], runner.function)()
    return _check_expectation(folder, manifest, returned, session.consumed_count)


# --- promoting ------------------------------------------------------------------------


def _stage(
    trace: str | os.PathLike[str],
    output: str | os.PathLike[str],
    name: str,
    runner: str,
    expected: object,
    kind: RunnerKind,
) -> _Staged:
    """Check the arguments and write the case into a sibling staging folder."""
    destination = Path(output)
    if not _NAME.fullmatch(name):
        raise PromotionError(
            f"case name {name!r} must be 1-128 letters, digits, '_', '-' or '.', starting "
            "with a letter or digit"
        )
    if not RUNNER_PATTERN.fullmatch(runner):
        raise PromotionError(f"runner {runner!r} is not of the form module:callable")
    try:
        portable_expected = ensure_portable(expected, what="the expected value")
    except NonPortableValueError as error:
        raise PromotionError(str(error)) from None
    if destination.exists() or destination.is_symlink():
        raise PromotionError(
            f"{destination} already exists; a case is never merged or overwritten. Choose a "
            "new folder, or delete the old case first"
        )
    source = Path(trace)
    try:
        data = source.read_bytes()
    except FileNotFoundError:
        raise PromotionError(f"{source}: no such trace file") from None
    except IsADirectoryError:
        raise PromotionError(f"{source}: is a directory, not a trace file") from None
    except OSError as error:
        raise PromotionError(
            f"{source}: cannot read the trace: {error.strerror or error}"
        ) from None
    parsed = parse_trace(source, data)  # a malformed trace fails here, naming file and line
    digest = hashlib.sha256(data).hexdigest()
    manifest = CaseManifest(
        name=name,
        trace_path=f"trace-sha256-{digest}.trp",
        trace_sha256=digest,
        trace_size_bytes=len(data),
        runner=runner,
        runner_kind=kind,
        expected=portable_expected,
        effects=tuple(sorted({op.effect for op in parsed.operations})),
        operation_count=len(parsed),
    )
    created = _make_parents(destination.parent)
    try:
        staging = Path(
            tempfile.mkdtemp(prefix=f".{destination.name}.staging-", dir=destination.parent)
        )
    except OSError as error:
        _discard(None, created)
        raise PromotionError(
            f"cannot write in {destination.parent}: {error.strerror or error}"
        ) from None
    try:
        (staging / manifest.trace_path).write_bytes(data)
        (staging / MANIFEST_NAME).write_bytes(manifest.to_json())
        (staging / TEST_NAME).write_text(_TEST_MODULES[kind], encoding="utf-8")
    except BaseException as error:
        _discard(staging, created)
        if isinstance(error, OSError):
            raise PromotionError(
                f"cannot write the case in {destination.parent}: {error.strerror or error}"
            ) from None
        raise
    return _Staged(staging, destination, manifest, created)


@dataclass(frozen=True, slots=True)
class _Staged:
    folder: Path
    destination: Path
    manifest: CaseManifest
    created_parents: list[Path]


def _make_parents(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; return those created, deepest first."""
    missing: list[Path] = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    if not folder.is_dir():
        raise PromotionError(f"{folder} is a file, so no case folder can be created under it")
    for path in reversed(missing):
        try:
            path.mkdir()
        except OSError as error:
            _discard(None, missing[missing.index(path) + 1 :])
            raise PromotionError(
                f"cannot create the folder {path}: {error.strerror or error}"
            ) from None
    return missing


def _discard(staging: Path | None, created_parents: list[Path]) -> None:
    """Remove the staging folder and any parent folder promotion created."""
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
    for parent in created_parents:  # deepest first
        try:
            parent.rmdir()
        except OSError:
            break


def _publish(staged: _Staged) -> PromotedCase:
    destination, manifest = staged.destination, staged.manifest
    try:
        # Claim the name atomically (mkdir fails if anything is there), then move the
        # verified case over our own empty folder.
        destination.mkdir()
    except FileExistsError:
        raise PromotionError(f"{destination} appeared while the case was being verified") from None
    except OSError as error:
        raise PromotionError(f"cannot create {destination}: {error.strerror or error}") from None
    try:
        staged.folder.chmod(0o755)  # mkdtemp makes it private; a case folder is ordinary
        os.rename(staged.folder, destination)
    except BaseException as error:
        # Give the claimed name back; the caller discards the staging folder. If another
        # process wrote into the claimed folder, rmdir fails and its files stay theirs.
        with contextlib.suppress(OSError):
            destination.rmdir()
        if isinstance(error, OSError):
            raise PromotionError(
                f"cannot move the verified case to {destination}: {error.strerror or error}"
            ) from None
        raise
    return PromotedCase(
        directory=destination,
        name=manifest.name,
        trace_path=destination / manifest.trace_path,
        trace_sha256=manifest.trace_sha256,
        test_path=destination / TEST_NAME,
        manifest=manifest,
    )


def promote(
    trace: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    name: str,
    runner: str,
    expected: object,
) -> PromotedCase:
    """Turn a trace into a self-contained pytest case at `output`, after proving it holds.

        case = toolreplay.promote(
            "branch.trp",
            "tests/cases/refund_over_limit_needs_review",
            name="refund_over_limit_needs_review",
            runner="myapp.cases:refund_over_limit",
            expected={"decision": "manual_review"},
        )

    `runner` names a synchronous no-argument callable (`module:function` or
    `module:Class.method`); `expected` is its return value, which must be
    portable JSON.
    The case is written to a sibling staging folder, verified end to end with
    `verify_case`, and only then renamed to `output`, which must not exist
    (missing parent folders are created). Any failure leaves nothing behind.
    Use `promote_async` for an async runner.
    """
    staged = _stage(trace, output, name, runner, expected, "sync")
    try:
        _verify(staged.folder, staged.destination)
        return _publish(staged)
    except BaseException:
        _discard(staged.folder, staged.created_parents)
        raise


async def promote_async(
    trace: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    name: str,
    runner: str,
    expected: object,
) -> PromotedCase:
    """`promote` for an `async def` runner: verifies with `verify_case_async`.

    The generated test runs the case in its own `asyncio.run()`.
    """
    staged = _stage(trace, output, name, runner, expected, "async")
    try:
        await _verify_async(staged.folder, staged.destination)
        return _publish(staged)
    except BaseException:
        _discard(staged.folder, staged.created_parents)
        raise
