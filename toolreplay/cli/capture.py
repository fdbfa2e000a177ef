"""`toolreplay capture flush SPOOL`: upload what a capture left in its spool.

A capture to object storage (RFC 0008 §6.1) uploads in the background; a process
killed, or stopped while the store was unreachable, leaves kept traces in its spool
(the next process to capture to the same destination uploads them when it starts).
This command uploads them now, to the destination the spool records or `--to URL`.
Exit 0 when everything was uploaded, 1 when the store failed part way or a trace
could not be read (the rest stays in the spool), 2 when the spool or the destination
is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolreplay.cli.command import Command, help_markup
from toolreplay.cli.output import Output, error_fields
from toolreplay.errors import CaptureConfigError, ObjectStoreError

__all__ = ["capture"]

capture = typer.Typer(
    name="capture",
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=help_markup(),
)
"""The `capture` group (its commands are built when it runs, as every command is)."""


@capture.callback()
def _group() -> None:
    """`flush SPOOL` uploads the traces a capture to object storage left in its spool
    (a process killed, or stopped while the store was unreachable). Exit statuses: as
    the subcommand's `--help` says."""


_FLUSH = "Upload the kept traces waiting in a capture's spool to object storage."


@capture.command("flush", cls=Command, help=_FLUSH, short_help=_FLUSH)
def flush(
    spool: Annotated[
        Path,
        typer.Argument(
            metavar="SPOOL",
            help="The spool folder (TOOLREPLAY_CAPTURE_SPOOL, or the default under "
            "~/.cache/toolreplay/spool/).",
        ),
    ],
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="URL",
            help="Upload here (s3://BUCKET/PREFIX, gs://, az://, file:///FOLDER) instead "
            "of the destination the spool records.",
        ),
    ] = None,
) -> int:
    """Uploads every kept trace, oldest first, to the same keys the capture's uploader
    would (date=YYYY-MM-DD/instance=ID/NAME.trp), then deletes it from the spool; `.part`
    files (requests a killed process did not finish) are counted, never uploaded.
    Exit 0 when everything was uploaded, 1 when the store failed part way or a trace
    could not be read (what is left stays in the spool), 2 when the spool or the
    destination is refused.
    """
    out = Output()
    from toolreplay.capturing.upload import flush_spool  # obstore only when it runs
    from toolreplay.objectstore.locations import object_location

    try:
        destination = None if to is None else object_location(to)
        result = flush_spool(spool, destination)
    except (CaptureConfigError, ObjectStoreError) as error:
        out.error(str(error), (*error_fields(error), spool))
        return 2
    line = f"uploaded {result.uploaded} trace{'s' * (result.uploaded != 1)} to "
    line += result.destination.url
    if result.unfinished:
        line += f"; {result.unfinished} unfinished .part file(s) left in the spool"
    out.line(line)
    if result.failure is not None:
        out.error(f"{result.failure}; the traces not uploaded stay in {spool}", (spool,))
        return 1
    if result.unreadable:
        out.error(
            f"{spool}: {result.unreadable} kept trace(s) could not be read (not a file, or "
            "its permissions) and stay in the spool",
            (spool,),
        )
        return 1
    return 0
