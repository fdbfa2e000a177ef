"""`SessionExecutor`: a thread pool whose work runs in the submitter's session.

Imported on first use of `toolreplay.SessionExecutor`, so that `import toolreplay`
does not import `concurrent.futures`. See `toolreplay.runtime.propagation`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

__all__ = ["SessionExecutor"]

P = ParamSpec("P")
R = TypeVar("R")


class SessionExecutor(ThreadPoolExecutor):
    """A `ThreadPoolExecutor` whose work runs in the context of the code that submitted it.

    `submit` (and so `map`) captures the caller's context, so effects called by
    the work belong to the caller's session, and are recorded or replayed like
    effects called directly. Shut it down (leave its `with` block) inside the
    session's block, so that no call outlives the session.
    """

    def submit(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        context = contextvars.copy_context()
        return super().submit(context.run, fn, *args, **kwargs)
