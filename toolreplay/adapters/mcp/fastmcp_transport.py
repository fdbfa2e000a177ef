"""A FastMCP client transport whose every request is an effect (FastMCP 4's public API only).

FastMCP's `Client` (and pydantic-ai's `MCPToolset`, built on it) connects through a
`ClientTransport`, whose `connect_session` builds the `ClientSession` from the class
its `TransportOptions` name. `InstrumentedClientTransport` wraps such a transport:
when recording it hands the original a session class that captures the stream pair
the session is given; under replay it builds the session on a replayed connection
and never calls the original; a fork's live request enters the original then, and
takes the stream pair of the session it builds. Imported only when a FastMCP object
is instrumented: FastMCP is not a dependency of the `mcp` extra.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import AsyncGenerator
from typing import Any, Unpack

import anyio
from fastmcp.client.transports.base import ClientTransport, SessionKwargs, TransportOptions
from mcp import ClientSession
from mcp.shared.message import SessionMessage

from toolreplay.adapters.mcp.connection import InstrumentedTransport

__all__ = ["InstrumentedClientTransport"]

_Streams = tuple[Any, Any]


class InstrumentedClientTransport(ClientTransport):
    """A FastMCP client transport whose every request is an effect `mcp.<server>.<method>`."""

    toolreplay_instrumented = True  # `instrument` refuses to instrument it again

    def __init__(self, original: ClientTransport, server: str) -> None:
        self.original = original
        self.server = server
        self.legacy_only = original.legacy_only

    def __repr__(self) -> str:
        return f"<Instrumented {self.original!r} server={self.server!r}>"

    @contextlib.asynccontextmanager
    async def connect_session(
        self,
        *,
        transport_options: TransportOptions | None = None,
        **session_kwargs: Unpack[SessionKwargs],
    ) -> AsyncGenerator[ClientSession]:
        options = transport_options or TransportOptions()
        connection = InstrumentedTransport(
            None, self.server, live=lambda: self._live_streams(options, dict(session_kwargs))
        )
        async with connection as (read, write):
            if connection.replayed:
                async with options.session_class(read, write, **session_kwargs) as session:
                    yield session
                return
            capturing = _capturing_session(options.session_class, connection)
            async with self.original.connect_session(
                transport_options=dataclasses.replace(options, session_class=capturing),
                **session_kwargs,
            ) as session:
                yield session

    @contextlib.asynccontextmanager
    async def _live_streams(
        self, options: TransportOptions, session_kwargs: dict[str, Any]
    ) -> AsyncGenerator[_Streams]:
        """The original transport's stream pair, for a fork's live requests."""
        caught: list[_Streams] = []
        catching = _catching_session(options.session_class, caught)
        async with self.original.connect_session(
            transport_options=dataclasses.replace(options, session_class=catching),
            **session_kwargs,
        ):
            yield caught[0]

    async def close(self) -> None:
        await self.original.close()

    def get_session_id(self) -> str | None:
        return self.original.get_session_id()


def _capturing_session(
    session_class: type[ClientSession], connection: InstrumentedTransport
) -> type[ClientSession]:
    """`session_class`, built on the instrumented pair in place of the transport's own."""

    class CapturingSession(session_class):
        def __init__(self, read: Any, write: Any, **kwargs: Any) -> None:
            read, write = connection.attach(read, write)
            super().__init__(read, write, **kwargs)

    CapturingSession.__name__ = f"Capturing{session_class.__name__}"
    return CapturingSession


def _catching_session(
    session_class: type[ClientSession], caught: list[_Streams]
) -> type[ClientSession]:
    """`session_class`, noting the transport's pair and idling on a pair of its own.

    The FastMCP transport runs the session it builds; the fork's live requests go
    over the caught pair instead, from the replayed connection.
    """

    class CatchingSession(session_class):
        def __init__(self, read: Any, write: Any, **kwargs: Any) -> None:
            caught.append((read, write))
            # What the session reads never comes; what it writes is dropped with the pair.
            self.toolreplay_idle = anyio.create_memory_object_stream[SessionMessage](0)
            dropped, self.toolreplay_dropped = anyio.create_memory_object_stream[SessionMessage](
                math.inf
            )
            super().__init__(self.toolreplay_idle[1], dropped, **kwargs)

    return CatchingSession
