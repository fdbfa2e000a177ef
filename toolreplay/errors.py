"""The one exception hierarchy of Tool Replay.

Every error the library raises on purpose derives from `ToolReplayError`, and
every message says what happened and what to do about it. Errors that describe
bad data name the culprit: the file and line of a trace, the JSON path of a
value, the effect and occurrence of a call.

The module imports nothing of `toolreplay`, not even for types, so that every
module can raise its errors without depending on the others. An error that
names recorded things (a call's identity, operations, secret findings, value
differences) types them by the `*Like` protocols below: the attributes hold the
trace model's and the scanner's own objects, and a protocol says what any of
them offers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

__all__ = [
    "AdapterError",
    "AdapterOptionError",
    "AmbiguousReplayMatch",
    "AnthropicAdapterDependencyError",
    "ApplicationExecutionError",
    "BehavioralRegressionError",
    "CaptureConfigError",
    "CaseError",
    "CaseIntegrityError",
    "CaseSearchError",
    "DiffError",
    "EffectDefinitionError",
    "ForkOptionError",
    "GoogleGenAIAdapterDependencyError",
    "JsonTextError",
    "LegacyOpenAITraceError",
    "LiveCallLimitError",
    "MCPAdapterDependencyError",
    "NestedEffectError",
    "NetworkBlockedError",
    "NetworkBlockedWarning",
    "NetworkOptionError",
    "NonPortableValueError",
    "ObjectStoreDependencyError",
    "ObjectStoreError",
    "OpenAIAdapterDependencyError",
    "OperationIdentityLike",
    "OperationLike",
    "OverlappingEffectsError",
    "PatchApplicationError",
    "PatchError",
    "PatchFileError",
    "PatchTargetError",
    "PromotionError",
    "ProtocolError",
    "ProtocolVersionError",
    "RedactedValueEditError",
    "RedactionError",
    "RedactionKeyError",
    "RedactionRuleError",
    "ReplayContractError",
    "ReplayMiss",
    "ReplayedEffectError",
    "RunnerError",
    "RunnerImportError",
    "SecretFindingLike",
    "SecretInTraceError",
    "SecretInTraceWarning",
    "SecretScanError",
    "SessionContextError",
    "SessionError",
    "SessionNestingError",
    "StreamReplayError",
    "ToolReplayError",
    "TraceError",
    "TraceExistsError",
    "TraceFormatError",
    "TraceNotFoundError",
    "TraceSearchError",
    "TraceWriteError",
    "UnappliedPatchError",
    "UnconsumedOperationsError",
    "UnsupportedRequestError",
    "UnsupportedResponseError",
    "ValueDifferenceLike",
]


# --- what errors name ----------------------------------------------------------------


class OperationIdentityLike(Protocol):
    """A call's identity as an error names it: a `toolreplay.OperationIdentity`."""

    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def occurrence(self) -> int: ...
    @property
    def effect(self) -> str:
        """`namespace.name`."""
        ...


class OperationLike(Protocol):
    """A recorded operation as an error names it: a `toolreplay.Operation`."""

    @property
    def logical_id(self) -> int: ...
    @property
    def line(self) -> int | None:
        """Its line in the trace file, when it was read from one."""
        ...

    @property
    def identity(self) -> OperationIdentityLike: ...
    @property
    def effect(self) -> str: ...
    @property
    def inputs(self) -> Mapping[str, object]: ...
    @property
    def outcome(self) -> object:
        """A `toolreplay.Returned` or `toolreplay.Raised`."""
        ...


class ValueDifferenceLike(Protocol):
    """Where two portable values differ: a `toolreplay.portable.ValueDifference`."""

    @property
    def path(self) -> str: ...
    @property
    def left(self) -> object: ...
    @property
    def right(self) -> object: ...
    @property
    def left_present(self) -> bool: ...
    @property
    def right_present(self) -> bool: ...
    def describe(self, left_name: str = "left", right_name: str = "right") -> str:
        """`$.path: left 1, right 2`, with the names given."""
        ...


class SecretFindingLike(Protocol):
    """Where a secret rule matched, never what: a `toolreplay.redaction.SecretFinding`."""

    @property
    def rule(self) -> str: ...
    @property
    def part(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def effect(self) -> str | None: ...
    @property
    def file(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...
    def describe(self) -> str:
        """`crm.customer.get output at $.card.number: card-number`."""
        ...


def _restore_error(
    kind: type[ToolReplayError], args: tuple[object, ...], state: dict[str, object]
) -> ToolReplayError:
    error = kind.__new__(kind)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class ToolReplayError(Exception):
    """Root of every error Tool Replay raises on purpose."""

    def __reduce__(self) -> tuple[object, ...]:
        # Subclasses take keyword-only details; pickle (process pools, xdist) must not
        # call their constructors with the message alone.
        return (_restore_error, (type(self), self.args, dict(self.__dict__)))


class NonPortableValueError(ToolReplayError, ValueError):
    """A value is outside the portable JSON domain.

    `path` is the JSON path of the first offending value (`$.items[3].price`).
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class JsonTextError(ToolReplayError, ValueError):
    """A text is not one portable JSON value (`toolreplay.parse_json_text`).

    `reason` says why, without the location; `line` and `column` (1-based) say
    where, when the problem is at one place of the text, else they are None.
    """

    def __init__(self, reason: str, *, line: int | None = None, column: int | None = None) -> None:
        location = "" if line is None else f" (line {line}, column {column})"
        super().__init__(reason + location)
        self.reason = reason
        self.line = line
        self.column = column


class EffectDefinitionError(ToolReplayError, TypeError):
    """`@effect` was applied to something it cannot instrument, or with a bad name."""


# --- traces ---------------------------------------------------------------------------


class TraceError(ToolReplayError):
    """A trace file cannot be read or written as asked."""

    def __init__(self, message: str, *, path: Path) -> None:
        super().__init__(message)
        self.path = path


class TraceNotFoundError(TraceError, FileNotFoundError):
    """The trace path does not exist, or is not a regular file."""


class TraceExistsError(TraceError, FileExistsError):
    """Recording would overwrite an existing trace and the caller did not ask for that."""


class TraceWriteError(TraceError):
    """The operating system refused to write a trace (a full disk, a file size limit).

    `reason` is its explanation (`No space left on device`). The line being
    written was taken back out of the file, so the trace still reads, holding
    every operation written before; the original `OSError` is `__cause__`.
    """

    def __init__(self, message: str, *, path: Path, reason: str) -> None:
        super().__init__(message, path=path)
        self.reason = reason


class TraceFormatError(TraceError):
    """A trace file is malformed, of an unknown version, or fails its integrity check.

    `line` is the 1-based line number of the culprit, or None when the problem
    concerns the file as a whole.
    """

    def __init__(self, message: str, *, path: Path, line: int | None = None) -> None:
        location = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{location}: {message}", path=path)
        self.line = line


class TraceSearchError(ToolReplayError, ValueError):
    """A `toolreplay find` query is malformed, or its folder cannot be searched."""


class CaptureConfigError(ToolReplayError, ValueError):
    """`toolreplay.capture(...)` was given a setting it cannot use.

    Raised where the code passes the setting; a bad `TOOLREPLAY_CAPTURE_*`
    environment variable is logged instead, and that request is not captured.
    """


class ObjectStoreError(ToolReplayError):
    """Object storage (`s3://`, `gs://`, `az://`, `file://`) could not be used.

    The message names the location and the kind of failure (not found, access
    denied, unreachable), never a credential or the store's own response text.
    """


class ObjectStoreDependencyError(ObjectStoreError, ImportError):
    """An object-storage location was given, and the `object-store` extra is not installed."""


# --- sessions -------------------------------------------------------------------------


class SessionError(ToolReplayError):
    """A session was used in a way that cannot be recorded or replayed faithfully."""


class SessionNestingError(SessionError):
    """A session was opened while another one is active in the same context."""


class SessionContextError(SessionError):
    """An effect was called where no session is visible while live effects are refused.

    That is while a replay is open anywhere in the process, or while a runner
    module is being imported: a back door to live effects either way.
    """


class OverlappingEffectsError(SessionError):
    """An effect call overlapped another in a way a session cannot record.

    Concurrent calls on different lanes (tasks, threads) are recorded; what is
    refused is a call nested in another (`NestedEffectError`).
    """


class NestedEffectError(OverlappingEffectsError):
    """An effect was called inside the body of another effect that is still running.

    Replay never runs the outer body, so the inner call could never be replayed.
    """


class NetworkBlockedError(ToolReplayError, ConnectionRefusedError):
    """An outbound connection (or host name lookup) was refused: the network is blocked.

    Replay, fork and case verification block every connection that no
    instrumented client's live call and no live effect makes (RFC 0001 §10).
    `host` and `port` (None when the lookup named no port) say where it was
    going, `thread` which thread made it, `effect` the effect whose body was
    running there, if any. It is a `ConnectionRefusedError` too, so code that
    handles a connection failure (an HTTP client, a telemetry exporter's retry
    loop) handles it as one. It is the application's own doing, not a session
    misuse: a run that lets it propagate ends as an application error.
    """

    def __init__(
        self, message: str, *, host: str, port: int | None, thread: str, effect: str | None
    ) -> None:
        super().__init__(message)
        self.host = host
        self.port = port
        self.thread = thread
        self.effect = effect


class NetworkBlockedWarning(UserWarning):
    """A session that blocks the network refused connections: each destination, once."""


# --- replay contract ------------------------------------------------------------------


class ReplayContractError(ToolReplayError):
    """Strict replay could not reproduce the recorded execution exactly."""


class ReplayMiss(ReplayContractError):
    """An effect was called with an identity the trace does not hold.

    `identity` and `inputs` describe the call (`effect` and `occurrence` are
    shortcuts); `candidates` are the nearest recorded operations of the same
    effect, best first (empty when the trace holds no call of it). In a fork
    this is the unrecorded call the run stopped at, which a supply patch can answer.
    """

    def __init__(
        self,
        message: str,
        *,
        identity: OperationIdentityLike,
        inputs: Mapping[str, object],
        candidates: Sequence[OperationLike],
    ) -> None:
        super().__init__(message)
        self.identity = identity
        self.inputs = inputs
        self.candidates = tuple(candidates)

    @property
    def effect(self) -> str:
        """The dotted name of the effect that was called."""
        return self.identity.effect

    @property
    def occurrence(self) -> int:
        return self.identity.occurrence


class AmbiguousReplayMatch(ReplayContractError):
    """No single recorded answer belongs to the call.

    Either the trace holds the identity more than once (a hand edit), or calls
    with that effect and inputs ran concurrently in the recording and had
    different outcomes. `operations` are the candidates.
    """

    def __init__(
        self,
        message: str,
        *,
        identity: OperationIdentityLike,
        operations: Sequence[OperationLike],
    ) -> None:
        super().__init__(message)
        self.identity = identity
        self.operations = tuple(operations)


class UnconsumedOperationsError(ReplayContractError):
    """The application finished without calling every recorded operation."""

    def __init__(self, message: str, *, operations: Sequence[OperationLike]) -> None:
        super().__init__(message)
        self.operations = tuple(operations)


class LiveCallLimitError(ReplayContractError):
    """A fork reached its bound on live calls (`live_limit`), so the next one was not made.

    `limit` is the bound, `count` the live calls made before, `effect` the call
    that was refused; nothing of it was sent or run.
    """

    def __init__(self, message: str, *, limit: int, count: int, effect: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.count = count
        self.effect = effect


class UnappliedPatchError(ReplayContractError):
    """A fork finished without its application ever making a patched call."""

    def __init__(self, message: str, *, patch_ids: Sequence[str]) -> None:
        super().__init__(message)
        self.patch_ids = tuple(patch_ids)


# --- patches, diffs, runners ----------------------------------------------------------


class PatchError(ToolReplayError, ValueError):
    """A patch cannot be built or applied as given."""


class ForkOptionError(ToolReplayError, ValueError):
    """A fork option is malformed (a `live=` entry, `live_limit`, the `unobserved=` policy)."""


class NetworkOptionError(ToolReplayError, ValueError):
    """A session's `network=` setting is malformed (RFC 0001 §10)."""


class PatchFileError(PatchError):
    """A patch file is missing, malformed or of an unknown version."""

    def __init__(self, message: str, *, path: Path) -> None:
        super().__init__(message)
        self.path = path


class PatchTargetError(PatchError):
    """A patch targets a call the source trace does not hold, or shares its target."""

    def __init__(self, message: str, *, patch_id: str) -> None:
        super().__init__(message)
        self.patch_id = patch_id


class PatchApplicationError(PatchTargetError, ReplayContractError):
    """A patch could not answer the call it was applied to, while the application ran.

    Its recipe does not fit the request (a `reply(...)` naming a tool the request
    does not offer, an endpoint it cannot answer), or which new call a next-call
    patch answers depends on how threads were scheduled. The fork fails even if
    the application catches it.
    """


class DiffError(ToolReplayError):
    """Two traces cannot be compared without guessing (e.g. one holds an identity twice)."""


class RunnerError(ToolReplayError):
    """A `module:callable` runner cannot be resolved or called without arguments."""


class RunnerImportError(RunnerError):
    """A runner's module cannot be imported: it is not on `sys.path`, or importing it raised.

    Not a damaged case or a bad argument: the environment the application runs
    in (its search path, its variables, its dependencies) does not let it
    import. `runner` is the spec, `module` the module's name, `missing` True
    when the module itself was not found; the exception raised while importing
    is `__cause__`, with its traceback (`import_traceback()`).
    """

    def __init__(self, message: str, *, runner: str, module: str, missing: bool) -> None:
        super().__init__(message)
        self.runner = runner
        self.module = module
        self.missing = missing

    def import_traceback(self) -> str:
        """The traceback of the exception the import raised, from the application's own
        frames on (the import machinery's and Tool Replay's left out), chain included; a
        `SyntaxError` shows its file, line and text. Empty when the module was not found."""
        import traceback  # only for a failed import: `import toolreplay.errors` stays light

        cause = self.__cause__
        if cause is None or self.missing:
            return ""
        frames = cause.__traceback__
        while frames is not None and _is_import_machinery(frames.tb_frame.f_code.co_filename):
            frames = frames.tb_next
        return "".join(traceback.format_exception(type(cause), cause, frames))


def _is_import_machinery(filename: str) -> bool:
    """A frame of `importlib` or of Tool Replay, above the module being imported."""
    import importlib  # as `traceback` above

    return (
        filename.startswith("<frozen importlib")
        or filename == importlib.__file__
        or Path(filename).is_relative_to(Path(__file__).parent)
    )


class ProtocolError(ToolReplayError, ValueError):
    """A run-protocol document (`toolreplay.protocol`) cannot be read.

    The message names the command's document and the field at fault (`$.error.type`).
    """


class ProtocolVersionError(ProtocolError):
    """A run-protocol document has a version this Tool Replay does not read.

    `version` is the document's, `supported` the one this version reads.
    """

    def __init__(self, message: str, *, version: object, supported: int) -> None:
        super().__init__(message)
        self.version = version
        self.supported = supported


# --- promoted cases -------------------------------------------------------------------


class CaseError(ToolReplayError):
    """A promoted case cannot be created or does not hold."""


class PromotionError(CaseError):
    """`promote()` refused its arguments (destination, name, runner); nothing was written."""


class CaseIntegrityError(CaseError):
    """A case's manifest, trace asset or runner target is invalid.

    Manifest and trace problems are found before any application module is imported.
    """


class CaseSearchError(CaseError):
    """`verify_cases` cannot search a path for cases: it is missing, or cannot be listed.

    `path` is the path given; `missing` is True when nothing exists there.
    """

    def __init__(self, message: str, *, path: Path, missing: bool = False) -> None:
        super().__init__(message)
        self.path = path
        self.missing = missing


class BehavioralRegressionError(CaseError, AssertionError):
    """Strict replay succeeded, but the runner returned something other than expected.

    `expected` and `actual` are portable JSON values; `differences` lists, by JSON
    path, where `actual` departs from `expected`.
    """

    def __init__(
        self,
        message: str,
        *,
        expected: object,
        actual: object,
        differences: Sequence[ValueDifferenceLike],
    ) -> None:
        super().__init__(message)
        self.expected = expected
        self.actual = actual
        self.differences = tuple(differences)


class ApplicationExecutionError(CaseError):
    """The runner raised (the original is `__cause__`) or returned a non-portable value."""


# --- adapters -------------------------------------------------------------------------


class AdapterError(ToolReplayError):
    """An instrumented client was used in a way its adapter cannot record faithfully."""


class OpenAIAdapterDependencyError(AdapterError, ImportError):
    """The OpenAI adapter needs an SDK version in its supported range, and it is missing."""


class AnthropicAdapterDependencyError(AdapterError, ImportError):
    """The Anthropic adapter needs an `anthropic` SDK version in its range, and it is missing."""


class GoogleGenAIAdapterDependencyError(AdapterError, ImportError):
    """The Google Gen AI adapter needs a `google-genai` SDK version in its range, and it is
    missing."""


class MCPAdapterDependencyError(AdapterError, ImportError):
    """The MCP adapter needs an `mcp` SDK (or an agent framework) version it supports.

    Raised when `mcp` is missing or outside its range, and when an agent framework's
    release lacks what `instrument` relies on (the message names both versions)."""


class AdapterOptionError(AdapterError, ValueError):
    """An adapter's `instrument(...)` was given an option it cannot use (a name, a route)."""


class UnsupportedRequestError(AdapterError, ValueError):
    """A request an instrumented client made cannot be recorded as an effect's inputs."""


class UnsupportedResponseError(AdapterError):
    """A recorded response cannot be served to the SDK as it stands (edited or damaged)."""


class StreamReplayError(AdapterError, ReplayContractError):
    """A replayed response was read past the point where its recording ended."""


class LegacyOpenAITraceError(AdapterError, ReplayContractError):
    """A trace recorded by the first OpenAI adapter was replayed without being migrated."""


# --- privacy (RFC 0007) ---------------------------------------------------------------


class RedactionError(ToolReplayError):
    """Redaction cannot be applied as declared."""


class RedactionRuleError(RedactionError, ValueError):
    """A redaction path or pattern is malformed (the message names it and the position)."""


class RedactionKeyError(RedactionError):
    """The redaction key is missing, too short, or not the one a trace was redacted with.

    Messages name key ids, never a key.
    """


class RedactedValueEditError(RedactionError):
    """An edit would put a value where the trace holds a placeholder (`path` names it)."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class SecretInTraceError(ToolReplayError):
    """A value about to be written (or a trace about to be promoted) matches a secret rule.

    `findings` say where and which rule, never the value.
    """

    def __init__(self, message: str, *, findings: Sequence[SecretFindingLike]) -> None:
        super().__init__(message)
        self.findings = tuple(findings)


class SecretScanError(ToolReplayError, ValueError):
    """A secret mode, rule name or pattern is malformed."""


class SecretInTraceWarning(UserWarning):
    """A secret was written because the session's secret mode is "warn"."""


# --- replayed failures ----------------------------------------------------------------


class ReplayedEffectError(ToolReplayError):
    """A recorded effect failure whose original exception type is not rebuilt on replay.

    `original_type` is the qualified name of the exception the live body raised
    (`myapp.errors.CrmUnavailable`) and `original_message` its message.
    """

    def __init__(self, original_type: str, original_message: str) -> None:
        super().__init__(f"{original_type}: {original_message}")
        self.original_type = original_type
        self.original_message = original_message
