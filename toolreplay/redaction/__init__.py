"""Privacy: redaction before anything is fingerprinted or written, and secret scanning.

See RFC 0007. Redaction replaces selected values by keyed-hash placeholders so
that matching stays exact; the scanner refuses to let a recognisable secret
reach a trace. This namespace is public: its `__all__` is its API (the most
used names are also exported by `toolreplay`).
"""

from toolreplay.files import PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE, PUBLIC_FILE_MODE
from toolreplay.jsonpath import JsonPath, parse_path
from toolreplay.redaction.edits import check_redacted_edit, redacted_paths
from toolreplay.redaction.keys import (
    KEY_ENVIRONMENT_VARIABLE,
    PLACEHOLDER_PATTERN,
    RedactionKey,
    is_placeholder,
)
from toolreplay.redaction.policy import (
    SECRETS_ENVIRONMENT_VARIABLE,
    RedactionPolicy,
    SecretMode,
    current_redaction,
    redact,
    set_redaction,
)
from toolreplay.redaction.scanner import (
    BUILTIN_SECRET_RULES,
    SecretFinding,
    SecretPart,
    SecretRule,
    SecretScanner,
    describe_findings,
    luhn_valid,
)

__all__ = [
    "BUILTIN_SECRET_RULES",
    "KEY_ENVIRONMENT_VARIABLE",
    "PLACEHOLDER_PATTERN",
    "PRIVATE_FILE_MODE",
    "PRIVATE_FOLDER_MODE",
    "PUBLIC_FILE_MODE",
    "SECRETS_ENVIRONMENT_VARIABLE",
    "JsonPath",
    "RedactionKey",
    "RedactionPolicy",
    "SecretFinding",
    "SecretMode",
    "SecretPart",
    "SecretRule",
    "SecretScanner",
    "check_redacted_edit",
    "current_redaction",
    "describe_findings",
    "is_placeholder",
    "luhn_valid",
    "parse_path",
    "redact",
    "redacted_paths",
    "set_redaction",
]
