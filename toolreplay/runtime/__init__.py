"""The effect runtime: `@effect`, sessions, strict matching and failure replay."""

from toolreplay.runtime.effect import EffectSpec, declared_effects, effect
from toolreplay.runtime.failures import REBUILT_EXCEPTIONS
from toolreplay.runtime.fork import ForkSession, fork
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
    "current_session",
    "declared_effects",
    "effect",
    "fork",
    "record",
    "replay",
]
