"""The context a session follows, the lanes calls run on, and the process-wide offline guard.

A session is found through a context variable, so it follows the code that
runs inside its `with` block, across `await`s and into tasks created there
(and into threads through `toolreplay.propagate` / `SessionExecutor`), and
nowhere else. The call whose body is running is another context variable: an
effect called while it is in flight is nested in it. A lane is the task (or,
outside any task, the thread) a call runs on.

The guard: while a record or replay session is open anywhere in the process,
an effect called where no session is visible (a plain worker thread, a callback
on another event loop) raises `SessionContextError` instead of running its live
body unrecorded or unreplayed. A process-wide counter makes that check one
attribute read on the fast path of every effect call.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolreplay.errors import SessionContextError
from toolreplay.portable import JsonValue
from toolreplay.redaction.policy import EffectRedaction
from toolreplay.trace.model import OperationIdentity

if TYPE_CHECKING:
    from toolreplay.runtime.session import Session

__all__ = [
    "PendingCall",
    "current_session",
    "lane_key",
    "offline_guard",
    "outside_context_error",
    "running_call_var",
    "session_var",
]

session_var: contextvars.ContextVar[Session | None] = contextvars.ContextVar(
    "toolreplay_session", default=None
)
# The recorded call whose body is running here: an effect called while it is
# still in flight is nested in it.
running_call_var: contextvars.ContextVar[PendingCall | None] = contextvars.ContextVar(
    "toolreplay_running_call", default=None
)


class _OfflineGuard:
    """The sessions open anywhere in the process (`active` counts them and the holds)."""

    __slots__ = ("_holds", "_lock", "_sessions", "active")

    def __init__(self) -> None:
        self.active = 0
        self._sessions: list[Session] = []
        self._holds = 0
        self._lock = threading.Lock()

    def enter(self, session: Session) -> None:
        with self._lock:
            self._sessions.append(session)
            self.active = len(self._sessions) + self._holds

    def leave(self, session: Session) -> None:
        with self._lock:
            self._sessions.remove(session)
            self.active = len(self._sessions) + self._holds

    @contextlib.contextmanager
    def holding(self) -> Generator[None]:
        """Refuse live effects everywhere for a while (e.g. while a runner module imports)."""
        with self._lock:
            self._holds += 1
            self.active = len(self._sessions) + self._holds
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
                self.active = len(self._sessions) + self._holds

    def refuse(self, effect: str) -> SessionContextError:
        """The error for a call outside every open session's context; each session fails too."""
        error = outside_context_error(effect)
        with self._lock:
            for session in self._sessions:
                session.note_violation(error)
        return error


offline_guard = _OfflineGuard()


def current_session() -> Session | None:
    """The session visible from the calling context, if any."""
    return session_var.get()


def outside_context_error(effect: str) -> SessionContextError:
    return SessionContextError(
        f"{effect} was called in thread {threading.current_thread().name!r} outside the "
        "context of any session while Tool Replay refuses unobserved effects in this "
        "process (a record or replay session is open, or a runner module is being "
        "imported), so it could be neither recorded nor replayed, and running it unseen "
        "would lose it. A session follows its context, which plain threads, thread pools "
        "and callbacks on another event loop do not inherit: submit the work with "
        "toolreplay.propagate(fn) or a toolreplay.SessionExecutor (or asyncio.to_thread, "
        "which copies the context), or call it after the session has closed."
    )


def lane_key() -> object:
    """What makes a lane: the running task, or outside any task the thread."""
    # No task can run before asyncio is imported, and importing it here would
    # cost every sync program its import time.
    running_asyncio = sys.modules.get("asyncio")
    task: object = None
    if running_asyncio is not None:
        # Asked of the loop first: `current_task()` outside a loop raises, and building
        # that exception cost more than the rest of recording a call.
        loop: object = running_asyncio._get_running_loop()
        if loop is not None:
            task = running_asyncio.current_task(loop)
    return task if task is not None else threading.current_thread()


@dataclass(slots=True, eq=False)
class PendingCall:
    """An effect call that has an identity and is waiting for its outcome.

    `lane` and `start_ns` say where and when it started (see `Operation`). The
    body's return value goes in `result` (see `Session._running_body`).
    `inputs_text` is the inputs as the trace line holds them, when the session
    encoded them as the call began (a recording: the body may change them after).
    """

    identity: OperationIdentity
    inputs: dict[str, JsonValue]
    lane: str = "main"
    start_ns: int = 0
    result: object = None
    # The rules that redacted the inputs and will redact the outcome, and the strings
    # they removed from the inputs (hidden wherever they reappear in the outcome).
    redaction: EffectRedaction | None = None
    known: tuple[str, ...] = ()
    inputs_text: str | None = None
