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

from toolreplay.errors import RunnerError, RunnerImportError, SessionContextError
from toolreplay.names import RUNNER_PATTERN
from toolreplay.runtime.context import offline_guard

__all__ = [
    "RUNNER_PATTERN",
    "Runner",
    "import_from_working_directory",
    "load_runner",
    "resolve_runner",
]


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
    reported as a `RunnerImportError`). Raises `RunnerImportError` when the
    module cannot be imported (it is not on `sys.path`, or importing it raised:
    the error says which, with advice, and chains the import's own exception),
    and `RunnerError` when the spec is malformed, the attribute does not exist
    or is not callable, or it requires arguments.
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
            raise RunnerImportError(
                f"runner {spec!r}: cannot import {module_name}: no module named {missing!r} on "
                "this Python's search path (sys.path)\nRun from the project's root folder, the "
                "one that holds it (the command line and the pytest plugin make it importable), "
                "install the project, or add its folder to PYTHONPATH (for pytest, the "
                "pythonpath option).",
                runner=spec,
                module=module_name,
                missing=True,
            ) from error
        raise _import_raised(spec, module_name, error) from error
    except Exception as error:
        raise _import_raised(spec, module_name, error) from error
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


_ENVIRONMENT_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def _import_raised(spec: str, module_name: str, error: Exception) -> RunnerImportError:
    """The error for a runner module whose import raised `error`, with advice that fits."""
    headline = f"runner {spec!r}: importing {module_name} raised {type(error).__name__}: {error}"
    (name,) = error.args if isinstance(error, KeyError) and len(error.args) == 1 else (None,)
    if isinstance(error, SessionContextError):
        advice = (
            "It calls an effect while it imports, which never runs outside a session: call it "
            "from the runner instead."
        )
    elif isinstance(error, ModuleNotFoundError):
        advice = (
            f"{module_name} needs {error.name!r}, which this Python ({sys.executable}) cannot "
            "import: install it, or run with the environment the application uses."
        )
    elif isinstance(name, str) and _ENVIRONMENT_NAME.fullmatch(name) and name not in os.environ:
        advice = (
            f"The environment variable {name} is probably not set: set it (for an API key, "
            "when you replay or verify a case, a placeholder will do: no request is sent), or "
            "have the module read it when the runner is called rather than when it is imported."
        )
    else:
        advice = (
            "Its module-level code failed, so nothing of the application ran. Common causes: "
            "an environment variable that is not set (an SDK client or agent built at import "
            "time wants its API key; when you replay or verify a case, a placeholder will do: "
            "no request is sent), a missing configuration file, or a dependency of another "
            "version. The import's traceback shows where."
        )
    return RunnerImportError(
        f"{headline}\n{advice}", runner=spec, module=module_name, missing=False
    )


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
