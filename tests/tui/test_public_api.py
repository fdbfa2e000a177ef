"""The debugger is a client of the library's public API, nothing more.

Every `toolreplay` name the TUI imports must be public: listed in the `__all__` of the
module it is imported from and in the package's own `__all__` (or the module is one of
the public namespaces below), with no `_` in its name or in the module's path. A name the
TUI needs is exported on purpose, or not used.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import toolreplay

TUI_SOURCE = Path(__file__).resolve().parents[2] / "tui" / "toolreplay_tui"

# Documented submodules whose own `__all__` is their public surface: the run protocol
# (RFC 0004 §4.5) is imported as `toolreplay.protocol`, privacy (RFC 0007) as
# `toolreplay.redaction`, scanning files as the command does (RFC 0007 §5.2) as
# `toolreplay.redaction.files`, and writing files safely (atomically, never over their
# source: RFC 0005 §2.7) as `toolreplay.files`, not everything re-exported at the top.
# The recipe registry (RFC 0004 §1.7) as `toolreplay.runtime.recipes`, a model call's
# summary (RFC 0006 §10) as `toolreplay.summaries`, and the OpenAI adapter's replies and
# edits (RFC 0006 §9) as `toolreplay.adapters.openai`, which needs the SDK: the debugger
# previews a reply and edits a stream with them, imported when used. The Anthropic
# adapter's reading of its recorded values without the SDK (RFC 0006 Part IV, C.7) as
# `toolreplay.adapters.anthropic_summary`: the transcript shows a streamed answer as the
# message `final_message` adds up, the one reading the adapter's replies use.
PUBLIC_NAMESPACES = {
    "toolreplay.files",
    "toolreplay.protocol",
    "toolreplay.redaction",
    "toolreplay.redaction.files",
    "toolreplay.runtime.recipes",
    "toolreplay.summaries",
    "toolreplay.adapters.openai",
    "toolreplay.adapters.anthropic_summary",
}


def core_imports(source: str, where: str) -> list[tuple[str, str, str]]:
    """(file, module, name) for every name `source` imports from `toolreplay` itself."""
    found: list[tuple[str, str, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "toolreplay" or node.module.startswith("toolreplay."):
                found += [(where, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("toolreplay.") or alias.name == "toolreplay":
                    found.append((where, alias.name, ""))
    return found


def problems(imports: list[tuple[str, str, str]]) -> list[str]:
    found: list[str] = []
    for where, module_name, name in imports:
        if any(part.startswith("_") for part in module_name.split(".")):
            found.append(f"{where}: imports the private module {module_name}")
            continue
        if not name:
            continue  # `import toolreplay`: what is used through it, pyright checks
        public = getattr(importlib.import_module(module_name), "__all__", ())
        if name.startswith("_") or name == "*":
            found.append(f"{where}: imports {name} from {module_name}")
        elif name not in public:
            found.append(f"{where}: {module_name}.{name} is not in {module_name}.__all__")
        elif name not in toolreplay.__all__ and module_name not in PUBLIC_NAMESPACES:
            found.append(f"{where}: {module_name}.{name} is not in toolreplay.__all__")
    return found


def test_the_tui_imports_only_public_names_of_toolreplay() -> None:
    imports = [
        entry
        for path in sorted(TUI_SOURCE.rglob("*.py"))
        for entry in core_imports(path.read_text(encoding="utf-8"), path.name)
    ]
    assert len(imports) > 20, "the scan found the TUI's imports"
    assert problems(imports) == []


def test_the_check_reports_what_is_not_public() -> None:
    source = (
        "from toolreplay.cases.verification import _prepare, verify_folder\n"
        "from toolreplay.runners import import_from_working_directory\n"
        "from toolreplay.comparison.report import RowStatus\n"
        "from toolreplay._version import __version__\n"
        "from toolreplay import preview\n"
    )
    assert problems(core_imports(source, "probe.py")) == [
        "probe.py: imports _prepare from toolreplay.cases.verification",
        "probe.py: toolreplay.cases.verification.verify_folder is not in toolreplay.__all__",
        "probe.py: toolreplay.runners.import_from_working_directory is not in toolreplay.__all__",
        "probe.py: toolreplay.comparison.report.RowStatus is not in "
        "toolreplay.comparison.report.__all__",
        "probe.py: imports the private module toolreplay._version",
    ]
