"""Runners: an application entry point named `module:callable`, called with no arguments.

The command line and promoted cases run an application the same way: import
`module`, look up `callable` (a function, or `Class.method` for a static or
class method), and call it with no arguments; an `async def` runner is run to
completion with `asyncio.run`.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

from toolreplay.errors import RunnerError
from toolreplay.runtime.session import offline_guard

__all__ = [
    "RUNNER_PATTERN",
    "Runner",
    "import_from_working_directory",
    "load_runner",
    "resolve_runner",
]

RUNNER_PATTERN = re.compile(
    r"(?P<module>[A-Za-z_][\w.]*):(?P<attribute>[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)"
)
"""What a runner spec looks like: `package.module:function` or `module:Class.method`."""


@dataclass(frozen=True, slots=True)
class Runner:
    """A resolved runner: `spec` as given, and the callable it names."""

    spec: str
    function: Callable[[], object]

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.function)

    def __call__(self) -> object:
        """Call the runner; an async one runs to completion in a new event loop."""
        result = self.function()
        if inspect.iscoroutine(result):
            import asyncio  # only async runners need it; `import toolreplay` stays light

            return asyncio.run(result)
        return result


def import_from_working_directory() -> None:
    """Make modules in the current directory importable, as `python -m` does.

    For the command line, whose runners name the user's own modules; the
    library itself never changes `sys.path`.
    """
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)


def load_runner(spec: str) -> Runner:
    """Import and check the runner named by `spec` (`package.module:function`).

    While the module imports, effects refuse to run live (`SessionContextError`,
    reported as a `RunnerError`). Raises `RunnerError` when the spec is
    malformed, the module cannot be imported (the error says why, with the
    import's own exception chained), the attribute does not exist or is not
    callable, or it requires arguments.
    """
    match = RUNNER_PATTERN.fullmatch(spec)
    if match is None:
        raise RunnerError(
            f"runner {spec!r} is not of the form module:callable (for example "
            "myapp.cases:refund_incident or myapp.cases:Cases.refund)"
        )
    module_name, attribute = match["module"], match["attribute"]
    try:
        # No session is open yet: an effect called at import time must not run live.
        with offline_guard.holding():
            target: object = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name
        if missing is not None and (
            module_name == missing or module_name.startswith(missing + ".")
        ):
            raise RunnerError(
                f"runner {spec!r}: no module named {error.name!r}. Run the command from the "
                "folder that holds it (the current directory is importable), or install it"
            ) from error
        raise RunnerError(
            f"runner {spec!r}: importing {module_name} failed: {type(error).__name__}: {error}"
        ) from error
    except Exception as error:
        raise RunnerError(
            f"runner {spec!r}: importing {module_name} raised {type(error).__name__}: {error}"
        ) from error
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise RunnerError(
                f"runner {spec!r}: {module_name} has no attribute {attribute!r}"
                + (f" (it stops at {part!r})" if "." in attribute else "")
            )
        target = getattr(target, part)
    if not callable(target):
        raise RunnerError(
            f"runner {spec!r}: {attribute} is a {type(target).__name__}, not a callable"
        )
    function: Callable[..., object] = target
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        required = [
            p.name
            for p in signature.parameters.values()
            if p.default is inspect.Parameter.empty
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]
        if required:
            raise RunnerError(
                f"runner {spec!r} requires argument(s) {', '.join(required)}; a runner takes "
                "no arguments. Wrap the call in a function that supplies them."
            )
    return Runner(spec, function)


_resolved: dict[str, tuple[object, Runner]] = {}
"""`resolve_runner`'s memory: spec -> (the module it was found in, the runner)."""


def resolve_runner(spec: str) -> Runner:
    """`load_runner(spec)`, remembered for the life of the process.

    A suite of cases names the same few runners thousands of times; each is
    imported and checked once. The remembered runner is given again only while
    `sys.modules` still holds the same module and the attribute still names the
    same callable (a reloaded or patched module is looked up afresh).
    """
    known = _resolved.get(spec)
    module_name, _, attribute = spec.partition(":")
    if known is not None:
        module, runner = known
        if sys.modules.get(module_name) is module:
            target: object = module
            for part in attribute.split("."):
                target = getattr(target, part, None)
            if target == runner.function:
                return runner
    runner = load_runner(spec)
    _resolved[spec] = (sys.modules[module_name], runner)
    return runner
