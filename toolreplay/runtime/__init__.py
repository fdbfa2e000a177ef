"""The effect runtime: `@effect`, sessions, strict matching and failure replay."""

from typing import TYPE_CHECKING

from toolreplay.failures import REBUILT_EXCEPTIONS
from toolreplay.runtime.context import current_session
from toolreplay.runtime.effect import EffectSpec, declared_effects, effect
from toolreplay.runtime.fork import ForkSession, fork
from toolreplay.runtime.network import NetworkRefusal
from toolreplay.runtime.propagation import propagate
from toolreplay.runtime.recording import RecordSession, record
from toolreplay.runtime.replaying import ReplaySession, replay
from toolreplay.runtime.session import Session

__all__ = [
    "REBUILT_EXCEPTIONS",
    "EffectSpec",
    "ForkSession",
    "NetworkRefusal",
    "RecordSession",
    "ReplaySession",
    "Session",
    "SessionExecutor",
    "current_session",
    "declared_effects",
    "effect",
    "fork",
    "propagate",
    "record",
    "replay",
]

if TYPE_CHECKING:
    from toolreplay.runtime.executor import SessionExecutor


def __getattr__(name: str) -> object:
    # SessionExecutor imports concurrent.futures: only when it is asked for.
    if name == "SessionExecutor":
        from toolreplay.runtime.executor import SessionExecutor

        return SessionExecutor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
