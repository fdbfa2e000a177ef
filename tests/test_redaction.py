"""Redaction (RFC 0007): paths, placeholders, policies, keys, secret modes, file modes."""

from __future__ import annotations

import stat
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolreplay
from toolreplay import (
    RedactedValueEditError,
    RedactionKey,
    RedactionKeyError,
    RedactionPolicy,
    RedactionRuleError,
    SecretInTraceError,
    SecretInTraceWarning,
    SecretScanError,
    SessionError,
    read_trace,
)
from toolreplay.redaction import check_redacted_edit, is_placeholder, parse_path

KEY = "unit-test-redaction-key-0123456789"
TOKEN = "ghp_" + "Q" * 36


@pytest.fixture(autouse=True)
def no_process_rules(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("TOOLREPLAY_REDACTION_KEY", raising=False)
    monkeypatch.delenv("TOOLREPLAY_SECRETS", raising=False)
    previous = toolreplay.set_redaction(None)
    yield
    toolreplay.set_redaction(previous)


def hide(value: object) -> str:
    return "X"


# --- paths --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("$.email", {"email": "X", "items": [{"token": "t1"}, {"token": "t2"}], "n": 1}),
        ("$.items[*].token", {"email": "e", "items": [{"token": "X"}, {"token": "X"}], "n": 1}),
        ("$.items[1]", {"email": "e", "items": [{"token": "t1"}, "X"], "n": 1}),
        ("$..token", {"email": "e", "items": [{"token": "X"}, {"token": "X"}], "n": 1}),
        ("$['n']", {"email": "e", "items": [{"token": "t1"}, {"token": "t2"}], "n": "X"}),
        ("$.*", {"email": "X", "items": "X", "n": "X"}),
        ("$", "X"),
        ("$.absent.deeper", {"email": "e", "items": [{"token": "t1"}, {"token": "t2"}], "n": 1}),
    ],
)
def test_paths_select_and_never_change_the_value_given(path: str, expected: object) -> None:
    value = {"email": "e", "items": [{"token": "t1"}, {"token": "t2"}], "n": 1}
    before = repr(value)
    assert parse_path(path).replace(value, hide) == expected
    assert repr(value) == before


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("email", "character 1"),
        ("$.", "character 3"),
        ("$[x]", "character 2"),
        ("$..", "character 4"),
    ],
)
def test_a_malformed_path_names_the_position(path: str, where: str) -> None:
    with pytest.raises(RedactionRuleError, match=where):
        parse_path(path)
    with pytest.raises(RedactionRuleError):
        toolreplay.effect("x.y", redact=[path])


def test_redact_takes_a_list() -> None:
    with pytest.raises(RedactionRuleError, match=r"redact=\['\$.email'\]"):
        toolreplay.effect("x.y", redact="$.email")


# --- keys and placeholders ------------------------------------------------------------


def test_placeholders_are_keyed_typed_and_stable() -> None:
    key = RedactionKey(KEY)
    assert key.placeholder("ada@example.com") == RedactionKey(KEY).placeholder("ada@example.com")
    assert key.placeholder(1) != key.placeholder("1") != key.placeholder(1.0)
    other = RedactionKey(KEY + "!")
    assert other.placeholder("a") != key.placeholder("a")
    assert key.key_id != other.key_id
    assert is_placeholder(key.placeholder({"any": ["json"]}))
    assert key.placeholder(key.placeholder("a")) == key.placeholder("a")  # idempotent
    assert KEY not in repr(key)


def test_a_short_key_is_refused_without_showing_it() -> None:
    with pytest.raises(RedactionKeyError, match="at least 16 bytes") as refused:
        RedactionKey("short-secret")
    assert "short-secret" not in str(refused.value)


# --- sessions -------------------------------------------------------------------------


@toolreplay.effect("crm.customer.get", redact=["$.email", "$.card.number"])
def get_customer(customer_id: int, email: str) -> dict[str, object]:
    return {"id": customer_id, "email": email, "card": {"number": "4111111111111111"}}


@toolreplay.effect("mail.send", redact=["$.to"])
def send_mail(to: str, body: str) -> str:
    return "sent"


@toolreplay.effect("mail.ping")
def ping(to: str, body: str) -> str:
    return "pong"


@toolreplay.effect("auth.login", redact=["$.password"])
def login(user: str, password: str) -> None:
    raise PermissionError(f"user {user} gave the wrong password {password}")


def application() -> tuple[str, str]:
    customer = get_customer(7, "ada@example.com")
    sent = send_mail(str(customer["email"]), "hello")  # a placeholder under replay
    try:
        login("ada", "hunter2-secret")
    except PermissionError as error:
        return sent, str(error)
    return sent, ""


def test_record_writes_placeholders_the_application_gets_real_values(tmp_path: Path) -> None:
    policy = RedactionPolicy(key=KEY)
    trace = tmp_path / "t.trp"
    with toolreplay.record(trace, redaction=policy):
        customer = get_customer(7, "ada@example.com")
        assert customer["email"] == "ada@example.com"
        _, message = application()
    assert "hunter2-secret" in message  # the application's own exception is untouched
    data = trace.read_bytes()
    for original in (b"ada@example.com", b"4111111111111111", b"hunter2-secret"):
        assert original not in data
    operations = read_trace(trace).operations
    placeholder = RedactionKey(KEY).placeholder("ada@example.com")
    assert operations[0].inputs["email"] == placeholder
    assert operations[1].outcome == toolreplay.Returned(
        {
            "id": 7,
            "email": placeholder,
            "card": {"number": RedactionKey(KEY).placeholder("4111111111111111")},
        }
    )
    # The password redacted from the inputs is hidden in the failure message too.
    failure = operations[-1].outcome
    assert isinstance(failure, toolreplay.Raised)
    assert RedactionKey(KEY).placeholder("hunter2-secret") in failure.message


def test_replay_redacts_live_inputs_and_matches_exactly(tmp_path: Path) -> None:
    policy = RedactionPolicy(key=KEY)
    trace = tmp_path / "t.trp"
    with toolreplay.record(trace, redaction=policy):
        application()
    # A placeholder returned by replay flows into mail.send and matches as it is.
    with toolreplay.replay(trace, redaction=policy):
        sent, message = application()
    assert sent == "sent"
    assert "hunter2-secret" not in message
    assert "<redacted:" in message


def test_patterns_and_redact_secrets_work_inside_text(tmp_path: Path) -> None:
    @toolreplay.effect("notes.write")
    def write_note(text: str) -> str:
        return text.upper()

    policy = RedactionPolicy(patterns=[r"pin=(\d{4})"], redact_secrets=True, key=KEY)
    trace = tmp_path / "t.trp"
    with toolreplay.record(trace, redaction=policy):
        assert write_note(f"pin=1234 token {TOKEN}") == f"PIN=1234 TOKEN {TOKEN.upper()}"
    inputs = read_trace(trace).operations[0].inputs["text"]
    assert isinstance(inputs, str)
    assert inputs.startswith("pin=<redacted:")
    assert "1234" not in inputs.split(">", 1)[1]
    assert TOKEN not in inputs


def test_process_wide_rules_apply_to_every_effect(tmp_path: Path) -> None:
    toolreplay.redact("$..password", effects={"mail.*": ["$.body"]}, key=KEY)

    @toolreplay.effect("account.create")
    def create(user: str, settings: dict[str, str]) -> str:
        return user

    trace = tmp_path / "t.trp"
    with toolreplay.record(trace):
        create("ada", {"password": "pw-123456"})
        send_mail("to@example.com", "private body")
    data = trace.read_bytes()
    assert b"pw-123456" not in data
    assert b"private body" not in data
    assert b"to@example.com" not in data  # the effect's own rule
    assert toolreplay.current_redaction().paths == ("$..password",)


def test_an_effect_with_rules_and_no_key_is_refused_before_its_body(tmp_path: Path) -> None:
    ran: list[str] = []

    @toolreplay.effect("vault.read", redact=["$.secret"])
    def read(secret: str) -> str:
        ran.append(secret)
        return "ok"

    with pytest.raises(SessionError), toolreplay.record(tmp_path / "t.trp"):
        with pytest.raises(RedactionKeyError, match="TOOLREPLAY_REDACTION_KEY"):
            read("x")
    assert ran == []


def test_a_policy_with_rules_and_no_key_refuses_to_open(tmp_path: Path) -> None:
    session = toolreplay.record(tmp_path / "t.trp", redaction=RedactionPolicy(paths=["$.a"]))
    with pytest.raises(RedactionKeyError), session:
        pass
    assert not (tmp_path / "t.trp").exists()


def test_the_key_id_is_the_only_trace_of_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREPLAY_REDACTION_KEY", KEY)
    trace = tmp_path / "t.trp"
    with toolreplay.record(trace):
        get_customer(1, "x@example.com")
    metadata = read_trace(trace).header.metadata
    assert metadata["toolreplay.redaction"] == {
        "algorithm": "hmac-sha256",
        "key_id": RedactionKey(KEY).key_id,
    }
    assert KEY.encode() not in trace.read_bytes()
    with pytest.raises(RedactionRuleError, match="reserved"):
        toolreplay.record(tmp_path / "u.trp", metadata={"toolreplay.redaction": {}})


# --- secret modes ------------------------------------------------------------------------


@toolreplay.effect("github.repo.get")
def get_repo(name: str) -> dict[str, str]:
    return {"name": name, "deploy_token": TOKEN}


def test_warn_writes_the_value_with_a_warning_that_names_no_value(tmp_path: Path) -> None:
    trace = tmp_path / "t.trp"
    with pytest.warns(SecretInTraceWarning) as warned, toolreplay.record(trace, secrets="warn"):
        assert get_repo("app") == {"name": "app", "deploy_token": TOKEN}
    message = str(warned[0].message)
    assert "github.repo.get output at $.deploy_token: github-token" in message
    assert TOKEN not in message
    assert TOKEN.encode() in trace.read_bytes()


def test_off_does_not_scan(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with toolreplay.record(tmp_path / "t.trp", secrets="off"):
            get_repo("app")
    assert len(read_trace(tmp_path / "t.trp")) == 1


def test_abandon_removes_the_trace_and_leaves_the_application_alone(tmp_path: Path) -> None:
    trace = tmp_path / "t.trp"
    with toolreplay.record(trace, secrets="abandon") as session:
        assert ping("a", "b") == "pong"  # recorded before the finding
        assert trace.exists()
        assert get_repo("app")["deploy_token"] == TOKEN  # the application gets its value
        assert not trace.exists()
        assert get_repo("other")["name"] == "other"  # later calls run, unrecorded
    assert session.abandoned is not None
    assert "github-token" in str(session.abandoned)
    assert not trace.exists()


def test_the_mode_comes_from_the_environment_and_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREPLAY_SECRETS", "off")
    with toolreplay.record(tmp_path / "t.trp"):
        get_repo("app")
    monkeypatch.setenv("TOOLREPLAY_SECRETS", "loud")
    with pytest.raises(SecretScanError, match="TOOLREPLAY_SECRETS='loud'"):
        toolreplay.record(tmp_path / "u.trp")


def test_a_secret_in_the_ending_message_is_withheld(tmp_path: Path) -> None:
    trace = tmp_path / "t.trp"
    with pytest.raises(RuntimeError), toolreplay.record(trace):
        raise RuntimeError(f"crashed holding {TOKEN}")
    footer = read_trace(trace).footer
    assert footer is not None
    assert footer.ending.message == "<message withheld: it matched secret rule github-token>"


def test_metadata_is_scanned_when_the_session_is_made(tmp_path: Path) -> None:
    with pytest.raises(SecretInTraceError, match=r"metadata at \$.token: github-token"):
        toolreplay.record(tmp_path / "t.trp", metadata={"token": TOKEN})
    assert not (tmp_path / "t.trp").exists()


def test_a_fork_refuses_a_patch_that_would_write_a_secret(tmp_path: Path) -> None:
    source = tmp_path / "source.trp"
    with toolreplay.record(source):
        ping("a", "b")
    patch = toolreplay.replace_output(
        effect="mail.ping", inputs=read_trace(source).operations[0].inputs, value=TOKEN
    )
    with pytest.raises(SessionError), toolreplay.fork(source, tmp_path / "b.trp", patches=[patch]):
        with pytest.raises(SecretInTraceError, match="github-token"):
            ping("a", "b")


def test_a_fork_redacts_and_scans_its_live_calls_as_a_recording_does(tmp_path: Path) -> None:
    source = tmp_path / "source.trp"
    with toolreplay.record(source, redaction=RedactionPolicy(key=KEY)):
        ping("a", "b")
    branch = tmp_path / "b.trp"
    policy = RedactionPolicy(key=KEY)
    live = ["crm.*", "github.*"]
    with pytest.raises(SessionError), toolreplay.fork(source, branch, live=live, redaction=policy):
        ping("a", "b")
        assert get_customer(7, "ada@example.com")["email"] == "ada@example.com"
        with pytest.raises(SecretInTraceError, match="github-token"):
            get_repo("tools")  # its output holds a token: refused, as under record()
    written = branch.read_bytes()
    assert b"ada@example.com" not in written
    assert b"4111111111111111" not in written
    assert TOKEN.encode() not in written
    kept = [op for op in read_trace(branch).operations if op.origin == "live"]
    assert [op.effect for op in kept] == ["crm.customer.get"]
    assert is_placeholder(kept[0].inputs["email"])


def test_a_fork_redacts_and_scans_what_supply_patches_put_in_the_branch(tmp_path: Path) -> None:
    source = tmp_path / "source.trp"
    with toolreplay.record(source, redaction=RedactionPolicy(key=KEY)):
        ping("a", "b")
    policy = RedactionPolicy(key=KEY)
    leaky = toolreplay.supply_output(
        effect="mail.ping", inputs={"to": "c", "body": "d"}, value=TOKEN
    )
    with (
        pytest.raises(SessionError),
        toolreplay.fork(source, tmp_path / "b1.trp", patches=[leaky], redaction=policy),
    ):
        ping("a", "b")
        with pytest.raises(SecretInTraceError, match="supply_output"):
            ping("c", "d")
    assert TOKEN.encode() not in (tmp_path / "b1.trp").read_bytes()
    refusal = toolreplay.supply_error(
        effect="auth.login",
        inputs={"user": "ada", "password": RedactionKey(KEY).placeholder("hunter2")},
        error=PermissionError("user ada gave the wrong password hunter2"),
    )
    branch = tmp_path / "b2.trp"
    with toolreplay.fork(source, branch, patches=[refusal], redaction=policy):
        ping("a", "b")
        with pytest.raises(PermissionError, match="hunter2"):  # served as supplied
            login("ada", "hunter2")
    assert b"hunter2" not in branch.read_bytes()


# --- files --------------------------------------------------------------------------------


def test_traces_are_private_even_when_they_overwrite_a_public_file(tmp_path: Path) -> None:
    trace = tmp_path / "t.trp"
    trace.write_text("old")
    trace.chmod(0o644)
    with toolreplay.record(trace, overwrite=True):
        ping("a", "b")
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    branch = tmp_path / "b.trp"
    with toolreplay.fork(trace, branch):
        ping("a", "b")
    assert stat.S_IMODE(branch.stat().st_mode) == 0o600
    patches = toolreplay.write_patches(tmp_path / "p.json", [])
    assert stat.S_IMODE(patches.stat().st_mode) == 0o600


# --- edits --------------------------------------------------------------------------------


def test_an_edit_may_keep_or_drop_a_placeholder_but_not_type_over_it() -> None:
    key = RedactionKey(KEY)
    email = key.placeholder("ada@example.com")
    recorded = {"email": email, "note": f"mail {email} today", "n": 1}
    check_redacted_edit(recorded, {"email": email, "note": f"mail {email}!", "n": 2})
    check_redacted_edit(recorded, {"n": 2})  # fields removed
    check_redacted_edit(recorded, {"email": key.placeholder("x"), "note": f"{email}", "n": 1})
    with pytest.raises(RedactedValueEditError, match=r"\$.email is redacted") as refused:
        check_redacted_edit(recorded, {"email": "ada@example.com", "note": "", "n": 1})
    assert refused.value.path == "$.email"
    with pytest.raises(RedactedValueEditError, match=r"\$.note"):
        check_redacted_edit(recorded, {"email": email, "note": "mail ada@example.com", "n": 1})


def test_a_fork_takes_no_abandon_but_reads_it_from_the_environment_as_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "source.trp"
    with toolreplay.record(source):
        ping("a", "b")
    with pytest.raises(SecretScanError, match="a fork takes"):
        toolreplay.fork(source, tmp_path / "b.trp", secrets="abandon")
    monkeypatch.setenv("TOOLREPLAY_SECRETS", "abandon")
    patch = toolreplay.replace_output(
        effect="mail.ping", inputs=read_trace(source).operations[0].inputs, value=TOKEN
    )
    with pytest.raises(SessionError), toolreplay.fork(source, tmp_path / "b.trp", patches=[patch]):
        with pytest.raises(SecretInTraceError):
            ping("a", "b")
