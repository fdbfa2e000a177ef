"""`--toolreplay-update` for promoted cases: a new expectation, published atomically.

The case is promoted again from its own trace asset, with the value the runner
returns now, into a hidden sibling folder (so it is verified end to end before
anything changes), and that folder then takes the old one's place: with one
`renameat2(RENAME_EXCHANGE)` where the system has it, otherwise with two
renames while the old folder waits under a hidden name. The trace keeps its
bytes; its file name is derived from them again, so a case always names its
trace by its SHA-256.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from toolreplay.cases import MANIFEST_NAME, TEST_NAME, CaseManifest
from toolreplay.cases.publishing import promote_any_runner
from toolreplay.errors import BehavioralRegressionError, CaseError, ValueDifferenceLike

__all__ = ["CaseUpdate", "CaseUpdateError", "rewrite_expectation"]

_OWN_ENTRIES = frozenset({MANIFEST_NAME, TEST_NAME, "__pycache__"})


class CaseUpdateError(CaseError):
    """`--toolreplay-update` could not rewrite a case; the case was left as it was."""


@dataclass(frozen=True, slots=True)
class CaseUpdate:
    """What `--toolreplay-update` changed in one case."""

    directory: Path
    differences: tuple[ValueDifferenceLike, ...]


def rewrite_expectation(
    directory: Path, manifest: CaseManifest, regression: BehavioralRegressionError
) -> CaseUpdate:
    """Make `regression.actual` the case's expectation; returns what changed.

    Refused (`CaseUpdateError`, nothing changed) when the folder holds files a
    case does not own, which the swap would otherwise drop.
    """
    foreign = sorted(
        entry.name
        for entry in directory.iterdir()
        if entry.name not in _OWN_ENTRIES and entry.name != manifest.trace_path
    )
    if foreign:
        raise CaseUpdateError(
            f"case {manifest.name} ({directory}): not rewritten, because the folder also holds "
            f"{', '.join(foreign)}; move those out of the case folder and run the update again"
        )
    token = uuid.uuid4().hex[:12]
    staged = directory.parent / f".{directory.name}.update-{token}"
    trace = directory / manifest.trace_path
    try:
        try:
            promote_any_runner(
                trace,
                staged,
                name=manifest.name,
                runner=manifest.runner,
                expected=regression.actual,
                runner_kind=manifest.runner_kind,
                collected=False,
            )
        except CaseError as error:
            raise CaseUpdateError(
                f"case {manifest.name} ({directory}): not rewritten, because it does not hold "
                f"with the new expectation either (does the runner return the same value on "
                f"every run?): {type(error).__name__}: {error}"
            ) from error
        _swap(staged, directory)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return CaseUpdate(directory, regression.differences)


def _swap(new: Path, old: Path) -> None:
    """Put `new` where `old` is; afterwards `new` holds the old folder (or is gone)."""
    if _exchange(new, old):
        return
    retired = old.parent / f".{old.name}.replaced-{uuid.uuid4().hex[:12]}"
    os.rename(old, retired)
    try:
        os.rename(new, old)
    except BaseException:
        os.rename(retired, old)
        raise
    shutil.rmtree(retired, ignore_errors=True)


def _exchange(first: Path, second: Path) -> bool:
    """Swap two folders in one step (Linux `renameat2`); False where that is unavailable."""
    function = _renameat2()
    if function is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = function(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):  # old kernel or filesystem
        return False
    raise OSError(code, os.strerror(code), str(second))


def _renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    library = ctypes.util.find_library("c")
    if library is None:
        return None
    with contextlib.suppress(OSError, AttributeError):
        function = ctypes.CDLL(library, use_errno=True).renameat2
        return cast(Callable[[int, bytes, int, bytes, int], int], function)
    return None
