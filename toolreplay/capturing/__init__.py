"""Per-request capture in production: `toolreplay.capture` (RFC 0008).

`api` holds `capture()` and what it returns, `session` the record session that
gives up instead of failing the application, `store` the folder (names,
temporary siblings, retention, logging), `settings` the code and environment
settings. Names are imported when first used: `find` reads the folder through
`store` without loading the recording runtime.
"""

from typing import TYPE_CHECKING

from toolreplay._lazy import lazy_exports

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

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "toolreplay.capturing.api": ("Capture", "CapturedRequest", "capture"),
        "toolreplay.capturing.session": ("CaptureSession",),
        "toolreplay.capturing.settings": ("ENVIRONMENT_VARIABLES", "Retention"),
        "toolreplay.capturing.names": ("METADATA_KEY", "captured_at"),
    },
)

if TYPE_CHECKING:  # the same names, for type checkers and editors
    from toolreplay.capturing.api import Capture, CapturedRequest, capture
    from toolreplay.capturing.names import METADATA_KEY, captured_at
    from toolreplay.capturing.session import CaptureSession
    from toolreplay.capturing.settings import ENVIRONMENT_VARIABLES, Retention
