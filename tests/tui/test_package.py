"""The package's entry point and its import cost."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import toolreplay_tui


def test_run_takes_the_trace_the_runner_and_another_trace() -> None:
    parameters = inspect.signature(toolreplay_tui.run).parameters
    assert list(parameters)[:3] == ["trace", "runner", "against"]
    assert parameters["runner"].default is None
    assert parameters["against"].default is None


def test_importing_the_package_imports_no_textual() -> None:
    code = "import sys, toolreplay_tui; print('textual' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_the_model_never_imports_textual() -> None:
    model = Path(toolreplay_tui.__file__).parent / "model"
    for module in model.glob("*.py"):
        assert "textual" not in module.read_text(encoding="utf-8"), module.name
