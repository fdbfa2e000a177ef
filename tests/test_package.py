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
    assert before == "['toolreplay', 'toolreplay._lazy']"
    assert after == "['toolreplay', 'toolreplay._lazy', 'toolreplay.errors']"


def _stub_exports(stub: Path) -> dict[str, str]:
    """name -> module, of the stub's `from M import N as N` statements (read with `ast`,
    not with the package's own pattern), and nothing else in the stub."""
    exported: dict[str, str] = {}
    tree = ast.parse(stub.read_text())
    statements = tree.body[1:] if isinstance(tree.body[0], ast.Expr) else tree.body  # docstring
    for statement in statements:
        if isinstance(statement, ast.AnnAssign) and ast.unparse(statement.target) == "__all__":
            continue  # its type only: the names are the imports
        assert isinstance(statement, ast.ImportFrom), ast.unparse(statement)
        assert statement.module
        for alias in statement.names:
            assert alias.asname == alias.name, f"{alias.name} is not re-exported as itself"
            exported[alias.name] = statement.module
    return exported


@pytest.mark.parametrize("package", [toolreplay, toolreplay.capturing])
def test_what_type_checkers_see_is_what_the_package_gives(package: ModuleType) -> None:
    # Type checkers and editors read the stub; the package resolves the same names, from
    # the same modules, on first use, and lists exactly them in `__all__`.
    assert package.__file__ is not None
    declared = _stub_exports(Path(package.__file__).with_suffix(".pyi"))
    assert package.__all__ == list(declared)
    for name, module in declared.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name), name
    listed = dir(package)
    assert set(package.__all__) <= set(listed)
    assert listed == sorted(listed)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        package.no_such_name  # noqa: B018


def test_a_stub_line_that_is_not_a_re_export_is_refused(tmp_path: Path) -> None:
    # `from m import a` in a stub does not re-export `a` for type checkers; the loader
    # refuses it rather than disagree with them.
    package = tmp_path / "stubbed"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from toolreplay._lazy import lazy_exports\n__getattr__, __dir__ = lazy_exports(__name__)\n"
    )
    (package / "__init__.pyi").write_text(
        "from json import (\n    dumps as dumps,\n    loads,\n)\n"
    )
    probe = "import stubbed"
    result = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "__init__.pyi: 'loads' is not a re-export (`NAME as NAME`)" in result.stderr


def test_no_public_name_is_also_a_module_of_the_package() -> None:
    # The import system binds a submodule to its parent's attribute of the same name, so
    # a public name shared with a module (`toolreplay.diff` the function and a package
    # `toolreplay/diff/`) would change meaning once that module was imported.
    assert toolreplay.__file__ is not None
    root = Path(toolreplay.__file__).parent
    modules = {path.stem for path in root.glob("*.py")} | {
        path.parent.name for path in root.glob("*/__init__.py")
    }
    assert not modules & set(toolreplay.__all__)


def test_the_diff_function_stays_the_function_when_the_comparison_is_imported() -> None:
    probe = (
        "import toolreplay.comparison.report, toolreplay\n"
        "print(callable(toolreplay.diff), toolreplay.diff.__module__)\n"
        "from toolreplay import diff\n"
        "print(callable(diff))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.split() == ["True", "toolreplay.comparison", "True"]
