"""Record-or-replay for ordinary tests: `@pytest.mark.toolreplay` and `toolreplay_session`.

Each marked test has its own trace next to its module,
`traces/<module>/<test>.trp`. The session is opened inside the test function
itself (its wrapper replaces `item.obj` for the call), so a sync test, a
pytest-asyncio test and an anyio test all run their body in the session's
context, and fixtures run outside it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import re
import uuid
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

import pytest

from toolreplay.errors import ReplayContractError
from toolreplay.runtime.recording import RecordSession
from toolreplay.runtime.replaying import ReplaySession

__all__ = [
    "RECORD_MODES",
    "RecordMode",
    "TestTrace",
    "default_record_mode",
    "running_in_ci",
    "trace_path_for",
]

RecordMode = Literal["once", "none", "all", "new"]
RECORD_MODES: tuple[RecordMode, ...] = ("once", "none", "all", "new")
TRACES_FOLDER = "traces"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_LONGEST_NAME = 120


def running_in_ci(environ: Mapping[str, str] = os.environ) -> bool:
    """True when `CI` is set to anything but empty, `0`, `false` or `no` (any case)."""
    return environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def default_record_mode(environ: Mapping[str, str] = os.environ) -> RecordMode:
    """`none` in CI (nothing goes live, a missing trace fails), `once` elsewhere."""
    return "none" if running_in_ci(environ) else "once"


def trace_path_for(item: pytest.Item) -> Path:
    """`<module folder>/traces/<module stem>/<test>.trp` for a test item.

    `<test>` is the test's name within its module (`TestClass.test_x[param]`),
    with every character outside `A-Za-z0-9_.-` replaced by `_`; a name that had
    to change, or was cut to length, gets the first 8 hex digits of its SHA-256
    so that two tests never share a trace.
    """
    local = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else item.name
    local = local.replace("::", ".")
    safe = _UNSAFE.sub("_", local)[:_LONGEST_NAME]
    if safe != local:
        safe = f"{safe}-{hashlib.sha256(local.encode()).hexdigest()[:8]}"
    return item.path.parent / TRACES_FOLDER / item.path.stem / f"{safe}.trp"


@dataclass(slots=True)
class TestTrace:
    """What the `toolreplay_session` fixture gives a test: its trace, and how it is used.

    `action` is `"replay"` or `"record"`; `session` is the session open while the
    test function runs (in `new` mode a second, recording run gets a new one).
    """

    __test__ = False  # a class named Test* that pytest must not collect

    path: Path
    mode: RecordMode
    action: Literal["record", "replay"]
    node_id: str
    session: RecordSession | ReplaySession | None = None
    recorded: bool = field(default=False)
    """Set once a recording run finished and its trace took `path`'s place."""

    def wrap(self, function: Callable[..., object]) -> Callable[..., object]:
        """`function`, run inside this test's session (a coroutine function stays one)."""
        if inspect.iscoroutinefunction(function):
            coroutine_function = cast(Callable[..., Awaitable[object]], function)

            @functools.wraps(function)
            async def run_async(**kwargs: object) -> object:
                if self.action == "replay":
                    try:
                        with self._replay():
                            return await coroutine_function(**kwargs)
                    except ReplayContractError:
                        if self.mode != "new":
                            raise
                        self.action = "record"
                with self._recording():
                    return await coroutine_function(**kwargs)

            return run_async

        @functools.wraps(function)
        def run(**kwargs: object) -> object:
            if self.action == "replay":
                try:
                    with self._replay():
                        return function(**kwargs)
                except ReplayContractError:
                    if self.mode != "new":
                        raise
                    self.action = "record"
            with self._recording():
                return function(**kwargs)

        return run

    def _replay(self) -> ReplaySession:
        # Strict and offline: no live effects, and the network blocked (RFC 0001 §10).
        self.session = ReplaySession(self.path, network="block")
        return self.session

    @contextlib.contextmanager
    def _recording(self) -> Generator[RecordSession]:
        """Record into a temporary sibling of the trace, which takes the trace's place once
        the test passes and is removed otherwise."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.parent / f".{self.path.name}.recording-{uuid.uuid4().hex[:12]}"
        session = RecordSession(temporary, metadata={"pytest_node": self.node_id})
        self.session = session
        kept = False
        try:
            with session:
                yield session
            kept = True
        finally:
            if not kept:
                temporary.unlink(missing_ok=True)
        os.replace(temporary, self.path)
        self.recorded = True


def plan_trace(item: pytest.Item, mode: RecordMode) -> TestTrace:
    """Decide, before the test runs, whether it replays or records (see `RecordMode`)."""
    path = trace_path_for(item)
    exists = path.is_file()
    if mode == "all" or (not exists and mode in ("once", "new")):
        action: Literal["record", "replay"] = "record"
    elif exists:
        action = "replay"
    else:
        shown = os.path.relpath(path, item.config.rootpath)
        pytest.fail(
            f"toolreplay: no trace for this test at {shown}, and --toolreplay-mode=none (the "
            "default in CI) never records, so nothing ran live. Record it where the effects "
            "may run (pytest --toolreplay-mode=once), then commit the trace.",
            pytrace=False,
        )
    return TestTrace(path=path, mode=mode, action=action, node_id=item.nodeid)
