"""The secret scanner's rules: each finds its secrets and leaves its near misses alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolreplay
from toolreplay import (
    BUILTIN_SECRET_RULES,
    JsonValue,
    RedactionKey,
    SecretInTraceError,
    SecretScanError,
    SecretScanner,
    SessionError,
)
from toolreplay.redaction import luhn_valid
from toolreplay.redaction.scanner import (
    _LOOSE,  # pyright: ignore[reportPrivateUsage]
    _may_match_loose,  # pyright: ignore[reportPrivateUsage]
)

SCANNER = SecretScanner()
A40 = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"

TRUE_POSITIVES = [
    ("openai-api-key", f"sk-{A40}"),
    ("openai-api-key", f"key: sk-proj-{A40}_x-y"),
    ("openai-api-key", f"sk-svcacct-{A40}"),
    ("anthropic-api-key", f"sk-ant-api03-{A40}"),
    ("aws-access-key-id", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-access-key-id", "id=ASIAY34FZKBOKMUTVV7A;"),
    ("aws-secret-access-key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("aws-secret-access-key", 'SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"'),
    ("github-token", "ghp_" + "a" * 36),
    ("github-token", "token gho_" + "B1" * 18),
    ("github-token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("google-api-key", "AIzaSyA-" + "x" * 31),
    ("slack-token", "xoxb-123456789012-abcdefABCDEF"),
    ("slack-token", "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXX"),
    ("stripe-key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe-key", "rk_test_" + "51H8abcdefghijklmnop"),
    ("bearer-token", "Authorization: Bearer abcdef0123456789.xyz-_~+/="),
    ("bearer-token", "bearer  eyzzzzzzzzzzzzzzzzzz"),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"),
    ("private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn"),
    ("private-key", "-----BEGIN PRIVATE KEY-----"),
    ("private-key", "-----BEGIN PGP PRIVATE KEY BLOCK-----"),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    ("card-number", "4111111111111111"),
    ("card-number", "card 4111 1111 1111 1111 exp 12/29"),
    ("card-number", "5500-0000-0000-0004"),
    ("card-number", "amex 378282246310005"),
]

NEAR_MISSES = [
    "sk-short",  # too short for any key
    "task-" + A40,  # "sk-" inside a longer word
    f"risk-{A40}",
    "AKIAIOSFODNN7EXAMPL",  # 15 characters after AKIA
    "XAKIAIOSFODNN7EXAMPLE",  # part of a longer identifier
    "aws_secret_access_key = tooshort",
    "ghp_" + "a" * 35,
    "my_ghp_" + "a" * 36 + "b",  # embedded and too long
    "AIza" + "x" * 20,
    "xoxb-123",
    "sk_live_short",
    "the bearer of bad news",
    "Bearer short",
    "-----BEGIN PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0",  # two segments: no signature
    "4111111111111112",  # fails the Luhn check
    "1733011200000",  # a millisecond timestamp: no issuer prefix
    "1234567890123456",
    "4111 1111-1111 1111",  # mixed separators
    "order 41111111111111110",  # 17 digits that fail the Luhn check
    "<redacted:0123456789ab:41111111111111110000000000000000>",  # a placeholder
]


@pytest.mark.parametrize(("rule", "text"), TRUE_POSITIVES)
def test_each_rule_finds_its_secret(rule: str, text: str) -> None:
    assert SCANNER.scan_text(text) == [rule]
    findings = SCANNER.scan_value({"deep": [{"field": text}]}, part="output", effect="x.y")
    assert [(f.rule, f.path, f.part, f.effect) for f in findings] == [
        (rule, "$.deep[0].field", "output", "x.y")
    ]


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_are_not_findings(text: str) -> None:
    assert SCANNER.scan_text(text) == []
    assert SCANNER.scan_value({"field": text}, part="inputs") == []


def test_every_builtin_rule_has_a_true_positive_here() -> None:
    assert {rule for rule, _ in TRUE_POSITIVES} == {rule.name for rule in BUILTIN_SECRET_RULES}


def test_luhn() -> None:
    assert luhn_valid("79927398713")
    assert not luhn_valid("79927398710")


def test_keys_integers_and_secret_members_are_scanned() -> None:
    value = {
        f"sk-{A40}": 1,
        "card": 4111111111111111,
        "timestamp_ms": 1733011200000,
        "aws": {"secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
        "flag": True,
    }
    findings = SCANNER.scan_value(value, part="inputs")
    assert [(f.path, f.rule) for f in findings] == [
        (f'$["sk-{A40}"]', "openai-api-key"),
        ("$.card", "card-number"),
        ("$.aws.secret_access_key", "aws-secret-access-key"),
    ]


def test_placeholders_never_match_and_text_around_them_still_does() -> None:
    key = RedactionKey("k" * 32)
    placeholder = key.placeholder("4111111111111111")
    assert SCANNER.scan_text(f"card {placeholder}") == []
    assert SCANNER.scan_text(f"{placeholder} and ghp_{'a' * 36}") == ["github-token"]


def test_user_patterns_are_rules_with_names() -> None:
    scanner = SecretScanner({"national-id": r"\b\d{3}-\d{2}-\d{4}\b"})
    assert scanner.scan_text("ssn 123-45-6789") == ["national-id"]
    assert scanner.scan_text("phone 123-456-7890") == []
    only = SecretScanner({"employee-id": r"EMP-\d{6}"}, builtin=False)
    assert only.scan_text(f"EMP-123456 sk-{A40}") == ["employee-id"]


@pytest.mark.parametrize(
    ("patterns", "message"),
    [
        ({"Bad Name": "x"}, "lowercase letters, digits and dashes"),
        ({"jwt": "x"}, "built-in rule"),
        ({"broken": "("}, "not a valid regular expression"),
        ({"empty": "x*"}, "matches the empty string"),
    ],
)
def test_bad_user_rules_are_refused(patterns: dict[str, str], message: str) -> None:
    with pytest.raises(SecretScanError, match=message):
        SecretScanner(patterns)


def test_findings_are_reported_once_per_path_and_rule() -> None:
    text = f"sk-{A40} and again sk-{A40}"
    findings = SCANNER.scan_value([text], part="output")
    assert [(f.path, f.rule) for f in findings] == [("$[0]", "openai-api-key")]
    assert findings[0].describe() == "output at $[0]: openai-api-key"


# Pieces of every prefilter alternative, whole and cut short, and what sits around them
# in JSON text, so that random joins of them hit each alternative's edges.
PREFILTER_PIECES = [
    *(text for _, text in TRUE_POSITIVES),
    *NEAR_MISSES,
    *(text[: len(text) // 2] for _, text in TRUE_POSITIVES),
    "sk-",
    "AKIA",
    "ASIA",
    "AGPA",
    "AIDA",
    "AROA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "AIza",
    "xox",
    "xoxs-",
    "hooks.slack.com",
    "sk_live_",
    "rk_test_",
    "k_live_",
    "PRIVATE KEY",
    "eyJ",
    "eyJabcde.",
    "SeCrEt_AcCeSs_KeY",
    "BEARER",
    "bEaReR",
    "0",
    "1",
    "2",
    "5",
    "9",
    " ",
    "-",
    "0000000",
    "4111",
    "resp_000000000000000000000005",
    "A",
    "Z",
    "a",
    "_",
    ".",
    '"',
    ",",
    ":",
    "\\",
    "\\u0073",
    "é",
    # Non-ASCII letters whose lowercase (or UTF-8 bytes') could pass for an ASCII literal:
    # the prefilter lowers the text decoded as Latin-1, and must not find more than this.
    "\u212a",  # KELVIN SIGN, which lowers to "k"
    "\u0130",  # LATIN CAPITAL I WITH DOT, which lowers to "i" and a combining dot
    "\u017f",  # LONG S, which matches "s" case-insensitively in Unicode patterns
    "\u00c0",
    "\xff",
]


@given(st.lists(st.sampled_from(PREFILTER_PIECES), max_size=12))
def test_the_prefilter_decides_as_its_expression(pieces: list[str]) -> None:
    text = "".join(pieces).encode()
    expected = _LOOSE.search(text) is not None
    # The literal passes decide what the expression would, alone and behind a clean run.
    assert _may_match_loose(text) == expected, text
    padded = b'{"note":"' + b"q" * 200 + b'"}' + text
    assert _may_match_loose(padded) == (_LOOSE.search(padded) is not None)


@pytest.mark.parametrize(("rule", "text"), TRUE_POSITIVES)
def test_the_prefilter_passes_every_secret_in_json_text(rule: str, text: str) -> None:
    assert SCANNER.may_hold_secret(json.dumps({"field": text}, ensure_ascii=False).encode())


def test_the_prefilter_stops_clean_text_with_long_digit_runs() -> None:
    # Ids padded with zeros and millisecond timestamps: 13+ digits, no card's shape.
    clean = json.dumps({"id": "resp_" + "0" * 38 + "25", "created_ms": 1733011200000})
    assert not SCANNER.may_hold_secret(clean.encode())


def test_a_digit_run_inside_a_hex_digest_is_no_card_number() -> None:
    # 4111 1111 1111 1111 passes the issuer prefix and the Luhn check; inside a digest
    # (as in a redacted trace's `redacted_from.sha256`) it is not a card.
    card = "4111111111111111"
    scanner = SecretScanner()
    assert [rule for _, _, rule in scanner.spans(f"card {card}.")] == ["card-number"]
    assert scanner.spans(f"9f{card}ab{'0' * 30}") == []
    assert scanner.spans(f"{card}abcdef") == []
    assert scanner.spans(f"ab{card}") == []


# --- a stream's pieces put back together (a key cut across events) ----------------------


def _pieces(text: str, size: int = 5) -> list[JsonValue]:
    return [
        {"event": "content_block_delta", "data": {"delta": {"text": text[i : i + size]}}}
        for i in range(0, len(text), size)
    ]


def test_a_key_cut_across_stream_events_is_found_in_the_text_they_add_up_to() -> None:
    key = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    events = _pieces(f"your key is {key}, keep it")
    assert all(key not in str(event) for event in events)
    output: JsonValue = {"status": 200, "events": events}
    findings = SCANNER.scan_value(output, part="output")
    assert [(f.rule, f.path) for f in findings] == [
        ("openai-api-key", "$.events[*].data.delta.text")
    ]
    # Within an operation line of a trace file, as `toolreplay scan` reads it.
    line: JsonValue = {"outcome": {"value": output}}
    (finding,) = SCANNER.scan_value(line, part="text")
    assert finding.path == "$.outcome.value.events[*].data.delta.text"
    # A key whole in one event is said once, where it is.
    whole = SCANNER.scan_value({"events": [*events, *_pieces(key, 100)]}, part="output")
    assert [f.path for f in whole] == [f"$.events[{len(events)}].data.delta.text"]


def test_a_recording_refuses_a_key_cut_across_stream_events(tmp_path: Path) -> None:
    # A recording scans the JSON text it is about to write, and looks for a stream only
    # when that text shows an events list: the inputs' canonical text, the output's line text.
    key = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    events = _pieces(f"your key is {key}, keep it")

    @toolreplay.effect("scanner.stream")
    def stream(request: JsonValue) -> JsonValue:
        del request
        return {"status": 200, "events": events}

    # The application catching the refusals does not make the recording whole.
    with pytest.raises(SessionError, match="caught by the application"):
        with toolreplay.record(tmp_path / "out.trp"):
            with pytest.raises(SecretInTraceError, match=r"output at \$\.events\[\*\]\."):
                stream({"stream": True})
            with pytest.raises(SecretInTraceError, match=r"inputs at \$\.request\.events\[\*\]"):
                stream({"events": events})
    assert toolreplay.read_trace(tmp_path / "out.trp").operations == ()

    # Text that is not the value's own JSON (a response's raw body) may lack the key.
    raw = "".join(f"data: {json.dumps(event)}\n\n" for event in events).encode()
    assert b'"events"' not in raw
    found = SCANNER.scan_value({"events": events}, part="output", encoded=raw)
    assert [f.path for f in found] == ["$.events[*].data.delta.text"]


def test_event_ids_and_names_joined_are_not_taken_for_secrets() -> None:
    # Joined, these ids would read 4111111111111111: a card number. Streamed data is
    # joined (a number may be streamed digit by digit); an event's own id and name are not.
    def events(data: bool) -> list[JsonValue]:
        return [
            {"event": "chunk", "id": digit, "data": {"id": "msg_1", "n": digit if data else ""}}
            for digit in "4111111111111111"
        ]

    assert SCANNER.scan_value({"events": events(True)}, part="output") != []
    assert SCANNER.scan_value({"events": events(False)}, part="output") == []
