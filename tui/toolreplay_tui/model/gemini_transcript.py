"""A recorded Gemini call (the Google Gen AI adapter's) as a readable transcript.

The adapter records `generateContent` and `streamGenerateContent` as they went over the
wire: inputs `{method, path, query, headers, body}` (the request body in the API's JSON:
`systemInstruction`, `contents` of `parts`, `tools` of `functionDeclarations`,
`generationConfig`) and an output `{status, headers, body | events, ...}` (a
`GenerateContentResponse`, or the stream's chunks, each one). `gemini_transcript` reads
it back as a conversation: the system instruction, each content's parts (text, function
calls with their args, function responses, other parts by kind), and the answer's
thought summaries, text, function calls, finish reason, usage. A stream's chunks are
added up: a text streamed in pieces is one entry. Response-side entries of a JSON body,
and a streamed part that came whole, carry the JSON path of their value in the output.

Reads the recorded JSON only (the SDK is not imported). Anything of another shape gives
None: the caller shows the raw JSON.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import cast

from toolreplay.portable import JsonValue, json_object, json_objects
from toolreplay_tui.model.conversation import (
    EntryKind,
    Side,
    Transcript,
    TranscriptEntry,
    answered,
    entry,
    pretty,
)
from toolreplay_tui.model.jsonpaths import JsonPath

__all__ = ["gemini_transcript"]

_EFFECTS = ("google_genai.models.generate_content", "google_genai.models.stream_generate_content")
_MODEL = re.compile(r"/models/([^/:]+):")
_META = ("thought", "thoughtSignature")


def gemini_transcript(effect: str, inputs: JsonValue, output: JsonValue) -> Transcript | None:
    """The transcript of a recorded `generateContent` call (streamed or not), or None."""
    shaped = json_object(inputs)
    request = json_object((shaped or {}).get("body"))
    if effect not in _EFFECTS or request is None or "contents" not in request:
        return None
    entries: list[TranscriptEntry] = []
    _request(request, entries)
    reply = json_object(output) or {}
    events = reply.get("events")
    streamed = isinstance(events, list)
    if streamed:
        _stream(cast(list[JsonValue], events), entries)
    else:
        body = json_object(reply.get("body"))
        if body is not None:
            _response(body, ("body",), entries)
        elif "text" in reply:
            entries.append(entry("response", "note", "body", str(reply["text"])))
    found = _MODEL.search(str((shaped or {}).get("path", "")))
    model = found.group(1) if found else None
    return answered("gemini", model, reply, _tools(request.get("tools")), entries)


def _tools(tools: JsonValue | None) -> tuple[str, ...]:
    names: list[str] = []
    for tool in json_objects(tools):
        declared = json_objects(tool.get("functionDeclarations", tool.get("function_declarations")))
        names += [str(declaration.get("name")) for declaration in declared]
        names += [
            key for key in tool if key not in ("functionDeclarations", "function_declarations")
        ]
    return tuple(names)


def _part(
    part: Mapping[str, JsonValue],
    side: Side,
    role: str,
    path: JsonPath | None,
    entries: list[TranscriptEntry],
) -> None:
    """One part of a content; `path` is the part's place in the output (or None)."""

    def at(*segments: str | int) -> JsonPath | None:
        return None if path is None else (*path, *segments)

    text = part.get("text")
    if isinstance(text, str):
        if part.get("thought") is True:
            entries.append(entry(side, "reasoning", "thought", text, at("text")))
        else:
            kind: EntryKind = "text" if side == "response" else "message"
            entries.append(entry(side, kind, role, text, at("text")))
        return
    call = json_object(part.get("functionCall"))
    if call is not None:
        name = str(call.get("name", "function"))
        entries.append(
            entry(side, "tool_call", name, pretty(call.get("args")), at("functionCall", "args"))
        )
        return
    answer = json_object(part.get("functionResponse"))
    if answer is not None:
        name = str(answer.get("name", "function"))
        entries.append(entry(side, "tool_output", name, pretty(answer.get("response"))))
        return
    kind_name = next((key for key in part if key not in _META), "part")
    value = part.get(kind_name)
    described = json_object(value) or {}
    shown = described.get("mimeType", described.get("fileUri", described.get("code")))
    text_shown = f"[{kind_name}]" + (f" {shown}" if isinstance(shown, str) else "")
    entries.append(
        entry(side, "hosted_tool" if side == "response" else "message", role, text_shown)
    )


def _request(request: Mapping[str, JsonValue], entries: list[TranscriptEntry]) -> None:
    system = json_object(request.get("systemInstruction"))
    if system is not None:
        texts = [str(part["text"]) for part in json_objects(system.get("parts")) if "text" in part]
        entries.append(entry("request", "instructions", "system", "\n".join(texts)))
    contents = request.get("contents")
    if isinstance(contents, str):
        entries.append(entry("request", "message", "user", contents))
    for content in json_objects(contents):
        role = str(content.get("role", "user"))
        for part in json_objects(content.get("parts")):
            _part(part, "request", role, None, entries)


def _response(
    body: Mapping[str, JsonValue], prefix: JsonPath, entries: list[TranscriptEntry]
) -> None:
    error = json_object(body.get("error"))
    if error is not None:
        entries.append(entry("response", "error", "error", str(error.get("message", error))))
    blocked = json_object(body.get("promptFeedback")) or {}
    if isinstance(blocked.get("blockReason"), str):
        entries.append(entry("response", "error", "blocked", str(blocked["blockReason"])))
    for number, candidate in enumerate(json_objects(body.get("candidates"))):
        where = (*prefix, "candidates", number, "content")
        content = json_object(candidate.get("content")) or {}
        role = str(content.get("role", "model"))
        for index, part in enumerate(json_objects(content.get("parts"))):
            _part(part, "response", role, (*where, "parts", index), entries)
        _finish(candidate.get("finishReason"), entries)
    usage = json_object(body.get("usageMetadata"))
    if usage is not None:
        entries.append(entry("response", "usage", "usage", _usage_text(usage)))


def _finish(reason: JsonValue | None, entries: list[TranscriptEntry]) -> None:
    if isinstance(reason, str) and reason != "STOP":
        entries.append(entry("response", "note", "finish", reason))


def _stream(events: Sequence[JsonValue], entries: list[TranscriptEntry]) -> None:
    """The chunks added up (the first candidate): text pieces joined, other parts whole."""
    parts: list[tuple[dict[str, JsonValue], JsonPath | None]] = []
    reason: JsonValue | None = None
    usage: dict[str, JsonValue] | None = None
    for number, event in enumerate(events):
        data = json_object((json_object(event) or {}).get("data"))
        if data is None:
            continue
        error = json_object(data.get("error"))
        if error is not None:
            entries.append(entry("response", "error", "error", str(error.get("message", error))))
        usage = json_object(data.get("usageMetadata")) or usage
        candidate = (json_objects(data.get("candidates")) or [{}])[0]
        reason = candidate.get("finishReason", reason)
        content = json_object(candidate.get("content")) or {}
        for index, part in enumerate(json_objects(content.get("parts"))):
            previous = parts[-1][0] if parts else None
            if (
                previous is not None
                and isinstance(part.get("text"), str)
                and isinstance(previous.get("text"), str)
                and (part.get("thought") is True) == (previous.get("thought") is True)
            ):
                previous["text"] = str(previous["text"]) + str(part["text"])
                parts[-1] = (previous, None)  # spread over several chunks
            else:
                where: JsonPath = (
                    "events",
                    number,
                    "data",
                    "candidates",
                    0,
                    "content",
                    "parts",
                    index,
                )
                parts.append((dict(part), where))
    for part, place in parts:
        _part(part, "response", "model", place, entries)
    if reason is None and events:
        entries.append(entry("response", "note", "stream", "ended before its finish reason"))
    _finish(reason, entries)
    if usage is not None:
        entries.append(entry("response", "usage", "usage", _usage_text(usage)))


def _usage_text(usage: Mapping[str, JsonValue]) -> str:
    """`31 in (0 cached) · 51 out (12 thoughts) · 82 total`."""
    parts = [f"{usage.get('promptTokenCount')} in"]
    if isinstance(usage.get("cachedContentTokenCount"), int):
        parts[-1] += f" ({usage['cachedContentTokenCount']} cached)"
    parts.append(f"{usage.get('candidatesTokenCount')} out")
    if isinstance(usage.get("thoughtsTokenCount"), int):
        parts[-1] += f" ({usage['thoughtsTokenCount']} thoughts)"
    parts.append(f"{usage.get('totalTokenCount')} total")
    return " · ".join(parts)
