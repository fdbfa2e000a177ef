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
import copy
import functools
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Protocol, TypeVar, cast

from toolreplay.adapters.mcp.connection import InstrumentedTransport
from toolreplay.adapters.mcp.messages import server_name_problem
from toolreplay.errors import MCPAdapterDependencyError

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


_INSTRUMENTED = "toolreplay_instrumented"
"""Set on the classes `instrument` makes, whose instances it refuses to instrument again."""


def _what(target: object) -> str:
    return "MCP transport" if isinstance(target, InstrumentedTransport) else type(target).__name__


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
    if isinstance(target, InstrumentedTransport) or _INSTRUMENTED in vars(type(target)):
        raise TypeError(
            f"this {_what(target)} is already instrumented; instrument the original once"
        )
    module = _module_of(target)
    if module == "agents":
        return cast(_T, _instrument_agents_server(cast(_AgentsServer, target), server))
    if module == "pydantic_ai":
        return cast(_T, _instrument_toolset(target, server))
    if module == "fastmcp":
        return cast(_T, _instrument_fastmcp(target, server))
    if not (hasattr(target, "__aenter__") and hasattr(target, "__aexit__")):
        raise TypeError(
            "instrument() takes an MCP transport (stdio_client(...), streamable_http_client(...), "
            "sse_client(...)), an Agents SDK MCP server, a pydantic-ai MCPToolset or a FastMCP "
            f"Client, not {type(target).__qualname__}"
        )
    name = _check_server(server, "a transport")
    return cast(_T, InstrumentedTransport(target, name))


# --- the frameworks' private parts ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Framework:
    """An agent framework whose MCP objects `instrument` copies, and the version tested.

    A copy must not share what the framework keeps per connection, and some of that
    has no public way to be given afresh. Each such private attribute is read or
    replaced through `private`/`replace`, which check that it is there: a release
    of the framework without it is a precise error naming the version, never a
    copy that silently shares a connection with the original.
    """

    distribution: str
    tested: str

    def installed(self) -> str:
        try:
            return version(self.distribution)
        except PackageNotFoundError:
            return "(not installed as a distribution)"

    def private(self, target: object, name: str) -> Any:
        """`target.<name>`, a private attribute `instrument` cannot do without."""
        try:
            return getattr(target, name)
        except AttributeError:
            raise MCPAdapterDependencyError(
                f"instrument() copies a {type(target).__qualname__} using its attribute {name!r}, "
                f"which {self.distribution} {self.installed()} does not have (the MCP adapter is "
                f"tested with {self.distribution} {self.tested}). Install a tested version: "
                f'pip install "{self.distribution}=={self.tested}"'
            ) from None

    def replace(self, target: object, name: str, value: object) -> None:
        """Give `target` its own `<name>`, which must exist (a new name would do nothing)."""
        self.private(target, name)
        setattr(target, name, value)


_AGENTS = _Framework("openai-agents", "0.24.0")
_PYDANTIC_AI = _Framework("pydantic-ai-slim", "2.68.0")


# --- the Agents SDK ---------------------------------------------------------------------


class _AgentsServer(Protocol):
    """What `instrument` uses of an Agents SDK MCP server (all public)."""

    session: Any  # the SDK's ClientSession, or None: not connected
    exit_stack: AsyncExitStack
    server_initialize_result: Any  # the SDK's InitializeResult, or None

    @property
    def name(self) -> str: ...

    def invalidate_tools_cache(self) -> None: ...

    def create_streams(self) -> AbstractAsyncContextManager[Any]: ...


@functools.cache
def _instrumented_agents_class(base: type[_AgentsServer]) -> type[_AgentsServer]:
    def create_streams(self: _AgentsServer) -> InstrumentedTransport:
        return InstrumentedTransport(base.create_streams(self), _agents_server_name(self))

    return type(
        f"Instrumented{base.__name__}",
        (base,),
        {
            "create_streams": create_streams,
            "__module__": __name__,
            "__doc__": base.__doc__,
            _INSTRUMENTED: True,
        },
    )


def _agents_server_name(server: object) -> str:
    return cast(str, vars(server)["toolreplay_server"])


def _instrument_agents_server(server_object: _AgentsServer, server: str | None) -> _AgentsServer:
    # Each framework's modules only when its object is instrumented: none is required.
    from agents.mcp.server import MCPServerSse, MCPServerStdio, MCPServerStreamableHttp

    kinds: tuple[type[_AgentsServer], ...] = (
        MCPServerStdio,
        MCPServerStreamableHttp,
        MCPServerSse,
    )
    base = type(server_object)
    if base not in kinds:
        raise TypeError(
            "instrument() takes the Agents SDK's MCPServerStdio, MCPServerStreamableHttp or "
            f"MCPServerSse, not {base.__qualname__} (a subclass: instrument a plain one)"
        )
    if server_object.session is not None:
        raise TypeError(
            f"the MCP server {server_object.name!r} is connected already; instrument it before "
            "connecting (before `async with server:` or `await server.connect()`)"
        )
    if server is None:
        given = server_object.name
        if not given.startswith(_AGENTS_DEFAULT_NAMES):
            server = given
    name = _check_server(server, f"{base.__name__}(...) without name=")
    for private in _AGENTS_CONNECTION_LOCKS:
        _AGENTS.private(server_object, private)  # all there, before anything is copied
    twin = copy.copy(server_object)
    twin.__class__ = _instrumented_agents_class(base)
    # What a connection keeps is the twin's own; everything else (params, timeouts,
    # filters, handlers) is shared with the original, as the SDK would configure it.
    twin.session = None
    twin.exit_stack = AsyncExitStack()
    twin.server_initialize_result = None
    twin.invalidate_tools_cache()
    for private in _AGENTS_CONNECTION_LOCKS:  # no public way to give a copy its own
        _AGENTS.replace(twin, private, asyncio.Lock())
    vars(twin)["toolreplay_server"] = name
    vars(twin)["original_server"] = server_object
    return twin


_AGENTS_CONNECTION_LOCKS = ("_cleanup_lock", "_request_lock")
"""The locks an Agents SDK server takes around its connection (bound to an event loop once
used, so a copy sharing them could not run in another loop)."""


# --- pydantic-ai ------------------------------------------------------------------------


def _instrument_toolset(toolset: object, server: str | None) -> object:
    from fastmcp.client import Client
    from pydantic_ai.mcp import MCPToolset

    from toolreplay.adapters.mcp.fastmcp_transport import InstrumentedClientTransport

    if not isinstance(toolset, MCPToolset):
        raise TypeError(
            f"instrument() takes pydantic-ai's MCPToolset, not {type(toolset).__qualname__}"
        )
    original = cast(MCPToolset[Any], toolset)
    if original.is_running:
        raise TypeError("the MCPToolset is entered already; instrument it before entering it")
    if _PYDANTIC_AI.private(original, "_resolves_per_run"):
        raise TypeError(
            "this MCPToolset resolves auth or headers per run, building a new client each run; "
            "instrument a toolset with fixed auth and headers"
        )
    if server is None:
        server = _PYDANTIC_AI.private(original, "_explicit_id")
    name = _check_server(server, "MCPToolset(...) without id=")
    source = _PYDANTIC_AI.private(original, "_client_source")
    _PYDANTIC_AI.private(type(original), "_enter_lock")
    # Copied as pydantic-ai copies a toolset for a run (`for_run`): a toolset that is not
    # entered holds no connection state, the entry lock is bound on first use (so the
    # copy's is its own), and the client is the copy's own.
    twin = copy.copy(original)
    vars(twin).pop("_enter_lock", None)
    client: Client[Any]
    if source is None:  # a FastMCP Client given by the user: a fresh one, configured alike
        client = original.client.new()
    else:  # built from a URL, a script or a transport: built again, with its handlers bound
        # to the copy (they drop its caches when the server's lists change)
        build = _PYDANTIC_AI.private(twin, "_build_client")
        client = build(
            auth=_PYDANTIC_AI.private(original, "_static_auth"),
            headers=_PYDANTIC_AI.private(original, "_static_headers"),
        )
    client.transport = InstrumentedClientTransport(client.transport, name)
    twin.client = client
    return twin


# --- FastMCP ----------------------------------------------------------------------------


def _instrument_fastmcp(target: object, server: str | None) -> object:
    from fastmcp.client import Client
    from fastmcp.client.transports import ClientTransport

    from toolreplay.adapters.mcp.fastmcp_transport import InstrumentedClientTransport

    name = _check_server(server, "a FastMCP client")
    if isinstance(target, Client) and isinstance(
        cast(Client[Any], target).transport, InstrumentedClientTransport
    ):
        raise TypeError("this FastMCP client is already instrumented; instrument the original once")
    if isinstance(target, Client):
        client = cast(Client[Any], target)
        if client.is_connected():
            raise TypeError("the FastMCP client is connected already; instrument it before")
        twin = client.new()
        twin.transport = InstrumentedClientTransport(twin.transport, name)
        return twin
    if isinstance(target, ClientTransport):
        return InstrumentedClientTransport(target, name)
    raise TypeError(
        f"instrument() takes a FastMCP Client or client transport, not {type(target).__qualname__}"
    )
