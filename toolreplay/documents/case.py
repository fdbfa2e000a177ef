"""`case.json`, the manifest of a promoted case (RFC 0005 §3), as a pydantic model.

`toolreplay.cases.manifest` reads a manifest with it (after checking the format
and its version, so another version is named as such) and then checks what needs
the case folder: the trace path rules of RFC 0005 §3.3.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, cast

from pydantic import JsonValue

from toolreplay.cases.manifest import CASE_NAME_PATTERN, CaseManifest
from toolreplay.documents.validation import DocumentModel, Matching, NonNegative
from toolreplay.portable import JsonValue as PortableValue
from toolreplay.runners import RUNNER_PATTERN

__all__ = [
    "CaseManifestModel",
    "CaseName",
    "Expectation",
    "ReplaySettings",
    "RunnerTarget",
    "Scope",
    "TraceAsset",
]

_SHA256 = re.compile(r"[0-9a-f]{64}")
CaseName = Annotated[
    str,
    Matching(
        CASE_NAME_PATTERN,
        "a case name: 1-128 letters, digits, '_', '-' or '.', starting with a letter or digit",
    ),
]


class TraceAsset(DocumentModel):
    """The case's copy of its trace."""

    path: str
    """`trace-sha256-<sha256>.trp`, a bare file name in the case folder."""
    sha256: Annotated[str, Matching(_SHA256, "64 lowercase hexadecimal digits")]
    """The SHA-256 of the trace file's bytes."""
    size_bytes: NonNegative
    """The trace file's size."""


class RunnerTarget(DocumentModel):
    """The application entry point the case replays."""

    target: Annotated[str, Matching(RUNNER_PATTERN, "module:callable, like myapp.agent:handle")]
    """`package.module:function` or `module:Class.method`."""
    kind: Literal["sync", "async"]
    """Whether the runner is called, or awaited."""


class ReplaySettings(DocumentModel):
    """How the trace is replayed: strictly, always."""

    mode: Literal["strict"]


class Expectation(DocumentModel):
    """What the runner must return."""

    kind: Literal["return_equals"]
    value: JsonValue
    """The return value, as portable JSON."""


class Scope(DocumentModel):
    """What the case covers."""

    effects: list[str]
    """The qualified names of the effects the trace records (as the trace spells them:
    a trace is untrusted, and `verify` checks them against it)."""
    operation_count: NonNegative
    """The operations the trace records."""
    covers: str
    """In words: the recorded effects, and nothing else."""


class CaseManifestModel(DocumentModel):
    """`case.json`: a promoted case's manifest (format `toolreplay.case`, version 1)."""

    format: Literal["toolreplay.case"]
    format_version: Literal[1]
    name: CaseName
    """The case's name."""
    trace: TraceAsset
    runner: RunnerTarget
    replay: ReplaySettings
    expectation: Expectation
    scope: Scope

    def to_manifest(self) -> CaseManifest:
        """What the manifest says, as `toolreplay.cases.CaseManifest`."""
        return CaseManifest(
            name=self.name,
            trace_path=self.trace.path,
            trace_sha256=self.trace.sha256,
            trace_size_bytes=self.trace.size_bytes,
            runner=self.runner.target,
            runner_kind=self.runner.kind,
            expected=cast(PortableValue, self.expectation.value),
            effects=tuple(self.scope.effects),
            operation_count=self.scope.operation_count,
        )
