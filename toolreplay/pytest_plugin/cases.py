"""Promoted cases as pytest items: collected from `case.json`, reported in pytest's style.

A case folder is collected by its manifest, so pytest never imports the
folder's generated `test_case.py` (which stays, for runs without the plugin).
Collection reads only `case.json`; the trace and the runner are touched when
the item runs, through `verify_case`, in the order RFC 0005 §3.2 fixes.
"""

# pytest's node constructors (`from_parent`, `Item.__init__`) take untyped **kwargs.
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import asyncio
import contextlib
import difflib
import fnmatch
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from toolreplay.cases import (
    CASE_FORMAT,
    MANIFEST_NAME,
    TEST_NAME,
    read_case_manifest,
    verify_case,
    verify_case_async,
)
from toolreplay.errors import (
    ApplicationExecutionError,
    BehavioralRegressionError,
    CaseError,
    CaseIntegrityError,
    ReplayContractError,
)
from toolreplay.portable import JsonValue
from toolreplay.pytest_plugin.update import CaseUpdate, rewrite_expectation

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

__all__ = ["CaseFile", "CaseItem", "CaseSuite", "case_report", "holds_cases", "is_case_module"]

SHOWN_DIFFERENCES = 20
"""Differing JSON paths a regression report lists before it counts the rest."""
FULL_DIFF_LINES = 60
"""Lines of the expected/actual diff a regression report shows before it cuts."""
CASE_PROPERTY = "toolreplay_case"
"""`user_properties` key holding a case's scope and digest line (shown with `-v`)."""
UPDATED_PROPERTY = "toolreplay_updated"
"""`user_properties` key holding what `--toolreplay-update` changed in a case."""


def is_case_module(path: Path) -> bool:
    """A promoted case's generated `test_case.py` (a `case.json` lies beside it)."""
    return path.name == TEST_NAME and (path.parent / MANIFEST_NAME).is_file()


def is_case_folder(path: str | os.PathLike[str]) -> bool:
    return os.path.isfile(os.path.join(path, MANIFEST_NAME))


def holds_cases(directory: Path) -> bool:
    """Whether a folder has a case folder among its children (one `scandir`)."""
    try:
        with os.scandir(directory) as entries:
            return any(
                not entry.name.startswith(".") and entry.is_dir() and is_case_folder(entry.path)
                for entry in entries
            )
    except OSError:
        return False


class CaseSuite(pytest.Directory):
    """A folder that holds case folders, collected without a node per case folder.

    pytest's own `Dir` costs a collector, an ignore check and a conftest lookup
    per folder, which at 10,000 cases takes many seconds; here each child case
    folder becomes one `CaseItem` directly (its `case.json` is its only file
    read). Every other child is collected exactly as `Dir` collects it, and so is
    a case folder named on the command line (or holding a path that is).
    """

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        config, ihook, session = self.config, self.ihook, self.session
        patterns = [str(p) for p in config.getini("norecursedirs")]
        excluded = re.compile("|".join(fnmatch.translate(p) for p in patterns) or "(?!)")
        # pytest's own ignore check costs about a millisecond a folder; case folders get
        # it only when --ignore or --ignore-glob could name them.
        ask_hook = bool(config.getoption("ignore") or config.getoption("ignore_glob"))
        for entry in _sorted_entries(self.path):
            path = Path(entry.path)
            if entry.is_dir():
                if (
                    is_case_folder(path)
                    and not session.isinitpath(path, with_parents=True)
                    and not excluded.match(entry.name)
                ):
                    if not ask_hook or not ihook.pytest_ignore_collect(
                        collection_path=path, config=config
                    ):
                        item = self._case_item(path)
                        if item is not None:
                            yield item
                    continue
                if not session.isinitpath(path, with_parents=True) and ihook.pytest_ignore_collect(
                    collection_path=path, config=config
                ):
                    continue
                collector = ihook.pytest_collect_directory(path=path, parent=self)
                if collector is not None:
                    yield collector
            elif entry.is_file():
                if not session.isinitpath(path) and ihook.pytest_ignore_collect(
                    collection_path=path, config=config
                ):
                    continue
                yield from ihook.pytest_collect_file(file_path=path, parent=self)

    def _case_item(self, folder: Path) -> CaseItem | None:
        manifest_path = folder / MANIFEST_NAME
        summary = _read_for_collection(folder)
        if summary is None and not _looks_like_case(manifest_path):
            return None
        name = summary.name if summary is not None else folder.name
        prefix = f"{self.nodeid}/" if self.nodeid not in ("", ".") else ""
        # The item keeps this folder as its path, so pytest looks up conftest files once
        # for all the cases in it; reports name the case's case.json.
        return CaseItem.from_parent(
            self,
            name=name,
            nodeid=f"{prefix}{folder.name}/{MANIFEST_NAME}::{name}",
            folder=folder,
            summary=summary,
            manifest_path=manifest_path,
        )


def _sorted_entries(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    except FileNotFoundError:
        return []


@dataclass(frozen=True, slots=True)
class CaseSummary:
    """What collection reads from `case.json`: enough to name, run and describe the case.

    The manifest is checked in full when the case runs (`verify_case`), not here.
    """

    name: str
    runner_kind: str
    trace_sha256: str
    effects: tuple[str, ...]
    operation_count: int


def _read_for_collection(folder: Path) -> CaseSummary | None:
    """The summary, or None when `case.json` cannot give one (the run then reports why)."""
    try:
        with open(os.path.join(folder, MANIFEST_NAME), "rb") as file:
            document = json.loads(file.read())
        scope, runner = document["scope"], document["runner"]
        summary = CaseSummary(
            name=document["name"],
            runner_kind=runner["kind"],
            trace_sha256=document["trace"]["sha256"],
            effects=tuple(scope["effects"]),
            operation_count=scope["operation_count"],
        )
    except (OSError, ValueError, RecursionError, LookupError, TypeError):
        return None
    if (
        not all(
            type(value) is str
            for value in (summary.name, summary.runner_kind, summary.trace_sha256, *summary.effects)
        )
        or type(summary.operation_count) is not int
    ):
        return None
    return summary


class CaseFile(pytest.File):
    """A promoted case folder, collected from its `case.json` (or, when named on the
    command line, from its `test_case.py`); it holds one `CaseItem`."""

    def collect(self) -> list[pytest.Item]:
        folder = self.path.parent
        summary = _read_for_collection(folder)
        if summary is None and not _looks_like_case(folder / MANIFEST_NAME):
            return []
        name = summary.name if summary is not None else folder.name
        return [
            CaseItem.from_parent(
                self,
                name=name,
                folder=folder,
                summary=summary,
                manifest_path=folder / MANIFEST_NAME,
            )
        ]


def _looks_like_case(path: Path) -> bool:
    """A `case.json` that fails to read is still a case, unless it is clearly another
    tool's file: no Tool Replay format in it, and no trace asset or test module beside it."""
    try:
        if CASE_FORMAT.encode() in path.read_bytes():
            return True
        return any(
            entry.name == TEST_NAME or entry.name.startswith("trace-sha256-")
            for entry in os.scandir(path.parent)
        )
    except OSError:
        return True


class CaseItem(pytest.Item):
    """One promoted case: `verify_case` (or `verify_case_async`) of its folder."""

    def __init__(
        self,
        *,
        folder: Path,
        summary: CaseSummary | None,
        manifest_path: Path,
        **kwargs: object,
    ) -> None:
        super().__init__(**kwargs)  # pyright: ignore[reportArgumentType]
        self.folder = folder
        self.summary = summary
        self.manifest_path = manifest_path
        if summary is not None:
            self.user_properties.append((CASE_PROPERTY, describe_scope(summary)))

    def setup(self) -> None:
        ensure_rootdir_importable(self.config)

    def runtest(self) -> None:
        try:
            self._verify()
        except BehavioralRegressionError as error:
            if not self.config.getoption("toolreplay_update"):
                raise
            change = rewrite_expectation(self.folder, read_case_manifest(self.folder), error)
            self.user_properties.append((UPDATED_PROPERTY, describe_update(self, change)))

    def _verify(self) -> None:
        # Given relative to the working directory when it is below it, so that messages
        # name the case as the user would type it.
        folder = self.folder
        with contextlib.suppress(ValueError):
            folder = self.folder.relative_to(Path.cwd())
        if self.summary is not None and self.summary.runner_kind == "async":
            asyncio.run(verify_case_async(folder))
        else:
            verify_case(folder)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.manifest_path, None, f"toolreplay case {self.name}"

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: str | None = None,
    ) -> str | TerminalRepr:
        error = excinfo.value
        if isinstance(error, (CaseError, ReplayContractError)):
            return case_report(error, self.nodeid, self.folder, self.config)
        return super().repr_failure(excinfo, style=style)  # pyright: ignore[reportArgumentType]


def describe_scope(summary: CaseSummary) -> str:
    """`-v`'s line for a case: what its trace covers, and the trace's digest."""
    effects = ", ".join(summary.effects) or "no effects"
    noun = "operation" if summary.operation_count == 1 else "operations"
    return (
        f"scope: {effects} ({summary.operation_count} {noun}); "
        f"trace sha256 {summary.trace_sha256[:12]}"
    )


def describe_update(item: CaseItem, change: CaseUpdate) -> str:
    lines = [f"{item.nodeid}: expectation rewritten ({_relative(change.directory, item.config)})"]
    lines += [f"  {d.describe('was', 'now')}" for d in change.differences[:SHOWN_DIFFERENCES]]
    if len(change.differences) > SHOWN_DIFFERENCES:
        lines.append(f"  ... and {len(change.differences) - SHOWN_DIFFERENCES} more")
    return "\n".join(lines)


# --- failure reports --------------------------------------------------------------------


def case_report(
    error: CaseError | ReplayContractError, nodeid: str, folder: Path, config: pytest.Config
) -> str:
    """The short report of a case that does not hold, one kind per failure type."""
    where = _relative(folder, config)
    if isinstance(error, BehavioralRegressionError):
        return _regression_report(error, nodeid, where)
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


def _full_diff(expected: JsonValue, actual: JsonValue) -> list[str]:
    def pretty(value: JsonValue) -> list[str]:
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


def ensure_rootdir_importable(config: pytest.Config) -> None:
    """Let runners name modules of the project under test, as `python -m pytest` would."""
    root = str(config.rootpath)
    if root not in sys.path:
        sys.path.append(root)
