"""Public names a package imports when they are first used (PEP 562).

`import toolreplay` then costs what the application uses: a service that only
captures never loads the diff engine, the case runner or the secret scanner's
command, and the command line's `find` never loads the runtime.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from types import ModuleType

__all__ = ["lazy_exports"]


class _LazyPackage(ModuleType):
    """A package whose public names are resolved on first use.

    The import system binds every subpackage it loads to its parent's attribute of the
    same name; where a public name shares a subpackage's name (`toolreplay.diff`, the
    function, and `toolreplay.diff`, the package), the public name must win, as it did
    when the package imported everything at once.
    """

    _public_names: frozenset[str] = frozenset()

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, ModuleType) and name in self._public_names:
            return
        super().__setattr__(name, value)


def lazy_exports(
    package: str, modules: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose public names live in `modules`
    (module name: the names it defines). A name is imported from its module when first
    asked for, then kept in the package's namespace, so it costs one lookup once."""
    located = {name: module for module, names in modules.items() for name in names}
    target = sys.modules[package]
    namespace = vars(target)
    target.__class__ = _LazyPackage
    namespace["_public_names"] = frozenset(located)

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
