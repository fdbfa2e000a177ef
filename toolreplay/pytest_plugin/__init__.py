"""Tool Replay's pytest plugin, registered as `toolreplay` (entry point `pytest11`).

Installed with the package, it is active in every pytest run (`-p no:toolreplay`
turns it off) and does three things:

- **Promoted cases** are collected from their `case.json`, one item per case
  folder named after the case, without importing the folder's `test_case.py`
  (which is then not collected; it stays for runs without the plugin). A
  failing case is reported by kind: a behavioural regression with the JSON
  paths that differ and a diff, an integrity, replay-contract or application
  failure each with what to do. `-v` shows each case's scope and trace digest.
- **`@pytest.mark.toolreplay`** (or the `toolreplay_session` fixture) runs a
  test inside a session on its own trace, `traces/<module>/<test>.trp` next to
  the test module: replayed when it exists, recorded when it does not, as
  `--toolreplay-mode` says (`once` by default, `none` when `CI` is set).
- **`--toolreplay-update`** re-records every marked test's trace (mode `all`)
  and rewrites the expectation of each case whose runner now returns another
  value, printing what changed. In CI it must be typed on the command line.

Importing this module imports pytest and Tool Replay, nothing heavier.
"""

# pytest's node constructors (`from_parent`) take untyped **kwargs.
# pyright: reportUnknownMemberType=false

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from toolreplay.cases import MANIFEST_NAME, TEST_NAME
from toolreplay.pytest_plugin.cases import (
    CASE_PROPERTY,
    UPDATED_PROPERTY,
    CaseFile,
    CaseItem,
    CaseSuite,
    holds_cases,
    is_case_module,
)
from toolreplay.pytest_plugin.recording import (
    RECORD_MODES,
    RecordMode,
    TestTrace,
    default_record_mode,
    plan_trace,
    running_in_ci,
    trace_path_for,
)
from toolreplay.pytest_plugin.update import CaseUpdate, CaseUpdateError, rewrite_expectation

__all__ = [
    "RECORD_MODES",
    "CaseFile",
    "CaseItem",
    "CaseSuite",
    "CaseUpdate",
    "CaseUpdateError",
    "RecordMode",
    "TestTrace",
    "default_record_mode",
    "rewrite_expectation",
    "running_in_ci",
    "toolreplay_session",
    "trace_path_for",
]

MARKER = "toolreplay"
RECORDED_PROPERTY = "toolreplay_recorded"
"""`user_properties` key holding the trace a marked test recorded."""
_MODE = pytest.StashKey[RecordMode]()
_TRACE = pytest.StashKey[TestTrace]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolreplay", "Tool Replay (record, replay, promoted cases)")
    group.addoption(
        "--toolreplay-mode",
        choices=RECORD_MODES,
        default=None,
        help="how tests marked @pytest.mark.toolreplay use their trace: once (replay it, or "
        "record it when missing), none (replay only; a missing trace fails), all (record "
        "every trace again), new (like once, and a test whose calls no longer match its "
        "trace is run again live and re-recorded). Default: none when the CI environment "
        "variable is set, once otherwise.",
    )
    group.addoption(
        "--toolreplay-update",
        action="store_true",
        default=False,
        help="re-record every marked test's trace (mode all) and rewrite the expectation of "
        "each promoted case whose runner now returns another value; refused in CI unless "
        "given on the command line itself",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}: run the test in a Tool Replay session on traces/<module>/<test>.trp, "
        "replaying it or recording it as --toolreplay-mode says",
    )
    chosen: RecordMode | None = config.getoption("toolreplay_mode")
    update = bool(config.getoption("toolreplay_update"))
    if update:
        if chosen not in (None, "all"):
            raise pytest.UsageError(
                f"--toolreplay-update records every trace again (mode all); it cannot be "
                f"combined with --toolreplay-mode={chosen}"
            )
        typed = any(str(arg) == "--toolreplay-update" for arg in config.invocation_params.args)
        if running_in_ci() and not typed:
            raise pytest.UsageError(
                "--toolreplay-update came from addopts or PYTEST_ADDOPTS while CI is set; "
                "in CI, cases and traces are rewritten only when --toolreplay-update is "
                "given on the command line itself"
            )
        chosen = "all"
    config.stash[_MODE] = chosen or default_record_mode()
    config.pluginmanager.register(_Summary(), "toolreplay-summary")


def pytest_report_header(config: pytest.Config) -> str:
    update = ", updating cases and traces" if config.getoption("toolreplay_update") else ""
    return f"toolreplay: --toolreplay-mode={config.stash[_MODE]}{update}"


# --- promoted cases ---------------------------------------------------------------------


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # The case is collected once, from its case.json; its generated module is for runs
    # without this plugin. (pytest does not ask about paths named on the command line.)
    if collection_path.name == TEST_NAME and is_case_module(collection_path):
        return True
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> CaseFile | None:
    if file_path.name == MANIFEST_NAME:
        return CaseFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> CaseSuite | None:
    # A package (with __init__.py) stays pytest's; its case folders are collected one by one.
    if not (path / "__init__.py").is_file() and holds_cases(path):
        return CaseSuite.from_parent(parent, path=path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> CaseFile | None:
    # Reached only for a case's test_case.py named on the command line: run the case.
    if is_case_module(module_path):
        return CaseFile.from_parent(parent, path=module_path)
    return None


def pytest_report_teststatus(
    report: pytest.TestReport, config: pytest.Config
) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    if report.when != "call" or config.get_verbosity() <= 0:
        return None
    scope = next((str(v) for k, v in report.user_properties if k == CASE_PROPERTY), None)
    if scope is None:
        return None
    if any(k == UPDATED_PROPERTY for k, _ in report.user_properties):
        return "passed", "U", (f"UPDATED ({scope})", {"yellow": True})
    if report.passed:
        return "passed", ".", (f"PASSED ({scope})", {"green": True})
    if report.failed:
        return "failed", "F", (f"FAILED ({scope})", {"red": True})
    return None


# --- marked tests -----------------------------------------------------------------------


@pytest.fixture
def toolreplay_session(request: pytest.FixtureRequest) -> TestTrace:
    """The test's trace and session: replayed from `traces/<module>/<test>.trp` when it
    exists, recorded there when it does not (see `--toolreplay-mode`).

    The session is open while the test function runs (not during fixtures).
    """
    plan = plan_trace(request.node, request.config.stash[_MODE])
    request.node.stash[_TRACE] = plan
    return plan


@pytest.fixture(autouse=True)
def _toolreplay_marker(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker(MARKER) is not None:
        request.getfixturevalue("toolreplay_session")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    plan = item.stash.get(_TRACE, None)
    if plan is None or not isinstance(item, pytest.Function):
        return (yield)
    original = item.obj
    item.obj = plan.wrap(original)
    try:
        result = yield
    finally:
        item.obj = original
    if plan.recorded:
        shown = os.path.relpath(plan.path, item.config.rootpath)
        item.user_properties.append((RECORDED_PROPERTY, shown))
    return result


class _Summary:
    """Collects what was updated or recorded (from every xdist worker) and prints it."""

    def __init__(self) -> None:
        self.updated: list[str] = []
        self.recorded: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for key, value in report.user_properties:
            if key == UPDATED_PROPERTY:
                self.updated.append(str(value))
            elif key == RECORDED_PROPERTY:
                self.recorded.append(str(value))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.updated and not self.recorded:
            return
        terminalreporter.write_sep("=", "toolreplay")
        if self.updated:
            terminalreporter.write_line(
                f"{len(self.updated)} case expectation(s) rewritten by --toolreplay-update:"
            )
            for text in sorted(self.updated):
                terminalreporter.write_line(f"  {text.replace(chr(10), chr(10) + '  ')}")
        if self.recorded:
            terminalreporter.write_line(f"{len(self.recorded)} trace(s) recorded:")
            for path in sorted(self.recorded):
                terminalreporter.write_line(f"  {path}")
