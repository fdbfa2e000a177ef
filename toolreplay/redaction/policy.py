"""Redaction policies and how a session applies them to each call (RFC 0007 §2, §4).

A `RedactionPolicy` is declared once: process-wide (`toolreplay.redact`), per
session (`record(..., redaction=...)`), and per effect (`@effect(..., redact=[...])`).
A session resolves, once per effect, the rules that apply to it into an
`EffectRedaction`, which turns inputs, outputs and failures into what may be
fingerprinted and written.
"""

from __future__ import annotations

import fnmatch
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import cast

from toolreplay.errors import RedactionKeyError, RedactionRuleError
from toolreplay.jsonpath import JsonPath, parse_path
from toolreplay.portable import JsonValue
from toolreplay.redaction.keys import (
    KEY_ENVIRONMENT_VARIABLE,
    PLACEHOLDER_PATTERN,
    RedactionKey,
    key_from_environment,
)
from toolreplay.redaction.scanner import SecretScanner, compile_search_pattern
from toolreplay.trace.model import Raised

__all__ = [
    "METADATA_KEY",
    "EffectRedaction",
    "RedactionPolicy",
    "SessionRedaction",
    "current_redaction",
    "redact",
    "set_redaction",
]

METADATA_KEY = "toolreplay.redaction"
"""The trace header's metadata entry that names the key a trace was redacted with."""

_KNOWN_MIN_LENGTH = 4  # shorter redacted strings are not searched for inside other text


def _compile_pattern(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    text = pattern if isinstance(pattern, str) else pattern.pattern
    return compile_search_pattern(
        pattern,
        what=f"redaction pattern {text!r}",
        to_match="the text to hide",
        error=RedactionRuleError,
    )


class RedactionPolicy:
    """Which values to replace by placeholders before anything is fingerprinted or written.

        policy = toolreplay.RedactionPolicy(
            paths=["$..password"],                     # every effect, inputs and output
            effects={"crm.*": ["$.email"]},            # effects by name (fnmatch globs)
            patterns=[r"(?i)token=(\\S+)"],            # inside every string, errors too
            redact_secrets=True,                       # whatever the secret scanner finds
        )

    `key` (bytes or str, at least 16 bytes) makes the placeholders; without it
    sessions use `TOOLREPLAY_REDACTION_KEY`. A policy never changes once built.
    """

    __slots__ = ("_effects", "_key", "_paths", "_patterns", "_redact_secrets")

    def __init__(
        self,
        *,
        paths: Iterable[str] = (),
        effects: Mapping[str, Iterable[str]] | None = None,
        patterns: Iterable[str | re.Pattern[str]] = (),
        redact_secrets: bool = False,
        key: bytes | str | RedactionKey | None = None,
    ) -> None:
        if isinstance(paths, str):
            raise RedactionRuleError(f"paths= takes a list of paths, such as [{paths!r}]")
        self._paths = tuple(parse_path(path) for path in paths)
        self._effects = tuple(
            (glob, tuple(parse_path(path) for path in _path_list(glob, effect_paths)))
            for glob, effect_paths in (effects or {}).items()
        )
        if isinstance(patterns, str):
            raise RedactionRuleError(f"patterns= takes a list of patterns, such as [{patterns!r}]")
        self._patterns = tuple(_compile_pattern(pattern) for pattern in patterns)
        self._redact_secrets = bool(redact_secrets)
        self._key = key if key is None or isinstance(key, RedactionKey) else RedactionKey(key)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(path.text for path in self._paths)

    @property
    def effects(self) -> dict[str, tuple[str, ...]]:
        return {glob: tuple(path.text for path in paths) for glob, paths in self._effects}

    @property
    def patterns(self) -> tuple[re.Pattern[str], ...]:
        return self._patterns

    @property
    def redact_secrets(self) -> bool:
        return self._redact_secrets

    @property
    def key(self) -> RedactionKey | None:
        return self._key

    @property
    def has_rules(self) -> bool:
        """Whether the policy redacts anything at all."""
        return bool(self._paths or self._effects or self._patterns or self._redact_secrets)

    def merged(self, other: RedactionPolicy | None) -> RedactionPolicy:
        """This policy's rules plus `other`'s; `other`'s key wins when it has one."""
        if other is None:
            return self
        merged = RedactionPolicy()
        merged._paths = self._paths + other._paths
        merged._effects = self._effects + other._effects
        merged._patterns = self._patterns + other._patterns
        merged._redact_secrets = self._redact_secrets or other._redact_secrets
        merged._key = other._key or self._key
        return merged

    def paths_for(self, effect: str) -> tuple[JsonPath, ...]:
        """The path rules that apply to one effect (global paths and matching globs)."""
        selected = list(self._paths)
        for glob, paths in self._effects:
            if fnmatch.fnmatchcase(effect, glob):
                selected.extend(paths)
        return tuple(selected)

    def __repr__(self) -> str:
        key = f", key_id={self._key.key_id!r}" if self._key is not None else ""
        return (
            f"RedactionPolicy(paths={list(self.paths)!r}, effects={self.effects!r}, "
            f"patterns={[pattern.pattern for pattern in self._patterns]!r}, "
            f"redact_secrets={self._redact_secrets}{key})"
        )


def _path_list(glob: str, paths: Iterable[str]) -> Iterable[str]:
    if isinstance(paths, str):
        raise RedactionRuleError(
            f"effects={{{glob!r}: ...}} takes a list of paths, such as [{paths!r}]"
        )
    return paths


_process_lock = threading.Lock()
_process_policy = RedactionPolicy()


def redact(
    *paths: str,
    effects: Mapping[str, Iterable[str]] | None = None,
    patterns: Iterable[str | re.Pattern[str]] = (),
    redact_secrets: bool = False,
    key: bytes | str | None = None,
) -> RedactionPolicy:
    """Add rules to the process-wide redaction policy; return the policy now in force.

        toolreplay.redact("$..password", "$..api_key", effects={"crm.*": ["$.email"]})

    Every session opened afterwards applies them, with its own policy added.
    """
    global _process_policy
    added = RedactionPolicy(
        paths=paths, effects=effects, patterns=patterns, redact_secrets=redact_secrets, key=key
    )
    with _process_lock:
        _process_policy = _process_policy.merged(added)
        return _process_policy


def set_redaction(policy: RedactionPolicy | None) -> RedactionPolicy:
    """Replace the process-wide policy (None: no rules); return the one it replaced."""
    global _process_policy
    with _process_lock:
        previous, _process_policy = _process_policy, policy or RedactionPolicy()
        return previous


def current_redaction() -> RedactionPolicy:
    """The process-wide policy in force."""
    return _process_policy


Replace = Callable[[str], str]


class EffectRedaction:
    """The rules that apply to one effect in one session, ready to apply."""

    __slots__ = ("_key", "_paths", "_patterns", "_scanner")

    def __init__(
        self,
        key: RedactionKey,
        paths: tuple[JsonPath, ...],
        patterns: tuple[re.Pattern[str], ...],
        scanner: SecretScanner | None,
    ) -> None:
        self._key = key
        self._paths = paths
        self._patterns = patterns
        self._scanner = scanner

    def value(
        self, value: JsonValue, known: tuple[str, ...] = ()
    ) -> tuple[JsonValue, tuple[str, ...]]:
        """`value` redacted, and the strings its path rules removed (to hide elsewhere too).

        The input is never changed: what is replaced is copied on the way.
        """
        removed: list[str] = []

        def hide(selected: JsonValue) -> JsonValue:
            if type(selected) is str and PLACEHOLDER_PATTERN.fullmatch(selected):
                return selected
            _collect_strings(selected, removed)
            return self._key.placeholder(selected)

        for path in self._paths:
            value = path.replace(value, hide)
        if self._scanner is not None:
            value = self._hide_secret_members(value, removed)
        found = tuple(sorted(set(removed), key=len, reverse=True))
        texts = tuple(sorted(set(known) | set(found), key=len, reverse=True))
        if texts or self._patterns or self._scanner is not None:
            value = _map_strings(value, lambda text: self.text(text, texts))
        return value, found

    def failure(self, raised: Raised, known: tuple[str, ...]) -> Raised:
        """A recorded failure with its message and args redacted as text."""
        args = raised.args
        if args is not None:
            args = cast(
                list[JsonValue], _map_strings(cast(JsonValue, args), lambda t: self.text(t, known))
            )
        return Raised(raised.error_type, self.text(raised.message, known), args)

    def text(self, text: str, known: tuple[str, ...] = ()) -> str:
        """`text` with every known value, secret and pattern match replaced by a placeholder."""
        if "<redacted:" not in text:
            return self._text_segment(text, known)
        # Placeholders stay as they are; only the text between them is examined.
        pieces: list[str] = []
        position = 0
        for match in PLACEHOLDER_PATTERN.finditer(text):
            pieces.append(self._text_segment(text[position : match.start()], known))
            pieces.append(match.group())
            position = match.end()
        pieces.append(self._text_segment(text[position:], known))
        return "".join(pieces)

    def _text_segment(self, text: str, known: tuple[str, ...]) -> str:
        if not text:
            return text
        spans: list[tuple[int, int]] = []
        for secret in known:
            start = text.find(secret)
            while start >= 0:
                spans.append((start, start + len(secret)))
                start = text.find(secret, start + len(secret))
        if self._scanner is not None:
            spans.extend((start, end) for start, end, _ in self._scanner.spans(text))
        for pattern in self._patterns:
            for match in pattern.finditer(text):
                span = match.span(1) if pattern.groups else match.span()
                if span[1] > span[0]:
                    spans.append(span)
        if not spans:
            return text
        spans.sort()
        merged: list[list[int]] = []
        for start, end in spans:  # overlapping spans become one: both parts stay hidden
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        pieces: list[str] = []
        position = 0
        for start, end in merged:
            pieces.append(text[position:start])
            pieces.append(self._key.placeholder(text[start:end]))
            position = end
        pieces.append(text[position:])
        return "".join(pieces)

    def _hide_secret_members(self, value: JsonValue, removed: list[str]) -> JsonValue:
        """Object members that are secrets by name and shape, and card numbers as integers."""
        scanner = self._scanner
        assert scanner is not None
        kind = type(value)
        if kind is dict:
            result: dict[str, JsonValue] = {}
            for key, item in cast(dict[str, JsonValue], value).items():
                if scanner.member_is_secret(key, item):
                    removed.append(cast(str, item))
                    result[key] = self._key.placeholder(item)
                else:
                    result[key] = self._hide_secret_members(item, removed)
            return result
        if kind is list:
            return [
                self._hide_secret_members(item, removed) for item in cast(list[JsonValue], value)
            ]
        if kind is int and scanner.integer_is_secret(cast(int, value)):
            return self._key.placeholder(value)
        return value


def _collect_strings(value: JsonValue, into: list[str]) -> None:
    kind = type(value)
    if kind is str:
        if len(cast(str, value)) >= _KNOWN_MIN_LENGTH:
            into.append(cast(str, value))
    elif kind is list:
        for item in cast(list[JsonValue], value):
            _collect_strings(item, into)
    elif kind is dict:
        for item in cast(dict[str, JsonValue], value).values():
            _collect_strings(item, into)


def _map_strings(value: JsonValue, change: Replace) -> JsonValue:
    """`value` with `change` applied to every string (not to object keys), copied as needed."""
    kind = type(value)
    if kind is str:
        return change(cast(str, value))
    if kind is list:
        return [_map_strings(item, change) for item in cast(list[JsonValue], value)]
    if kind is dict:
        return {
            key: _map_strings(item, change)
            for key, item in cast(dict[str, JsonValue], value).items()
        }
    return value


class SessionRedaction:
    """What one session redacts: its policy over the process-wide one, and the key.

    `enabled` is False for a replay of a trace that was not redacted when recorded
    (and for a recording with neither rules nor a key): nothing is changed then.
    """

    __slots__ = ("_cache", "_lock", "enabled", "key", "policy", "policy_has_rules", "scanner")

    def __init__(
        self,
        policy: RedactionPolicy,
        key: RedactionKey | None,
        scanner: SecretScanner,
        *,
        enabled: bool = True,
    ) -> None:
        self.policy = policy
        self.policy_has_rules = policy.has_rules  # without them only an effect's own apply
        self.key = key
        self.scanner = scanner
        self.enabled = enabled
        self._cache: dict[tuple[str, tuple[JsonPath, ...]], EffectRedaction | None] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_recording(
        cls, session_policy: RedactionPolicy | None, scanner: SecretScanner
    ) -> SessionRedaction:
        """The redaction of a record session; a policy with rules and no key is refused."""
        policy = current_redaction().merged(session_policy)
        key = policy.key or key_from_environment()
        if key is None and policy.has_rules:
            raise RedactionKeyError(
                "redaction rules are set but no redaction key is available: set the "
                f"environment variable {KEY_ENVIRONMENT_VARIABLE} (at least 16 bytes, kept "
                "outside every trace) or pass RedactionPolicy(key=...)"
            )
        return cls(policy, key, scanner)

    @classmethod
    def for_replay(
        cls,
        session_policy: RedactionPolicy | None,
        scanner: SecretScanner,
        metadata: Mapping[str, JsonValue],
        trace_name: str,
    ) -> SessionRedaction:
        """The redaction of a replay: the trace's key id decides whether and with what key."""
        policy = current_redaction().merged(session_policy)
        entry = metadata.get(METADATA_KEY)
        needed = entry.get("key_id") if isinstance(entry, dict) else None
        if not isinstance(needed, str):
            return cls(policy, None, scanner, enabled=False)
        key = policy.key or key_from_environment()
        if key is None:
            raise RedactionKeyError(
                f"{trace_name} was redacted when it was recorded, with the key whose id is "
                f"{needed}; replaying it redacts each call's inputs the same way, so it needs "
                f"that key: set {KEY_ENVIRONMENT_VARIABLE} (or pass RedactionPolicy(key=...))"
            )
        if key.key_id != needed:
            raise RedactionKeyError(
                f"{trace_name} was redacted with the key whose id is {needed}, but the key "
                f"given here has id {key.key_id}: its placeholders would never match. Use the "
                f"key the trace was recorded with ({KEY_ENVIRONMENT_VARIABLE})"
            )
        return cls(policy, key, scanner)

    def metadata_entry(self) -> dict[str, JsonValue] | None:
        """What a new trace's header records about the key (its id only)."""
        if self.key is None:
            return None
        return {"algorithm": "hmac-sha256", "key_id": self.key.key_id}

    def for_effect(self, effect: str, effect_paths: tuple[JsonPath, ...]) -> EffectRedaction | None:
        """The rules for one effect, or None when nothing applies to it."""
        if not self.enabled:
            return None
        cache_key = (effect, effect_paths)
        try:
            return self._cache[cache_key]
        except KeyError:
            pass
        policy = self.policy
        paths = effect_paths + policy.paths_for(effect)
        resolved: EffectRedaction | None = None
        if paths or policy.patterns or policy.redact_secrets:
            if self.key is None:
                raise RedactionKeyError(
                    f"{effect} has redaction rules but no redaction key is available: set the "
                    f"environment variable {KEY_ENVIRONMENT_VARIABLE} (at least 16 bytes, "
                    "kept outside every trace) or pass RedactionPolicy(key=...)"
                )
            resolved = EffectRedaction(
                self.key, paths, policy.patterns, self.scanner if policy.redact_secrets else None
            )
        with self._lock:
            self._cache[cache_key] = resolved
        return resolved

    def text(self, text: str) -> str:
        """Free text outside any call (a session's ending message), redacted by text rules."""
        if not self.enabled or self.key is None:
            return text
        policy = self.policy
        if not (policy.patterns or policy.redact_secrets):
            return text
        scanner = self.scanner if policy.redact_secrets else None
        return EffectRedaction(self.key, (), policy.patterns, scanner).text(text)
