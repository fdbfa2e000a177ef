"""Carrying a session into threads that do not inherit the caller's context.

Tasks (`asyncio.gather`, `create_task`, `TaskGroup`) and `asyncio.to_thread`
copy the context, so they see the session by themselves. A `threading.Thread`
or a `concurrent.futures.ThreadPoolExecutor` worker does not: an effect called
there while a session is open raises `SessionContextError`. These two carry the
context across:

    with toolreplay.record("batch.trp"):
        with toolreplay.SessionExecutor(max_workers=8) as pool:
            results = list(pool.map(fetch_order, order_ids))

    with toolreplay.record("batch.trp"):
        worker = threading.Thread(target=toolreplay.propagate(fetch_order), args=(7,))
        worker.start()
        worker.join()

Each call runs in its own copy of the context captured where the work was
handed over, so concurrent calls never share (or fight over) one context.
`SessionExecutor` lives in `toolreplay.runtime.executor`, imported on first use:
`concurrent.futures` (and the logging it imports) is not part of `import toolreplay`.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["propagate"]

P = ParamSpec("P")
R = TypeVar("R")


def propagate(function: Callable[P, R]) -> Callable[P, R]:
    """`function`, bound to the context (and so the session) of the code calling `propagate`.

    Call it here and hand the result to a thread, a thread pool or a callback:
    wherever it runs, its effects belong to the session that was visible when
    `propagate` was called. Each call runs in a fresh copy of that context, so
    the wrapper can run on many threads at once (`pool.map(propagate(f), items)`).
    """
    captured = contextvars.copy_context()

    @functools.wraps(function)
    def in_captured_context(*args: P.args, **kwargs: P.kwargs) -> R:
        return captured.copy().run(function, *args, **kwargs)

    return in_captured_context
