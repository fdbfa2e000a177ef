"""An application whose effects carry canary secrets of every secret rule kind.

The tests copy this file into a project folder as `canary_app.py` and run it
through the command line (`--runner canary_app:main`) in child processes. The
canaries come from the environment (`CANARY_SECRETS`, a JSON object: rule kind
-> the text that carries the secret), so they appear in no source line a
traceback could print. `CANARY_REDACT=1` declares redaction rules at import, as
an application would.

Every kind goes through three effects: its secret is an input of
`vault.secret.check`, part of the output of `vault.secret.fetch`, and part of
the message and args of the exception `vault.secret.rotate` raises.
`policy.access.decide` is the call a fork patches.
"""

from __future__ import annotations

import json
import os
import secrets
import string

import toolreplay
from toolreplay import JsonValue

NATIONAL_ID_PATTERN = r"NID-\d{9}"

CANARIES: dict[str, str] = json.loads(os.environ.get("CANARY_SECRETS", "{}"))

if os.environ.get("CANARY_REDACT") == "1":
    toolreplay.redact(
        "$..card_holder",
        patterns=[NATIONAL_ID_PATTERN],
        redact_secrets=True,
    )


@toolreplay.effect("vault.secret.check", redact=["$.secret"])
def check_secret(kind: str, secret: str) -> dict[str, JsonValue]:
    return {"kind": kind, "valid": len(secret) > 10}


@toolreplay.effect("vault.secret.fetch")
def fetch_secret(kind: str) -> dict[str, JsonValue]:
    secret = CANARIES[kind]
    return {"kind": kind, "value": secret, "note": f"fetched for rotation: {secret}"}


@toolreplay.effect("vault.secret.rotate")
def rotate_secret(kind: str) -> None:
    raise PermissionError(f"rotation of {kind} refused for credential {CANARIES[kind]}")


@toolreplay.effect("policy.access.decide")
def decide(valid: int, refused: int) -> dict[str, JsonValue]:
    return {"decision": "allow" if valid else "deny", "valid": valid, "refused": refused}


def main() -> dict[str, JsonValue]:
    kinds = sorted(CANARIES)
    valid = sum(1 for kind in kinds if check_secret(kind, CANARIES[kind])["valid"])
    fetched = [fetch_secret(kind)["kind"] for kind in kinds]
    refused = 0
    for kind in kinds:
        try:
            rotate_secret(kind)
        except PermissionError:
            refused += 1
    verdict = decide(valid, refused)
    return {"decision": verdict["decision"], "fetched": len(fetched), "refused": refused}


# --- canaries, for the tests ------------------------------------------------------------

_ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def _card_number() -> str:
    """A random 16-digit Visa number that passes the Luhn check."""
    digits = "4" + _random(string.digits, 14)
    for check in string.digits:
        total = 0
        for position, character in enumerate(reversed(digits + check)):
            digit = int(character) * (2 if position % 2 else 1)
            total += digit - 9 if digit > 9 else digit
        if total % 10 == 0:
            return digits + check
    raise AssertionError("unreachable: one check digit always fits")


def make_canaries() -> tuple[dict[str, str], dict[str, list[str]]]:
    """Fresh canaries: the carrying text per rule kind, and the secret bytes of each.

    The secret bytes are what must never be written or printed: the key itself,
    the token after `Bearer `, every line of a private key's body, a card number
    with and without its spaces.
    """
    aws_secret = _random(_ALNUM + "/+", 40)
    bearer = _random(_ALNUM + "._-", 40)
    key_lines = [_random(_ALNUM + "+/", 64) for _ in range(3)]
    card = _card_number()
    spaced_card = " ".join(card[index : index + 4] for index in range(0, 16, 4))
    national_id = "NID-" + _random(string.digits, 9)
    carriers = {
        "openai-api-key": "sk-proj-" + _random(_ALNUM, 40),
        "anthropic-api-key": "sk-ant-api03-" + _random(_ALNUM, 40),
        "aws-access-key-id": "AKIA" + _random(string.ascii_uppercase + string.digits, 16),
        "aws-secret-access-key": f"aws_secret_access_key={aws_secret}",
        "github-token": "ghp_" + _random(_ALNUM, 36),
        "google-api-key": "AIza" + _random(_ALNUM, 35),
        "slack-token": "xoxb-" + _random(string.digits, 12) + "-" + _random(_ALNUM, 24),
        "stripe-key": "sk_live_" + _random(_ALNUM, 24),
        "bearer-token": f"Bearer {bearer}",
        "private-key": "-----BEGIN RSA PRIVATE KEY-----\n"
        + "\n".join(key_lines)
        + "\n-----END RSA PRIVATE KEY-----",
        "jwt": "eyJ"
        + _random(_ALNUM, 20)
        + ".eyJ"
        + _random(_ALNUM, 30)
        + "."
        + _random(_ALNUM, 43),
        "card-number": spaced_card,
        "national-id": national_id,
    }
    secret_bytes = {kind: [text] for kind, text in carriers.items()}
    secret_bytes["aws-secret-access-key"] = [aws_secret]
    secret_bytes["bearer-token"] = [bearer]
    secret_bytes["private-key"] = key_lines
    secret_bytes["card-number"] = [card, spaced_card]
    return carriers, secret_bytes
