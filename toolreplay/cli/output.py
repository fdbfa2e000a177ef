"""How the command line prints: rich on a terminal, plain text otherwise.

Plain text is the contract for logs, pipes and snapshots: no colour, no box
drawing, no wrapping at a guessed width. `NO_COLOR` is honoured on a terminal.

Whatever a command prints may quote a trace, and a trace is untrusted: every
character `toolreplay.terminal` calls unsafe is printed as its escape. `Output`
escapes each field it is given (newlines too: a field is one line), and
`terminal_safe_streams`, around every command, escapes whatever else reaches
`sys.stdout` and `sys.stderr` (messages, JSON documents, tracebacks), keeping
newlines and tabs. The escape is the JSON spelling (`\\u001b`), so a JSON
document stays valid and reads back the same.

A message keeps its lines, but a field quoted inside it (a file name, a runner, an
error type from a trace) is one line: `one_line_fields` escapes the line breaks and
tabs of each such field where the message quotes it, so no field can start a line
that looks like the command's own (`error: ...`, `ok`).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Generator, Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from toolreplay.terminal import is_terminal_safe, terminal_safe, terminal_safe_text

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "Output",
    "OutputFormat",
    "TerminalSafeStream",
    "application_output_to_stderr",
    "drawn_by_the_ui",
    "error_fields",
    "one_line_fields",
    "raw_stream",
    "rich_terminal",
    "terminal_safe_streams",
]

_LINES = "\n\t"  # what a stream keeps: the layout of several lines


class OutputFormat(StrEnum):
    """`--format` of every command: text for people and logs, json for programs."""

    text = "text"
    json = "json"


def rich_terminal() -> bool:
    """Whether stdout is a terminal, where the command line prints with Rich."""
    return sys.stdout.isatty()


def one_line_fields(message: str, fields: Iterable[object]) -> str:
    """`message` with each of `fields` it quotes written on one line: the field's
    newlines and tabs (and other unsafe characters) as their escapes. The message's
    own lines stay lines; a field without a line break is left as it is."""
    for field in fields:
        if field is None:
            continue
        text = str(field)
        if text and not is_terminal_safe(text):  # newlines and tabs count here
            message = message.replace(text, terminal_safe(text))
    return message


def error_fields(error: BaseException) -> tuple[object, ...]:
    """The fields an error names that its message quotes: the file it is about."""
    path: object = getattr(error, "path", None)
    return (path,) if isinstance(path, Path) else ()


class TerminalSafeStream(io.TextIOBase):
    """A text stream that writes to `raw` through `terminal_safe`, newlines and tabs kept."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_safe(text, keep=_LINES))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self.raw.encoding

    @property
    def errors(self) -> str | None:  # pyright: ignore[reportIncompatibleVariableOverride]
        return self.raw.errors


def raw_stream(stream: TextIO) -> TextIO:
    """The stream a `TerminalSafeStream` writes to, or `stream` itself."""
    return stream.raw if isinstance(stream, TerminalSafeStream) else stream


@contextlib.contextmanager
def terminal_safe_streams() -> Generator[None]:
    """Escape every unsafe character written to `sys.stdout` and `sys.stderr` meanwhile."""
    saved = sys.stdout, sys.stderr
    sys.stdout = TerminalSafeStream(raw_stream(sys.stdout))
    sys.stderr = TerminalSafeStream(raw_stream(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def drawn_by_the_ui() -> Generator[None]:
    """The raw streams meanwhile, for a UI that escapes what it draws itself (the
    terminal debugger): its own styles, and its exit message's, stay styles."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = raw_stream(sys.stdout), raw_stream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


class Output:
    """Writes a command's result to stdout and its errors to stderr, every field escaped
    (`toolreplay.terminal`): a field is one line, so its newlines are escaped too."""

    def __init__(self) -> None:
        self.rich = rich_terminal()
        self._console: Console | None = None
        if self.rich:  # Rich only for a terminal: piped output starts faster without it
            from rich.console import Console

            # Rich writes its own styles; what it is given is escaped already.
            self._console = Console(
                file=raw_stream(sys.stdout), no_color="NO_COLOR" in os.environ, highlight=False
            )

    def line(self, text: str = "", *, style: str | None = None) -> None:
        if self._console is not None:
            self._console.print(terminal_safe_text(text, style or ""))
        else:
            sys.stdout.write(terminal_safe(text) + "\n")

    def fields(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Aligned `label  value` lines."""
        width = max((len(label) for label, _ in pairs), default=0)
        for label, value in pairs:
            if self._console is not None:
                self._console.print(f"[bold]{label.ljust(width)}[/bold]  ", end="")
                self._console.print(terminal_safe_text(value))
            else:
                sys.stdout.write(f"{label.ljust(width)}  {terminal_safe(value)}\n")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        if self._console is not None:
            from rich.table import Table

            table = Table(*headers, box=None, header_style="bold", pad_edge=False)
            for row in rows:
                table.add_row(*(terminal_safe_text(cell) for cell in row))
            self._console.print(table)
            return
        rows = [[terminal_safe(cell) for cell in row] for row in rows]
        widths = [len(header) for header in headers]
        for row in rows:
            for index, cell in enumerate(row):
                widths[index] = max(widths[index], len(cell))
        for row in (headers, *rows):
            cells = [cell.ljust(widths[index]) for index, cell in enumerate(row)]
            sys.stdout.write("  ".join(cells).rstrip() + "\n")

    @staticmethod
    def skipped(path: object, reason: str) -> None:
        """`skipped: PATH: REASON` on stderr: a file a command read past, not an error."""
        sys.stderr.write(f"skipped: {terminal_safe(str(path))}: {terminal_safe(reason)}\n")

    @staticmethod
    def error(message: str, fields: Iterable[object] = ()) -> None:
        """`error: MESSAGE` on stderr; a message may span lines, and each of `fields`
        it quotes (`error_fields`) is one line (`one_line_fields`)."""
        shown = one_line_fields(message, fields)
        sys.stderr.write(f"error: {terminal_safe(shown, keep=_LINES)}\n")


@contextlib.contextmanager
def application_output_to_stderr(*, from_trace: bool = True) -> Generator[None]:
    """Send everything written to stdout (fd 1 included) to stderr while the app runs.

    When the application is `from_trace` (it replays one, so a trace's values reach
    what it prints), its `sys.stdout` and `sys.stderr` escape unsafe characters as
    the command's own output does; a recording's application prints as it wrote it
    (its colours stay colours). What it writes to the file descriptors directly
    (`os.write`, child processes) is never rewritten.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    streams = sys.stdout, sys.stderr
    stderr = sys.stderr if from_trace else raw_stream(sys.stderr)
    try:
        sys.stdout = sys.stderr = stderr
        yield
    finally:
        sys.stdout, sys.stderr = streams
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)
