"""An MCP call as Rich text, for the detail pane: the request, then the answer by JSON path."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from toolreplay import terminal_safe_text
from toolreplay_tui.model.mcp_transcript import McpCall, McpEntry, McpEntryKind
from toolreplay_tui.widgets.transcript_view import conversation_table, said_text

__all__ = ["render_mcp_call"]

_STYLES: dict[McpEntryKind, str] = {
    "tool": "bold cyan",
    "argument": "cyan",
    "param": "",
    "text": "bold green",
    "media": "magenta",
    "resource": "magenta",
    "structured": "green",
    "tool_error": "bold red",
    "error": "bold red",
    "notification": "yellow",
    "value": "",
    "note": "dim",
}


def _shown(text: str, style: str = "", *, keep: str = "") -> Text:
    """Text from a trace: never read as markup, its unsafe characters escaped and marked."""
    shown = terminal_safe_text(text, style, keep=keep)
    shown.overflow = "fold"
    return shown


def _table(entries: tuple[McpEntry, ...]) -> Table:
    return conversation_table(
        (_shown(entry.who, "bold"), said_text(entry.text, _STYLES[entry.kind], entry.path))
        for entry in entries
    )


def render_mcp_call(call: McpCall) -> RenderableType:
    """The server and method, what was sent, then what came back with its output paths."""
    heading = Text.assemble(("MCP call    ", "dim"))
    heading.append(_shown(call.server, "bold"))
    heading.append(" · ")
    heading.append(_shown(call.method))
    if call.tool is not None:
        heading.append(" · tool ")
        heading.append(_shown(call.tool, "bold cyan"))
    heading.append(f" · {call.answer}", style="bold red" if "error" in call.answer else "")
    return Group(
        heading,
        Text("sent", style="dim underline"),
        _table(call.request),
        Text("received", style="dim underline"),
        _table(call.response),
    )
