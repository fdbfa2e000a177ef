"""Per-request capture in production: `toolreplay.capture` (RFC 0008).

`api` holds `capture()` and what it returns, `session` the record session that
gives up instead of failing the application, `store` the folder (names,
temporary siblings, retention, logging), `settings` the code and environment
settings.
"""

from toolreplay.capturing.api import METADATA_KEY, Capture, CapturedRequest, capture
from toolreplay.capturing.session import CaptureSession
from toolreplay.capturing.settings import ENVIRONMENT_VARIABLES, Retention
from toolreplay.capturing.store import captured_at

__all__ = [
    "ENVIRONMENT_VARIABLES",
    "METADATA_KEY",
    "Capture",
    "CaptureSession",
    "CapturedRequest",
    "Retention",
    "capture",
    "captured_at",
]
