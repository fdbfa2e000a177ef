"""What a recorded call read as a conversation is made of: entries, who said them, on which
side, and the transcript of a model call (`transcript.py` reads OpenAI's calls into it,
`claude_transcript.py` Anthropic's, `gemini_transcript.py` Gemini's, `mcp_transcript.py`
an MCP request's), with the helpers those readers share over recorded JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, cast

from toolreplay.portable import JsonValue
from toolreplay_tui.model.jsonpaths import JsonPath

__all__ = [
    "Api",
    "Conversation",
    "ConversationEntry",
    "EntryKind",
    "Side",
    "Transcript",
    "TranscriptEntry",
    "answered",
    "entry",
    "pretty",
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
Api = Literal["responses", "chat.completions", "messages", "gemini"]

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
    """One transcript entry."""
    return TranscriptEntry(side=side, kind=kind, who=who, text=text, path=path)


def answered(
    api: Api,
    model: str | None,
    output: Mapping[str, JsonValue],
    tools_offered: tuple[str, ...],
    entries: list[TranscriptEntry],
) -> Transcript:
    """The transcript of a recorded call whose request and answer are read into `entries`:
    what the recorded output says of the exchange itself (its status when an int, its
    stream's events, an application that stopped reading the stream early) is read here,
    the same for every API."""
    if output.get("end") == "closed_early":
        entries.append(entry("response", "note", "stream", "the application stopped reading early"))
    status = output.get("status")
    events = output.get("events")
    streamed = isinstance(events, list)
    return Transcript(
        api=api,
        model=model,
        status=status if isinstance(status, int) and not isinstance(status, bool) else None,
        streamed=streamed,
        event_count=len(cast(list[JsonValue], events)) if streamed else 0,
        tools_offered=tools_offered,
        entries=tuple(entries),
    )


def pretty(value: JsonValue | None) -> str:
    """A tool's arguments or output: pretty JSON when the string holds JSON."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, dict | list):
            return json.dumps(parsed, indent=2, ensure_ascii=False)
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)
