"""The case folder's schema: its file names, `case.json`, and the rules its fields obey.

Reading a manifest touches nothing but `case.json` (and whether the trace it
names is a symbolic link): no trace is read and no application module imported.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal, cast

from toolreplay.errors import CaseIntegrityError, JsonTextError
from toolreplay.files import UnreadableFileError, read_regular_file
from toolreplay.portable import JsonValue, canonical_json, parse_json_text
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


def _expect_object(
    directory: Path, value: object, where: str, keys: frozenset[str]
) -> dict[str, Any]:
    if type(value) is not dict:
        raise integrity_error(directory, f"{where} must be a JSON object")
    obj = cast(dict[str, Any], value)
    if obj.keys() != keys:
        problems: list[str] = []
        if keys - obj.keys():
            problems.append(f"missing {', '.join(sorted(keys - obj.keys()))}")
        if obj.keys() - keys:
            problems.append(f"unknown {', '.join(sorted(obj.keys() - keys))}")
        raise integrity_error(directory, f"{where}: {'; '.join(problems)}")
    return obj


_MANIFEST_KEYS = frozenset(
    {"format", "format_version", "name", "trace", "runner", "replay", "expectation", "scope"}
)


def read_case_manifest(directory: str | os.PathLike[str]) -> CaseManifest:
    """Read and check `case.json` of a case folder (no trace or application is touched)."""
    return read_manifest(Path(directory), Path(directory))


def _load_document(folder: Path, display: Path) -> dict[str, Any]:
    manifest_path = folder / MANIFEST_NAME
    try:
        if not folder.is_dir():
            raise integrity_error(display, "is not a folder (a case is a folder holding case.json)")
        if manifest_path.is_symlink() or not manifest_path.is_file():
            raise integrity_error(display, f"has no {MANIFEST_NAME} (a regular file)")
    except OSError as error:  # a name too long, a folder that cannot be searched
        raise integrity_error(display, f"cannot be read: {error.strerror or error}") from None
    try:
        document = parse_json_text(
            read_regular_file(manifest_path, MANIFEST_NAME), what="the manifest"
        )
    except UnreadableFileError as error:
        raise integrity_error(display, error.problem) from None
    except JsonTextError as error:
        raise integrity_error(display, f"{MANIFEST_NAME} is not valid JSON: {error}") from None
    return cast(dict[str, Any], document) if type(document) is dict else {}


def read_manifest(folder: Path, display: Path) -> CaseManifest:
    """Read the manifest in `folder`; errors name the case as `display`.

    A staged case is read from its staging folder but named by its destination.
    """
    raw = _load_document(folder, display)
    if raw.get("format") != CASE_FORMAT:
        raise integrity_error(
            display, f'{MANIFEST_NAME} is not a case manifest ("format" must be "{CASE_FORMAT}")'
        )
    if raw.get("format_version") != CASE_FORMAT_VERSION:
        raise integrity_error(
            display,
            f"{MANIFEST_NAME} has format_version {json.dumps(raw.get('format_version'))}; this "
            f"toolreplay reads version {CASE_FORMAT_VERSION}. Promote the case again, or use "
            "the toolreplay release that wrote it",
        )
    raw = _expect_object(display, raw, MANIFEST_NAME, _MANIFEST_KEYS)
    name = raw["name"]
    if type(name) is not str or not CASE_NAME_PATTERN.fullmatch(name):
        raise integrity_error(display, f"name {json.dumps(name)} is not a valid case name")
    trace = _expect_object(
        display, raw["trace"], "trace", frozenset({"path", "sha256", "size_bytes"})
    )
    runner = _expect_object(display, raw["runner"], "runner", frozenset({"target", "kind"}))
    replay = _expect_object(display, raw["replay"], "replay", frozenset({"mode"}))
    expectation = _expect_object(
        display, raw["expectation"], "expectation", frozenset({"kind", "value"})
    )
    scope = _expect_object(
        display, raw["scope"], "scope", frozenset({"effects", "operation_count", "covers"})
    )
    path, digest, size = trace["path"], trace["sha256"], trace["size_bytes"]
    if type(path) is not str or type(digest) is not str or type(size) is not int:
        raise integrity_error(
            display, "trace must have a string path and sha256 and an int size_bytes"
        )
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise integrity_error(display, f"trace sha256 {digest!r} is not 64 lowercase hex digits")
    _check_trace_path(folder, display, path, digest)
    if type(runner["target"]) is not str or not RUNNER_PATTERN.fullmatch(runner["target"]):
        raise integrity_error(
            display, f"runner target {json.dumps(runner['target'])} is not module:callable"
        )
    if runner["kind"] not in ("sync", "async"):
        raise integrity_error(
            display, f'runner kind must be "sync" or "async", not {runner["kind"]!r}'
        )
    if replay["mode"] != "strict":
        raise integrity_error(display, f'replay mode must be "strict", not {replay["mode"]!r}')
    if expectation["kind"] != "return_equals":
        raise integrity_error(
            display, f'expectation kind must be "return_equals", not {expectation["kind"]!r}'
        )
    effects = scope["effects"]
    if type(effects) is not list or not all(type(e) is str for e in cast(list[Any], effects)):
        raise integrity_error(display, "scope effects must be a list of effect names")
    if type(scope["operation_count"]) is not int:
        raise integrity_error(display, "scope operation_count must be an int")
    return CaseManifest(
        name=name,
        trace_path=path,
        trace_sha256=digest,
        trace_size_bytes=size,
        runner=runner["target"],
        runner_kind=runner["kind"],
        expected=cast(JsonValue, expectation["value"]),  # portable: the whole document is
        effects=tuple(cast(list[str], effects)),
        operation_count=scope["operation_count"],
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
