"""The case folder's schema: its file names, `case.json`, and the rules its fields obey.

Reading a manifest touches nothing but `case.json` (and whether the trace it
names is a symbolic link): no trace is read and no application module imported.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, cast

from toolreplay.documents import problem, shown
from toolreplay.errors import CaseIntegrityError, JsonTextError
from toolreplay.files import UnreadableFileError, read_regular_file
from toolreplay.portable import JsonValue, canonical_json, load_json_text, portable_document
from toolreplay.runners import RUNNER_PATTERN

__all__ = [
    "CASE_FORMAT",
    "CASE_FORMAT_VERSION",
    "CASE_NAME_PATTERN",
    "MANIFEST_NAME",
    "TEST_NAME",
    "CaseManifest",
    "RunnerKind",
    "integrity_error",
    "load_manifest_document",
    "manifest_from_document",
    "read_case_manifest",
    "read_manifest",
    "trace_asset_name",
]

CASE_FORMAT = "toolreplay.case"
CASE_FORMAT_VERSION = 1
MANIFEST_NAME = "case.json"
TEST_NAME = "test_case.py"

CASE_NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
"""What a case name looks like: 1-128 letters, digits, `_`, `-` or `.`, not starting with `_-.`."""

RunnerKind = Literal["sync", "async"]

_TRACE_NAME = re.compile(r"trace-sha256-(?P<digest>[0-9a-f]{64})\.trp")


def trace_asset_name(digest: str) -> str:
    """The name of a case's trace copy: `trace-sha256-<its sha256>.trp`."""
    return f"trace-sha256-{digest}.trp"


@dataclass(frozen=True, slots=True)
class CaseManifest:
    """What `case.json` says. `expected` is the return value the runner must produce."""

    name: str
    trace_path: str
    trace_sha256: str
    trace_size_bytes: int
    runner: str
    runner_kind: RunnerKind
    expected: JsonValue
    effects: tuple[str, ...]
    operation_count: int

    def to_json(self) -> bytes:
        """The canonical JSON bytes of the manifest (what `case.json` holds)."""
        document: dict[str, JsonValue] = {
            "format": CASE_FORMAT,
            "format_version": CASE_FORMAT_VERSION,
            "name": self.name,
            "trace": {
                "path": self.trace_path,
                "sha256": self.trace_sha256,
                "size_bytes": self.trace_size_bytes,
            },
            "runner": {"target": self.runner, "kind": self.runner_kind},
            "replay": {"mode": "strict"},
            "expectation": {"kind": "return_equals", "value": self.expected},
            "scope": {
                "effects": list(self.effects),
                "operation_count": self.operation_count,
                "covers": "the instrumented effects recorded in the trace, and nothing else",
            },
        }
        return canonical_json(document) + b"\n"


def integrity_error(display: Path, message: str) -> CaseIntegrityError:
    """A `CaseIntegrityError` naming the case folder as `display`."""
    return CaseIntegrityError(f"case {display}: {message}")


def read_case_manifest(directory: str | os.PathLike[str]) -> CaseManifest:
    """Read and check `case.json` of a case folder (no trace or application is touched)."""
    return read_manifest(Path(directory), Path(directory))


def load_manifest_document(folder: Path, display: Path) -> object:
    """Read `case.json` in `folder` and parse it as JSON (`load_json_text`), nothing more.

    `manifest_from_document` checks the rest. Raises `CaseIntegrityError` (naming
    the case as `display`) when the folder or its manifest, a regular file and not
    a symbolic link, cannot be read, or the text is not JSON.
    """
    try:
        data = read_regular_file(folder / MANIFEST_NAME, MANIFEST_NAME, follow_symlinks=False)
    except UnreadableFileError as error:
        raise _unreadable_manifest(folder, display, error) from None
    try:
        return load_json_text(data, what="the manifest")
    except JsonTextError as error:
        raise integrity_error(display, f"{MANIFEST_NAME} is not valid JSON: {error}") from None


def _unreadable_manifest(
    folder: Path, display: Path, error: UnreadableFileError
) -> CaseIntegrityError:
    # Diagnosed only after the read failed: a good manifest costs one open, no stat.
    try:
        if not folder.is_dir():
            return integrity_error(
                display, "is not a folder (a case is a folder holding case.json)"
            )
    except OSError as failure:  # a name too long, a folder that cannot be searched
        return integrity_error(display, f"cannot be read: {failure.strerror or failure}")
    if error.kind == "os_error":
        return integrity_error(display, error.problem)
    return integrity_error(display, f"has no {MANIFEST_NAME} (a regular file)")


def read_manifest(folder: Path, display: Path) -> CaseManifest:
    """Read the manifest in `folder`; errors name the case as `display`.

    A staged case is read from its staging folder but named by its destination.
    """
    return manifest_from_document(folder, display, load_manifest_document(folder, display))


def manifest_from_document(folder: Path, display: Path, document: object) -> CaseManifest:
    """Check what `load_manifest_document` parsed from `folder` and make it a manifest.

    Every rule but reading and parsing: portable values, the format and its
    version, the fields and their types (`toolreplay.documents.case`, whose errors
    name the JSON path, what was expected and the value found), the trace path
    (RFC 0005 §3.3).
    """
    try:
        checked = portable_document(document, what="the manifest")
    except JsonTextError as error:
        raise integrity_error(display, f"{MANIFEST_NAME} is not valid JSON: {error}") from None
    # The format and its version first: another version is named as such, not as the
    # fields it may have changed.
    raw = cast(dict[str, Any], checked) if type(checked) is dict else {}
    if raw.get("format") != CASE_FORMAT:
        found = shown(raw["format"]) if "format" in raw else "nothing (no such key)"
        raise integrity_error(
            display,
            problem(MANIFEST_NAME, "$.format", f'"{CASE_FORMAT}" (a case manifest)', found)
            if raw
            else problem(MANIFEST_NAME, "$", "an object (a case manifest)", shown(checked)),
        )
    if raw.get("format_version") != CASE_FORMAT_VERSION:
        raise integrity_error(
            display,
            problem(
                MANIFEST_NAME,
                "$.format_version",
                f"{CASE_FORMAT_VERSION}, the version this toolreplay reads (promote the case "
                "again, or use the toolreplay release that wrote it)",
                shown(raw["format_version"]) if "format_version" in raw else "nothing",
            ),
        )
    manifest = _well_formed(raw)
    if manifest is None:
        # Imported here: pydantic is loaded to word what is wrong (or to accept what the
        # plain checks were unsure of), never for a well-formed manifest.
        from toolreplay.documents.case import CaseManifestModel
        from toolreplay.documents.validation import validate_document

        def refuse(message: str) -> CaseIntegrityError:
            return integrity_error(display, message)

        model = validate_document(CaseManifestModel, raw, where=MANIFEST_NAME, error=refuse)
        manifest = model.to_manifest()
    _check_trace_path(folder, display, manifest.trace_path, manifest.trace_sha256)
    return manifest


_KEYS = frozenset(
    {"format", "format_version", "name", "trace", "runner", "replay", "expectation", "scope"}
)
_TRACE_KEYS = frozenset({"path", "sha256", "size_bytes"})
_SCOPE_KEYS = frozenset({"effects", "operation_count", "covers"})
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _well_formed(raw: dict[str, Any]) -> CaseManifest | None:
    """The manifest if every field is plainly well-formed, else None (then the model,
    `documents.case.CaseManifestModel`, decides and words the error).

    The hot path of `verify` and of every case a pytest run collects: a manifest is read
    per case, in every worker, and the model costs an import of pydantic. It accepts
    nothing the model refuses and builds what the model would
    (`tests/test_documents.py` proves it over well-formed and corrupted manifests).
    """
    if raw.keys() != _KEYS:
        return None
    name, trace, runner = raw["name"], raw["trace"], raw["runner"]
    expectation, scope = raw["expectation"], raw["scope"]
    if not (
        type(name) is str
        and CASE_NAME_PATTERN.fullmatch(name)
        and type(trace) is dict
        and trace.keys() == _TRACE_KEYS
        and type(runner) is dict
        and runner.keys() == {"target", "kind"}
        and type(raw["replay"]) is dict
        and raw["replay"] == {"mode": "strict"}
        and type(expectation) is dict
        and expectation.keys() == {"kind", "value"}
        and expectation["kind"] == "return_equals"
        and type(scope) is dict
        and scope.keys() == _SCOPE_KEYS
    ):
        return None
    trace, runner = cast(dict[str, Any], trace), cast(dict[str, Any], runner)
    scope = cast(dict[str, Any], scope)
    path, digest, size = trace["path"], trace["sha256"], trace["size_bytes"]
    target, kind = runner["target"], runner["kind"]
    effects, count = scope["effects"], scope["operation_count"]
    if not (
        type(path) is str
        and type(digest) is str
        and _SHA256.fullmatch(digest)
        and type(size) is int
        and size >= 0
        and type(target) is str
        and RUNNER_PATTERN.fullmatch(target)
        and (kind == "sync" or kind == "async")
        and type(effects) is list
        and all(type(effect) is str for effect in cast(list[object], effects))
        and type(count) is int
        and count >= 0
        and type(scope["covers"]) is str
    ):
        return None
    return CaseManifest(
        name=name,
        trace_path=path,
        trace_sha256=digest,
        trace_size_bytes=size,
        runner=target,
        runner_kind=kind,
        expected=cast(JsonValue, cast(dict[str, Any], expectation)["value"]),
        effects=tuple(cast(list[str], effects)),
        operation_count=count,
    )


def _check_trace_path(folder: Path, display: Path, path: str, digest: str) -> None:
    """The trace path rules of RFC 0005 §3.3: one bare name, after its own digest, no link."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or "\\" in path or re.match(r"[A-Za-z]:", path):
        raise integrity_error(
            display, f"trace path {path!r} is absolute; it must name a file in the case folder"
        )
    if ".." in pure.parts or len(pure.parts) != 1:
        raise integrity_error(
            display, f"trace path {path!r} leaves the case folder; it must be a bare file name"
        )
    match = _TRACE_NAME.fullmatch(path)
    if match is None or match["digest"] != digest:
        raise integrity_error(
            display, f"trace path {path!r} must be trace-sha256-<its sha256>.trp ({digest[:12]}...)"
        )
    if (folder / path).is_symlink():
        raise integrity_error(display, f"trace {path} is a symbolic link; a case holds a real copy")
