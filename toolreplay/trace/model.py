"""The operation model: what one effect call was, and what a trace file holds.

These are plain frozen values. Reading and writing them is the codec's job
(`toolreplay.trace.codec`); matching them is the runtime's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, cast

from toolreplay.bulk import Thawed
from toolreplay.portable import JsonValue

__all__ = [
    "READABLE_FORMAT_VERSIONS",
    "TRACE_FORMAT",
    "TRACE_FORMAT_VERSION",
    "AttemptedCall",
    "Operation",
    "OperationIdentity",
    "Origin",
    "Outcome",
    "Raised",
    "Returned",
    "SessionEnding",
    "TraceFooter",
    "TraceHeader",
    "TraceMode",
    "UnobservedOperation",
    "new_identity",
    "new_operation",
    "new_returned",
    "operation_location",
]

TRACE_FORMAT = "toolreplay.trace"
TRACE_FORMAT_VERSION = 5
READABLE_FORMAT_VERSIONS = (3, 4, 5)
"""Versions the reader accepts: 3 (before lanes and timing), 4 (lanes and timing; no
supplied or live origins, no unobserved or attempted footer fields) and 5 (the one
written)."""

TraceMode = Literal["record", "fork"]

Origin = Literal["recorded", "patched", "supplied", "live"]


class OperationIdentity(NamedTuple):
    """What makes one effect call the same call in another run.

    `occurrence` counts earlier calls of the same effect with the same
    fingerprint in the same session, from 0.
    """

    namespace: str
    name: str
    fingerprint: str
    occurrence: int

    @property
    def effect(self) -> str:
        """The effect's dotted name, `namespace.name`."""
        return f"{self.namespace}.{self.name}"

    def describe(self) -> str:
        return f"{self.effect} occurrence {self.occurrence} (fingerprint {self.fingerprint[:12]})"


new_identity = cast(
    "Callable[[type[OperationIdentity], tuple[str, str, str, int]], OperationIdentity]",
    tuple.__new__,  # pyright: ignore[reportUnknownMemberType]
)
"""`new_identity(OperationIdentity, (namespace, name, fingerprint, occurrence))`: the named
tuple built without the Python frame of its `__new__`, for the paths that make one per
call or per line."""


@dataclass(frozen=True, slots=True)
class Returned:
    """The effect returned `value`."""

    value: JsonValue
    status: Literal["ok"] = field(default="ok", init=False)


class _NewReturned(Thawed, Returned):
    __slots__ = ()

    def __init__(self, value: JsonValue) -> None:
        this: Any = self  # pyright knows the fields as frozen: `Thawed` makes them settable
        this.value = value
        this.status = "ok"
        this.__class__ = Returned


new_returned: type[Returned] = _NewReturned
"""`new_returned(value)`: `Returned(value)` at a third of the cost, for the paths that make
one per line (see `toolreplay.bulk.Thawed`)."""


@dataclass(frozen=True, slots=True)
class Raised:
    """The effect raised an exception.

    `error_type` is the exception's qualified name (`builtins.TimeoutError`,
    `myapp.errors.CrmUnavailable`); `args` are its arguments when they are
    portable JSON, else None. Tracebacks are never stored.
    """

    error_type: str
    message: str
    args: list[JsonValue] | None
    status: Literal["error"] = field(default="error", init=False)

    def to_dict(self) -> dict[str, JsonValue]:
        """`{"type", "message", "args"}`: the `error` object of a trace line and a diff."""
        return {"type": self.error_type, "message": self.message, "args": self.args}


Outcome = Returned | Raised


@dataclass(frozen=True, slots=True)
class Operation:
    """One completed effect call as a trace stores it.

    `logical_id` is the call's position in its session, from 0. The lineage
    fields say where a forked operation came from: `origin` is `recorded` for a
    call served (or run) as recorded, `patched` for one whose outcome a patch
    replaced, `supplied` for a call the source never saw whose outcome a supply
    patch gave, and `live` for such a call whose real body ran (`fork(live=...)`);
    `patch_id` and `source_logical_operation_id` point back at the patch and at
    the source trace's operation (None for supplied and live calls). `line` is
    where the operation was read from (1-based), for error messages; it is not
    part of its value.

    How the call ran, also not part of its value (another run schedules it
    differently): `lane` names the task or thread that made the call (`main`,
    `task-1`, `thread-1`, ...), `start_ns` and `end_ns` are when it started and
    completed, in monotonic nanoseconds since the session opened. All three are
    None for an operation read from a format 3 trace (or written by a tool that
    did not observe the call).
    """

    logical_id: int
    identity: OperationIdentity
    inputs: dict[str, JsonValue]
    outcome: Outcome
    origin: Origin = "recorded"
    patch_id: str | None = None
    source_logical_operation_id: int | None = None
    line: int | None = field(default=None, compare=False)
    lane: str | None = field(default=None, compare=False)
    start_ns: int | None = field(default=None, compare=False)
    end_ns: int | None = field(default=None, compare=False)

    @property
    def effect(self) -> str:
        return self.identity.effect

    def precedes(self, other: Operation) -> bool | None:
        """Whether this call completed before `other` started; None without timing.

        Two operations of one session of which neither precedes the other were
        in flight at the same time: their order is the scheduler's choice.
        """
        end, start = self.end_ns, other.start_ns
        if end is None or start is None or self.start_ns is None or other.end_ns is None:
            return None
        return end < start


class _NewOperation(Thawed, Operation):
    __slots__ = ()

    def __init__(
        self,
        logical_id: int,
        identity: OperationIdentity,
        inputs: dict[str, JsonValue],
        outcome: Outcome,
        origin: Origin = "recorded",
        patch_id: str | None = None,
        source_logical_operation_id: int | None = None,
        line: int | None = None,
        lane: str | None = None,
        start_ns: int | None = None,
        end_ns: int | None = None,
    ) -> None:
        this: Any = self  # pyright knows the fields as frozen: `Thawed` makes them settable
        this.logical_id = logical_id
        this.identity = identity
        this.inputs = inputs
        this.outcome = outcome
        this.origin = origin
        this.patch_id = patch_id
        this.source_logical_operation_id = source_logical_operation_id
        this.line = line
        this.lane = lane
        this.start_ns = start_ns
        this.end_ns = end_ns
        this.__class__ = Operation


new_operation: type[Operation] = _NewOperation
"""`new_operation(...)`, with `Operation`'s arguments: an `Operation` at a third of the
cost, for the paths that make one per line (see `toolreplay.bulk.Thawed`)."""


def operation_location(operation: Operation) -> str:
    """Where `operation` is, for a message: its number, and the line it was read from."""
    line = f", line {operation.line}" if operation.line is not None else ""
    return f"operation {operation.logical_id}{line}"


@dataclass(frozen=True, slots=True)
class TraceHeader:
    """The first line of a trace: what wrote it and how to read the rest.

    `metadata` is free-form portable JSON; `metadata["runner"]` (a
    `module:callable` string) names the application entry point that produced
    the trace, so later commands can default to it. `source_trace_id` is the
    trace a fork was made from (None for a recording).
    """

    trace_id: str
    mode: TraceMode
    library_version: str
    metadata: dict[str, JsonValue] = field(default_factory=dict[str, JsonValue])
    source_trace_id: str | None = None
    format_version: int = TRACE_FORMAT_VERSION

    @property
    def runner(self) -> str | None:
        runner = self.metadata.get("runner")
        return runner if isinstance(runner, str) else None


@dataclass(frozen=True, slots=True)
class SessionEnding:
    """How the session that wrote a trace ended.

    `completed`: the block exited normally. `raised`: the application (or the
    replay contract) raised `error_type` with `message`.
    """

    status: Literal["completed", "raised"]
    error_type: str | None = None
    message: str | None = None


@dataclass(frozen=True, slots=True)
class AttemptedCall:
    """A call a fork's application made that neither the source nor a patch could answer.

    The fork stopped there (`ReplayMiss`); the branch footer keeps the call so a
    diff can show it as an added row, attempted but not recorded.
    """

    identity: OperationIdentity
    inputs: dict[str, JsonValue]

    @property
    def effect(self) -> str:
        return self.identity.effect


@dataclass(frozen=True, slots=True)
class UnobservedOperation:
    """A source operation a fork's application never called (by its source `logical_id`)."""

    source_logical_operation_id: int
    identity: OperationIdentity

    @property
    def effect(self) -> str:
        return self.identity.effect


@dataclass(frozen=True, slots=True)
class TraceFooter:
    """The last line of a cleanly closed trace.

    `digest` is the SHA-256 of every byte before the footer line, so a complete
    trace that was changed afterwards is detected rather than trusted. A
    branch's footer also lists the source operations its run never called
    (`unobserved`) and the unrecorded call it stopped at (`attempted`); a
    recording's has none.
    """

    operation_count: int
    digest: str
    ending: SessionEnding
    unobserved: tuple[UnobservedOperation, ...] = ()
    attempted: AttemptedCall | None = None
