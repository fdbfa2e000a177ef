"""A model call's transcript as Rich text, for the detail pane."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from toolreplay import terminal_safe_text
from toolreplay_tui.model.conversation import EntryKind, Transcript, TranscriptEntry
from toolreplay_tui.model.jsonpaths import JsonPath, path_text

__all__ = ["conversation_table", "render_transcript", "said_text"]

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


def said_text(text: str, style: str, path: JsonPath | None) -> Text:
    """What one side said (text from a trace: never markup, unsafe characters escaped),
    with the output path an edit would patch under it."""
    said = terminal_safe_text(text, style, keep="\n")
    said.overflow = "fold"
    if path is not None:
        said.append("\n")
        said.append(terminal_safe_text(path_text(path), "dim"))
    return said


def conversation_table(rows: Iterable[tuple[Text, Text]]) -> Table:
    """A call read as a conversation: a row per entry, who, then what they said."""
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 1, 0, 0))
    table.add_column("who", no_wrap=False, max_width=22)
    table.add_column("said", ratio=1)
    for who, said in rows:
        table.add_row(who, said)
    return table


def _table(entries: tuple[TranscriptEntry, ...]) -> Table:
    return conversation_table(
        (_speaker(entry), said_text(entry.text, _STYLES[entry.kind], entry.path))
        for entry in entries
    )


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
