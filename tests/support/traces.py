"""Writing traces operation by operation, through the real writer and codec."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import toolreplay
from toolreplay import JsonValue, Operation, OperationIdentity, Raised, Returned
from toolreplay.trace import SessionEnding, TraceHeader, TraceWriter

Call = tuple[str, dict[str, JsonValue], JsonValue | Raised]


def write_trace(path: Path, calls: list[Call], *, mode: str = "record") -> Path:
    """Write `calls` (effect, inputs, output or Raised) as a complete trace."""
    header = TraceHeader(trace_id=f"id-{path.stem}", mode="record", library_version="test")
    writer = TraceWriter(path, header)
    seen: Counter[tuple[str, str]] = Counter()
    for logical_id, (effect, inputs, outcome) in enumerate(calls):
        namespace, _, name = effect.partition(".")
        digest = toolreplay.fingerprint(inputs)
        occurrence = seen[(effect, digest)]
        seen[(effect, digest)] += 1
        writer.append(
            Operation(
                logical_id=logical_id,
                identity=OperationIdentity(namespace, name, digest, occurrence),
                inputs=inputs,
                outcome=outcome if isinstance(outcome, Raised) else Returned(outcome),
            )
        )
    writer.close(SessionEnding("completed"))
    return path
