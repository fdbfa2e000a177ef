"""The effect runtime: `@effect`, sessions, strict matching and failure replay."""

from toolreplay.runtime.effect import EffectSpec, effect
from toolreplay.runtime.failures import REBUILT_EXCEPTIONS
from toolreplay.runtime.fork import ForkSession, fork
from toolreplay.runtime.propagation import SessionExecutor, propagate
from toolreplay.runtime.session import (
    RecordSession,
    ReplaySession,
    Session,
    current_session,
    record,
    replay,
)

__all__ = [
    "REBUILT_EXCEPTIONS",
    "EffectSpec",
    "ForkSession",
    "RecordSession",
    "ReplaySession",
    "Session",
    "SessionExecutor",
    "current_session",
    "effect",
    "fork",
    "propagate",
    "record",
    "replay",
]
