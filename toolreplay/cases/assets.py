"""The trace asset of a case: read once, checked for size and digest, parsed from those bytes.

The asset is opened without blocking and must be a regular file of exactly the
size the manifest records before a byte of it is read, so a pipe, a device or a
huge (or sparse) file in a case folder is refused at once instead of hanging or
exhausting memory.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from toolreplay.cases.manifest import CaseManifest, integrity_error
from toolreplay.errors import TraceError
from toolreplay.files import UnreadableFileError, read_regular_file
from toolreplay.trace.reader import Trace, parse_trace

__all__ = ["load_case_trace", "trace_scope"]


def trace_scope(trace: Trace) -> tuple[tuple[str, ...], int]:
    """What a manifest's `scope` says of `trace`: its sorted effect names, its operation count."""
    return tuple(sorted(trace.effects)), len(trace)


def load_case_trace(folder: Path, display: Path, manifest: CaseManifest) -> Trace:
    """Read the trace asset once, check size and digest, and parse those very bytes."""
    name = manifest.trace_path
    try:
        data = read_regular_file(folder / name, "trace", size=manifest.trace_size_bytes)
    except UnreadableFileError as error:
        if error.kind == "wrong_size":
            raise integrity_error(
                display,
                f"trace {name} is {error.size} bytes but the manifest says "
                f"{manifest.trace_size_bytes}; the trace was changed after promotion",
            ) from None
        raise integrity_error(display, f"trace {name}: {error.problem}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != manifest.trace_sha256:
        raise integrity_error(
            display,
            f"trace {name} has SHA-256 {digest[:16]}... but the manifest says "
            f"{manifest.trace_sha256[:16]}...; the trace was changed after promotion",
        )
    try:
        # Named by where the case is published, so messages never show a staging folder.
        trace = parse_trace(display / name, data)
    except TraceError as error:
        raise integrity_error(display, f"trace asset is not a valid trace: {error}") from error
    if trace_scope(trace) != (manifest.effects, manifest.operation_count):
        raise integrity_error(
            display,
            "the manifest's scope (effects and operation count) does not describe its trace",
        )
    return trace
