"""`toolreplay schema [NAME]`: the JSON Schema of a document Tool Replay reads or writes."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from toolreplay.documents import DOCUMENTS, document_schema

__all__ = ["schema"]


def schema(
    name: Annotated[
        str | None,
        typer.Argument(
            metavar="NAME",
            help=f"The document: {', '.join(DOCUMENTS)}. Without it, the documents are listed.",
        ),
    ] = None,
) -> int:
    """Prints the JSON Schema (draft 2020-12) of one document, for an editor to check
    files as they are written:

        toolreplay schema patches > patches.schema.json

    Without NAME, lists the documents. Exit 0, or 2 for a NAME that is not one.
    """
    if name is None:
        column = max(map(len, DOCUMENTS)) + 2
        for kind in DOCUMENTS.values():
            sys.stdout.write(f"{kind.name.ljust(column)}{kind.summary}\n")
        return 0
    if name not in DOCUMENTS:
        raise typer.BadParameter(
            f"{name!r} is not a document; choose from {', '.join(DOCUMENTS)}",
            param_hint="'NAME'",
        )
    sys.stdout.write(json.dumps(document_schema(name), indent=2) + "\n")
    return 0
