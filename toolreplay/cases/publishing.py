"""Promoting: check the arguments, stage the case beside its destination, verify, publish.

The case is written into a hidden sibling staging folder, verified there end to
end, and only then renamed into place, so a case folder appears complete or not
at all, and a case that never held is never published (RFC 0005 §2). The
staging folder is claimed by the promoting process and tells git to ignore it;
one left by a killed promotion is removed by the next promotion beside it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fnmatch
import hashlib
import os
import re
import shutil
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
from toolreplay.files import (
    PUBLIC_FILE_MODE,
    PUBLIC_FOLDER_MODE,
    UnreadableFileError,
    claimed_folder,
    read_regular_file,
    remove_abandoned,
    source_conflict,
)
from toolreplay.portable import ensure_portable
from toolreplay.redaction.files import scan_bytes
from toolreplay.redaction.scanner import secret_in_trace_error
from toolreplay.runners import RUNNER_PATTERN, load_runner
from toolreplay.trace.reader import parse_trace

__all__ = [
    "NOT_COLLECTED",
    "PromotedCase",
    "promote",
    "promote_any_runner",
    "promote_async",
]

NOT_COLLECTED = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")
"""Folder names pytest does not search by default (its `norecursedirs`): a case published
in one would not run under pytest (`verify` also skips folders named `.*`)."""

_STAGING = re.compile(r"\..+\.staging-[a-z0-9_]{8}")
"""A staging folder's name: `.<case folder name>.staging-<mkdtemp's 8 characters>`."""
_STAGED_CASE = "case"
"""The case inside its staging folder, beside the `.gitignore` that hides the folder."""
_IGNORE_ALL = "# a case being promoted by Tool Replay: not to be committed\n*\n"

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


def _not_collected(destination: Path) -> str | None:
    """Why pytest or `verify` would never run a case at `destination`, or None."""
    absolute = Path(os.path.abspath(destination))
    for folder in absolute.parents:
        if (folder / MANIFEST_NAME).is_file():
            return (
                f"is inside the case folder {folder}: pytest runs a case folder as one test "
                "and never looks inside it, so this case would never run (verify would count "
                f"it); promote it beside that case instead, e.g. to {folder.parent / absolute.name}"
            )
    try:  # what pytest, run from here, would search; outside it only the case's own name
        parts = absolute.relative_to(Path.cwd()).parts
    except ValueError:
        parts = (absolute.name,)
    for part in parts:
        pattern = next((p for p in NOT_COLLECTED if fnmatch.fnmatch(part, p)), None)
        if pattern is not None:
            hidden = " (verify skips it too)" if part.startswith(".") else ""
            return (
                f"is in a folder pytest does not search: {part!r} matches its default "
                f"norecursedirs pattern {pattern!r}{hidden}, so the case would never run; "
                "choose a folder your tests are collected from, such as tests/cases/NAME"
            )
    return None


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
    allow_secret_findings: bool,
    *,
    collected: bool = True,
) -> _Checked:
    """Check the arguments before anything is written or imported.

    `collected`: the destination must be where pytest and `verify` find the case.
    """
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
    # Leftovers of promotions killed beside this one go first, whatever happens next.
    remove_abandoned(destination.parent, _STAGING)
    source = Path(trace)
    conflict = source_conflict(destination, [source])
    if conflict is not None:
        raise PromotionError(
            f"{destination} {conflict}: a case is a new folder beside the trace it is made "
            "from; choose a new folder"
        )
    if destination.exists() or destination.is_symlink():
        raise PromotionError(
            f"{destination} already exists; a case is never merged or overwritten. Choose a "
            "new folder, or delete the old case first"
        )
    if collected:
        problem = _not_collected(destination)
        if problem is not None:
            raise PromotionError(f"{destination} {problem}")
    try:
        data = read_regular_file(source, "trace")
    except UnreadableFileError as error:
        raise PromotionError(f"{source}: {error.problem}") from None
    parsed = parse_trace(source, data)  # a malformed trace fails here, naming file and line
    findings = scan_bytes(data, str(source))
    if findings and not allow_secret_findings:
        raise secret_in_trace_error(
            findings,
            what=f"{source} was not promoted",
            verb="holds",
            advice="A promoted case is meant to be committed and shared. Redact the trace "
            "first (`toolreplay redact IN OUT --rule PATH`, or record with redaction rules), "
            "or, if these are not real secrets, promote with allow_secret_findings=True "
            "(`--allow-secret-findings`).",
        )
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
    """Write the checked case, for a runner of `kind`, into a sibling staging folder.

    `.<name>.staging-<random>/` holds a `.gitignore` that ignores everything (so
    `git add` never picks up a promotion in progress or killed) and the case
    itself in `case/`, which publishing renames into place. This process claims
    the staging folder while it works (`_check` removed those nobody claims).
    """
    destination, data = checked.destination, checked.data
    manifest = dataclasses.replace(checked.manifest, runner_kind=kind)
    created = _make_parents(destination.parent)
    try:
        staging, claim = claimed_folder(destination.parent, f".{destination.name}.staging-")
    except OSError as error:
        _discard(None, created)
        raise PromotionError(
            f"cannot write in {destination.parent}: {error.strerror or error}"
        ) from None
    folder = staging / _STAGED_CASE
    staged = _Staged(staging, claim, folder, destination, manifest, created)
    try:
        # First: from here on git ignores everything in the staging folder.
        (staging / ".gitignore").write_text(_IGNORE_ALL, encoding="utf-8")
        folder.mkdir()
        (folder / manifest.trace_path).write_bytes(data)
        (folder / MANIFEST_NAME).write_bytes(manifest.to_json())
        (folder / TEST_NAME).write_text(_TEST_MODULES[kind], encoding="utf-8")
        for asset in (manifest.trace_path, MANIFEST_NAME, TEST_NAME):
            # Exactly 0644 whatever the umask: a case is meant to be committed (RFC 0007 §7).
            (folder / asset).chmod(PUBLIC_FILE_MODE)
    except BaseException as error:
        _discard(staged, created)
        if isinstance(error, OSError):
            raise PromotionError(
                f"cannot write the case in {destination.parent}: {error.strerror or error}"
            ) from None
        raise
    return staged


@dataclass(frozen=True, slots=True)
class _Staged:
    staging: Path
    claim: int  # the descriptor that holds this process's claim on `staging`
    folder: Path  # the case, `staging/case`, renamed to `destination` when published
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


def _discard(staged: _Staged | None, created_parents: list[Path]) -> None:
    """Remove the staging folder and any parent folder promotion created."""
    if staged is not None:
        _release(staged)
    for parent in created_parents:  # deepest first
        try:
            parent.rmdir()
        except OSError:
            break


def _release(staged: _Staged) -> None:
    """Remove the staging folder (with the case, unless it was published) and drop the claim."""
    try:
        shutil.rmtree(staged.staging, ignore_errors=True)
    finally:
        os.close(staged.claim)


@contextlib.contextmanager
def _discarded_on_failure(staged: _Staged) -> Generator[None]:
    """On any exception (`BaseException` included), remove what staging created, re-raise."""
    try:
        yield
    except BaseException:
        _discard(staged, staged.created_parents)
        raise


def _publish(staged: _Staged) -> PromotedCase:
    destination, manifest = staged.destination, staged.manifest
    try:
        staged.folder.chmod(PUBLIC_FOLDER_MODE)  # a case is public (RFC 0007 §7)
        # One rename, on the same filesystem: the case appears complete or not at all. It
        # fails if anything but an empty folder took the name meanwhile, leaving it alone.
        os.rename(staged.folder, destination)
    except OSError as error:
        if error.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
            raise PromotionError(
                f"{destination} appeared while the case was being verified"
            ) from None
        raise PromotionError(
            f"cannot move the verified case to {destination}: {error.strerror or error}"
        ) from None
    _release(staged)  # what is left of the staging folder: its .gitignore
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
    allow_secret_findings: bool = False,
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
    (missing parent folders are created) and must be where pytest and `verify`
    find cases: not inside another case folder, nor under a folder pytest skips
    (`NOT_COLLECTED`). Any failure leaves nothing behind; a kill leaves at most a
    staging folder git ignores, which the next promotion beside it removes.
    Use `promote_async` for an async runner.

    The trace is scanned for secrets first (RFC 0007): a finding raises
    `SecretInTraceError` unless `allow_secret_findings=True`. The case's files
    are 0644, its folder 0755: it is meant to be committed.
    """
    staged = _stage(_check(trace, output, name, runner, expected, allow_secret_findings), "sync")
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
    allow_secret_findings: bool = False,
) -> PromotedCase:
    """`promote` for an `async def` runner: verifies with `verify_case_async`.

    The generated test runs the case in its own `asyncio.run()`.
    """
    staged = _stage(_check(trace, output, name, runner, expected, allow_secret_findings), "async")
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
    allow_secret_findings: bool = False,
    runner_kind: RunnerKind | None = None,
    collected: bool = True,
) -> PromotedCase:
    """`promote` or `promote_async`, as the runner itself is sync or `async def`, from
    synchronous code: an async case is verified in its own `asyncio.run()` (so call it
    where no event loop runs).

    For the command line: every check of `promote` runs first, so a refused
    argument never imports the application; only then is the runner resolved
    (`RunnerError` when it cannot be) to choose the kind, unless `runner_kind`
    gives it. For `--toolreplay-update` (`runner_kind` from the manifest,
    `collected=False`): it prepares a case's replacement in a hidden sibling of the
    case, which pytest need not collect, and then swaps the two; everything else
    goes where tests are collected, which `promote` checks.
    """
    checked = _check(
        trace, output, name, runner, expected, allow_secret_findings, collected=collected
    )
    if runner_kind is None:
        runner_kind = "async" if load_runner(runner).is_async else "sync"
    return _verify_and_publish(checked, runner_kind)


def _verify_and_publish(checked: _Checked, kind: RunnerKind) -> PromotedCase:
    staged = _stage(checked, kind)
    with _discarded_on_failure(staged):
        if kind == "async":
            import asyncio  # only for async runners: `import toolreplay` stays light

            asyncio.run(verify_folder_async(staged.folder, staged.destination))
        else:
            verify_folder(staged.folder, staged.destination)
        return _publish(staged)
