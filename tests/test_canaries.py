"""The acceptance canary tests of RFC 0007: no secret byte is written or printed.

Canaries of every secret rule kind travel in effect inputs, outputs and errors.
With the default policy a recording refuses them, naming path and rule; with
redaction rules the same application is recorded, replayed, forked, diffed,
promoted and verified, in real child processes, and not one canary byte is in
any file or any output. Placeholders are deterministic across processes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolreplay
from tests.support import canary_app
from toolreplay import (
    RedactionPolicy,
    SecretInTraceError,
    SecretScanner,
    SessionError,
    read_trace,
)

KEY = "canary-test-redaction-key-0123456789"
OTHER_KEY = "another-redaction-key-for-the-tests-9876"
SCANNER = SecretScanner({"national-id": canary_app.NATIONAL_ID_PATTERN})
APP_SOURCE = Path(canary_app.__file__)


@pytest.fixture(scope="module")
def canaries() -> tuple[dict[str, str], dict[str, list[str]]]:
    return canary_app.make_canaries()


def secret_bytes(canaries: tuple[dict[str, str], dict[str, list[str]]]) -> list[bytes]:
    return [value.encode() for values in canaries[1].values() for value in values]


def leaks(data: bytes | str, secrets: list[bytes]) -> list[bytes]:
    """The canaries found in `data`, as bytes or JSON-escaped (a newline inside one)."""
    raw = data.encode() if isinstance(data, str) else data
    return [secret for secret in secrets if secret in raw]


def every_file(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            yield path


# --- the default policy, in this process: every kind, every part ------------------------

_CARRIED: dict[str, str] = {}


@toolreplay.effect("canary.inputs")
def take_secret(secret: str) -> str:
    return "taken"


@toolreplay.effect("canary.output")
def give_secret(kind: str) -> dict[str, str]:
    return {"kind": kind, "value": _CARRIED[kind]}


@toolreplay.effect("canary.error")
def fail_with_secret(kind: str) -> None:
    raise ValueError(f"the upstream said no to {_CARRIED[kind]}")


KINDS = sorted(canary_app.make_canaries()[0])


@pytest.mark.parametrize("part", ["inputs", "output", "error"])
@pytest.mark.parametrize("kind", KINDS)
def test_the_default_policy_refuses_every_canary_naming_part_path_and_rule(
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    canaries: tuple[dict[str, str], dict[str, list[str]]],
    kind: str,
    part: str,
) -> None:
    carriers, _ = canaries
    _CARRIED[kind] = carriers[kind]
    trace = tmp_path / "refused.trp"
    refused: pytest.ExceptionInfo[SecretInTraceError] | None = None
    with pytest.raises(SessionError) as ended:  # the refusal is remembered: the recording fails
        with toolreplay.record(trace, scanner=SCANNER):
            with pytest.raises(SecretInTraceError) as caught:
                if part == "inputs":
                    take_secret(carriers[kind])
                elif part == "output":
                    give_secret(kind)
                else:
                    fail_with_secret(kind)
            refused = caught
    assert refused is not None
    finding = refused.value.findings[0]
    assert (finding.part, finding.rule) == (part, kind)
    assert finding.path == {"inputs": "$.secret", "output": "$.value", "error": "$.message"}[part]
    assert finding.effect == f"canary.{part}"
    message = str(refused.value)
    assert f"canary.{part} {part} at {finding.path}: {kind}" in message
    secrets = secret_bytes(canaries)
    assert leaks(message, secrets) == []
    assert leaks(str(ended.value), secrets) == []
    assert read_trace(trace).operations == ()  # nothing of the call was written
    assert leaks(trace.read_bytes(), secrets) == []
    out, err = capfd.readouterr()
    assert leaks(out + err, secrets) == []


def test_an_output_refusal_never_shows_the_bodys_exception(
    tmp_path: Path, canaries: tuple[dict[str, str], dict[str, list[str]]]
) -> None:
    # The error the body raised holds the secret; the refusal replaces it, and a
    # printed traceback does not show it as context.
    import traceback

    _CARRIED["jwt"] = canaries[0]["jwt"]
    refused: pytest.ExceptionInfo[SecretInTraceError] | None = None
    with pytest.raises(SessionError), toolreplay.record(tmp_path / "t.trp"):
        with pytest.raises(SecretInTraceError) as caught:
            fail_with_secret("jwt")
        refused = caught
    assert refused is not None
    printed = "".join(traceback.format_exception(refused.value))
    assert leaks(printed, secret_bytes(canaries)) == []
    assert refused.value.__suppress_context__


# --- the command line, in child processes ---------------------------------------------


def cli(
    cwd: Path, env: dict[str, str], *args: str, outputs: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "toolreplay", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if outputs is not None:
        outputs += [result.stdout, result.stderr]
    return result


def project_env(
    canaries: tuple[dict[str, str], dict[str, list[str]]],
    *,
    key: str | None = KEY,
    redact: bool = True,
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLREPLAY_", "CANARY_"))}
    env["CANARY_SECRETS"] = json.dumps(canaries[0])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if key is not None:
        env["TOOLREPLAY_REDACTION_KEY"] = key
    if redact:
        env["CANARY_REDACT"] = "1"
    return env


def make_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(APP_SOURCE, root / "canary_app.py")
    return root


PATTERN = f"national-id={canary_app.NATIONAL_ID_PATTERN}"


def test_the_default_policy_refuses_in_a_child_process_and_prints_no_canary(
    tmp_path: Path, canaries: tuple[dict[str, str], dict[str, list[str]]]
) -> None:
    root = make_project(tmp_path / "app")
    # The key is set, so vault.secret.check's own rule redacts its input; nothing else
    # is redacted, and the first output holding a canary is refused.
    env = project_env(canaries, redact=False)
    outputs: list[str] = []
    result = cli(
        root, env, "record", "-r", "canary_app:main", "-o", "run.trp", "--pattern", PATTERN,
        "--format", "json", outputs=outputs,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["outcome"] == "session_error"
    assert report["error"]["type"] == "toolreplay.errors.SecretInTraceError"
    first = sorted(canaries[0])[0]
    assert f"vault.secret.fetch output at $.value: {first}" in report["error"]["message"]
    secrets = secret_bytes(canaries)
    assert leaks("".join(outputs), secrets) == []
    for path in every_file(root):
        assert leaks(path.read_bytes(), secrets) == [], path
    kept = read_trace(root / "run.trp")
    assert [op.effect for op in kept.operations] == ["vault.secret.check"] * len(canaries[0])


def test_with_redaction_rules_no_canary_byte_is_written_or_printed_anywhere(
    tmp_path: Path, canaries: tuple[dict[str, str], dict[str, list[str]]]
) -> None:
    root = make_project(tmp_path / "app")
    env = project_env(canaries)
    outputs: list[str] = []

    recorded = cli(
        root, env, "record", "-r", "canary_app:main", "-o", "incident.trp", "--pattern",
        PATTERN, "--format", "json", outputs=outputs,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    returned = json.loads(recorded.stdout)["return_value"]
    kinds = len(canaries[0])
    assert returned == {"decision": "allow", "fetched": kinds, "refused": kinds}
    trace_path = root / "incident.trp"
    trace = read_trace(trace_path)
    assert len(trace) == 3 * kinds + 1
    assert stat.S_IMODE(trace_path.stat().st_mode) == 0o600

    scanned = cli(root, env, "scan", "incident.trp", "--pattern", PATTERN, outputs=outputs)
    assert scanned.returncode == 0, scanned.stdout
    shown = cli(root, env, "show", "incident.trp", outputs=outputs)
    assert shown.returncode == 0, shown.stderr
    assert "<redacted:" in shown.stdout

    replayed = cli(root, env, "replay", "incident.trp", "--format", "json", outputs=outputs)
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout)["return_value"] == returned

    decide = next(op for op in trace.operations if op.effect == "policy.access.decide")
    patch = toolreplay.replace_output(
        effect=decide.effect, inputs=decide.inputs, value={"decision": "deny", "valid": 0}
    )
    toolreplay.write_patches(root / "deny.patches.json", [patch])
    forked = cli(
        root, env, "fork", "incident.trp", "-p", "deny.patches.json", "-o", "branch.trp",
        "--format", "json", outputs=outputs,
    )  # fmt: skip
    assert forked.returncode == 0, forked.stderr
    assert json.loads(forked.stdout)["return_value"]["decision"] == "deny"
    assert stat.S_IMODE((root / "branch.trp").stat().st_mode) == 0o600
    assert stat.S_IMODE((root / "deny.patches.json").stat().st_mode) == 0o600

    diffed = cli(root, env, "diff", "incident.trp", "branch.trp", outputs=outputs)
    assert "output_changed" in diffed.stdout, diffed.stdout + diffed.stderr

    expected = json.dumps({"decision": "deny", "fetched": kinds, "refused": kinds})
    promoted = cli(
        root, env, "promote", "branch.trp", "-o", "tests/cases/deny", "--name", "deny",
        "-r", "canary_app:main", "--expect-json", expected, outputs=outputs,
    )  # fmt: skip
    assert promoted.returncode == 0, promoted.stderr
    case = root / "tests" / "cases" / "deny"
    assert {stat.S_IMODE(p.stat().st_mode) for p in case.iterdir()} == {0o644}
    assert stat.S_IMODE(case.stat().st_mode) == 0o755
    verified = cli(root, env, "verify", "tests/cases", outputs=outputs)
    assert verified.returncode == 0, verified.stdout + verified.stderr

    secrets = secret_bytes(canaries)
    assert leaks("".join(outputs), secrets) == []
    files = list(every_file(root))
    assert len(files) >= 7
    for path in files:
        assert leaks(path.read_bytes(), secrets) == [], path


def fingerprints_and_values(path: Path) -> list[tuple[str, str, object, object]]:
    trace = read_trace(path)
    return [(op.effect, op.identity.fingerprint, op.inputs, op.outcome) for op in trace.operations]


def test_separate_processes_redact_alike_and_another_key_differs(
    tmp_path: Path, canaries: tuple[dict[str, str], dict[str, list[str]]]
) -> None:
    root = make_project(tmp_path / "app")
    env = project_env(canaries)
    for name in ("first.trp", "second.trp"):
        result = cli(root, env, "record", "-r", "canary_app:main", "-o", name)
        assert result.returncode == 0, result.stderr
    other = cli(
        root, project_env(canaries, key=OTHER_KEY), "record", "-r", "canary_app:main", "-o",
        "other.trp",
    )  # fmt: skip
    assert other.returncode == 0, other.stderr

    first = fingerprints_and_values(root / "first.trp")
    assert first == fingerprints_and_values(root / "second.trp")
    third = fingerprints_and_values(root / "other.trp")
    redacted = [i for i, row in enumerate(first) if row[0] == "vault.secret.check"]
    assert redacted
    for index in redacted:  # the secret input is redacted: another key, another identity
        assert first[index][1] != third[index][1]
        assert first[index][2] != third[index][2]
    unredacted = [i for i, row in enumerate(first) if row[0] == "policy.access.decide"]
    assert [first[i][1] for i in unredacted] == [third[i][1] for i in unredacted]

    key_id = read_trace(root / "first.trp").header.metadata["toolreplay.redaction"]
    other_id = read_trace(root / "other.trp").header.metadata["toolreplay.redaction"]
    assert isinstance(key_id, dict)
    assert isinstance(other_id, dict)
    assert key_id["key_id"] != other_id["key_id"]
    assert KEY not in (root / "first.trp").read_text()

    wrong = cli(root, project_env(canaries, key=OTHER_KEY), "replay", "first.trp")
    assert wrong.returncode == 2
    assert str(key_id["key_id"]) in wrong.stderr
    assert str(other_id["key_id"]) in wrong.stderr
    missing = cli(root, project_env(canaries, key=None), "replay", "first.trp")
    assert missing.returncode == 2
    assert "TOOLREPLAY_REDACTION_KEY" in missing.stderr
    assert str(key_id["key_id"]) in missing.stderr
    assert OTHER_KEY not in wrong.stderr + wrong.stdout


def test_scan_finds_every_kind_and_redact_writes_a_clean_copy_with_lineage(
    tmp_path: Path, canaries: tuple[dict[str, str], dict[str, list[str]]]
) -> None:
    root = make_project(tmp_path / "app")
    env = project_env(canaries, redact=False)
    recorded = cli(
        root, env, "record", "-r", "canary_app:main", "-o", "leaky.trp", "--secrets", "warn",
        "--pattern", PATTERN,
    )  # fmt: skip
    assert recorded.returncode == 0, recorded.stderr
    assert "SecretInTraceWarning" in recorded.stderr
    source = root / "leaky.trp"
    source_bytes = source.read_bytes()

    scanned = cli(root, env, "scan", "leaky.trp", "--pattern", PATTERN, "--format", "json")
    assert scanned.returncode == 1
    document = json.loads(scanned.stdout)
    found = {(f["effect"], f["part"], f["rule"]) for f in document["findings"]}
    for kind in canaries[0]:
        assert ("vault.secret.fetch", "output", kind) in found
        assert ("vault.secret.rotate", "error", kind) in found
    secrets = secret_bytes(canaries)
    assert leaks(scanned.stdout + scanned.stderr, secrets) == []
    text = cli(root, env, "scan", str(root))
    assert text.returncode == 1
    assert "leaky.trp:" in text.stdout
    assert leaks(text.stdout + text.stderr, secrets) == []

    redacted = cli(
        root, env, "redact", "leaky.trp", "clean.trp", "--rule", "vault.secret.check:$.secret",
        "--rule", "$..card_holder", "--redact-secrets", "--pattern",
        canary_app.NATIONAL_ID_PATTERN, "--format", "json",
    )  # fmt: skip
    assert redacted.returncode == 0, redacted.stdout + redacted.stderr
    assert source.read_bytes() == source_bytes  # the source is untouched
    clean = root / "clean.trp"
    assert stat.S_IMODE(clean.stat().st_mode) == 0o600
    assert leaks(clean.read_bytes(), secrets) == []
    assert leaks(redacted.stdout + redacted.stderr, secrets) == []
    assert cli(root, env, "scan", "clean.trp", "--pattern", PATTERN).returncode == 0
    header = read_trace(clean).header
    entry = header.metadata["toolreplay.redaction"]
    assert isinstance(entry, dict)
    assert entry["redacted_from"] == {
        "trace_id": read_trace(source).header.trace_id,
        "sha256": hashlib.sha256(source_bytes).hexdigest(),
    }
    assert header.trace_id != read_trace(source).header.trace_id
    # The application, with the same rules declared, replays the redacted copy.
    replayed = cli(root, project_env(canaries), "replay", "clean.trp")
    assert replayed.returncode == 0, replayed.stderr

    refused = cli(root, env, "redact", "leaky.trp", "clean.trp", "--rule", "$..x")
    assert refused.returncode == 2
    assert "already exists" in refused.stderr


def test_promote_refuses_a_flagged_trace_unless_told(
    tmp_path: Path, canaries: tuple[dict[str, str], dict[str, list[str]]]
) -> None:
    root = make_project(tmp_path / "app")
    env = project_env(canaries, redact=False)
    assert (
        cli(
            root, env, "record", "-r", "canary_app:main", "-o", "leaky.trp", "--secrets", "warn"
        ).returncode
        == 0
    )
    kinds = len(canaries[0])
    expected = json.dumps({"decision": "allow", "fetched": kinds, "refused": kinds})
    args = ["promote", "leaky.trp", "-o", "cases/leaky", "--name", "leaky", "-r",
            "canary_app:main", "--expect-json", expected]  # fmt: skip
    refused = cli(root, env, *args)
    assert refused.returncode == 2
    assert "SecretInTraceError" in refused.stderr
    assert "--allow-secret-findings" in refused.stderr
    first = sorted(canaries[0])[0]
    assert f"vault.secret.fetch output at $.value: {first}" in refused.stderr
    assert leaks(refused.stdout + refused.stderr, secret_bytes(canaries)) == []
    assert not (root / "cases").exists()
    allowed = cli(root, env, *args, "--allow-secret-findings")
    assert allowed.returncode == 0, allowed.stderr
    assert (root / "cases" / "leaky" / "case.json").is_file()


def test_a_session_policy_in_code_needs_no_environment(tmp_path: Path) -> None:
    policy = RedactionPolicy(paths=["$.email"], key=KEY)
    _CARRIED["email"] = "ada@example.com"

    @toolreplay.effect("crm.customer.email")
    def email_of(email: str) -> dict[str, str]:
        return {"email": email}

    with toolreplay.record(tmp_path / "t.trp", redaction=policy):
        assert email_of("ada@example.com") == {"email": "ada@example.com"}
    assert b"ada@example.com" not in (tmp_path / "t.trp").read_bytes()
    with toolreplay.replay(tmp_path / "t.trp", redaction=policy):
        placeholder = email_of("ada@example.com")["email"]
    assert toolreplay.is_placeholder(placeholder)
