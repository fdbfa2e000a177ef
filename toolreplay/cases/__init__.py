"""Promoted cases: a trace, a runner and an expected return value, as a pytest module.

A case folder holds exactly three files: `case.json` (the manifest, canonical
JSON), `trace-sha256-<digest>.trp` (a byte copy of the trace, named after its
own SHA-256) and `test_case.py` (a static module that calls `verify_case` on
its own folder). It refers to nothing outside itself except the runner, which
is imported by name, so the folder can be copied anywhere the application is
importable, and a suite of thousands of cases runs in parallel unchanged.

`verify_case` checks integrity (manifest shape, trace path, size, digest)
before it imports any application module, then replays the trace strictly
under the runner and compares the return value with the expectation. Each
failure has its own error type (see `toolreplay.errors`). `verify_cases` finds
and verifies every case under some paths and returns one `CaseResult` each.

One concern per module: `manifest` (the folder's schema and `case.json`),
`assets` (reading and checking the trace copy), `verification` (one case, and
many) and `publishing` (checking, staging and publishing a new case).
"""

from toolreplay.cases.manifest import (
    CASE_FORMAT,
    CASE_FORMAT_VERSION,
    CASE_NAME_PATTERN,
    MANIFEST_NAME,
    TEST_NAME,
    CaseManifest,
    read_case_manifest,
)
from toolreplay.cases.publishing import PromotedCase, promote, promote_async
from toolreplay.cases.verification import (
    CaseResult,
    VerifiedCase,
    find_cases,
    verify_case,
    verify_case_async,
    verify_cases,
)

__all__ = [
    "CASE_FORMAT",
    "CASE_FORMAT_VERSION",
    "CASE_NAME_PATTERN",
    "MANIFEST_NAME",
    "TEST_NAME",
    "CaseManifest",
    "CaseResult",
    "PromotedCase",
    "VerifiedCase",
    "find_cases",
    "promote",
    "promote_async",
    "read_case_manifest",
    "verify_case",
    "verify_case_async",
    "verify_cases",
]
