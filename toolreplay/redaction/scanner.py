"""The secret scanner: a small set of rules for credentials that must never be written.

Each rule is a regular expression over a string, some with a check on the match
(the Luhn sum of a card number). A finding names the rule, the part of a call
(inputs, output, error, ...) and the JSON path, never the value.

Scanning a value first asks of its JSON text whether one loose expression that
every real match also satisfies matches somewhere in it; only then are the
strings walked one by one. That question is mostly answered by byte searches
for the literals the loose expression's alternatives contain, which cost a few
nanoseconds a byte where a search with the expression costs tens. Recording a
call without secrets therefore costs a few passes over text the runtime has
anyway (the inputs' canonical JSON, an OpenAI response's body as received).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from toolreplay.errors import SecretInTraceError, SecretScanError, ToolReplayError
from toolreplay.portable import JsonValue, canonical_json, format_path
from toolreplay.redaction.streamed_text import joined_stream_texts

__all__ = [
    "BUILTIN_SECRET_RULES",
    "DEFAULT_SCANNER",
    "SecretFinding",
    "SecretPart",
    "SecretRule",
    "SecretScanner",
    "compile_search_pattern",
    "describe_findings",
    "luhn_valid",
    "secret_in_trace_error",
]

SecretPart = Literal["inputs", "output", "error", "metadata", "ending", "value", "text"]

_TOKEN = "A-Za-z0-9_-"
_BEFORE = f"(?<![{_TOKEN}])"
_AFTER = f"(?![{_TOKEN}])"


def compile_search_pattern(
    pattern: str | re.Pattern[str],
    *,
    what: str,
    to_match: str,
    error: type[ToolReplayError],
) -> re.Pattern[str]:
    """A user's pattern to search text with, compiled; `error` when it is not a regular
    expression or matches the empty string (it would match everywhere). `what` names
    the pattern in the message, `to_match` says what it should match instead."""
    try:
        compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
    except re.error as problem:
        raise error(f"{what} is not a valid regular expression: {problem}") from None
    if compiled.search("") is not None:
        raise error(
            f"{what} matches the empty string, so it would match everywhere; make it match "
            f"{to_match}"
        )
    return compiled


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (card numbers do)."""
    total = 0
    for position, character in enumerate(reversed(digits)):
        digit = ord(character) - 48
        if position % 2:
            digit *= 2
            if digit > 9:
                digit -= 9
        total += digit
    return total % 10 == 0


# Issuer prefixes and lengths: Visa, Mastercard, American Express, Diners, Discover,
# JCB, UnionPay. Other 13-19 digit numbers (millisecond timestamps start with 1) are
# not taken for cards, however their Luhn sum comes out.
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3(?:0[0-5]|[689])|35|6(?:011|5|4[4-9]|2)")


def _card_number(match: str) -> bool:
    digits = match.replace(" ", "").replace("-", "")
    if not 13 <= len(digits) <= 19 or _CARD_PREFIX.match(digits) is None:
        return False
    separators = {character for character in match if not character.isdigit()}
    return len(separators) <= 1 and luhn_valid(digits)


@dataclass(frozen=True, slots=True)
class SecretRule:
    """A named rule: `pattern` finds candidates, `check` (if any) confirms one.

    `secret_group` names the group that is the secret itself (for redaction),
    when the pattern also matches context around it.
    """

    name: str
    description: str
    pattern: re.Pattern[str]
    check: Callable[[str], bool] | None = None
    secret_group: str | None = None

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Where the secrets this rule finds are in `text`."""
        for match in self.pattern.finditer(text):
            if self.check is not None and not self.check(match.group()):
                continue
            yield match.span(self.secret_group) if self.secret_group else match.span()


def _rule(
    name: str,
    description: str,
    pattern: str,
    check: Callable[[str], bool] | None = None,
    secret_group: str | None = None,
) -> SecretRule:
    return SecretRule(name, description, re.compile(pattern), check, secret_group)


BUILTIN_SECRET_RULES: tuple[SecretRule, ...] = (
    _rule(
        "anthropic-api-key",
        "an Anthropic API key (sk-ant-...)",
        f"{_BEFORE}sk-ant-[{_TOKEN}]{{20,}}{_AFTER}",
    ),
    _rule(
        "openai-api-key",
        "an OpenAI API key (sk-..., sk-proj-...)",
        f"{_BEFORE}sk-(?!ant-)(?:proj-|svcacct-|admin-)?[{_TOKEN}]{{20,}}{_AFTER}",
    ),
    _rule(
        "aws-access-key-id",
        "an AWS access key id (AKIA..., ASIA...)",
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    ),
    _rule(
        "aws-secret-access-key",
        "an AWS secret access key after aws_secret_access_key= or secret_access_key:",
        r"(?i:secret_access_key)[\"']?\s*[:=]\s*[\"']?"
        r"(?P<aws_secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        secret_group="aws_secret",
    ),
    _rule(
        "github-token",
        "a GitHub token (ghp_..., github_pat_...)",
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,})"
        r"(?![A-Za-z0-9_])",
    ),
    _rule(
        "google-api-key",
        "a Google API key (AIza...)",
        f"{_BEFORE}AIza[{_TOKEN}]{{35}}{_AFTER}",
    ),
    _rule(
        "slack-token",
        "a Slack token (xoxb-...) or incoming webhook URL",
        r"(?<![A-Za-z0-9-])xox[bpoars]-[A-Za-z0-9-]{10,}(?![A-Za-z0-9-])"
        r"|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
    ),
    _rule(
        "stripe-key",
        "a Stripe secret or restricted key (sk_live_..., rk_test_...)",
        r"(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}(?![A-Za-z0-9_])",
    ),
    _rule(
        "bearer-token",
        "a bearer token (Bearer ...)",
        r"(?<![A-Za-z0-9])(?i:bearer)\s+(?P<bearer>[A-Za-z0-9._~+/=-]{16,})",
        secret_group="bearer",
    ),
    _rule(
        "private-key",
        "a private key block (-----BEGIN ... PRIVATE KEY-----)",
        r"-----BEGIN (?P<pk_kind>(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----"
        r"(?s:.*?-----END (?P=pk_kind)-----|.*)",  # the whole block: it spans lines
    ),
    _rule(
        "jwt",
        "a JSON Web Token (eyJ....eyJ....signature)",
        f"{_BEFORE}eyJ[{_TOKEN}]{{5,}}\\.eyJ[{_TOKEN}]{{5,}}\\.[{_TOKEN}]{{10,}}{_AFTER}",
    ),
    _rule(
        "card-number",
        "a payment card number (issuer prefix, 13-19 digits, Luhn check)",
        # Not inside a word: digits between letters are a hex digest's or an id's, and a
        # digest's digit run passes the prefix and Luhn checks about once in a hundred.
        r"(?<![0-9A-Za-z])[0-9](?:[ -]?[0-9]){12,18}(?![0-9A-Za-z])",
        check=_card_number,
    ),
)
"""The built-in rules, in the order they are tried (RFC 0007 §5.1)."""

# A superset of every built-in rule's matches, searched over the JSON text of a value
# (where escapes may sit right before a token, so no boundaries are required). It is
# the definition of the prefilter; `_may_match_loose` decides it without searching
# with it where it can, since a search with it costs tens of nanoseconds a byte.
_LOOSE = re.compile(
    rb"sk-[A-Za-z0-9_-]{20}|A(?:KIA|SIA|GPA|IDA|ROA)[A-Z0-9]{16}|(?i:secret_access_key)"
    rb"|gh[pousr]_[A-Za-z0-9]{36}|github_pat_|AIza|xox[bpoars]-|hooks\.slack\.com"
    rb"|[sr]k_(?:live|test)_|(?i:bearer)|PRIVATE KEY|eyJ[A-Za-z0-9_-]{5,}\."
    rb"|[2-6](?:[ -]?[0-9]){12,18}"
)
# `_LOOSE` split by alternative: each alternative holds a literal, looked for with `in`
# (for one character that is `memchr`, for a short literal about a nanosecond a byte), and
# is searched with only where its literal is found. A character rare in JSON goes first.
# The text is the JSON's bytes decoded as Latin-1, one character a byte, so the ASCII
# patterns below (`re.ASCII`) match exactly where `_LOOSE` matches the bytes; `in` on
# bytes would cost several times as much, since CPython first tries the needle as an
# integer and builds the exception it gets. The case-insensitive alternatives are looked
# for in the lowercased text; the card alternative has no literal: its matches are 13+
# digits once spaces and dashes are deleted, which `translate` and `in` find in one
# pass each.
_SK = re.compile(r"sk-[A-Za-z0-9_-]{20}", re.ASCII)
_XOX = re.compile(r"xox[bpoars]-", re.ASCII)
_AWS = re.compile(r"A(?:KIA|SIA|GPA|IDA|ROA)[A-Z0-9]{16}", re.ASCII)
_GH = re.compile(r"gh[pousr]_[A-Za-z0-9]{36}", re.ASCII)
_STRIPE = re.compile(r"[sr]k_(?:live|test)_", re.ASCII)
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{5,}\.", re.ASCII)
_LOOSE_CARD = re.compile(r"[2-6](?:[ -]?[0-9]){12,18}", re.ASCII)
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0" * 10)
_CARD_DIGITS = "0" * 13


def _may_match_loose(encoded: bytes) -> bool:
    """Whether `_LOOSE` matches somewhere in `encoded`, mostly without searching with it."""
    return _text_may_match(encoded.decode("latin-1"), encoded)


def _text_may_match(e: str, encoded: bytes) -> bool:
    """`_may_match_loose` of `encoded`, given as `e` too (decoded as Latin-1). One
    expression, unrolled: a loop over a table of literals cost several times as much."""
    if "-" in e and (
        ("sk-" in e and _SK.search(e) is not None) or ("xox" in e and _XOX.search(e) is not None)
    ):
        return True
    if "A" in e and (
        "AIza" in e
        or (
            ("AKIA" in e or "ASIA" in e or "AGPA" in e or "AIDA" in e or "AROA" in e)
            and _AWS.search(e) is not None
        )
    ):
        return True
    if "_" in e and (
        "github_pat_" in e
        or ("gh" in e and _GH.search(e) is not None)
        or ("k_" in e and _STRIPE.search(e) is not None)
    ):
        return True
    if ("." in e and "hooks.slack.com" in e) or ("P" in e and "PRIVATE KEY" in e):
        return True
    if "J" in e and "eyJ" in e and _JWT.search(e) is not None:
        return True
    lowered = e.lower()  # Latin-1 letters lower to Latin-1 letters: no new ASCII literal
    if "bearer" in lowered or "secret_access_key" in lowered:
        return True
    return (
        _CARD_DIGITS in encoded.translate(_DIGITS_AS_ZERO, b" -").decode("latin-1")
        and _LOOSE_CARD.search(e) is not None
    )


_MEMBER_SECRET = re.compile(r"(?i)(?:^|[_-])secret_access_key$")
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+]{40}")
_PLACEHOLDER_START = "<redacted:"
_PLACEHOLDER = re.compile(r"<redacted:[0-9a-f]{12}:[0-9a-f]{32}>")
_RULE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """A rule matched: where (never what).

    `part` is the part of an operation (`inputs`, `output`, `error`), the trace's
    `metadata` or `ending`, `value` for a JSON file that is no trace, or `text` for
    a line that is not JSON; `path` is the
    JSON path inside it. `effect`, `file` and `line` are set when known.
    """

    rule: str
    part: SecretPart
    path: str
    effect: str | None = None
    file: str | None = None
    line: int | None = None

    def describe(self) -> str:
        """`crm.customer.get output at $.card.number: card-number` (and file:line first)."""
        where = f"{self.file}:{self.line}: " if self.file is not None and self.line else ""
        if self.file is not None and not self.line:
            where = f"{self.file}: "
        owner = f"{self.effect} " if self.effect else ""
        return f"{where}{owner}{self.part} at {self.path}: {self.rule}"

    def to_dict(self) -> dict[str, JsonValue]:
        """The finding as JSON (`toolreplay scan --format json`)."""
        return {
            "file": self.file,
            "line": self.line,
            "effect": self.effect,
            "part": self.part,
            "path": self.path,
            "rule": self.rule,
        }


class SecretScanner:
    """The built-in rules (unless `builtin=False`) plus the user's named patterns.

    scanner = SecretScanner(patterns={"national-id": r"\\b\\d{3}-\\d{2}-\\d{4}\\b"})
    scanner.scan_value({"note": "id 123-45-6789"}, part="inputs")
    """

    __slots__ = ("_prefiltered", "rules")

    def __init__(
        self, patterns: Mapping[str, str | re.Pattern[str]] | None = None, *, builtin: bool = True
    ) -> None:
        rules = list(BUILTIN_SECRET_RULES) if builtin else []
        builtin_names = {rule.name for rule in BUILTIN_SECRET_RULES}
        for name, pattern in (patterns or {}).items():
            if not isinstance(name, str) or _RULE_NAME.fullmatch(name) is None:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise SecretScanError(
                    f"secret rule name {name!r}: use lowercase letters, digits and dashes, "
                    "such as 'national-id'"
                )
            if name in builtin_names:
                raise SecretScanError(
                    f"secret rule name {name!r} is a built-in rule's; choose another name"
                )
            compiled = compile_search_pattern(
                pattern,
                what=f"secret rule {name!r}: the pattern",
                to_match="the secret itself",
                error=SecretScanError,
            )
            rules.append(SecretRule(name, f"user pattern {name}", compiled))
        self.rules: tuple[SecretRule, ...] = tuple(rules)
        # User patterns may be anchored to a whole string: their hits cannot be
        # prefiltered on JSON text, so with any of them every string is examined.
        self._prefiltered = builtin and len(rules) == len(BUILTIN_SECRET_RULES)

    # --- text -------------------------------------------------------------------------

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping `(start, end, rule)` of every secret in `text`, placeholders excepted."""
        if _PLACEHOLDER_START in text:
            # Blank placeholders out (same length): their hex digits are no card numbers.
            text = _PLACEHOLDER.sub(lambda match: " " * len(match.group()), text)
        found: list[tuple[int, int, str]] = []
        for rule in self.rules:
            found.extend((start, end, rule.name) for start, end in rule.spans(text) if end > start)
        if len(found) < 2:
            return found
        found.sort(key=lambda span: (span[0], -span[1]))
        kept: list[tuple[int, int, str]] = []
        for span in found:
            if not kept or span[0] >= kept[-1][1]:
                kept.append(span)
        return kept

    def scan_text(self, text: str) -> list[str]:
        """The names of the rules that match somewhere in `text`, in order of position."""
        return [rule for _, _, rule in self.spans(text)]

    def may_hold_secret(self, encoded: bytes) -> bool:
        """False only if the JSON text `encoded` certainly holds no secret (the prefilter)."""
        return not self._prefiltered or _may_match_loose(encoded)

    # --- values -----------------------------------------------------------------------

    def member_is_secret(self, key: str, value: JsonValue) -> bool:
        """An object member that is a secret by its name and shape (`secret_access_key`)."""
        return (
            type(value) is str
            and _MEMBER_SECRET.search(key) is not None
            and _AWS_SECRET_VALUE.fullmatch(value) is not None
            and any(rule.name == "aws-secret-access-key" for rule in self.rules)
        )

    def integer_is_secret(self, value: int) -> bool:
        """An integer that is a card number."""
        return (
            any(rule.name == "card-number" for rule in self.rules)
            and 10**12 <= value < 10**19
            and _card_number(str(value))
        )

    def scan_value(
        self,
        value: JsonValue,
        *,
        part: SecretPart,
        effect: str | None = None,
        encoded: bytes | None = None,
        plain_json: bool = False,
    ) -> list[SecretFinding]:
        """Every finding in a portable value: strings, object keys and integers, and the
        text a stream's pieces add up to (`$.events[*].data.delta.text`: see
        `streamed_text.py`).

        `encoded` is the value's JSON text when the caller already has it (any
        JSON encoding of it will do, or any text in which every prefilter match
        of that text is found too); it lets a clean value be passed in one search.
        `plain_json=True` says it is the value as Tool Replay's own encoders write
        it (`portable.canonical_json`, the codec's `encode_value`), which writes
        every key as it is: a list of events then shows in it.
        """
        joined: list[tuple[str, str]] | None = None  # a stream's pieces, put back together
        if self._prefiltered:
            if encoded is None:
                encoded = canonical_json(value)
                plain_json = True
            latin = encoded.decode("latin-1")
            # A list of events sits under that key, which plain JSON would show.
            joined = [] if plain_json and '"events"' not in latin else joined_stream_texts(value)
            if not _text_may_match(latin, encoded) and (
                not joined or not any(_may_match_loose(text.encode()) for _, text in joined)
            ):
                return []
        if joined is None:
            joined = joined_stream_texts(value)
        findings: list[SecretFinding] = []
        seen: set[tuple[str, str]] = set()
        for segments, rule in self._walk(value, []):
            path = format_path(segments)
            if (path, rule) not in seen:
                seen.add((path, rule))
                findings.append(SecretFinding(rule, part, path, effect))
        for path, text in joined:
            # Said once: a rule already found in one of the pieces is not found again.
            stream = path.partition("[*]")[0] + "["
            for rule in self.scan_text(text):
                if (path, rule) not in seen and not any(
                    f.rule == rule and f.path.startswith(stream) for f in findings
                ):
                    seen.add((path, rule))
                    findings.append(SecretFinding(rule, part, path, effect))
        return findings

    def _walk(
        self, value: JsonValue, segments: list[str | int]
    ) -> Iterator[tuple[list[str | int], str]]:
        kind = type(value)
        if kind is str:
            for _, _, rule in self.spans(cast(str, value)):
                yield segments, rule
        elif kind is int:
            if self.integer_is_secret(cast(int, value)):
                yield segments, "card-number"
        elif kind is list:
            for index, item in enumerate(cast(list[JsonValue], value)):
                yield from self._walk(item, [*segments, index])
        elif kind is dict:
            for key, item in cast(dict[str, JsonValue], value).items():
                member = [*segments, key]
                for _, _, rule in self.spans(key):
                    yield member, rule
                if self.member_is_secret(key, item):
                    yield member, "aws-secret-access-key"
                else:
                    yield from self._walk(item, member)


DEFAULT_SCANNER = SecretScanner()
"""The built-in rules: what sessions scan with unless given a scanner."""

_SHOWN_FINDINGS = 10


def describe_findings(findings: Sequence[SecretFinding]) -> str:
    """One line per finding (at most 10, then a count), for messages and the scan command."""
    lines = [f"  - {finding.describe()}" for finding in findings[:_SHOWN_FINDINGS]]
    if len(findings) > _SHOWN_FINDINGS:
        lines.append(f"  ... and {len(findings) - _SHOWN_FINDINGS} more")
    return "\n".join(lines)


def secret_in_trace_error(
    findings: Sequence[SecretFinding], *, what: str, advice: str, verb: str = "would write"
) -> SecretInTraceError:
    """The error for `findings`: what was refused, where, which rule, what to do; no value.

    `verb` says what the refused thing does with the values ("would write", "holds").
    """
    count = (
        "a value that matches a secret rule"
        if len(findings) == 1
        else f"{len(findings)} values that match secret rules"
    )
    return SecretInTraceError(
        f"{what}: it {verb} {count} (the values are not shown):\n"
        f"{describe_findings(findings)}\n{advice}",
        findings=findings,
    )
