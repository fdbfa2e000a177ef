"""Public names a package imports when they are first used (PEP 562).

`import toolreplay` then costs what the application uses: a service that only
captures never loads the diff engine, the case runner or the secret scanner's
command, and the command line's `find` never loads the runtime.

Each public name is declared once, in the package's stub (`__init__.pyi`), as
`from MODULE import (NAME as NAME, ...)`: type checkers and editors read the stub,
and `lazy_exports` reads the same lines to know where each name lives (the layout
SPEC 1's lazy loaders use). Importing every module up front instead costs about a
quarter of a second.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable

__all__ = ["lazy_exports"]

# The stub's only statements: `from MODULE import NAME as NAME` or a parenthesised list
# of them. Read with a pattern, not `ast` (whose import alone costs more than the
# whole package's import does).
_IMPORT = re.compile(r"^from\s+([\w.]+)\s+import\s+(?:\(([^)]*)\)|(.+))$", re.MULTILINE)
_ALIAS = re.compile(r"^(\w+)\s+as\s+(\w+)$")


def _declared(stub: str) -> dict[str, str]:
    """Each name the stub at path `stub` re-exports, with the module it comes from."""
    with open(stub, encoding="utf-8") as file:
        text = file.read()
    located: dict[str, str] = {}
    for match in _IMPORT.finditer(text):
        module, listed, single = match.groups()
        for entry in (listed or single).split(","):
            entry = entry.strip()
            if not entry:
                continue
            alias = _ALIAS.match(entry)
            if alias is None or alias[1] != alias[2]:
                raise ImportError(f"{stub}: {entry!r} is not a re-export (`NAME as NAME`)")
            located[alias[1]] = module
    return located


def lazy_exports(package: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose public names its stub declares;
    also sets the package's `__all__` to those names. A name is imported from its module
    when first asked for, then kept in the package's namespace, so it costs one lookup
    once."""
    target = sys.modules[package]
    located = _declared(os.path.splitext(target.__file__ or "")[0] + ".pyi")
    namespace = vars(target)
    namespace["__all__"] = list(located)

    def __getattr__(name: str) -> object:
        module = located.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *located})

    return __getattr__, __dir__
