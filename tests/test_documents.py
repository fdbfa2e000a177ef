"""The documents' pydantic models (`toolreplay.documents`): one message style for every
reader, `toolreplay schema`, and pydantic kept off `import toolreplay` and recording.

Each reader's other refusals are tested beside it: the manifest's in
`test_cases.py::test_integrity_failures_come_before_any_application_import`, the patch
file's in `test_fork.py` and `test_whatif_targets.py`, the protocol's in
`test_protocol.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import toolreplay
from toolreplay.cases.manifest import (
    CaseManifest,
    _well_formed,  # pyright: ignore[reportPrivateUsage]  # the plain path, under test
    manifest_from_document,
    trace_asset_name,
)
from toolreplay.documents import DOCUMENTS, document_schema
from toolreplay.documents.case import CaseManifestModel
from toolreplay.errors import CaseIntegrityError, PatchFileError, ProtocolError
from toolreplay.protocol import ErrorReport, PromoteDocument, RunDocument, VerifyDocument

DIGEST = "ab" * 32


def manifest() -> dict[str, Any]:
    """A manifest as `promote` writes it (the bytes of `CaseManifest.to_json`)."""
    written = CaseManifest(
        name="refund",
        trace_path=trace_asset_name(DIGEST),
        trace_sha256=DIGEST,
        trace_size_bytes=120,
        runner="refund_app:main",
        runner_kind="sync",
        expected={"decision": "refund"},
        effects=("crm.customer.get",),
        operation_count=2,
    ).to_json()
    return json.loads(written)


def patch_file(tmp_path: Path) -> Path:
    patches = [
        toolreplay.replace_output(
            effect="crm.customer.get", inputs={"customer_id": 42}, value={"tier": "gold"}
        ),
        toolreplay.replace_error(at=3, error=TimeoutError("crm timed out")),
        toolreplay.supply_output(effect="review.queue.add", value={"ticket": "RV-1"}),
    ]
    return toolreplay.write_patches(tmp_path / "what-if.json", patches)


def run_document() -> dict[str, Any]:
    return RunDocument(
        "replay",
        outcome="replay_contract_error",
        runner="refund_app:main",
        error=ErrorReport("toolreplay.errors.ReplayMiss", "no recorded call"),
        paths={"source": "incident.trp"},
        counts={"operations_in_trace": 2},
    ).to_dict()


# --- one message style: where, the JSON path, what was expected, the value found -----------


def test_a_malformed_manifest_names_the_path_the_expectation_and_the_value(
    tmp_path: Path,
) -> None:
    document = manifest()
    document["scope"]["operation_count"] = "12"
    with pytest.raises(CaseIntegrityError) as raised:
        manifest_from_document(tmp_path, tmp_path, document)
    assert str(raised.value) == (
        f'case {tmp_path}: case.json: $.scope.operation_count: expected an integer, found "12"'
    )


def test_a_malformed_patch_file_names_the_path_the_expectation_and_the_value(
    tmp_path: Path,
) -> None:
    path = patch_file(tmp_path)
    document = json.loads(path.read_text())
    document["patches"][1]["at"] = -3
    path.write_text(json.dumps(document))
    with pytest.raises(PatchFileError) as raised:
        toolreplay.read_patches(path)
    assert str(raised.value) == f"{path}: $.patches[1].at: expected an integer >= 0, found -3"
    assert raised.value.path == path


def test_a_malformed_run_document_names_the_path_the_expectation_and_the_value() -> None:
    document = run_document()
    document["error"]["candidates"] = [{"logical_id": "7"}]
    with pytest.raises(ProtocolError) as raised:
        RunDocument.from_json(json.dumps(document))
    assert str(raised.value) == (
        'toolreplay.run document: $.error.candidates[0].logical_id: expected an integer, found "7" '
        "(and 8 more problems); read it with the toolreplay version that wrote it"
    )


def test_values_found_are_shown_escaped_and_cut_to_a_line(tmp_path: Path) -> None:
    # A document is untrusted: what it holds reaches the terminal escaped, never raw.
    document = manifest()
    document["runner"]["kind"] = "\x1b[31mred\x1b[0m" + "x" * 200
    with pytest.raises(CaseIntegrityError) as raised:
        manifest_from_document(tmp_path, tmp_path, document)
    message = str(raised.value)
    assert "\x1b" not in message
    assert '$.runner.kind: expected one of "sync", "async", found "\\u001b[31mred' in message
    assert message.endswith("xxx...")


# --- the manifest's plain checks agree with its model --------------------------------------

ODD = st.one_of(
    st.integers(min_value=-2, max_value=2),
    st.sampled_from(
        [None, True, 1.5, "", "x", "12", [], {}, ["crm"], [1], "a" * 64, "AB" * 32, "strict"]
    ),
    st.sampled_from(["return_equals", "sync", "module:callable", "crm.customer.get"]),
)
PLACES = [
    ("name",),
    ("trace",),
    ("trace", "path"),
    ("trace", "sha256"),
    ("trace", "size_bytes"),
    ("runner",),
    ("runner", "target"),
    ("runner", "kind"),
    ("replay",),
    ("replay", "mode"),
    ("expectation",),
    ("expectation", "kind"),
    ("expectation", "value"),
    ("scope",),
    ("scope", "effects"),
    ("scope", "operation_count"),
    ("scope", "covers"),
]


@st.composite
def manifests(draw: st.DrawFn) -> dict[str, Any]:
    """A manifest `promote` writes, with up to two values replaced, removed or added."""
    document = manifest()
    for place in draw(st.lists(st.sampled_from(PLACES), min_size=1, max_size=2)):
        *parents, key = place
        target: Any = document
        for parent in parents:
            target = target.get(parent) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            continue
        change = draw(st.sampled_from(["replace", "remove", "add"]))
        if change == "replace":
            target[key] = draw(ODD)
        elif change == "remove":
            target.pop(key, None)
        else:
            target[key + "_extra"] = draw(ODD)
    return document


@settings(max_examples=600)
@given(document=manifests())
def test_the_manifest_plain_checks_accept_only_what_its_model_accepts_and_the_same(
    document: dict[str, Any],
) -> None:
    # A well-formed manifest is checked without pydantic (the hot path of verify and of
    # a pytest run); the model decides everything else and words it.
    plain = _well_formed(document)  # pyright: ignore[reportPrivateUsage]  # under test
    try:
        modelled: CaseManifest | None = CaseManifestModel.model_validate(document).to_manifest()
    except ValidationError:
        modelled = None
    if plain is not None:
        assert plain == modelled


def test_the_manifest_promote_writes_takes_the_plain_path() -> None:
    assert _well_formed(manifest()) is not None  # pyright: ignore[reportPrivateUsage]


# --- toolreplay schema --------------------------------------------------------------------


def toolreplay_cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolreplay", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_schema_command_lists_the_documents_and_prints_each_schema() -> None:
    listed = toolreplay_cli("schema")
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == list(DOCUMENTS)
    for name in DOCUMENTS:
        printed = toolreplay_cli("schema", name)
        assert printed.returncode == 0, printed.stderr
        schema = json.loads(printed.stdout)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema == document_schema(name)
    refused = toolreplay_cli("schema", "trace")
    assert refused.returncode == 2
    assert (
        "Invalid value for 'NAME': 'trace' is not a document; choose from case, patches"
        in refused.stderr
    )


def test_what_the_writers_write_the_schemas_accept_and_a_bad_value_they_refuse(
    tmp_path: Path,
) -> None:
    # The schema an editor checks with agrees with the reader: a written file is valid,
    # the value the reader refuses is refused.
    written: dict[str, Any] = {
        "case": manifest(),
        "patches": json.loads(patch_file(tmp_path).read_text()),
        "run": run_document(),
        "promote": PromoteDocument("invalid_arguments").to_dict(),
        "verify": VerifyDocument().to_dict(),
    }
    assert written.keys() == DOCUMENTS.keys()
    for name, document in written.items():
        jsonschema.validate(document, document_schema(name))
    bad = manifest()
    bad["scope"]["operation_count"] = "12"
    with pytest.raises(jsonschema.ValidationError, match="'12' is not of type 'integer'"):
        jsonschema.validate(bad, document_schema("case"))
    patches = written["patches"]
    patches["patches"][0]["effect"] = "crm"
    with pytest.raises(
        jsonschema.ValidationError, match="is not valid under any of the given schemas"
    ):
        jsonschema.validate(patches, document_schema("patches"))


# --- imported lazily ---------------------------------------------------------------------

RECORD_AND_CAPTURE = """
import sys
import toolreplay

@toolreplay.effect("crm.customer.get")
def get_customer(customer_id: int) -> dict:
    return {"id": customer_id}

with toolreplay.record(sys.argv[1] + "/recorded.trp"):
    get_customer(1)
with toolreplay.replay(sys.argv[1] + "/recorded.trp"):
    get_customer(1)
with toolreplay.capture(sys.argv[1] + "/captured", retain=toolreplay.Retention(count=5)):
    get_customer(2)
# A well-formed manifest, as verify and every pytest worker read one per case.
from pathlib import Path
from toolreplay.cases.manifest import CaseManifest, trace_asset_name
case = Path(sys.argv[1]) / "case"
case.mkdir()
digest = "ab" * 32
(case / "case.json").write_bytes(
    CaseManifest("c", trace_asset_name(digest), digest, 1, "m:f", "sync", None, (), 0).to_json()
)
assert toolreplay.read_case_manifest(case).name == "c"
print("pydantic" in sys.modules)
if len(sys.argv) > 2:  # reading a document loads it: the probe above can see it
    toolreplay.read_patches(sys.argv[2])
    print("pydantic" in sys.modules)
"""


def test_recording_replaying_capturing_and_reading_a_manifest_never_import_pydantic(
    tmp_path: Path,
) -> None:
    patches = patch_file(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", RECORD_AND_CAPTURE, str(tmp_path), str(patches)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "TOOLREPLAY_CAPTURE_RETAIN": "7D"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True"]
    assert list((tmp_path / "captured").glob("*.trp"))
