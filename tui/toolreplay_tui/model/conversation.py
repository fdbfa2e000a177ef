"""A recorded call read as a conversation: its entries, and a model call's transcript.

The shapes every reader of a call fills (`transcript.py` for OpenAI's APIs,
`claude_transcript.py` for Anthropic's Messages API, `mcp_transcript.py` for MCP
requests) and the views draw: who said what, on which side of the call, and where a
received value lives in the recorded output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from toolreplay_tui.model.jsonpaths import JsonPath

__all__ = [
    "Api",
    "Conversation",
    "ConversationEntry",
    "EntryKind",
    "Side",
    "Transcript",
    "TranscriptEntry",
    "entry",
]

EntryKind = Literal[
    "instructions",
    "message",
    "tool_call",
    "tool_output",
    "reasoning",
    "hosted_tool",
    "text",
    "refusal",
    "error",
    "note",
    "usage",
]

Side = Literal["request", "response"]
Api = Literal["responses", "chat.completions", "messages"]


Kind = TypeVar("Kind", bound=str)


@dataclass(frozen=True, slots=True)
class ConversationEntry(Generic[Kind]):
    """One line of a call read as a conversation (a model call, an MCP request).

    `who` names the speaker, tool or part (`user`, `get_weather`, an argument), `text`
    is what it said as shown (JSON pretty-printed), and `path` is where the value lives
    in the output shown (None for request-side entries, and for values a stream spreads
    over several events). `kind` says how to style it.
    """

    side: Side
    kind: Kind
    who: str
    text: str
    path: JsonPath | None = None


class TranscriptEntry(ConversationEntry[EntryKind]):
    """One line of a model call's conversation."""

    __slots__ = ()


Entry = TypeVar("Entry", bound=ConversationEntry[Any])


class Conversation(Generic[Entry]):
    """A call read as a conversation: its `entries`, what was sent, then what came back."""

    __slots__ = ()
    entries: tuple[Entry, ...]

    @property
    def request(self) -> tuple[Entry, ...]:
        return tuple(entry for entry in self.entries if entry.side == "request")

    @property
    def response(self) -> tuple[Entry, ...]:
        return tuple(entry for entry in self.entries if entry.side == "response")


@dataclass(frozen=True, slots=True)
class Transcript(Conversation[TranscriptEntry]):
    """A model call read as a conversation: what was sent, then what came back."""

    api: Api
    model: str | None
    status: int | None
    streamed: bool
    event_count: int
    tools_offered: tuple[str, ...]
    entries: tuple[TranscriptEntry, ...]


def entry(
    side: Side, kind: EntryKind, who: str, text: str, path: JsonPath | None = None
) -> TranscriptEntry:
    """One line of a model call's transcript."""
    return TranscriptEntry(side=side, kind=kind, who=who, text=text, path=path)
