"""The integrity check of a trace being browsed: every line decoded under
`read_trace`'s rules, streaming and keeping nothing, then a complete trace's footer
(the count and digest of what is above it) or an incomplete trace's fingerprints.

A trace is untrusted input: a footer whose digest matches proves only that whoever
wrote the footer hashed the lines above it, not that they decode. The debugger runs
the check in a child process (`python -m toolreplay_tui.model.trace_check TRACE`,
driven by `check_in_child`), whose memory and interpreter lock are then not the UI's;
`check_lines` is the check itself, `checked` its verdict.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toolreplay import Operation, TraceError, TraceFooter, TraceLines
from toolreplay_tui.model.line_index import CHUNK_BYTES, Cancelled, never
from toolreplay_tui.model.trace_ends import read_ends

__all__ = [
    "PROGRESS_SECONDS",
    "Integrity",
    "check_in_child",
    "check_lines",
    "check_main",
    "checked",
]

PROGRESS_SECONDS = 0.1
"""How often the checking child reports how far it is."""


@dataclass(frozen=True, slots=True)
class Integrity:
    """The background integrity check: `checking` (with `progress` 0..1), `ok` or `failed`."""

    state: Literal["checking", "ok", "failed"] = "checking"
    progress: float = 0.0
    problem: str | None = None


def checked(path: Path, check: Callable[[], bool]) -> Integrity | None:
    """The verdict of `check()` on the trace at `path`: `ok` when it returns True, `failed`
    with the reason when it raises `TraceError` or `OSError`; None when it returns False
    (it was stopped)."""
    try:
        if not check():
            return None
    except TraceError as error:
        return Integrity("failed", 1.0, str(error))
    except OSError as error:
        return Integrity("failed", 1.0, f"{path}: cannot read the trace: {error.strerror or error}")
    return Integrity("ok", 1.0)


def check_lines(
    path: Path,
    header_line: bytes,
    *,
    footer: TraceFooter | None,
    body_end: int,
    size: int,
    stopped: Cancelled,
    progress: Callable[[Integrity], None],
) -> bool:
    """Read every line of the trace at `path` under the rules (and hash what its `footer`
    covers, the `body_end` bytes before it), telling `progress` how far; False when
    `stopped()`. Raises `TraceError` (a line or the footer does not hold) or `OSError`."""
    rules = TraceLines(path, header_line)
    digest = hashlib.sha256()
    crlf = False
    number = 1
    position = 0  # bytes read so far
    covered = body_end if footer is not None else 0
    carry = bytearray()  # the start of a line longer than what was read
    count = 0
    last = b""
    with path.open("rb") as handle:
        while True:
            if stopped():
                return False
            chunk = handle.read(CHUNK_BYTES)
            if position < covered:
                part = chunk[: covered - position]
                digest.update(part)
                crlf = crlf or b"\r\n" in part or (part.startswith(b"\n") and last == b"\r")
                last = part[-1:]
            position += len(chunk)
            lines: list[bytes | bytearray] = [*chunk.split(b"\n")]
            if carry:
                carry += lines[0]
                lines[0], carry = carry, bytearray()  # the long line, grown in place
            tail = lines.pop()
            if chunk and tail:
                carry += tail  # no newline yet: the line goes on in the next chunk
            elif not chunk and tail:
                lines.append(tail)  # the unterminated last line
            for line in lines:
                if number == 1:
                    number = 2  # the header, decoded when the file was opened
                    continue
                torn_possible = not chunk and line is tail
                item = rules.check(line, number, torn_possible=torn_possible)
                if item is None:
                    return True  # a torn last line, set aside
                if isinstance(item, Operation):
                    count += 1
                    if footer is None:
                        rules.check_fingerprint(item)
                number += 1
            progress(Integrity("checking", min(position / max(size, 1), 1.0)))
            if not chunk:
                break
    if rules.footer is not None:
        rules.check_footer(count, digest.hexdigest(), crlf=lambda: crlf, line=number - 1)
    return True


def check_in_child(
    argv: Sequence[str],
    *,
    stopped: Cancelled,
    report: Callable[[Integrity], None],
    running: Callable[[subprocess.Popen[str] | None], None],
) -> bool:
    """Run the check in the child `argv`, which prints `{"progress": p}` lines while it
    goes, then `{"problem": ...}` (null when the trace holds), telling `report` each
    state. `running` gets the child while it runs (to kill it on close), then None.
    True when the child answered; False when it could not start, ended without an
    answer, or `stopped()`."""
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
    except OSError:
        return False
    running(process)
    answered = False
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if stopped():
                return False
            answer = json.loads(line)
            if "progress" in answer:
                report(Integrity("checking", float(answer["progress"])))
                continue
            problem = answer.get("problem")
            report(Integrity("ok" if problem is None else "failed", 1.0, problem))
            answered = True
    except (ValueError, OSError):
        answered = False
    finally:
        with contextlib.suppress(OSError):
            process.kill()
        process.wait()
        running(None)
    return answered


def check_main(arguments: list[str]) -> int:
    """`python -m toolreplay_tui.model.trace_check TRACE`: check TRACE, printing
    `{"progress": p}` lines while it goes, then `{"problem": ...}`, null when it holds.
    The child process of `TraceFile.check_elsewhere`."""
    if len(arguments) != 1:
        sys.stderr.write("usage: python -m toolreplay_tui.model.trace_check TRACE\n")
        return 2
    path = Path(arguments[0])
    try:
        ends = read_ends(path)
    except TraceError as error:
        print(json.dumps({"problem": str(error)}), flush=True)
        return 0
    # This process only checks: every object it decodes is dropped at once, so cyclic
    # garbage collection would only cost time.
    gc.disable()
    state = [Integrity("checking")]

    def check() -> None:
        def lines() -> bool:
            return check_lines(
                path,
                ends.header_line,
                footer=ends.footer,
                body_end=ends.body_end,
                size=ends.size,
                stopped=never,
                progress=lambda integrity: state.__setitem__(0, integrity),
            )

        state[0] = checked(path, lines) or state[0]

    worker = threading.Thread(target=check)
    worker.daemon = True
    worker.start()
    while worker.is_alive():
        worker.join(PROGRESS_SECONDS)
        if worker.is_alive():
            print(json.dumps({"progress": state[0].progress}), flush=True)
    print(json.dumps({"problem": state[0].problem}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(check_main(sys.argv[1:]))
