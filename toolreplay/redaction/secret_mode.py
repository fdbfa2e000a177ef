"""The secret mode: which one a session runs in, and what it does with a finding (RFC 0007 §4).

Every writer of traces decides here, and only here: a recording, a fork's branch, a
production capture. `resolve_secret_mode` picks the mode (given, else from
`TOOLREPLAY_SECRETS`, else the default for that use); a `SecretGate` scans what is about
to be written and says whether it may be written anyway. What a refusal means is the
session's own business: a recording raises `SecretInTraceError` or, in mode "abandon",
stops; a fork raises; an ending message is withheld.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast, get_args

from toolreplay.errors import SecretInTraceWarning, SecretScanError
from toolreplay.portable import JsonValue
from toolreplay.redaction.scanner import (
    SecretFinding,
    SecretPart,
    SecretScanner,
    secret_in_trace_error,
)

__all__ = [
    "SECRETS_ENVIRONMENT_VARIABLE",
    "SecretGate",
    "SecretMode",
    "SecretModeUse",
    "resolve_secret_mode",
]

SecretMode = Literal["error", "warn", "abandon", "off"]
SECRETS_ENVIRONMENT_VARIABLE = "TOOLREPLAY_SECRETS"

SecretModeUse = Literal["record", "fork", "capture"]
"""Who asks: a recording, a fork (run by a person, never "abandon"), or a capture in
production (never "error", which would fail the application)."""

# What a capture takes from the environment; any other word there means the default.
_CAPTURE_MODES: tuple[SecretMode, ...] = ("warn", "off", "abandon")


def resolve_secret_mode(given: str | None, *, use: SecretModeUse = "record") -> SecretMode:
    """The secret mode for `use`: `given`, else `TOOLREPLAY_SECRETS`, else its default.

    A recording defaults to "error"; a word that is not a mode is a `SecretScanError`.
    A fork reads like a recording but refuses "abandon" given, and reads it from the
    environment (which configures production capture) as "error". A capture defaults
    to "abandon" and ignores an environment word it cannot use, so that a setting never
    fails the application.
    """
    if use == "capture" and given is None:
        chosen = os.environ.get(SECRETS_ENVIRONMENT_VARIABLE, "").strip()
        return chosen if chosen in _CAPTURE_MODES else "abandon"
    source = "secrets="
    mode = given
    if mode is None:
        mode = os.environ.get(SECRETS_ENVIRONMENT_VARIABLE) or "error"
        source = f"{SECRETS_ENVIRONMENT_VARIABLE}="
    if mode not in get_args(SecretMode):
        raise SecretScanError(
            f"{source}{mode!r} is not a secret mode; use 'error' (the default: refuse to "
            "write a secret), 'warn', 'abandon' (stop recording, leave the application alone) "
            "or 'off'"
        )
    if use == "fork" and mode == "abandon":
        if given is not None:
            raise SecretScanError(
                "secrets='abandon' is for unattended recordings; a fork takes 'error', "
                "'warn' or 'off'"
            )
        return "error"  # TOOLREPLAY_SECRETS=abandon: a fork is run by a person, who is told
    return cast(SecretMode, mode)


@dataclass(frozen=True, slots=True)
class SecretGate:
    """A session's secret mode and scanner: what stands between a value and its trace."""

    mode: SecretMode
    scanner: SecretScanner

    def scan(
        self,
        value: JsonValue,
        *,
        part: SecretPart,
        effect: str | None = None,
        encoded: bytes | None = None,
    ) -> list[SecretFinding]:
        """What in `value` matches a secret rule; nothing is looked for in mode "off".

        `encoded` is text the scanner may search instead (see `SecretScanner.scan_value`).
        """
        if self.mode == "off":
            return []
        return self.scanner.scan_value(value, part=part, effect=effect, encoded=encoded)

    def allows(self, findings: Sequence[SecretFinding], *, subject: str) -> bool:
        """Whether what holds `findings` may be written: with none, or in mode "warn".

        Mode "warn" warns (`SecretInTraceWarning`) that `subject` was written anyway;
        "error" and "abandon" refuse, and the caller acts on the refusal.
        """
        if not findings:
            return True
        if self.mode != "warn":
            return False
        error = secret_in_trace_error(
            findings,
            what=f"{subject} was written anyway (secret mode 'warn')",
            advice="Redact it (RFC 0007) so that it is not written.",
            verb="holds",
        )
        # 4: past this frame, the session's check and the method that asked it to write.
        warnings.warn(SecretInTraceWarning(str(error)), stacklevel=4)
        return True
