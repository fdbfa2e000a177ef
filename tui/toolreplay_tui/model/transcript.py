"""A recorded model call as a readable transcript: who said what, which tools ran.

The OpenAI adapter records each HTTP exchange as it went over the wire: inputs
`{method, path, query, body}` (the request body as sent) and an output
`{status, headers, body | events, ...}` (the body as received, or the server-sent
events in order). `transcript_of` reads a Responses or Chat Completions call back
as a conversation: instructions, messages, tool calls with their arguments, tool
outputs, reasoning summaries, the final text, usage. Response-side entries carry
the JSON path of their value in the recorded output, so a view can point at the
raw value an edit would patch. Traces of the first adapter (inputs `{model, input,
...}`, output `{body: ...}`) read the same way.

Anything else (an effect that is not a model call, a body of another shape)
gives None: the caller shows the raw JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from toolreplay.portable import JsonValue, json_object, json_objects
from toolreplay_tui.model.claude_transcript import claude_transcript_of
from toolreplay_tui.model.conversation import (
    Api,
    Conversation,
    ConversationEntry,
    EntryKind,
    Side,
    Transcript,
    TranscriptEntry,
    answered,
)
from toolreplay_tui.model.conversation import entry as _entry
from toolreplay_tui.model.conversation import pretty as _pretty
from toolreplay_tui.model.gemini_transcript import gemini_transcript
from toolreplay_tui.model.jsonpaths import JsonPath

__all__ = [
    "Conversation",
    "ConversationEntry",
    "EntryKind",
    "Side",
    "Transcript",
    "TranscriptEntry",
    "transcript_of",
]

_RESPONSES_EFFECTS = ("openai.responses.create", "openai.responses.retrieve")
_CHAT_EFFECTS = ("openai.chat.completions.create",)
_FINAL_STREAM_EVENTS = ("response.completed", "response.incomplete", "response.failed")


def transcript_of(effect: str, inputs: JsonValue, output: JsonValue) -> Transcript | None:
    """The transcript of a recorded Responses, Chat Completions, Claude Messages or Gemini
    call, or None."""
    if effect.startswith("google_genai."):
        return gemini_transcript(effect, inputs, output)
    if effect.startswith("anthropic."):
        return claude_transcript_of(effect, inputs, output)
    request = _request_body(inputs)
    if request is None:
        return None
    api = _api(effect, inputs, request)
    if api is None:
        return None
    reply = json_object(output) or {}
    events = reply.get("events")
    entries: list[TranscriptEntry] = []
    tools: tuple[str, ...]
    if api == "responses":
        tools = _responses_request(request, entries)
    else:
        tools = _chat_request(request, entries)
    streamed = isinstance(events, list)
    if streamed:
        stream = cast(list[JsonValue], events)
        if api == "responses":
            _responses_stream(stream, entries)
        else:
            _chat_stream(stream, entries)
    else:
        prefix: JsonPath = ("body",) if "body" in reply else ()
        body = json_object(reply.get("body")) if prefix else None
        if body is not None:
            if api == "responses":
                _responses_body(body, prefix, entries)
            else:
                _chat_body(body, prefix, entries)
        elif "text" in reply:
            entries.append(_entry("response", "note", "body", str(reply["text"])))
    model = request.get("model")
    return answered(api, model if isinstance(model, str) else None, reply, tools, entries)


# --- shapes --------------------------------------------------------------------------------


def _request_body(inputs: JsonValue) -> dict[str, JsonValue] | None:
    shaped = json_object(inputs)
    if shaped is None:
        return None
    if "method" in shaped and "path" in shaped:
        return json_object(shaped.get("body"))
    return shaped  # the first adapter recorded the request fields themselves


def _api(effect: str, inputs: JsonValue, request: Mapping[str, JsonValue]) -> Api | None:
    path = (json_object(inputs) or {}).get("path")
    path = path if isinstance(path, str) else ""
    if effect in _CHAT_EFFECTS or path.endswith("/chat/completions"):
        return "chat.completions" if "messages" in request else None
    if effect in _RESPONSES_EFFECTS or path.endswith("/responses"):
        known = ("input", "model", "prompt")
        return "responses" if any(key in request for key in known) else None
    return None


def _content_text(content: JsonValue | None) -> str:
    """The text of a message's content: a string, or parts (text, images, files, audio)."""
    if isinstance(content, str):
        return content
    pieces: list[str] = []
    for part in json_objects(content):
        kind = str(part.get("type", ""))
        text = part.get("text")
        if isinstance(text, str):
            pieces.append(text)
        elif kind in ("input_image", "image_url"):
            pieces.append("[image]")
        elif kind in ("input_file", "file"):
            name = part.get("filename") or (json_object(part.get("file")) or {}).get("filename")
            pieces.append(f"[file {name}]" if isinstance(name, str) else "[file]")
        elif kind in ("input_audio",):
            pieces.append("[audio]")
        elif "refusal" in part:
            pieces.append(f"[refusal] {part['refusal']}")
        else:
            pieces.append(f"[{kind or 'part'}]")
    return "\n".join(pieces)


def _tool_names(tools: JsonValue | None) -> tuple[str, ...]:
    names: list[str] = []
    for tool in json_objects(tools):
        function = json_object(tool.get("function"))
        name = tool.get("name") or (function or {}).get("name") or tool.get("type")
        names.append(str(name))
    return tuple(names)


# --- Responses -----------------------------------------------------------------------------


def _responses_request(
    request: Mapping[str, JsonValue], entries: list[TranscriptEntry]
) -> tuple[str, ...]:
    instructions = request.get("instructions")
    if isinstance(instructions, str) and instructions:
        entries.append(_entry("request", "instructions", "instructions", instructions))
    prompt = json_object(request.get("prompt"))
    if prompt is not None:  # a prompt stored on the platform, by id, with its variables
        version = prompt.get("version")
        text = f"{prompt.get('id')}" + (f" (version {version})" if version is not None else "")
        variables = prompt.get("variables")
        if variables:
            text += "\n" + _pretty(variables)
        entries.append(_entry("request", "instructions", "stored prompt", text))
    previous = request.get("previous_response_id")
    if isinstance(previous, str):
        entries.append(_entry("request", "note", "continues", previous))
    given = request.get("input")
    if isinstance(given, str):
        entries.append(_entry("request", "message", "user", given))
    for item in json_objects(given):
        _responses_item(item, "request", None, entries)
    return _tool_names(request.get("tools"))


def _responses_item(
    item: Mapping[str, JsonValue],
    side: Side,
    path: JsonPath | None,
    entries: list[TranscriptEntry],
) -> None:
    """One input or output item; `path` is the item's place in the output (or None)."""

    def at(*segments: str | int) -> JsonPath | None:
        return None if path is None else (*path, *segments)

    kind = str(item.get("type") or ("message" if "role" in item else "item"))
    if kind == "message":
        role = str(item.get("role", "assistant"))
        content = item.get("content")
        if side == "response" and isinstance(content, list):
            for index, part in enumerate(json_objects(content)):
                if isinstance(part.get("text"), str):
                    text = str(part["text"])
                    entries.append(_entry(side, "text", role, text, at("content", index, "text")))
                elif isinstance(part.get("refusal"), str):
                    refusal = str(part["refusal"])
                    entries.append(
                        _entry(side, "refusal", role, refusal, at("content", index, "refusal"))
                    )
            return
        entries.append(_entry(side, "message", role, _content_text(content)))
    elif kind in ("function_call", "custom_tool_call"):
        field = "arguments" if kind == "function_call" else "input"
        entries.append(
            _entry(side, "tool_call", str(item.get("name")), _pretty(item.get(field)), at(field))
        )
    elif kind in ("function_call_output", "custom_tool_call_output"):
        entries.append(
            _entry(side, "tool_output", str(item.get("call_id", "")), _pretty(item.get("output")))
        )
    elif kind == "reasoning":
        for index, summary in enumerate(json_objects(item.get("summary"))):
            text = summary.get("text")
            if isinstance(text, str):
                entries.append(
                    _entry(side, "reasoning", "reasoning", text, at("summary", index, "text"))
                )
        if not json_objects(item.get("summary")):
            entries.append(_entry(side, "reasoning", "reasoning", "(no summary)", None))
    else:
        entries.append(_entry(side, "hosted_tool", kind, _hosted_tool_text(item), at()))


def _hosted_tool_text(item: Mapping[str, JsonValue]) -> str:
    """What a built-in tool did, in a line: the search, the code, the server tool."""
    action = json_object(item.get("action")) or {}
    for key in ("query", "url", "pattern"):
        if isinstance(action.get(key), str):
            return f"{key}: {action[key]}"
    queries = item.get("queries")
    if isinstance(queries, list):
        return "queries: " + ", ".join(str(query) for query in queries)
    if isinstance(item.get("code"), str):
        return str(item["code"])
    if isinstance(item.get("name"), str):
        arguments = item.get("arguments")
        return f"{item['name']}({_pretty(arguments) if arguments is not None else ''})"
    status = item.get("status")
    return f"status: {status}" if isinstance(status, str) else ""


def _responses_body(
    body: Mapping[str, JsonValue], prefix: JsonPath, entries: list[TranscriptEntry]
) -> None:
    error = json_object(body.get("error"))
    if error is not None:
        entries.append(_entry("response", "error", "error", str(error.get("message", error))))
    for index, item in enumerate(json_objects(body.get("output"))):
        _responses_item(item, "response", (*prefix, "output", index), entries)
    incomplete = json_object(body.get("incomplete_details"))
    if incomplete is not None:
        entries.append(_entry("response", "note", "incomplete", str(incomplete.get("reason"))))
    usage = json_object(body.get("usage"))
    if usage is not None:
        entries.append(_entry("response", "usage", "usage", _usage_text(usage)))


def _responses_stream(events: Sequence[JsonValue], entries: list[TranscriptEntry]) -> None:
    """The final response event's body, or the items that completed before a cut."""
    final: tuple[int, dict[str, JsonValue]] | None = None
    done: list[tuple[int, dict[str, JsonValue]]] = []
    for index, event in enumerate(events):
        data = json_object((json_object(event) or {}).get("data"))
        if data is None:
            continue
        kind = data.get("type")
        if kind in _FINAL_STREAM_EVENTS and json_object(data.get("response")) is not None:
            final = (index, cast(dict[str, JsonValue], data["response"]))
        elif kind == "response.output_item.done" and json_object(data.get("item")) is not None:
            done.append((index, cast(dict[str, JsonValue], data["item"])))
        elif kind == "error":
            entries.append(_entry("response", "error", "error", str(data.get("message"))))
    if final is not None:
        index, response = final
        _responses_body(response, ("events", index, "data", "response"), entries)
        return
    for index, item in done:
        _responses_item(item, "response", ("events", index, "data", "item"), entries)
    entries.append(_entry("response", "note", "stream", "ended before the response completed"))


# --- Chat Completions ----------------------------------------------------------------------


def _chat_request(
    request: Mapping[str, JsonValue], entries: list[TranscriptEntry]
) -> tuple[str, ...]:
    for message in json_objects(request.get("messages")):
        role = str(message.get("role", "user"))
        if role == "tool":
            who = str(message.get("tool_call_id", "tool"))
            entries.append(_entry("request", "tool_output", who, _pretty(message.get("content"))))
            continue
        text = _content_text(message.get("content"))
        if text:
            kind: EntryKind = "instructions" if role in ("system", "developer") else "message"
            entries.append(_entry("request", kind, role, text))
        for call in json_objects(message.get("tool_calls")):
            function = json_object(call.get("function")) or {}
            entries.append(
                _entry(
                    "request",
                    "tool_call",
                    str(function.get("name")),
                    _pretty(function.get("arguments")),
                )
            )
    return _tool_names(request.get("tools"))


def _chat_message(
    message: Mapping[str, JsonValue], path: JsonPath | None, entries: list[TranscriptEntry]
) -> None:
    def at(*segments: str | int) -> JsonPath | None:
        return None if path is None else (*path, *segments)

    for key in ("reasoning_content", "reasoning"):
        if isinstance(message.get(key), str) and message[key]:
            entries.append(_entry("response", "reasoning", "reasoning", str(message[key]), at(key)))
    content = message.get("content")
    if isinstance(content, str) and content:
        entries.append(_entry("response", "text", "assistant", content, at("content")))
    if isinstance(message.get("refusal"), str):
        refusal = str(message["refusal"])
        entries.append(_entry("response", "refusal", "assistant", refusal, at("refusal")))
    for index, call in enumerate(json_objects(message.get("tool_calls"))):
        function = json_object(call.get("function")) or {}
        entries.append(
            _entry(
                "response",
                "tool_call",
                str(function.get("name")),
                _pretty(function.get("arguments")),
                at("tool_calls", index, "function", "arguments"),
            )
        )


def _chat_body(
    body: Mapping[str, JsonValue], prefix: JsonPath, entries: list[TranscriptEntry]
) -> None:
    error = json_object(body.get("error"))
    if error is not None:
        entries.append(_entry("response", "error", "error", str(error.get("message", error))))
    for index, choice in enumerate(json_objects(body.get("choices"))):
        message = json_object(choice.get("message"))
        if message is not None:
            _chat_message(message, (*prefix, "choices", index, "message"), entries)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason != "stop":
            entries.append(_entry("response", "note", "finish", reason))
    usage = json_object(body.get("usage"))
    if usage is not None:
        entries.append(_entry("response", "usage", "usage", _usage_text(usage)))


def _chat_stream(events: Sequence[JsonValue], entries: list[TranscriptEntry]) -> None:
    """The deltas of a streamed completion put back together (first choice)."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    reason: str | None = None
    usage: dict[str, JsonValue] | None = None
    for event in events:
        data = json_object((json_object(event) or {}).get("data"))
        if data is None:
            continue
        usage = json_object(data.get("usage")) or usage
        for choice in json_objects(data.get("choices"))[:1]:
            delta = json_object(choice.get("delta")) or {}
            if isinstance(delta.get("content"), str):
                content.append(str(delta["content"]))
            for key in ("reasoning_content", "reasoning"):
                if isinstance(delta.get(key), str):
                    reasoning.append(str(delta[key]))
            for call in json_objects(delta.get("tool_calls")):
                position = call.get("index")
                slot = calls.setdefault(
                    position if isinstance(position, int) else len(calls), {"name": "", "args": ""}
                )
                function = json_object(call.get("function")) or {}
                if isinstance(function.get("name"), str):
                    slot["name"] += str(function["name"])
                if isinstance(function.get("arguments"), str):
                    slot["args"] += str(function["arguments"])
            if isinstance(choice.get("finish_reason"), str):
                reason = str(choice["finish_reason"])
    if reasoning:
        entries.append(_entry("response", "reasoning", "reasoning", "".join(reasoning)))
    if content:
        entries.append(_entry("response", "text", "assistant", "".join(content)))
    for position in sorted(calls):
        slot = calls[position]
        entries.append(_entry("response", "tool_call", slot["name"], _pretty(slot["args"])))
    if reason not in (None, "stop"):
        entries.append(_entry("response", "note", "finish", str(reason)))
    if usage is not None:
        entries.append(_entry("response", "usage", "usage", _usage_text(usage)))


def _usage_text(usage: Mapping[str, JsonValue]) -> str:
    """`120 in (0 cached) · 18 out (0 reasoning) · 138 total`, for either API."""
    given = usage.get("input_tokens", usage.get("prompt_tokens"))
    made = usage.get("output_tokens", usage.get("completion_tokens"))
    total = usage.get("total_tokens")
    given_details = (
        json_object(usage.get("input_tokens_details", usage.get("prompt_tokens_details"))) or {}
    )
    made_details = (
        json_object(usage.get("output_tokens_details", usage.get("completion_tokens_details")))
        or {}
    )
    parts = [f"{given} in"]
    if isinstance(given_details.get("cached_tokens"), int):
        parts[-1] += f" ({given_details['cached_tokens']} cached)"
    parts.append(f"{made} out")
    if isinstance(made_details.get("reasoning_tokens"), int):
        parts[-1] += f" ({made_details['reasoning_tokens']} reasoning)"
    parts.append(f"{total} total")
    return " · ".join(parts)
