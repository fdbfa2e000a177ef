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
"""

from __future__ import annotations

from toolreplay.errors import NonPortableValueError, ReplayedEffectError
from toolreplay.portable import JsonValue, encodable_text, ensure_portable
from toolreplay.trace.model import Raised, SessionEnding

__all__ = [
    "REBUILT_EXCEPTIONS",
    "capture_failure",
    "qualified_name",
    "rebuild_failure",
    "session_ending",
]

_ENDING_MESSAGE_LIMIT = 2000

REBUILT_EXCEPTIONS: dict[str, type[Exception]] = {
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
"""Exception types rebuilt as themselves on replay, by qualified name."""


def qualified_name(kind: type[BaseException]) -> str:
    """`module.QualName` of an exception type, as traces store it (`builtins.TimeoutError`)."""
    return f"{kind.__module__}.{kind.__qualname__}"


def capture_failure(error: Exception) -> Raised:
    """The recordable form of an exception an effect body raised."""
    args: list[JsonValue] | None
    try:
        portable = ensure_portable(list(error.args))
        args = portable if isinstance(portable, list) else None
    except NonPortableValueError:
        args = None
    return Raised(
        error_type=qualified_name(type(error)), message=encodable_text(str(error)), args=args
    )


def rebuild_failure(raised: Raised) -> Exception:
    """The exception to raise when replaying a recorded failure."""
    kind = REBUILT_EXCEPTIONS.get(raised.error_type)
    if kind is not None and raised.args is not None:
        return kind(*raised.args)
    return ReplayedEffectError(raised.error_type, raised.message)


def session_ending(error: BaseException | None) -> SessionEnding:
    """How a session ended, for its trace footer: completed, or the error it ended on."""
    if error is None:
        return SessionEnding("completed")
    message = encodable_text(str(error))[:_ENDING_MESSAGE_LIMIT]
    return SessionEnding("raised", qualified_name(type(error)), message)
