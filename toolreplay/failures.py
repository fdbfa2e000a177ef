"""Recording an effect's exception, and raising it again on replay.

Only the exception's type, message and (portable) arguments are kept, never a
traceback: tracebacks hold local variables' reprs, absolute paths and line
numbers that change with every edit.

A short allowlist of built-in exceptions, whose constructors take their args
back as given, is rebuilt as the very same type with the same args, so
`except TimeoutError:` in the application behaves the same under replay. Any
other exception (including subclasses of allowlisted ones) becomes
`ReplayedEffectError`, which carries the original type's qualified name and
message: importing arbitrary classes named in a trace file to instantiate them
would run code chosen by whoever wrote the file.

An adapter can register a `FailureCodec` for the exceptions of the library it
wraps (the OpenAI adapter does, for the SDK's provider errors): the codec turns
such an exception into a portable envelope at record time and builds the same
exception class from it at replay time, under stable names of its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Protocol

from toolreplay.errors import NonPortableValueError, ReplayedEffectError
from toolreplay.portable import JsonValue, copy_value, encodable_text, ensure_portable, safe_text
from toolreplay.trace.model import Raised, SessionEnding

__all__ = [
    "REBUILT_EXCEPTIONS",
    "FailureCodec",
    "capture_failure",
    "qualified_name",
    "rebuild_failure",
    "rebuilt_as_itself",
    "register_failure_codec",
    "session_ending",
]

_MESSAGE_LIMIT = 2000  # recorded messages are kept short: they are evidence, not logs

REBUILT_EXCEPTIONS: Mapping[str, type[Exception]] = MappingProxyType(
    {
        f"builtins.{kind.__name__}": kind
        for kind in (
            TimeoutError,
            ConnectionError,
            ConnectionRefusedError,
            ConnectionResetError,
            ConnectionAbortedError,
            PermissionError,
            FileNotFoundError,
            ValueError,
            KeyError,
            LookupError,
            RuntimeError,
        )
    }
)
"""Exception types rebuilt as themselves on replay, by qualified name (read-only)."""


class FailureCodec(Protocol):
    """Records and rebuilds one library's exceptions (registered by an adapter)."""

    def error_type(self, error: Exception) -> str | None:
        """The stable name this codec records `error` under, or None if it is not its own."""
        ...

    def capture(self, error: Exception) -> JsonValue:
        """A portable envelope with everything needed to rebuild `error`."""
        ...

    def rebuild(self, error_type: str, envelope: JsonValue) -> Exception:
        """The exception recorded as `error_type` with `envelope`."""
        ...


_CODECS: list[FailureCodec] = []
_CODEC_BY_TYPE: dict[str, FailureCodec] = {}


def register_failure_codec(codec: FailureCodec, error_types: tuple[str, ...]) -> None:
    """Let `codec` record and rebuild the exceptions it names `error_types`."""
    if codec not in _CODECS:
        _CODECS.append(codec)
    for error_type in error_types:
        _CODEC_BY_TYPE[error_type] = codec


def qualified_name(kind: type[BaseException]) -> str:
    """`module.QualName` of an exception type, as traces store it (`builtins.TimeoutError`)."""
    return f"{kind.__module__}.{kind.__qualname__}"


def capture_failure(error: Exception) -> Raised:
    """The recordable form of an exception an effect body raised."""
    message = _message(error)
    for codec in _CODECS:
        error_type = codec.error_type(error)
        if error_type is not None:
            envelope = ensure_portable(codec.capture(error), what=f"the {error_type} envelope")
            return Raised(error_type=error_type, message=message, args=[envelope])
    raw_args: list[object] = list(error.args)
    if isinstance(error, OSError) and error.filename is not None and len(raw_args) == 2:
        raw_args.append(error.filename)  # OSError keeps it out of args; replay needs it
    args: list[JsonValue] | None
    try:
        portable = ensure_portable(raw_args)
        args = portable if isinstance(portable, list) else None
    except NonPortableValueError:
        args = None
    return Raised(error_type=qualified_name(type(error)), message=message, args=args)


def rebuilt_as_itself(error: Exception) -> Raised | None:
    """`error` captured, if replaying the capture raises its very type again; else None.

    True of the allowlisted built-ins given portable args, and of the exceptions a
    registered codec records; any other type would come back as `ReplayedEffectError`.
    """
    raised = capture_failure(error)
    if raised.error_type in _CODEC_BY_TYPE:
        return raised
    if REBUILT_EXCEPTIONS.get(raised.error_type) is type(error) and raised.args is not None:
        return raised
    return None


def rebuild_failure(raised: Raised) -> Exception:
    """The exception to raise when replaying a recorded failure."""
    # Copies: the application may change what it catches; the loaded trace must not change.
    codec = _CODEC_BY_TYPE.get(raised.error_type)
    if codec is not None and raised.args is not None and len(raised.args) == 1:
        return codec.rebuild(raised.error_type, copy_value(raised.args[0]))
    kind = REBUILT_EXCEPTIONS.get(raised.error_type)
    if kind is not None and raised.args is not None:
        return kind(*(copy_value(arg) for arg in raised.args))
    return ReplayedEffectError(raised.error_type, raised.message)


def _message(error: BaseException) -> str:
    return encodable_text(safe_text(error))[:_MESSAGE_LIMIT]


def session_ending(
    error: BaseException | None, *, local_paths: Sequence[os.PathLike[str]] = ()
) -> SessionEnding:
    """How a session ended, for its trace footer: completed, or the error it ended on.

    Tool Replay's own messages name trace files; each of `local_paths` is cut
    to its file name, so a trace copied elsewhere (a promoted case) does not
    carry this machine's folders.
    """
    if error is None:
        return SessionEnding("completed")
    message = _message(error)
    spellings = {os.fspath(path) for path in local_paths}
    spellings |= {os.path.abspath(spelling) for spelling in spellings}
    for full in sorted(spellings, key=len, reverse=True):  # longest first: no partial cuts
        message = message.replace(full, os.path.basename(full))
    return SessionEnding("raised", qualified_name(type(error)), message)
