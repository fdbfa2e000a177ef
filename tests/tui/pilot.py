"""Driving the debugger in tests: build the app for a project, wait for what it does."""

from __future__ import annotations

import asyncio
import functools
import io
import time
from collections.abc import Callable, Coroutine
from typing import Any

from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static
from toolreplay_tui.app import ToolReplayApp

from tests.tui.support import Project, child_env

SIZE = (120, 40)


def pilot_test(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async pilot test in its own event loop (no pytest async plugin needed)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


def make_app(project: Project, **options: Any) -> ToolReplayApp:
    """The debugger on the project's trace, running children in the project folder."""
    options.setdefault("cwd", project.root)
    options.setdefault("env", child_env())
    options.setdefault("blink_cursors", False)
    return ToolReplayApp(project.trace, **options)


async def wait_for(
    pilot: Pilot[Any], predicate: Callable[[], object], timeout: float = 60.0, what: str = ""
) -> None:
    """Let the app run until `predicate()` holds (child processes take a moment)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.05)
    await pilot.pause()


async def loaded(pilot: Pilot[Any]) -> ToolReplayApp:
    app = pilot.app
    assert isinstance(app, ToolReplayApp)

    def ready() -> bool:
        # Listed (the screen composed), indexed and checked: actions needing the whole
        # trace run at once then.
        return (
            app.trace is not None
            and bool(app.browse.query("#operations"))
            and app.browse.operations.row_count() > 0
            and app.background.integrity.state != "checking"
        )

    await wait_for(pilot, ready, what="load")
    return app


def text_of(app: ToolReplayApp, selector: str) -> str:
    """The plain text a Static on the current screen shows."""
    widget = app.screen.query_one(selector, Static)
    console = Console(width=200, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    output = console.file
    assert isinstance(output, io.StringIO)
    return output.getvalue()


async def settle(pilot: Pilot[Any], seconds: float = 0.1) -> None:
    await pilot.pause(seconds)
    await asyncio.sleep(0)


def said(app: ToolReplayApp) -> str:
    """Every message of the session so far (notifications expire; the log keeps them)."""
    return "\n".join(message.text for message in app.message_log)
