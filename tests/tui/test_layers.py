"""The debugger's layers: each package imports only those below it.

The model knows nothing of the UI; widgets and screens read the session through
`toolreplay_tui.context` (the `DebugSession` protocol) and change it by posting
messages, never reaching the app or its controllers; controllers reach the app only
through their `Host` protocol. Type-checking imports count: depending on a concrete
class for its type is depending on it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import toolreplay_tui

PACKAGE = Path(toolreplay_tui.__file__).parent

# What each part of the package may not import (`toolreplay_tui.` left out).
FORBIDDEN = {
    "model": ("app", "controllers", "screens", "widgets", "context", "state", "messages"),
    "state.py": ("app", "controllers", "screens", "widgets", "context"),
    "context.py": ("app", "controllers", "screens", "widgets"),
    "messages.py": ("app", "controllers", "screens", "widgets"),
    "widgets": ("app", "controllers", "screens"),
    "screens": ("app", "controllers"),
    "controllers": ("app",),
}


def imported_modules(source: str) -> list[str]:
    """Every `toolreplay_tui` module `source` imports, at any depth (type-checking too)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return [name for _, name in sorted(found) if name.startswith("toolreplay_tui.")]


def crossings(part: str, files: dict[str, str]) -> list[str]:
    """`file imports module` for each import of `files` (name -> source) that `part`
    may not make."""
    forbidden = tuple(f"toolreplay_tui.{name}" for name in FORBIDDEN[part])
    return [
        f"{name} imports {module}"
        for name, source in sorted(files.items())
        for module in imported_modules(source)
        if module in forbidden or module.startswith(tuple(f"{f}." for f in forbidden))
    ]


def sources(part: str) -> dict[str, str]:
    path = PACKAGE / part
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    assert files, f"no module in {path}"
    return {
        f"{part}/{file.name}" if path.is_dir() else part: file.read_text(encoding="utf-8")
        for file in files
    }


def test_every_part_imports_only_the_layers_below_it() -> None:
    assert [problem for part in FORBIDDEN for problem in crossings(part, sources(part))] == []


def test_the_check_sees_a_screen_reaching_for_the_app() -> None:
    screen = (
        "from typing import TYPE_CHECKING\n"
        "from toolreplay_tui.context import session\n"
        "if TYPE_CHECKING:\n"
        "    from toolreplay_tui.app import ToolReplayApp\n"
        "import toolreplay_tui.controllers.runs\n"
    )
    assert crossings("screens", {"screens/probe.py": screen}) == [
        "screens/probe.py imports toolreplay_tui.app",
        "screens/probe.py imports toolreplay_tui.controllers.runs",
    ]
