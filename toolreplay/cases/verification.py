"""Verifying cases: integrity first, then the runner, strict replay, and the expectation.

`verify_case` raises the error of the first check that fails; `verify_cases`
finds every case under some paths and verifies each, returning one `CaseResult`
per case instead of raising, for command lines, CI scripts and test plugins that
report many cases at once.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from toolreplay.cases.assets import load_case_trace
from toolreplay.cases.manifest import (
    MANIFEST_NAME,
    CaseManifest,
    RunnerKind,
    integrity_error,
    read_manifest,
)
from toolreplay.errors import (
    ApplicationExecutionError,
    BehavioralRegressionError,
    CaseSearchError,
    NonPortableValueError,
    ReplayContractError,
    RunnerError,
    RunnerImportError,
    SessionError,
    SessionNestingError,
    ToolReplayError,
)
from toolreplay.failures import qualified_name
from toolreplay.portable import JsonValue, ensure_portable, same_value, value_differences
from toolreplay.runners import Runner, resolve_runner
from toolreplay.runtime.network import NetworkPolicy, network_guard
from toolreplay.runtime.replaying import ReplaySession
from toolreplay.trace.reader import Trace

__all__ = [
    "CaseResult",
    "VerifiedCase",
    "find_cases",
    "verify_case",
    "verify_case_async",
    "verify_cases",
    "verify_folder",
    "verify_folder_async",
]


@dataclass(frozen=True, slots=True)
class VerifiedCase:
    """A case that held: its manifest, and the value the runner returned."""

    directory: Path
    manifest: CaseManifest
    returned: JsonValue
    operations_replayed: int


@dataclass(frozen=True, slots=True)
class CaseResult:
    """How one case fared in `verify_cases`.

    `path` is the case folder; `name` the manifest's case name, or the folder's
    name when the manifest cannot be read. `error` is the `ToolReplayError` the
    case failed with (its `__cause__` chain included), None when it held, in
    which case `verified` says what it returned. `duration_seconds` is the wall
    time spent on the case, manifest to expectation.
    """

    path: Path
    name: str
    error: ToolReplayError | None
    duration_seconds: float
    verified: VerifiedCase | None = None

    @property
    def ok(self) -> bool:
        """True when the case held."""
        return self.error is None

    @property
    def outcome(self) -> Literal["passed", "failed"]:
        return "passed" if self.error is None else "failed"

    @property
    def error_type(self) -> str | None:
        """The qualified name of the error class (`toolreplay.errors.CaseIntegrityError`)."""
        return None if self.error is None else qualified_name(type(self.error))

    @property
    def error_message(self) -> str | None:
        return None if self.error is None else str(self.error)


# --- one case -------------------------------------------------------------------------


def _prepare(
    folder: Path, display: Path, kind: RunnerKind, manifest: CaseManifest | None
) -> tuple[CaseManifest, Trace, Runner]:
    if manifest is None:
        manifest = read_manifest(folder, display)
    if manifest.runner_kind != kind:
        other = "verify_case_async" if kind == "sync" else "verify_case"
        raise integrity_error(
            display,
            f"its runner {manifest.runner} is {manifest.runner_kind}; verify it with {other}()",
        )
    trace = load_case_trace(folder, display, manifest)
    # Integrity holds: only now is any application module imported.
    try:
        runner = resolve_runner(manifest.runner)
    except RunnerImportError as error:
        # The environment, not the case: the import's own exception stays the cause.
        raise RunnerImportError(
            f"case {display}: {error}",
            runner=error.runner,
            module=error.module,
            missing=error.missing,
        ) from error.__cause__
    except RunnerError as error:
        raise integrity_error(display, str(error)) from error
    if runner.is_async != (kind == "async"):
        actual = "an async" if runner.is_async else "a sync"
        raise integrity_error(
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
        # Never live, never online: a plain replay (no fork, so no `live=`), network blocked.
        with ReplaySession(trace, network="block") as session:
            yield session
    except SessionNestingError:
        raise
    except (ReplayContractError, SessionError) as error:
        raise _contract_error(display, manifest, error) from _root_cause(error)
    except Exception as error:
        raise ApplicationExecutionError(
            f"case {manifest.name}: {manifest.runner} raised {type(error).__name__}: {error}"
        ) from error


def _importing_offline() -> contextlib.AbstractContextManager[object]:
    """The network blocked while a case's runner module imports, as while it replays."""
    return network_guard.holding(NetworkPolicy(blocks=True), what="import of a case's runner")


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
    application module is imported), runner resolution (`RunnerImportError`
    when its module cannot be imported, with the import's exception as
    `__cause__`; `CaseIntegrityError` for any other runner problem),
    strict replay (`ReplayContractError`, the miss or ambiguity as
    `__cause__`), the runner's own errors (`ApplicationExecutionError`, the
    original as `__cause__`; KeyboardInterrupt and SystemExit pass through),
    then the expectation (`BehavioralRegressionError`). Never writes to the
    case folder.
    """
    return verify_folder(Path(directory), Path(directory))


def verify_folder(
    folder: Path, display: Path, manifest: CaseManifest | None = None
) -> VerifiedCase:
    """`verify_case` of the case in `folder`, whose messages name it `display`.

    `manifest`, when given, is the folder's manifest as the caller has just read
    it (`read_manifest`, or `manifest_from_document` of a document it parsed), so
    `case.json` is not read again.
    """
    with _importing_offline():
        manifest, trace, runner = _prepare(folder, display, "sync", manifest)
    with _replaying(display, manifest, trace) as session:
        returned = runner.function()
    return _check_expectation(folder, manifest, returned, session.consumed_count)


async def verify_case_async(directory: str | os.PathLike[str]) -> VerifiedCase:
    """`verify_case` for a case whose runner is `async def`; awaits it in the current loop."""
    return await verify_folder_async(Path(directory), Path(directory))


async def verify_folder_async(
    folder: Path, display: Path, manifest: CaseManifest | None = None
) -> VerifiedCase:
    """`verify_case_async` of the case in `folder`, whose messages name it `display`
    (`manifest` as in `verify_folder`)."""
    with _importing_offline():
        manifest, trace, runner = _prepare(folder, display, "async", manifest)
    with _replaying(display, manifest, trace) as session:
        returned = await cast(Callable[[], Awaitable[object]], runner.function)()
    return _check_expectation(folder, manifest, returned, session.consumed_count)


# --- many cases -----------------------------------------------------------------------


def find_cases(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The case folders under `paths`, deduplicated and sorted (RFC 0005 §4.2).

    A path holding `case.json` (a regular file) is one case and is not searched
    further; below any other path, every `case.json` at any depth marks its
    folder as a case, unless a folder on the way has a name starting with `.`
    (a leftover staging folder). Symbolic links to folders are not followed.
    Raises `CaseSearchError` when a path does not exist (`missing` is True), is
    a dangling link or a loop of links, or cannot be searched. Finding no case
    is not an error: the list is empty.
    """
    found: set[Path] = set()
    for given in paths:
        path = Path(given)
        try:
            if not path.exists():
                if path.is_symlink():
                    raise CaseSearchError(
                        f"cannot search {path} for cases: it is a symbolic link to nothing, "
                        "or a loop of links",
                        path=path,
                    )
                raise CaseSearchError(f"{path} does not exist", path=path, missing=True)
            if (path / MANIFEST_NAME).is_file():
                found.add(path)
                continue
            for manifest in path.rglob(MANIFEST_NAME):
                if not any(part.startswith(".") for part in manifest.relative_to(path).parts):
                    found.add(manifest.parent)
        except OSError as error:  # a name too long, a loop of links, a folder it cannot read
            reason = error.strerror or str(error)
            raise CaseSearchError(f"cannot search {path} for cases: {reason}", path=path) from None
    return sorted(found)


def _verify_one(folder: Path) -> CaseResult:
    name = folder.name
    started = time.perf_counter()
    try:
        manifest = read_manifest(folder, folder)
        name = manifest.name
        if manifest.runner_kind == "async":
            import asyncio  # only for async cases: `import toolreplay` stays light

            verified = asyncio.run(verify_folder_async(folder, folder, manifest))
        else:
            verified = verify_folder(folder, folder, manifest)
    except ToolReplayError as error:
        return CaseResult(folder, name, error, time.perf_counter() - started)
    return CaseResult(folder, name, None, time.perf_counter() - started, verified)


def verify_cases(paths: Iterable[str | os.PathLike[str]]) -> list[CaseResult]:
    """Find the cases under `paths` (as `find_cases`) and verify each; never raises for one.

        results = toolreplay.verify_cases(["tests/cases"])
        failed = [r for r in results if not r.ok]

    Cases are verified one after another in this process, in path order, sync
    ones with `verify_case` and async ones in their own `asyncio.run` (so call
    it where no event loop is running). A case that fails with a
    `ToolReplayError` gives a failed `CaseResult`; any other exception
    (`KeyboardInterrupt`, a bug) propagates. Runner modules are imported from
    `sys.path` as they are; nothing is added to it. Raises `CaseSearchError`
    only when a path cannot be searched (see `find_cases`); no case found gives
    an empty list.
    """
    return [_verify_one(folder) for folder in find_cases(paths)]
