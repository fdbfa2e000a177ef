"""The public names of `toolreplay.capturing`, declared once (as in
`toolreplay/__init__.pyi`)."""

__all__: list[str]  # the names below, in order; set at import

from toolreplay.capturing.api import (
    Capture as Capture,
    CapturedRequest as CapturedRequest,
    capture as capture,
)
from toolreplay.capturing.names import (
    METADATA_KEY as METADATA_KEY,
    captured_at as captured_at,
)
from toolreplay.capturing.session import (
    CaptureSession as CaptureSession,
)
from toolreplay.capturing.settings import (
    ENVIRONMENT_VARIABLES as ENVIRONMENT_VARIABLES,
    Retention as Retention,
)
