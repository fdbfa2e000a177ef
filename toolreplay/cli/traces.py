"""The trace arguments of the commands: a local path, or the URL of one trace object.

`show`, `replay`, `fork`, `diff`, `promote` and `tui` take their trace as text (a Typer
`Path` would turn `s3://bucket/key` into `s3:/bucket/key`) and turn it into a file
here, once: a URL (`s3://`, `gs://`, `az://`, `file://`, anything with `://`) is fetched
into the local cache and checked by its footer digest (`toolreplay.objectstore.cache`),
a path is taken as it is. The object-store code is imported only when a URL is given.
Whatever a command writes (a fork's branch, a case, the debugger's work folder) goes
where it says, never into the cache.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["is_url", "shown", "trace_file"]


def is_url(given: str) -> bool:
    """Whether a trace argument is a URL rather than a local path."""
    return "://" in given


def trace_file(given: str) -> Path:
    """The local file of the trace argument `given`: its cached copy for a URL, else the
    path itself (checked by whoever reads it, as before).

    Raises `ObjectStoreError` (naming the URL as given) when the URL names no trace
    object or it cannot be fetched, or fails its digest.
    """
    if not is_url(given):
        return Path(given)
    from toolreplay.objectstore.cache import fetched_trace

    return fetched_trace(given)


def shown(given: str) -> str:
    """How messages name the trace argument `given`: a URL as given, a path as a path."""
    return given if is_url(given) else str(Path(given))
