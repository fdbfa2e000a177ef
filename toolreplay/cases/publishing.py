"""Promoting: check the arguments, stage the case beside its destination, verify, publish.

The case is written into a hidden sibling folder, verified there end to end,
and only then renamed into place, so a case folder appears complete or not at
all, and a case that never held is never published (RFC 0005 §2).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import tempfile
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from toolreplay.cases.assets import trace_scope
from toolreplay.cases.manifest import (
    CASE_NAME_PATTERN,
    MANIFEST_NAME,
    TEST_NAME,
    CaseManifest,
    RunnerKind,
    trace_asset_name,
)
from toolreplay.cases.verification import verify_folder, verify_folder_async
from toolreplay.errors import NonPortableValueError, PromotionError
from toolreplay.files import UnreadableFileError, read_regular_file
from toolreplay.portable import ensure_portable
from toolreplay.runners import RUNNER_PATTERN, load_runner
from toolreplay.trace.reader import parse_trace

__all__ = ["PromotedCase", "promote", "promote_any_runner", "promote_async"]

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
class PromotedCase:
    """The case `promote()` published."""

    directory: Path
    name: str
    trace_path: Path
    trace_sha256: str
    test_path: Path
    manifest: CaseManifest


@dataclass(frozen=True, slots=True)
class _Checked:
    """Arguments that passed every check of RFC 0005 §2.2, and the trace bytes they name."""

    destination: Path
    data: bytes
    manifest: CaseManifest  # its runner_kind is set when the case is staged


def _check(
    trace: str | os.PathLike[str],
    output: str | os.PathLike[str],
    name: str,
    runner: str,
    expected: object,
) -> _Checked:
    """Check the arguments before anything is written or imported."""
    destination = Path(output)
    if not CASE_NAME_PATTERN.fullmatch(name):
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
        data = read_regular_file(source, "trace")
    except UnreadableFileError as error:
        raise PromotionError(f"{source}: {error.problem}") from None
    parsed = parse_trace(source, data)  # a malformed trace fails here, naming file and line
    digest = hashlib.sha256(data).hexdigest()
    effects, operation_count = trace_scope(parsed)
    manifest = CaseManifest(
        name=name,
        trace_path=trace_asset_name(digest),
        trace_sha256=digest,
        trace_size_bytes=len(data),
        runner=runner,
        runner_kind="sync",
        expected=portable_expected,
        effects=effects,
        operation_count=operation_count,
    )
    return _Checked(destination, data, manifest)


def _stage(checked: _Checked, kind: RunnerKind) -> _Staged:
    """Write the checked case, for a runner of `kind`, into a sibling staging folder."""
    destination, data = checked.destination, checked.data
    manifest = dataclasses.replace(checked.manifest, runner_kind=kind)
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


@contextlib.contextmanager
def _discarded_on_failure(staged: _Staged) -> Generator[None]:
    """On any exception (`BaseException` included), remove what staging created, re-raise."""
    try:
        yield
    except BaseException:
        _discard(staged.folder, staged.created_parents)
        raise


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
    staged = _stage(_check(trace, output, name, runner, expected), "sync")
    with _discarded_on_failure(staged):
        verify_folder(staged.folder, staged.destination)
        return _publish(staged)


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
    staged = _stage(_check(trace, output, name, runner, expected), "async")
    with _discarded_on_failure(staged):
        await verify_folder_async(staged.folder, staged.destination)
        return _publish(staged)


def promote_any_runner(
    trace: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    name: str,
    runner: str,
    expected: object,
) -> PromotedCase:
    """`promote` or `promote_async`, as the runner itself is sync or `async def`.

    For the command line: every check of `promote` runs first, so a refused
    argument never imports the application; only then is the runner resolved
    (`RunnerError` when it cannot be) to choose the kind, and an async case is
    verified in its own `asyncio.run()` (so call it where no event loop runs).
    """
    checked = _check(trace, output, name, runner, expected)
    kind: RunnerKind = "async" if load_runner(runner).is_async else "sync"
    staged = _stage(checked, kind)
    with _discarded_on_failure(staged):
        if kind == "async":
            import asyncio  # only for async runners: `import toolreplay` stays light

            asyncio.run(verify_folder_async(staged.folder, staged.destination))
        else:
            verify_folder(staged.folder, staged.destination)
        return _publish(staged)
