"""`toolreplay schema [NAME]`: the JSON Schema of a document Tool Replay reads or writes."""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser

from toolreplay.cli.command import Command, UsageError
from toolreplay.documents import DOCUMENTS, document_schema

__all__ = ["COMMANDS", "SCHEMA", "schema"]


def _add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "name",
        nargs="?",
        metavar="NAME",
        help=f"The document: {', '.join(DOCUMENTS)}. Without it, the documents are listed.",
    )


def schema(name: str | None) -> int:
    """Run `toolreplay schema` (`SCHEMA`); return the exit status."""
    if name is None:
        column = max(map(len, DOCUMENTS)) + 2
        for kind in DOCUMENTS.values():
            sys.stdout.write(f"{kind.name.ljust(column)}{kind.summary}\n")
        return 0
    if name not in DOCUMENTS:
        raise UsageError(
            f"argument NAME: {name!r} is not a document; choose from {', '.join(DOCUMENTS)}"
        )
    sys.stdout.write(json.dumps(document_schema(name), indent=2) + "\n")
    return 0


SCHEMA = Command(
    name="schema",
    summary="Print the JSON Schema of a case manifest, a patch file or a command's JSON.",
    description="""
        Prints the JSON Schema (draft 2020-12) of one document, for an editor to check
        files as they are written:

            toolreplay schema patches > patches.schema.json

        Without NAME, lists the documents. Exit 0, or 2 for a NAME that is not one.
    """,
    add_arguments=_add_arguments,
    run=schema,
)
COMMANDS = (SCHEMA,)
