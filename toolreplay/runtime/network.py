"""The network guard: replay, fork and case verification refuse outbound connections.

A session that blocks the network (`network="block"`, the default of `replay()`,
`fork()` and case verification, RFC 0001 §10) refuses every outbound connection
made while it is open, except those made with an allowance (an instrumented
client's live call, or a live effect's body, in a fork: `allowing_network`) and
those its allow-list names. The check is one process-wide audit hook
(`sys.addaudithook`) on the socket events, installed when the first such session
opens, so it sees raw sockets, every HTTP library, asyncio and other threads
alike. Until then nothing is installed; afterwards, while no such session is open,
the hook returns after one set lookup and one attribute read.

Which sessions a connection answers to: where a session is visible (the
application's own code), that session's setting alone; where none is (a
background thread, such as a trace exporter's), every open session that blocks.
Only internet sockets (AF_INET, AF_INET6) count: a Unix socket is local IPC.
Host name lookups are refused where a blocking session is visible; on a thread
that sees no session they are let through, because asyncio resolves names on
executor threads that do not carry the context (so a lookup there cannot be told
apart from a fork's own live call), and the connection that follows is refused.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import sys
import threading
import warnings
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

from toolreplay.errors import NetworkBlockedError, NetworkBlockedWarning, NetworkOptionError
from toolreplay.runtime.context import running_call_var, session_var

if TYPE_CHECKING:
    from ipaddress import IPv4Address, IPv6Address

__all__ = [
    "AllowedHost",
    "NetworkOption",
    "NetworkPolicy",
    "NetworkRefusal",
    "allowing_network",
    "network_guard",
    "network_policy",
]

NetworkOption = Literal["block", "allow"] | Sequence[str]
"""`network=`: "block", "allow", or the hosts to let through (`["localhost:5432", "db.lan"]`)."""

_allowance: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "toolreplay_network_allowed", default=False
)
_resolving = threading.local()  # set while the guard itself resolves an allowed host name
_CONNECTING = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg"})
_LOOKING_UP = frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr"})
_WATCHED = _CONNECTING | _LOOKING_UP
_HOST_NAME = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?\.?")


@contextlib.contextmanager
def allowing_network() -> Generator[None]:
    """Let this context (and tasks started from it) connect while a session blocks.

    For what a fork sends on purpose: an instrumented client's live call, a live
    effect's body.
    """
    token = _allowance.set(True)
    try:
        yield
    finally:
        _allowance.reset(token)


def _address(text: str) -> IPv4Address | IPv6Address | None:
    """`text` as an IP address (an IPv4-mapped IPv6 address as its IPv4), or None."""
    from ipaddress import IPv6Address, ip_address  # when a session blocks the network

    try:
        address = ip_address(text.partition("%")[0])  # without an IPv6 zone (`%eth0`)
    except ValueError:
        return None
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _port(value: object) -> int | None:
    if type(value) is int:
        return value
    if isinstance(value, str | bytes) and value.isdigit():
        return int(value)
    return None  # none given, or a service name


def _destination(host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return shown if port is None else f"{shown}:{port}"


@dataclass(frozen=True, slots=True)
class AllowedHost:
    """One entry of an allow-list: a host name or IP address, and a port (None: any)."""

    host: str
    port: int | None
    address: IPv4Address | IPv6Address | None

    def __str__(self) -> str:
        return _destination(self.host, self.port)


def _allowed_host(entry: object) -> AllowedHost:
    """Parse `host`, `host:port`, `[IPv6]:port` or a bare IPv6 address."""
    usage = (
        'an allow-list entry is a host name or IP address with an optional port: "db.internal", '
        '"localhost:5432", "10.0.0.7:6379", "[::1]:8080"'
    )
    if type(entry) is not str or not entry.strip():
        raise NetworkOptionError(f"network allow-list entry {entry!r}: {usage}")
    text = entry.strip()
    host, port_text = text, None
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest and not rest.startswith(":"):
            raise NetworkOptionError(f"network allow-list entry {entry!r}: {usage}")
        port_text = rest[1:] if rest else None
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    port: int | None = None
    if port_text is not None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise NetworkOptionError(
                f"network allow-list entry {entry!r}: the port must be a number from 1 to "
                f"65535; {usage}"
            )
        port = int(port_text)
    address = _address(host)
    if address is None and not _HOST_NAME.fullmatch(host):
        raise NetworkOptionError(f"network allow-list entry {entry!r}: {usage}")
    return AllowedHost(host.lower().rstrip(".") if address is None else str(address), port, address)


@dataclass(slots=True, eq=False)
class NetworkPolicy:
    """What a session's `network=` lets through: nothing, everything, or an allow-list."""

    blocks: bool
    allowed: tuple[AllowedHost, ...] = ()
    _resolved: dict[str, frozenset[IPv4Address | IPv6Address]] = field(
        default_factory=dict[str, "frozenset[IPv4Address | IPv6Address]"]
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def describe(self) -> str:
        if not self.blocks:
            return "allow"
        if not self.allowed:
            return "block"
        return "block, except " + ", ".join(str(entry) for entry in self.allowed)

    def permits(self, host: str, port: int | None) -> bool:
        """Whether a connection to (a lookup of) `host` on `port` may go through."""
        if not self.blocks:
            return True
        address = _address(host)
        name = host.lower().rstrip(".")
        for entry in self.allowed:
            if entry.port is not None and port is not None and entry.port != port:
                continue
            if address is None:  # a name: a lookup, or a socket that connects by name
                if entry.address is None and entry.host == name:
                    return True
            elif entry.address == address or address in self._addresses_of(entry):
                return True
        return False

    def _addresses_of(self, entry: AllowedHost) -> frozenset[IPv4Address | IPv6Address]:
        """The addresses an allowed host name resolves to (once per session; none for an
        address entry, which is compared directly)."""
        if entry.address is not None:
            return frozenset()
        with self._lock:
            known = self._resolved.get(entry.host)
        if known is not None:
            return known
        import socket  # as in `_target`

        _resolving.active = True  # the guard's own lookup passes the hook
        try:
            infos = socket.getaddrinfo(entry.host, None, type=socket.SOCK_STREAM)
        except OSError:
            infos = []
        finally:
            _resolving.active = False
        addresses = {_address(str(info[4][0])) for info in infos}
        known = frozenset(address for address in addresses if address is not None)
        with self._lock:
            self._resolved[entry.host] = known
        return known


def network_policy(network: object) -> NetworkPolicy:
    """Check a `network=` setting; `NetworkOptionError` names what does not fit."""
    if network == "block":
        return NetworkPolicy(blocks=True)
    if network == "allow":
        return NetworkPolicy(blocks=False)
    if isinstance(network, str):
        raise NetworkOptionError(
            f'network must be "block", "allow" or a list of hosts to let through, got '
            f"{network!r}; for an allow-list write network=[{network!r}]"
        )
    if not isinstance(network, list | tuple):
        raise NetworkOptionError(
            f'network must be "block", "allow" or a list of hosts to let through, got a '
            f"{type(network).__name__}"
        )
    entries = cast(tuple[object, ...], tuple(network))  # pyright: ignore[reportUnknownArgumentType]
    return NetworkPolicy(blocks=True, allowed=tuple(_allowed_host(entry) for entry in entries))


@dataclass(frozen=True, slots=True)
class NetworkRefusal:
    """One refused connection or lookup, as a blocking session keeps it.

    `kind` is "connect" (a connection, or a datagram sent to an address) or
    "lookup" (a host name lookup); `port` is None for a lookup that named none;
    `effect` is the effect whose body was running where it was made, if any;
    `in_session` is False for a thread that saw no session (a background thread).
    """

    host: str
    port: int | None
    kind: Literal["connect", "lookup"]
    thread: str
    effect: str | None
    in_session: bool

    @property
    def destination(self) -> str:
        """`host:port` (`[::1]:443` for IPv6; the host alone for a lookup without a port)."""
        return _destination(self.host, self.port)


def _refusal_error(refusal: NetworkRefusal) -> NetworkBlockedError:
    if refusal.kind == "lookup":
        what = f"a lookup of the host name {refusal.destination}"
    else:
        what = f"a connection to {refusal.destination}"
    if refusal.in_session:
        source = f"the application's own code in thread {refusal.thread!r}" + (
            f", in the body of {refusal.effect}" if refusal.effect is not None else ""
        )
    else:
        source = (
            f"thread {refusal.thread!r}, which sees no session: a background thread (a "
            "trace or telemetry exporter, a pool's worker) or one started without the "
            "session's context"
        )
    return NetworkBlockedError(
        f"Tool Replay refused {what}, made by {source}: while a replay, fork or case "
        "verification runs, the network is blocked, so that nothing it does reaches a real "
        "service. Only an instrumented client's live call or a live effect in a fork may "
        "connect. If the application needs the answer, make the call an effect "
        "(@toolreplay.effect, or instrument() the OpenAI client that makes it) so that it is "
        'recorded and replayed. To let it through, open the session with network="allow" or '
        f'an allow-list such as network=["{refusal.destination}"] (on the command line '
        f"--network allow or --allow-host {refusal.destination}); promoted cases and the "
        "pytest plugin's replay mode always block it.",
        host=refusal.host,
        port=refusal.port,
        thread=refusal.thread,
        effect=refusal.effect,
    )


def _target(event: str, args: tuple[object, ...]) -> tuple[str, int | None, bool] | None:
    """Where an audited socket event goes: host, port, and whether it is a lookup; None
    for what is not outbound network (a Unix socket, a numeric address to look up)."""
    if event in _CONNECTING:
        import socket  # loaded by the connecting code already; not by `import toolreplay`

        if len(args) < 2 or getattr(args[0], "family", None) not in (
            socket.AF_INET,
            socket.AF_INET6,
        ):
            return None
        address = args[1]
        if not isinstance(address, tuple):
            return None  # sent on a connected socket: its connection was checked
        destination = cast(tuple[object, ...], address)
        if len(destination) < 2:
            return None
        return str(destination[0]), _port(destination[1]), False
    host = args[0] if args else None
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str) or not host:
        return None  # a passive lookup (no host) asks nothing of the network
    if event != "socket.gethostbyaddr" and _address(host) is not None:
        return None  # a numeric address: nothing is looked up
    port = _port(args[1]) if event == "socket.getaddrinfo" and len(args) > 1 else None
    return host, port, True


@dataclass(slots=True, eq=False)
class _Guarded:
    policy: NetworkPolicy
    refusals: list[NetworkRefusal]


class _NetworkGuard:
    """The sessions (and holds) that block the network, and the audit hook that checks."""

    __slots__ = ("_installed", "_lock", "_owners", "blocking")

    def __init__(self) -> None:
        self.blocking = False
        self._owners: dict[object, _Guarded] = {}
        self._lock = threading.Lock()
        self._installed = False

    def enter(self, owner: object, policy: NetworkPolicy) -> list[NetworkRefusal]:
        """Block the network as `policy` says until `leave(owner)`; the list the guard
        appends `owner`'s refusals to (empty, and nothing blocked, when it allows all)."""
        refusals: list[NetworkRefusal] = []
        if not policy.blocks:
            return refusals
        with self._lock:
            if not self._installed:
                sys.addaudithook(_audit)  # once per process: hooks cannot be removed
                self._installed = True
            self._owners[owner] = _Guarded(policy, refusals)
            self.blocking = True
        return refusals

    def leave(self, owner: object) -> None:
        with self._lock:
            self._owners.pop(owner, None)
            self.blocking = bool(self._owners)

    @contextlib.contextmanager
    def holding(self, policy: NetworkPolicy, *, what: str) -> Generator[list[NetworkRefusal]]:
        """Block the network with no session open (while a runner module imports, say);
        on exit, warn about what was refused (`what` names the hold in the warning)."""
        owner = object()
        refusals = self.enter(owner, policy)
        try:
            yield refusals
        finally:
            self.leave(owner)
            warn_refused(refusals, what=what, stacklevel=4)

    def check(self, event: str, args: tuple[object, ...]) -> None:
        """Refuse the socket event if the sessions it answers to block it."""
        if getattr(_resolving, "active", False):
            return
        target = _target(event, args)
        if target is None:
            return
        host, port, lookup = target
        session = session_var.get()
        with self._lock:
            if session is not None:
                own = self._owners.get(session)
                answers_to = [] if own is None else [own]
            elif lookup:
                return  # not attributable (see the module's docstring)
            else:
                answers_to = list(self._owners.values())
        refusing = [guarded for guarded in answers_to if not guarded.policy.permits(host, port)]
        if not refusing:
            return
        running = running_call_var.get()
        refusal = NetworkRefusal(
            host=host,
            port=port,
            kind="lookup" if lookup else "connect",
            thread=threading.current_thread().name,
            effect=None if running is None else running.identity.effect,
            in_session=session is not None,
        )
        with self._lock:
            for guarded in refusing:
                guarded.refusals.append(refusal)
        raise _refusal_error(refusal)


network_guard = _NetworkGuard()


def _audit(
    event: str,
    args: tuple[object, ...],
    _watched: frozenset[str] = _WATCHED,
    _guard: _NetworkGuard = network_guard,
    _allowed: contextvars.ContextVar[bool] = _allowance,
) -> None:
    # Every audit event of the process comes here (`id()` raises one, so `copy.deepcopy`
    # raises one per object): the common case returns after one set lookup, with the
    # names bound as defaults rather than looked up as globals (which also keeps them
    # while the interpreter shuts down and clears module globals).
    if event in _watched and _guard.blocking and not _allowed.get():
        _guard.check(event, args)


def warn_refused(refusals: Sequence[NetworkRefusal], *, what: str, stacklevel: int) -> None:
    """One `NetworkBlockedWarning` naming each refused destination once (nothing if none)."""
    if not refusals:
        return
    seen: dict[str, tuple[int, NetworkRefusal]] = {}
    for refusal in refusals:
        count, first = seen.get(refusal.destination, (0, refusal))
        seen[refusal.destination] = (count + 1, first)
    shown = "; ".join(
        f"{destination} ({'lookup' if first.kind == 'lookup' else 'connection'}, {count}x, "
        f"thread {first.thread!r})"
        for destination, (count, first) in seen.items()
    )
    warnings.warn(
        NetworkBlockedWarning(
            f"the {what} blocked the network and refused {len(refusals)} outbound "
            f"connection(s) or lookup(s): {shown}. Nothing reached those hosts. If the "
            "application needs them, make those calls effects; to let them through, use "
            'network="allow" or an allow-list (network=["host:port"]).'
        ),
        stacklevel=stacklevel,
    )
