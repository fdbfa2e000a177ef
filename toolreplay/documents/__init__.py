"""The JSON documents Tool Replay reads and writes, as pydantic models, and their one
message style.

| name | document | model |
|---|---|---|
| `case` | a case folder's `case.json` (RFC 0005 §3) | `case.CaseManifestModel` |
| `patches` | a patch file (RFC 0004 §2) | `patches.PatchFileModel` |
| `run` | `record`, `replay`, `fork --format json` (RFC 0004 §4.5) | `run.RunDocumentModel` |
| `promote` | `promote --format json` (RFC 0005 §4.1) | `run.PromoteDocumentModel` |
| `verify` | `verify --format json` (RFC 0005 §4.2) | `run.VerifyDocumentModel` |

Every reader (`read_case_manifest`, `read_patches`, `RunDocument.from_json`, ...)
checks a document with `documents.validation.validate_document`, which turns the
first problem pydantic finds into one sentence: where, the JSON path, what was
expected and the value found:

    case.json: $.scope.operation_count: expected an integer, found "12"

This module imports nothing but the standard library: the models (and pydantic) are
imported when a document is read or a schema asked for, never by `import toolreplay`
or while recording.
"""

from __future__ import annotations

import importlib
import json
from typing import Any, NamedTuple

__all__ = ["DOCUMENTS", "DocumentKind", "document_schema", "problem", "shown"]

_SHOWN_LIMIT = 60


class DocumentKind(NamedTuple):
    """A document `toolreplay schema NAME` knows: what it is and where its model lives."""

    name: str
    summary: str
    model: str
    """`module:Class` of its pydantic model."""


DOCUMENTS: dict[str, DocumentKind] = {
    kind.name: kind
    for kind in (
        DocumentKind(
            "case",
            "case.json, the manifest of a promoted case (RFC 0005)",
            "toolreplay.documents.case:CaseManifestModel",
        ),
        DocumentKind(
            "patches",
            "a patch file, the facts a fork changes (RFC 0004)",
            "toolreplay.documents.patches:PatchFileModel",
        ),
        DocumentKind(
            "run",
            "what record, replay and fork print with --format json (RFC 0004)",
            "toolreplay.documents.run:RunDocumentModel",
        ),
        DocumentKind(
            "promote",
            "what promote prints with --format json (RFC 0005)",
            "toolreplay.documents.run:PromoteDocumentModel",
        ),
        DocumentKind(
            "verify",
            "what verify prints with --format json (RFC 0005)",
            "toolreplay.documents.run:VerifyDocumentModel",
        ),
    )
}
"""Every document with a model, by the name `toolreplay schema` takes."""


def document_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the document `name` (a key of `DOCUMENTS`)."""
    module, _, attribute = DOCUMENTS[name].model.partition(":")
    model = getattr(importlib.import_module(module), attribute)
    schema: dict[str, Any] = model.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def shown(value: object) -> str:
    """A value found in a document as JSON shows it (`"12"`, `null`, `[1, 2]`), cut to a
    line and escaped to ASCII, so that nothing read from a file reaches a terminal raw."""
    try:
        text = json.dumps(value, ensure_ascii=True, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = ascii(value)
    return text if len(text) <= _SHOWN_LIMIT else text[: _SHOWN_LIMIT - 3] + "..."


def problem(where: str, path: str, expected: str, found: str) -> str:
    """The one sentence every document error is: `case.json: $.scope.operation_count:
    expected an integer, found "12"`. `found` is already shown (see `shown`)."""
    return f"{where}: {path}: expected {expected}, found {found}"
