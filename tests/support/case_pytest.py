"""The pytest command a test runs in a child process on promoted cases.

A child pytest that loads every plugin this environment has (hypothesis, syrupy,
Textual's snapshots, pytest-asyncio, xdist) took about 4.5 CPU-seconds to start,
3.5 of them for plugins a case never uses, and the suite starts some seventy. These
children load Tool Replay's plugin by name and nothing else (pytest-asyncio too, as
the project's configuration names its option). Loading the plugin through its entry
point, as a user's project does, stays covered by the tests that run pytest as a
user would (`tests/test_pytest_plugin.py`, `tests/test_incident_example.py`).
"""

from __future__ import annotations

import sys

__all__ = ["CASE_PYTEST", "case_pytest"]

CASE_PYTEST = (
    "-m",
    "pytest",
    "-q",
    "-p",
    "no:cacheprovider",
    "--disable-plugin-autoload",
    "-p",
    "toolreplay.pytest_plugin",
    "-p",
    "pytest_asyncio.plugin",
)
"""The interpreter's arguments for such a pytest, for helpers that add the interpreter."""


def case_pytest(*arguments: str, xdist: bool = False) -> list[str]:
    """`python -m pytest -q -p no:cacheprovider ARGUMENTS` with only the plugins cases
    use; `xdist` adds pytest-xdist's, for a run with `-n`."""
    plugins = ("-p", "xdist.plugin") if xdist else ()
    return [sys.executable, *CASE_PYTEST, *plugins, *arguments]
