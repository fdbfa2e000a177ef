"""The package's public surface and its import cost."""

from __future__ import annotations

import inspect
import subprocess
import sys

import toolreplay


def test_import_pulls_in_neither_typer_textual_nor_openai() -> None:
    probe = (
        "import sys, toolreplay; "
        "print(sorted(m for m in ('typer', 'click', 'rich', 'textual', 'openai', 'pydantic') "
        "if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "[]"


def test_everything_exported_exists_and_is_documented() -> None:
    assert len(set(toolreplay.__all__)) == len(toolreplay.__all__)
    for name in toolreplay.__all__:
        exported = getattr(toolreplay, name)
        if isinstance(exported, type) or inspect.isfunction(exported):
            assert exported.__doc__, f"toolreplay.{name} has no docstring"


def test_errors_share_one_root() -> None:
    errors = [
        getattr(toolreplay, name)
        for name in toolreplay.__all__
        if name.endswith(("Error", "Miss", "Match"))
    ]
    assert errors
    for error in errors:
        assert issubclass(error, toolreplay.ToolReplayError), error
