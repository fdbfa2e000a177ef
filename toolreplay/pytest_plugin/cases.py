"""Promoted cases as pytest items: collected from `case.json`, run with `verify_case`'s checks.

A case folder is collected by its manifest, so pytest never imports the
folder's generated `test_case.py` (which stays, for runs without the plugin).
Collection reads and parses each `case.json` once (`load_manifest_document`:
one open, no other stat) and keeps the parsed document in the item; the item,
when it runs, checks that document (`manifest_from_document`) and verifies the
case from it (`verify_folder`), in the order RFC 0005 §3.2 fixes, without
reading the manifest again. Failure reports (`reports`), updates (`update`) and
`asyncio` (async runners) are imported only when needed.
"""

# pytest's node constructors (`from_parent`, `Item.__init__`) take untyped **kwargs.
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from toolreplay.cases.manifest import (
    CASE_FORMAT,
    MANIFEST_NAME,
    TEST_NAME,
    CaseManifest,
    manifest_from_document,
    read_manifest,
)
from toolreplay.cases.verification import verify_folder, verify_folder_async
from toolreplay.errors import (
    BehavioralRegressionError,
    CaseError,
    JsonTextError,
    ReplayContractError,
    RunnerImportError,
)
from toolreplay.files import UnreadableFileError, read_regular_file
from toolreplay.portable import load_json_text

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

__all__ = [
    "CaseFile",
    "CaseItem",
    "CaseSuite",
    "CaseSummary",
    "CollectedManifest",
    "describe_scope",
    "holds_cases",
    "is_case_module",
    "read_for_collection",
]

CASE_PROPERTY = "toolreplay_case"
"""`user_properties` key holding a case's scope and digest line (shown with `-v`)."""
UPDATED_PROPERTY = "toolreplay_updated"
"""`user_properties` key holding what `--toolreplay-update` changed in a case."""

_NOT_A_CASE = frozenset({"missing", "directory", "not_regular"})
"""Why reading `<folder>/case.json` can fail when the folder is simply not a case."""


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
                # One read per case folder: trying its case.json is also the test for one.
                collected = None if excluded.match(entry.name) else read_for_collection(path)
                if collected is not None and not session.isinitpath(path, with_parents=True):
                    if not ask_hook or not ihook.pytest_ignore_collect(
                        collection_path=path, config=config
                    ):
                        item = self._case_item(path, collected)
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

    def _case_item(self, folder: Path, collected: CollectedManifest) -> CaseItem | None:
        if not collected.is_case(folder):
            return None
        name = collected.name(folder)
        prefix = f"{self.nodeid}/" if self.nodeid not in ("", ".") else ""
        # The item keeps this folder as its path, so pytest looks up conftest files once
        # for all the cases in it; reports name the case's case.json.
        return CaseItem.from_parent(
            self,
            name=name,
            nodeid=f"{prefix}{folder.name}/{MANIFEST_NAME}::{name}",
            folder=folder,
            collected=collected,
        )


def _sorted_entries(path: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as entries:
            return sorted(entries, key=lambda entry: entry.name)
    except FileNotFoundError:
        return []


@dataclass(frozen=True, slots=True)
class CaseSummary:
    """What an item shows of its case before it runs: its name, runner kind and scope."""

    name: str
    runner_kind: str
    trace_sha256: str
    effects: tuple[str, ...]
    operation_count: int


@dataclass(frozen=True, slots=True)
class CollectedManifest:
    """`case.json` as collection read it: its bytes, its JSON document when it parses,
    and the summary when the document gives one (None otherwise: the case then fails
    when run, with the precise error)."""

    data: bytes | None
    document: object | None
    summary: CaseSummary | None

    def name(self, folder: Path) -> str:
        """The item's name: the case's name, or its folder's when the manifest has none."""
        summary = self.summary
        return summary.name if summary is not None else folder.name

    def is_case(self, folder: Path) -> bool:
        """A `case.json` that fails to parse is still a case, unless it is clearly another
        tool's file: no Tool Replay format in it, and no trace asset or test module beside it."""
        if self.summary is not None or self.data is None or CASE_FORMAT.encode() in self.data:
            return True
        try:
            with os.scandir(folder) as entries:
                return any(
                    entry.name == TEST_NAME or entry.name.startswith("trace-sha256-")
                    for entry in entries
                )
        except OSError:
            return True


def _summarize(document: object) -> CaseSummary | None:
    if type(document) is not dict:
        return None
    fields = cast(dict[str, Any], document)
    try:
        scope, runner = fields["scope"], fields["runner"]
        summary = CaseSummary(
            name=fields["name"],
            runner_kind=runner["kind"],
            trace_sha256=fields["trace"]["sha256"],
            effects=tuple(scope["effects"]),
            operation_count=scope["operation_count"],
        )
    except (LookupError, TypeError):
        return None
    texts = (summary.name, summary.runner_kind, summary.trace_sha256, *summary.effects)
    if not all(type(text) is str for text in texts) or type(summary.operation_count) is not int:
        return None
    return summary


def read_for_collection(folder: Path) -> CollectedManifest | None:
    """Read and parse `folder/case.json` (one open); None when `folder` holds no such file."""
    try:
        data = read_regular_file(folder / MANIFEST_NAME, MANIFEST_NAME, follow_symlinks=False)
    except UnreadableFileError as error:
        # A link or an unreadable file is still a case: running it says what is wrong.
        return None if error.kind in _NOT_A_CASE else CollectedManifest(None, None, None)
    try:
        document = load_json_text(data, what="the manifest")
    except JsonTextError:
        return CollectedManifest(data, None, None)
    return CollectedManifest(data, document, _summarize(document))


class CaseFile(pytest.File):
    """A promoted case folder, collected from its `case.json` (or, when named on the
    command line, from its `test_case.py`); it holds one `CaseItem`."""

    def collect(self) -> list[pytest.Item]:
        folder = self.path.parent
        collected = read_for_collection(folder)
        if collected is None or not collected.is_case(folder):
            return []
        return [
            CaseItem.from_parent(
                self, name=collected.name(folder), folder=folder, collected=collected
            )
        ]


class CaseItem(pytest.Item):
    """One promoted case: `verify_case` (or `verify_case_async`) of its folder, from the
    manifest document read at collection."""

    def __init__(
        self,
        *,
        folder: Path,
        collected: CollectedManifest,
        **kwargs: object,
    ) -> None:
        super().__init__(**kwargs)  # pyright: ignore[reportArgumentType]
        self.folder = folder
        self.manifest_path = folder / MANIFEST_NAME
        self.document = collected.document
        self.summary = collected.summary
        # Only -v shows it; without -v it would ride along in every report xdist sends.
        if self.summary is not None and self.config.get_verbosity() > 0:
            self.user_properties.append((CASE_PROPERTY, describe_scope(self.summary)))

    def setup(self) -> None:
        ensure_rootdir_importable(self.config)

    def runtest(self) -> None:
        try:
            self._verify()
        except BehavioralRegressionError as error:
            if not self.config.getoption("toolreplay_update"):
                raise
            # Only a run with --toolreplay-update imports the rewriting (see `update`).
            from toolreplay.pytest_plugin.reports import describe_update
            from toolreplay.pytest_plugin.update import rewrite_expectation

            change = rewrite_expectation(
                self.folder, read_manifest(self.folder, self.folder), error
            )
            self.user_properties.append(
                (UPDATED_PROPERTY, describe_update(self.nodeid, change, self.config))
            )

    def _verify(self) -> None:
        display = self._display()
        manifest = self._manifest(display)
        if manifest.runner_kind == "async":
            import asyncio  # only for async cases

            asyncio.run(verify_folder_async(self.folder, display, manifest))
        else:
            verify_folder(self.folder, display, manifest)

    def _manifest(self, display: Path) -> CaseManifest:
        """The manifest from the document collection parsed; read again only when
        collection could not parse one, so that the error is the precise one."""
        if self.document is None:
            return read_manifest(self.folder, display)
        return manifest_from_document(self.folder, display, self.document)

    def _display(self) -> Path:
        # Relative to the working directory when below it, so that messages name the
        # case as the user would type it.
        cwd = os.getcwd()
        folder = str(self.folder)
        if folder.startswith(cwd) and folder[len(cwd) : len(cwd) + 1] == os.sep:
            return Path(folder[len(cwd) + 1 :])
        return self.folder

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.manifest_path, None, f"toolreplay case {self.name}"

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: str | None = None,
    ) -> str | TerminalRepr:
        error = excinfo.value
        if isinstance(error, (CaseError, ReplayContractError, RunnerImportError)):
            from toolreplay.pytest_plugin.reports import case_report  # on failure only

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


def ensure_rootdir_importable(config: pytest.Config) -> None:
    """Let runners name modules of the project under test, as `python -m pytest` would."""
    root = str(config.rootpath)
    if root not in sys.path:
        sys.path.append(root)
