"""The redaction key and the placeholders it makes (RFC 0007 §3).

A placeholder is a keyed hash of a value's canonical JSON: equal values give
equal placeholders in every process holding the same key, and nobody without
the key can test a guess (an email, a card number) against one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re

from toolreplay.errors import RedactionKeyError
from toolreplay.portable import JsonValue, canonical_json

__all__ = [
    "KEY_ENVIRONMENT_VARIABLE",
    "MIN_KEY_BYTES",
    "PLACEHOLDER_PATTERN",
    "RedactionKey",
    "is_placeholder",
    "key_from_environment",
]

KEY_ENVIRONMENT_VARIABLE = "TOOLREPLAY_REDACTION_KEY"
"""Where sessions look for the key when neither a policy nor the code gives one."""

MIN_KEY_BYTES = 16

PLACEHOLDER_PATTERN = re.compile(r"<redacted:[0-9a-f]{12}:[0-9a-f]{32}>")
"""What every placeholder looks like: `<redacted:KEY_ID:DIGEST>`."""

_KEY_ID_MESSAGE = b"toolreplay.redaction.key-id"
_VALUE_PREFIX = b"toolreplay.redaction.v1\x00"


class RedactionKey:
    """A secret key that turns values into placeholders. Its repr never shows the key."""

    __slots__ = ("_keyed", "key_id")

    def __init__(self, key: bytes | str) -> None:
        secret = key.encode("utf-8") if isinstance(key, str) else bytes(key)
        if len(secret) < MIN_KEY_BYTES:
            raise RedactionKeyError(
                f"a redaction key must be at least {MIN_KEY_BYTES} bytes long (this one has "
                f'{len(secret)}); generate one with `python -c "import secrets; '
                f'print(secrets.token_hex(32))"` and keep it outside every trace'
            )
        self.key_id = hmac.new(secret, _KEY_ID_MESSAGE, hashlib.sha256).hexdigest()[:12]
        # Keyed once; each placeholder copies it (much cheaper than keying anew).
        self._keyed = hmac.new(secret, _VALUE_PREFIX, hashlib.sha256)

    def __repr__(self) -> str:
        return f"RedactionKey(key_id={self.key_id!r})"

    def placeholder(self, value: JsonValue) -> str:
        """The placeholder of a portable value (a placeholder stays as it is)."""
        if type(value) is str and PLACEHOLDER_PATTERN.fullmatch(value):
            return value
        return self.placeholder_of_json(canonical_json(value))

    def placeholder_of_json(self, encoded: bytes) -> str:
        """The placeholder of a value given as its canonical JSON bytes."""
        keyed = self._keyed.copy()
        keyed.update(encoded)
        return f"<redacted:{self.key_id}:{keyed.hexdigest()[:32]}>"


def is_placeholder(value: object) -> bool:
    """Whether `value` is a redaction placeholder (of any key)."""
    return type(value) is str and PLACEHOLDER_PATTERN.fullmatch(value) is not None


def key_from_environment() -> RedactionKey | None:
    """The key in `TOOLREPLAY_REDACTION_KEY`, or None when it is unset or empty."""
    text = os.environ.get(KEY_ENVIRONMENT_VARIABLE)
    if not text:
        return None
    try:
        return RedactionKey(text)
    except RedactionKeyError as error:
        raise RedactionKeyError(f"{KEY_ENVIRONMENT_VARIABLE}: {error}") from None
