"""The package's public surface and its import cost."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import toolreplay
import toolreplay.capturing


def test_import_pulls_in_neither_the_command_line_textual_nor_openai() -> None:
    probe = (
        "import sys, toolreplay; "
        "print(sorted(m for m in ('toolreplay.cli', 'rich', 'textual', 'openai', 'pydantic') "
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


def test_import_loads_none_of_the_package_modules_until_a_name_is_used() -> None:
    probe = (
        "import sys, toolreplay\n"
        "print(sorted(m for m in sys.modules if m.startswith('toolreplay')))\n"
        "toolreplay.ToolReplayError\n"
        "print(sorted(m for m in sys.modules if m.startswith('toolreplay')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    before, after = result.stdout.splitlines()
    assert before == "['toolreplay', 'toolreplay._lazy', 'toolreplay._version']"
    assert after == "['toolreplay', 'toolreplay._lazy', 'toolreplay._version', 'toolreplay.errors']"


def _type_checking_imports(source: Path) -> dict[str, str]:
    """name -> module, of the `from M import N` statements under `if TYPE_CHECKING:`."""
    imported: dict[str, str] = {}
    for node in ast.parse(source.read_text()).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom)
                assert statement.module
                for alias in statement.names:
                    imported[alias.asname or alias.name] = statement.module
    return imported


@pytest.mark.parametrize("package", [toolreplay, toolreplay.capturing])
def test_what_type_checkers_see_is_what_the_package_gives(package: ModuleType) -> None:
    # The names for type checkers and editors (imported under TYPE_CHECKING) and the
    # names resolved on first use are the same, from the same modules.
    assert package.__file__ is not None
    declared = _type_checking_imports(Path(package.__file__))
    lazily = {name for name in package.__all__ if name != "__version__"}
    assert set(declared) == lazily
    for name, module in declared.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name), name
    listed = dir(package)
    assert set(package.__all__) <= set(listed)
    assert listed == sorted(listed)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        package.no_such_name  # noqa: B018


def test_the_diff_function_is_not_hidden_by_the_diff_package() -> None:
    # Importing the subpackage binds it to the parent's attribute of the same name; the
    # public function `toolreplay.diff` must stay what that name gives.
    probe = (
        "import toolreplay.diff.report, toolreplay\n"
        "print(callable(toolreplay.diff), toolreplay.diff.__module__)\n"
        "from toolreplay import diff\n"
        "print(callable(diff))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == ["True", "toolreplay.diff", "True"]
