"""`toolreplay find LOCATION`: list the traces that match a query, newest first.

LOCATION is a folder or an object-storage prefix (`s3://bucket/prefix`): the same
query, run there as SQL by DuckDB (`toolreplay.search.objects`), the same answers
and output, paths relative to the prefix.

Text prints one line per match as it is found (so a long search shows results
at once), then a count; `--format json` prints one document at the end. A file
that cannot be read is skipped, never fatal: a `skipped: PATH: reason` line on
stderr (the `skipped` list in json), and the other files are still searched.
Exit status: 0 when something matched, 1 when nothing did (as grep), 2 when the
query or the location is refused (or the store cannot be read), 3 when nothing
matched but files were skipped (one of them might have).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolreplay.cli.command import SKIPPED_EXIT_CODE, FormatOption
from toolreplay.cli.output import Output, OutputFormat, error_fields
from toolreplay.errors import ObjectStoreError, TraceSearchError
from toolreplay.objectstore.locations import is_object_url
from toolreplay.search import FoundTrace, find_traces

__all__ = ["FIND_FORMAT_VERSION", "find"]

FIND_FORMAT_VERSION = 2
"""2: `unreadable` became `skipped`, which also lists files that could not be read to the end."""


def _ending(match: FoundTrace) -> str:
    ending = match.ending
    if ending is None:
        return "incomplete"
    if ending.get("status") == "completed":
        return "completed"
    return f"raised {ending.get('error_type')}"


def _relative(path: Path, root: Path) -> str:
    """`path` relative to the folder searched, as matches are shown (all of it outside)."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _line(match: FoundTrace, root: Path) -> str:
    started = match.started.strftime("%Y-%m-%d %H:%M:%S")
    matches = f"{len(match.matching)} matching" if match.matching else ""
    cells = [
        match.relative_path(root),
        started,
        f"{match.operation_count} ops",
        _ending(match),
        matches,
        match.metadata_text(),
    ]
    return "  ".join(cell for cell in cells if cell)


def find(
    location: Annotated[
        str,
        typer.Argument(
            metavar="LOCATION",
            help="The folder of the traces (searched below), or an object-storage prefix "
            "(s3://BUCKET/PREFIX, gs://, az://, file://).",
        ),
    ],
    effect: Annotated[
        str | None,
        typer.Option("--effect", "-e", metavar="NAME", help="Only traces that called this effect."),
    ] = None,
    where: Annotated[
        list[str] | None,
        typer.Option(
            "--where",
            "-w",
            metavar="'PATH OP VALUE'",
            help="A condition, repeatable: PATH is a JSON path into an operation "
            "($.inputs.customer_id, $.outcome.status, $.outcome.error.type), the header "
            "($.metadata.request_id) or the footer ($.ending.status); OP is ==, !=, <, <=, "
            ">, >=, contains, matches (a regular expression) or exists (no VALUE); VALUE "
            'is JSON (42, true, "text") or plain text. Operation conditions must hold '
            "for one operation.",
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            metavar="WHEN",
            help="Only requests that started at or after WHEN: 2026-12-01, 2026-12-01T08:30, "
            "or an age ago (90s, 30m, 2h, 7d).",
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until", metavar="WHEN", help="Only requests that started before WHEN (as --since)."
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, metavar="N", help="Stop after this many matches."),
    ] = None,
    output_format: FormatOption = OutputFormat.text,
) -> int:
    """Newest first: by the start time a captured trace's name holds, else by the
    file's modification time. A file that cannot be read is skipped (a
    "skipped: PATH: reason" line on stderr) and the others are still searched.
    Exit 0 when something matched, 1 when nothing did, 2 when the query or the
    folder is refused, 3 when nothing matched but some files were skipped.
    """
    out = Output()
    # A str, not a typer Path: a Path would turn `s3://bucket` into `s3:/bucket`.
    url = is_object_url(location)
    directory = Path() if url else Path(location)  # what shown paths are relative to
    try:
        search = find_traces(
            location if url else directory,
            effect=effect,
            where=where or (),
            since=since,
            until=until,
        )
        found: list[FoundTrace] = []
        for match in search:  # a limit stops the scan: nothing past it is read
            found.append(match)
            if output_format is OutputFormat.text:
                out.line(_line(match, directory))
            if limit is not None and len(found) >= limit:
                break
    except (TraceSearchError, ObjectStoreError) as error:
        out.error(str(error), (*error_fields(error), location))
        return 2
    skipped = [(_relative(path, directory), reason) for path, reason in search.unreadable]
    for path, reason in skipped:
        out.skipped(path, reason)
    if output_format is OutputFormat.json:
        document: dict[str, Any] = {
            "format_version": FIND_FORMAT_VERSION,
            "directory": location.rstrip("/") if url else str(directory),
            "query": {
                "effect": effect,
                "where": [condition.text for condition in search.conditions],
                "since": None if search.since is None else search.since.isoformat(),
                "until": None if search.until is None else search.until.isoformat(),
            },
            "scanned": search.scanned,
            "traces": [match.to_dict(directory) for match in found],
            "skipped": [{"path": path, "reason": reason} for path, reason in skipped],
        }
        sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")
    else:
        noun = "trace" if search.scanned == 1 else "traces"
        out.line(f"{len(found)} of {search.scanned} {noun} scanned matched")
    if found:
        return 0
    return SKIPPED_EXIT_CODE if search.unreadable else 1
