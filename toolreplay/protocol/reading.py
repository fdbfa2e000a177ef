"""What every document of the run protocol shares: its JSON text, its version checked
first, and its fields checked by its pydantic model (imported when a document is read)."""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from toolreplay.documents import problem, shown
from toolreplay.errors import ProtocolError, ProtocolVersionError

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["check_version", "dumps", "load", "prepare_reading", "refusal", "validated"]


def dumps(data: Mapping[str, Any], *, ascii_only: bool) -> str:
    """A document as a command prints it: indented, non-ASCII escaped or not."""
    return json.dumps(data, ensure_ascii=ascii_only, indent=2)


def prepare_reading() -> None:
    """Import what reading a document needs (pydantic and `toolreplay.documents.run`),
    now: a reader that must not pause on its first document (the terminal UI, as a run
    ends) calls it beforehand, in a background thread."""
    importlib.import_module("toolreplay.documents.run")


def refusal(message: str) -> ProtocolError:
    """The error for a document this toolreplay cannot read: `message`, and what to do."""
    return ProtocolError(f"{message}; read it with the toolreplay version that wrote it")


def check_version(data: object, key: str, supported: int, document: str) -> dict[str, Any]:
    """`data` as an object whose `key` is `supported`; else `ProtocolError` (not an
    object) or `ProtocolVersionError` (another version)."""
    if not isinstance(data, dict):
        raise refusal(problem(f"{document} document", "$", "an object", shown(data)))
    fields = cast(dict[str, Any], data)
    version = fields.get(key)
    if version == supported and isinstance(version, int) and not isinstance(version, bool):
        return fields
    raise ProtocolVersionError(
        f"{document} document has {key} {shown(version)}; this toolreplay reads "
        f"version {supported}: use the toolreplay version that wrote it, or upgrade",
        version=version,
        supported=supported,
    )


def load(text: str, document: str) -> object:
    """`text` parsed as JSON; `ProtocolError` quoting its start when it is not."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        shown_text = text.strip()[:80]
        raise ProtocolError(
            f"{document} document: not JSON ({error}); the text starts {shown_text!r}"
        ) from None


_Model = TypeVar("_Model", bound="BaseModel")


def validated(model: type[_Model], data: dict[str, Any], document: str) -> _Model:
    """`data` checked by `model`; `ProtocolError` in the documents' one message style."""
    # Imported here: pydantic is loaded when a document is read, not when a command that
    # writes one starts.
    from toolreplay.documents.validation import validate_document

    return validate_document(model, data, where=f"{document} document", error=refusal)
