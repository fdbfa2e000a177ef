"""`instrument(...)`: an MCP transport, server or toolset whose every request is an effect.

One function for every place users hold an MCP client: the `mcp` SDK's own
transports (`stdio_client(...)`, `streamable_http_client(...)`, `sse_client(...)`),
the Agents SDK's MCP server classes, pydantic-ai's `MCPToolset`, and a FastMCP
`Client` or client transport. Each returns something new built from what it is
given, which stays unchanged and usable on its own; what differs is only that
the stream pair the client session speaks through is an `InstrumentedTransport`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import functools
from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from typing import Any, TypeVar, cast

import anyio

from toolreplay.adapters.mcp.connection import InstrumentedTransport
from toolreplay.adapters.mcp.messages import server_name_problem

__all__ = ["instrument"]

_T = TypeVar("_T")

# The names the Agents SDK makes up for a server not given one: they hold the command
# or the URL (an ephemeral port, a path that differs between machines).
_AGENTS_DEFAULT_NAMES = ("stdio: ", "sse: ", "streamable_http: ")


def _check_server(server: object, what: str) -> str:
    if server is None:
        raise TypeError(
            f"instrument({what}) needs the server's name, which names its effects "
            "(server='weather' gives mcp.weather.tools.call). It is part of every call's "
            "identity, so it must be the same when the trace is replayed: a name made from the "
            "command or the URL would change with the machine or the port"
        )
    problem = server_name_problem(server)
    if problem is not None:
        raise ValueError(problem)
    return cast(str, server)


def _module_of(value: object) -> str:
    return type(value).__module__.split(".", 1)[0]


def instrument(target: _T, *, server: str | None = None) -> _T:
    """A copy of `target` whose every MCP request is an effect `mcp.<server>.<method>`.

    `target` is one of:

    - an MCP transport of the `mcp` SDK, not yet entered: `stdio_client(params)`,
      `streamable_http_client(url)`, `sse_client(url)`, or any async context manager
      yielding a read and a write stream. `server=` is required;
    - an Agents SDK `MCPServerStdio`, `MCPServerStreamableHttp` or `MCPServerSse`,
      not connected. `server=` defaults to the `name=` it was given;
    - a pydantic-ai `MCPToolset`, not entered. `server=` defaults to its `id=`;
    - a FastMCP `Client` (not connected) or client transport. `server=` is required.

    Inside `record()` each request is recorded; inside `replay()`, `fork()` and case
    verification it is answered from the trace and the server is neither started
    nor reached; outside every session the copy behaves as `target` does. `target`
    itself is not changed.
    """
    module = _module_of(target)
    if module == "agents":
        return cast(_T, _instrument_agents_server(target, server))
    if module == "pydantic_ai":
        return cast(_T, _instrument_toolset(target, server))
    if module == "fastmcp":
        return cast(_T, _instrument_fastmcp(target, server))
    if isinstance(target, InstrumentedTransport):
        raise TypeError("this MCP transport is already instrumented; instrument the original once")
    if not (hasattr(target, "__aenter__") and hasattr(target, "__aexit__")):
        raise TypeError(
            "instrument() takes an MCP transport (stdio_client(...), streamable_http_client(...), "
            "sse_client(...)), an Agents SDK MCP server, a pydantic-ai MCPToolset or a FastMCP "
            f"Client, not {type(target).__qualname__}"
        )
    name = _check_server(server, "a transport")
    return cast(_T, InstrumentedTransport(target, name, extra=_extra_items(target)))


def _extra_items(transport: object) -> int:
    """How many items past the stream pair the transport yields (mcp 1.x's HTTP one: 1)."""
    function = getattr(transport, "func", None)
    return 1 if getattr(function, "__name__", "") == "streamablehttp_client" else 0


# --- the Agents SDK ---------------------------------------------------------------------


@functools.cache
def _instrumented_agents_class(base: type[Any]) -> type[Any]:
    def create_streams(self: Any) -> Any:
        streams = base.create_streams(self)
        return InstrumentedTransport(streams, self.toolreplay_server, extra=_extra_items(streams))

    return type(
        f"Instrumented{base.__name__}",
        (base,),
        {"create_streams": create_streams, "__module__": __name__, "__doc__": base.__doc__},
    )


def _instrument_agents_server(server_object: Any, server: str | None) -> Any:
    from agents.mcp.server import MCPServerSse, MCPServerStdio, MCPServerStreamableHttp

    kinds = (MCPServerStdio, MCPServerStreamableHttp, MCPServerSse)
    base = type(server_object)
    if base not in kinds:
        already = getattr(server_object, "toolreplay_server", None) is not None
        raise TypeError(
            "this Agents SDK MCP server is already instrumented; instrument the original once"
            if already
            else "instrument() takes the Agents SDK's MCPServerStdio, MCPServerStreamableHttp or "
            f"MCPServerSse, not {base.__qualname__} (a subclass: instrument a plain one)"
        )
    if server_object.session is not None:
        raise TypeError(
            f"the MCP server {server_object.name!r} is connected already; instrument it before "
            "connecting (before `async with server:` or `await server.connect()`)"
        )
    if server is None:
        given = str(server_object.name)
        if not given.startswith(_AGENTS_DEFAULT_NAMES):
            server = given
    name = _check_server(server, f"{base.__name__}(...) without name=")
    twin = copy.copy(server_object)
    twin.__class__ = _instrumented_agents_class(base)
    # What a connection keeps is its own; everything else (params, timeouts, filters,
    # handlers) is shared with the original, as the SDK would configure it.
    twin.session = None
    twin.exit_stack = AsyncExitStack()
    twin._cleanup_lock = asyncio.Lock()
    twin._request_lock = asyncio.Lock()
    twin.server_initialize_result = None
    twin._cache_dirty = True
    twin._tools_list = None
    twin._get_session_id = None
    if hasattr(twin, "_v2_session_id"):
        twin._v2_session_id = None
    twin.toolreplay_server = name
    twin.original_server = server_object
    return twin


# --- pydantic-ai and FastMCP ------------------------------------------------------------


def _instrument_toolset(toolset: Any, server: str | None) -> Any:
    from pydantic_ai.mcp import MCPToolset

    if not isinstance(toolset, MCPToolset):
        raise TypeError(
            f"instrument() takes pydantic-ai's MCPToolset, not {type(toolset).__qualname__}"
        )
    toolset = cast(Any, toolset)  # its connection state is private: reset on the copy below
    if toolset.is_running:
        raise TypeError("the MCPToolset is entered already; instrument it before entering it")
    if toolset._resolves_per_run:  # pyright: ignore[reportPrivateUsage]
        raise TypeError(
            "this MCPToolset resolves auth or headers per run, building a new client each run; "
            "instrument a toolset with fixed auth and headers"
        )
    if server is None:
        server = toolset._explicit_id  # pyright: ignore[reportPrivateUsage]
    name = _check_server(server, "MCPToolset(...) without id=")
    twin = copy.copy(toolset)
    vars(twin).pop("_enter_lock", None)
    twin._running_count = 0
    twin._exit_stack = None
    twin._server_info = None
    twin._server_capabilities = None
    twin._instructions = None
    twin._invalidate_tools_cache()
    twin._invalidate_resources_cache()
    twin._invalidate_prompts_cache()
    if twin._client_source is not None:  # built from a URL or script: a client of the twin's own
        twin.client = twin._build_client(auth=twin._static_auth, headers=twin._static_headers)
    else:
        twin.client = toolset.client.new()
    twin.client.transport = _InstrumentedClientTransport(twin.client.transport, name)
    return twin


def _instrument_fastmcp(target: Any, server: str | None) -> Any:
    from fastmcp.client import Client
    from fastmcp.client.transports import ClientTransport

    name = _check_server(server, "a FastMCP client")
    if isinstance(target, Client):
        if target.is_connected():
            raise TypeError("the FastMCP client is connected already; instrument it before")
        twin = cast(Any, target).new()
        twin.transport = _InstrumentedClientTransport(twin.transport, name)
        return twin
    if isinstance(target, ClientTransport):
        return _InstrumentedClientTransport(target, name)
    raise TypeError(
        f"instrument() takes a FastMCP Client or client transport, not {type(target).__qualname__}"
    )


def _client_transport_class() -> type[Any]:
    from fastmcp.client.transports.base import ClientTransport, TransportOptions

    class InstrumentedClientTransport(ClientTransport):
        """A FastMCP client transport whose every request is an effect."""

        def __init__(self, original: Any, server: str) -> None:
            self.original = original
            self.server = server
            self.legacy_only = getattr(original, "legacy_only", False)

        def __repr__(self) -> str:
            return f"<Instrumented {self.original!r} server={self.server!r}>"

        @contextlib.asynccontextmanager
        async def connect_session(
            self, *, transport_options: Any = None, **session_kwargs: Any
        ) -> AsyncGenerator[Any]:
            options = transport_options or TransportOptions()
            connection = InstrumentedTransport(
                None, self.server, live=lambda: self._live_streams(options, session_kwargs)
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
            self, options: Any, session_kwargs: dict[str, Any]
        ) -> AsyncGenerator[tuple[Any, Any]]:
            """The original transport's stream pair, for a fork's live requests."""
            caught: list[tuple[Any, Any]] = []

            class Catching(options.session_class):  # type: ignore[misc, name-defined]
                def __init__(self, read: Any, write: Any, **kwargs: Any) -> None:
                    caught.append((read, write))
                    # The FastMCP transport runs this session; it idles on a pair of its own.
                    idle_write, idle_read = anyio.create_memory_object_stream[Any](0)
                    self._toolreplay_idle = idle_write
                    super().__init__(idle_read, _Sink(), **kwargs)

            async with self.original.connect_session(
                transport_options=dataclasses.replace(options, session_class=Catching),
                **session_kwargs,
            ):
                yield caught[0]

        async def close(self) -> None:
            await self.original.close()

        def get_session_id(self) -> str | None:
            return cast(Any, self.original).get_session_id()

    return InstrumentedClientTransport


class _Sink:
    """A write stream that drops what it is given (the idle side of a caught connection)."""

    async def send(self, item: object) -> None:
        del item

    async def aclose(self) -> None:
        pass

    async def __aenter__(self) -> _Sink:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        pass


def _capturing_session(session_class: type[Any], connection: InstrumentedTransport) -> type[Any]:
    class CapturingSession(session_class):  # type: ignore[misc, valid-type]
        def __init__(self, read: Any, write: Any, **kwargs: Any) -> None:
            read, write = connection.attach(read, write)
            super().__init__(read, write, **kwargs)

    CapturingSession.__name__ = f"Capturing{session_class.__name__}"
    return CapturingSession


def _InstrumentedClientTransport(original: Any, server: str) -> Any:  # a class, built on first use
    return _client_transport_class_cached()(original, server)


@functools.cache
def _client_transport_class_cached() -> type[Any]:
    return _client_transport_class()
