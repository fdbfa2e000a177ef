"""How a promoted case that fails is reported: one short report per kind of failure.

Imported only when a case fails or is updated, so a passing run never loads it
(nor `difflib`).
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from toolreplay.errors import (
    ApplicationExecutionError,
    BehavioralRegressionError,
    CaseError,
    CaseIntegrityError,
    ReplayContractError,
    RunnerImportError,
)

if TYPE_CHECKING:
    from toolreplay.pytest_plugin.update import CaseUpdate

__all__ = ["FULL_DIFF_LINES", "SHOWN_DIFFERENCES", "case_report", "describe_update"]

SHOWN_DIFFERENCES = 20
"""Differing JSON paths a regression report lists before it counts the rest."""
FULL_DIFF_LINES = 60
"""Lines of the expected/actual diff a regression report shows before it cuts."""


def describe_update(nodeid: str, change: CaseUpdate, config: pytest.Config) -> str:
    """What `--toolreplay-update` changed in one case, for the run's closing summary."""
    lines = [f"{nodeid}: expectation rewritten ({_relative(change.directory, config)})"]
    lines += [f"  {d.describe('was', 'now')}" for d in change.differences[:SHOWN_DIFFERENCES]]
    if len(change.differences) > SHOWN_DIFFERENCES:
        lines.append(f"  ... and {len(change.differences) - SHOWN_DIFFERENCES} more")
    return "\n".join(lines)


# --- failure reports --------------------------------------------------------------------


def case_report(
    error: CaseError | ReplayContractError | RunnerImportError,
    nodeid: str,
    folder: Path,
    config: pytest.Config,
) -> str:
    """The short report of a case that does not hold, one kind per failure type."""
    where = _relative(folder, config)
    if isinstance(error, BehavioralRegressionError):
        return _regression_report(error, nodeid, where)
    if isinstance(error, RunnerImportError):
        return _import_report(error, where)
    if isinstance(error, CaseIntegrityError):
        return "\n".join(
            [
                "integrity failure (CaseIntegrityError): the case folder is damaged, or was "
                "edited by hand",
                *_indented(str(error)),
                "",
                "The case's trace was not replayed. Restore the folder from version control, "
                "or promote the case again.",
                f"case folder: {where}",
            ]
        )
    if isinstance(error, ReplayContractError):
        return "\n".join(
            [
                "replay contract broken (ReplayContractError): the application no longer makes "
                "the recorded calls",
                *_indented(str(error)),
                "",
                "No effect ran live. If the new calls are intended, record the scenario again "
                "and promote the new trace; --toolreplay-update cannot do it, because a case "
                "never goes live.",
                f"case folder: {where}",
            ]
        )
    if isinstance(error, ApplicationExecutionError):
        cause = error.__cause__
        lines = [
            "application error (ApplicationExecutionError): the runner failed under replay",
            *_indented(str(error)),
        ]
        if cause is not None and cause.__traceback__ is not None:
            lines += ["", "the runner's traceback (innermost last):"]
            lines += _indented(_short_traceback(cause))
        lines += [
            "",
            "Replay was clean up to the failure. Fix the application, or, if the case is "
            "wrong, promote it again.",
            f"case folder: {where}",
        ]
        return "\n".join(lines)
    return f"{type(error).__name__}: {error}"


def _import_report(error: RunnerImportError, where: str) -> str:
    headline, _, advice = str(error).partition("\n")
    lines = [
        f"runner import failure (RunnerImportError): {error.module}, the module of the case's "
        "runner, cannot be imported here",
        *_indented(headline),
    ]
    traceback = error.import_traceback()
    if traceback:
        lines += ["", "the import's traceback (innermost last):", *_indented(traceback)]
    lines += [
        "",
        advice,
        "The case's trace was not replayed, and nothing is wrong with the case folder: the "
        "environment the tests run in (search path, variables, dependencies) is.",
        f"case folder: {where}",
    ]
    return "\n".join(lines)


def _regression_report(error: BehavioralRegressionError, nodeid: str, where: str) -> str:
    differences = error.differences
    lines = [
        "behavioural regression (BehavioralRegressionError): replay was clean (every "
        "recorded call matched, no effect ran), but the runner returned a different value",
        "",
        "expected (case.json) != actual (returned), by JSON path:",
    ]
    lines += [f"  {d.describe('expected', 'actual')}" for d in differences[:SHOWN_DIFFERENCES]]
    if len(differences) > SHOWN_DIFFERENCES:
        lines.append(f"  ... and {len(differences) - SHOWN_DIFFERENCES} more")
    lines += ["", "Full diff (- expected, + actual):"]
    lines += [f"  {line}" for line in _full_diff(error.expected, error.actual)]
    lines += [
        "",
        f"If the new value is intended: pytest --toolreplay-update {nodeid}",
        f"case folder: {where}",
    ]
    return "\n".join(lines)


def _full_diff(expected: object, actual: object) -> list[str]:
    def pretty(value: object) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    diff = [
        line.rstrip()
        for line in difflib.ndiff(pretty(expected), pretty(actual))
        if not line.startswith("?")
    ]
    if len(diff) > FULL_DIFF_LINES:
        diff = [*diff[:FULL_DIFF_LINES], f"... {len(diff) - FULL_DIFF_LINES} more line(s)"]
    return diff


def _short_traceback(error: BaseException) -> str:
    info = pytest.ExceptionInfo[BaseException].from_exception(error)
    return str(info.getrepr(style="short", chain=False))


def _indented(text: str) -> list[str]:
    return [f"  {line}" for line in text.splitlines()]


def _relative(folder: Path, config: pytest.Config) -> str:
    try:
        return os.path.relpath(folder, config.rootpath)
    except ValueError:  # another drive
        return str(folder)
