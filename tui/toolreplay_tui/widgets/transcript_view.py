"""A model call's transcript as Rich text, for the detail pane."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from toolreplay import terminal_safe_text
from toolreplay_tui.model.jsonpaths import path_text
from toolreplay_tui.model.transcript import EntryKind, Transcript, TranscriptEntry

__all__ = ["render_transcript"]

_STYLES: dict[EntryKind, str] = {
    "instructions": "italic",
    "message": "",
    "tool_call": "bold cyan",
    "tool_output": "cyan",
    "reasoning": "dim italic",
    "hosted_tool": "magenta",
    "text": "bold green",
    "refusal": "bold red",
    "error": "bold red",
    "note": "yellow",
    "usage": "dim",
}
_ARROWS: dict[EntryKind, str] = {"tool_call": "→ ", "tool_output": "← ", "hosted_tool": "⚙ "}


def _speaker(entry: TranscriptEntry) -> Text:
    speaker = terminal_safe_text(_ARROWS.get(entry.kind, "") + entry.who, "bold")
    speaker.overflow = "fold"
    return speaker


def _said(entry: TranscriptEntry) -> Text:
    text = terminal_safe_text(entry.text, _STYLES[entry.kind], keep="\n")
    text.overflow = "fold"
    if entry.path is not None:
        text.append("\n")
        text.append(terminal_safe_text(path_text(entry.path), "dim"))
    return text


def _table(entries: tuple[TranscriptEntry, ...]) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("who", no_wrap=False, max_width=22)
    table.add_column("said", ratio=1)
    for entry in entries:
        table.add_row(_speaker(entry), _said(entry))
    return table


def render_transcript(transcript: Transcript) -> RenderableType:
    """Sent, then received; each received value with the output path an edit would patch."""
    heading = Text.assemble(
        ("model call  ", "dim"),
        terminal_safe_text(transcript.api, "bold"),
        terminal_safe_text(f" · {transcript.model or 'model not given'}"),
        f" · status {transcript.status}" if transcript.status is not None else "",
        f" · streamed in {transcript.event_count} events" if transcript.streamed else "",
    )
    parts: list[RenderableType] = [heading]
    if transcript.tools_offered:
        offered = terminal_safe_text(", ".join(transcript.tools_offered))
        parts.append(Text.assemble(("tools       ", "dim"), offered))
    parts.append(Text("sent", style="dim underline"))
    parts.append(_table(transcript.request))
    parts.append(Text("received", style="dim underline"))
    parts.append(_table(transcript.response))
    return Group(*parts)
