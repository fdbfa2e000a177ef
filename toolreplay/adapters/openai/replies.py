"""Model answers written in one line: `reply(...)`, and edits of a recorded answer: `edit(...)`.

    toolreplay.supply_output(
        effect="openai.responses.create",
        value=reply(tool_calls=[("issue_refund", {"order_id": 8812, "amount": 0.0})]),
    )
    toolreplay.replace_output(at=3, value=edit({"$.output[1].content[0].text": "No."}))

Both are `OutputRecipe`s: a patch stores them as written (and its id is computed
from them), and a fork resolves them against the call they answer, through the
OpenAI profile's resolver (`OPENAI_RECIPES`, registered for the `openai` namespace
with the profile, `toolreplay.runtime.recipes`). A reply becomes the complete response the API
would send for that request: Responses or Chat Completions, a JSON body or the
exact event stream the SDK reads (deltas, `*.done` events, the final response),
with the ids, model and usage shape of the nearest recorded answer of the same
endpoint in the source. An edit sets values of the recorded answer's final object
by JSON path and rewrites a stream's events to agree (`streams.edited_output`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import cast

from toolreplay.adapters.capture.recipes import (
    ModelRecipes,
    ModelReply,
    edit_recipe,
    given_call,
    made_id,
    nearest_recorded,
    reply_keys_problem,
    reply_recipe,
    served_answer,
    usage_problem,
)
from toolreplay.adapters.openai.chat_stream import chat_chunks
from toolreplay.adapters.openai.exchange import EFFECT_NAMESPACE
from toolreplay.adapters.openai.responses_stream import responses_events
from toolreplay.adapters.openai.streams import edited_output, final_response, response_kind
from toolreplay.errors import PatchError
from toolreplay.patches import OutputRecipe
from toolreplay.portable import JsonObject, JsonValue, copy_value, ensure_portable, preview
from toolreplay.runtime.recipes import RecipeCall

__all__ = ["OPENAI_RECIPES", "REPLY_EFFECTS", "ToolCallSpec", "edit", "reply"]

REPLY_EFFECTS = {
    f"{EFFECT_NAMESPACE}.responses.create": "responses",
    f"{EFFECT_NAMESPACE}.chat.completions.create": "chat",
}
"""The effects a `reply(...)` answers, and the API each is."""

ToolCallSpec = tuple[str, Mapping[str, object] | str] | Mapping[str, object]
"""One tool call of a reply: `(name, arguments)` or `{"name": ..., "arguments": ...}`;
arguments are a JSON object, as a mapping or as its JSON text."""

_REPLY_KEYS = ("text", "refusal", "tool_calls", "reasoning", "model", "usage")
# Request fields the Responses API repeats in its answer.
_ECHOED = (
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "previous_response_id",
    "text",
    "reasoning",
    "max_output_tokens",
    "max_tool_calls",
    "temperature",
    "top_p",
    "top_logprobs",
    "truncation",
    "metadata",
    "store",
    "background",
    "prompt_cache_key",
    "safety_identifier",
    "user",
)


def reply(
    *,
    text: str | None = None,
    refusal: str | None = None,
    tool_calls: Sequence[ToolCallSpec] = (),
    reasoning: str | None = None,
    model: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
) -> OutputRecipe:
    """A model answer for `supply_output`/`replace_output` on a Responses or Chat call.

        reply(text="Order 8812 was lost in transit; I have opened a claim.")
        reply(tool_calls=[("issue_refund", {"order_id": 8812, "amount": 0.0})])
        reply(refusal="I can't help with that.")

    `text` is the assistant's message (JSON text for a structured-output request,
    which `responses.parse` then parses); `tool_calls` the function calls the
    model makes, each `(name, arguments)` with arguments a JSON object (a mapping,
    or its JSON text); `refusal` a refusal, which is the whole answer;
    `reasoning` a reasoning summary (Responses API only). `model` overrides the
    model the answer names (by default the nearest recorded answer's, when it is
    the requested model, else the requested model); `input_tokens` and
    `output_tokens` the usage it reports (by default the nearest recorded
    answer's input tokens, and about four characters per output token).

    The fork builds the full response when the call comes: for the endpoint
    called, streamed exactly as the API streams (every delta, the `*.done`
    events, `response.completed`; or the chunks and `[DONE]`) when the request
    asks for a stream, with ids made from the patch, and the branch keeps that
    response.
    """
    calls = [_tool_call(call, position) for position, call in enumerate(tool_calls)]
    return reply_recipe(
        EFFECT_NAMESPACE,
        _reply_problem,
        (input_tokens, output_tokens),
        {
            "text": text,
            "refusal": refusal,
            "tool_calls": cast(list[JsonValue], calls),
            "reasoning": reasoning,
            "model": model,
        },
    )


def _tool_call(call: ToolCallSpec, position: int) -> JsonObject:
    name, arguments = given_call(call, position, "tool_calls", "arguments")
    if isinstance(arguments, Mapping):
        mapping = cast(Mapping[str, object], arguments)
        portable = ensure_portable(dict(mapping), what=f"reply tool_calls[{position}] arguments")
        arguments = json.dumps(portable, ensure_ascii=False, separators=(",", ":"))
    return {"name": cast(JsonValue, name), "arguments": cast(JsonValue, arguments)}


def _reply_problem(spec: JsonValue) -> str | None:
    """What is wrong with a reply's spec (as `reply` builds it, or a patch file holds it)."""
    problem = reply_keys_problem(
        spec,
        _REPLY_KEYS,
        ("text", "refusal", "reasoning", "model"),
        ("text", "tool_calls", "refusal"),
    )
    if problem is not None:
        return problem
    spec = cast(JsonObject, spec)
    if "refusal" in spec and ({"text", "tool_calls"} & spec.keys()):
        return "a refusal is the whole answer: give it without text or tool_calls"
    calls = spec.get("tool_calls", [])
    if not isinstance(calls, list) or (not calls and "tool_calls" in spec):
        return "tool_calls must be a non-empty list of {name, arguments}"
    for position, call in enumerate(calls):
        problem = _call_problem(call)
        if problem is not None:
            return f"tool_calls[{position}]: {problem}"
    return usage_problem(spec)


def _call_problem(call: JsonValue) -> str | None:
    if not isinstance(call, dict) or call.keys() != {"name", "arguments"}:
        return f"a tool call is {{name, arguments}}, got {preview(call)}"
    name, arguments = call["name"], call["arguments"]
    if not isinstance(name, str) or not name:
        return f"the name must be a non-empty string, got {preview(name)}"
    if not isinstance(arguments, str):
        return f"arguments are a JSON object (or its text), got {preview(arguments)}"
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return f"arguments of {name} are not JSON: {arguments[:80]!r}"
    if not isinstance(parsed, dict):
        return f"arguments of {name} must be a JSON object, got {arguments[:80]!r}"
    return None


def edit(edits: Mapping[str, object]) -> OutputRecipe:
    """Changes to a recorded answer, by JSON path into its final object, for `replace_output`.

        replace_output(at=3, value=edit({"$.output[1].content[0].text": "Held for review."}))
        replace_output(at=5, value=edit({"$.choices[0].message.content": "No."}))

    The paths run through the answer the SDK ends up with: the Responses API's
    `Response` or a `chat.completion` (for a stream, the final response it
    carries or its chunks add up to). When the fork applies the patch, the
    recorded output is rewritten so that a stream's deltas, `*.done` events and
    final response all agree with the edit (see `edited_output`), and the SDK
    accumulates exactly the edited object.
    """
    return edit_recipe(edits, EFFECT_NAMESPACE, "$.output[0].content[0].text")


# --- resolving --------------------------------------------------------------------------


OPENAI_RECIPES = ModelRecipes(
    reply_effects=frozenset(REPLY_EFFECTS),
    answers=f"{' and '.join(REPLY_EFFECTS)} (the Responses and Chat Completions APIs)",
    reply_problem=_reply_problem,
    reply_output=lambda call, spec: _Reply(call, spec).output(),
    edited=edited_output,
)
"""The `openai` namespace's recipe resolver: the OpenAI profile's `recipes`."""


class _Reply(ModelReply):
    """One reply resolved for one call."""

    def __init__(self, call: RecipeCall, spec: JsonObject) -> None:
        self.api = REPLY_EFFECTS[call.identity.effect]
        super().__init__(call, spec, _nearest_answer(call, self.api))
        self.stream = self.request.get("stream") is True

    def _id(self, prefix: str, purpose: str, size: int = 48) -> str:
        return made_id(self.call, prefix, purpose, size)

    def output(self) -> JsonValue:
        self._check_request()
        final = self._responses() if self.api == "responses" else self._chat()
        headers: JsonObject = {
            "content-type": "text/event-stream; charset=utf-8"
            if self.stream
            else "application/json",
            "x-request-id": self._id("req_", "request", 32),
        }
        for name, value in self.template_headers.items():
            headers.setdefault(name, copy_value(value))
        events: JsonValue | None = None
        if self.stream and self.api == "responses":
            events = responses_events(final)
        elif self.stream:
            options = self.request.get("stream_options")
            usage = isinstance(options, dict) and options.get("include_usage") is True
            events = chat_chunks(final, include_usage=usage)
        return served_answer(headers, final, events)

    def _check_request(self) -> None:
        request = self.request
        calls = cast(list[JsonObject], self.spec.get("tool_calls", []))
        if calls:
            offered = _offered_tools(request, self.api)
            for call in calls:
                if call["name"] not in offered:
                    shown = ", ".join(sorted(offered)) or "none"
                    raise PatchError(
                        f"the reply calls the tool {call['name']!r}, which this request does "
                        f"not offer (its tools: {shown}); name one of them"
                    )
        if self.api == "chat":
            choices = request.get("n")
            if choices not in (None, 1):
                raise PatchError(
                    f"the request asks for n={choices} choices; a reply writes one answer"
                )
            if "reasoning" in self.spec:
                raise PatchError(
                    "reasoning summaries are a Responses API output; Chat Completions has none"
                )
        text = self.spec.get("text")
        if isinstance(text, str) and _wants_json(request, self.api):
            try:
                json.loads(text)
            except ValueError:
                raise PatchError(
                    "the request asks for a JSON answer (structured output), and the reply's "
                    f"text is not JSON: {text[:80]!r}; give its JSON text"
                ) from None

    def _model(self) -> JsonValue:
        return self.answer_model(self.request.get("model"), self.template.get("model"))

    def _usage(self, recorded: JsonValue, api: str) -> JsonValue:
        """The recorded usage's shape with this answer's counts: the given ones, else the
        recorded input tokens and about four characters per output token."""
        input_key, output_key = (
            ("input", "output") if api == "responses" else ("prompt", "completion")
        )
        given = cast(JsonObject, self.spec.get("usage", {}))
        written = sum(len(str(self.spec.get(key, ""))) for key in ("text", "refusal", "reasoning"))
        written += sum(
            len(str(call["name"])) + len(str(call["arguments"]))
            for call in cast(list[JsonObject], self.spec.get("tool_calls", []))
        )
        usage = cast(JsonObject, copy_value(recorded)) if isinstance(recorded, dict) else {}
        tokens_in = given.get("input_tokens", usage.get(f"{input_key}_tokens", 0))
        tokens_out = given.get("output_tokens", max(1, -(-written // 4)))
        details = usage.get(f"{output_key}_tokens_details")
        if isinstance(details, dict):  # what the recorded output was made of, not this one
            usage[f"{output_key}_tokens_details"] = dict.fromkeys(details, 0)
        usage[f"{input_key}_tokens"] = tokens_in
        usage[f"{output_key}_tokens"] = tokens_out
        usage["total_tokens"] = cast(int, tokens_in) + cast(int, tokens_out)
        return usage

    def _responses(self) -> JsonObject:
        spec = self.spec
        items: list[JsonValue] = []
        if "reasoning" in spec:
            items.append(
                {
                    "id": self._id("rs_", "reasoning"),
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": spec["reasoning"]}],
                }
            )
        content: list[JsonValue] = []
        if "text" in spec:
            content.append(
                {"type": "output_text", "annotations": [], "logprobs": [], "text": spec["text"]}
            )
        if "refusal" in spec:
            content.append({"type": "refusal", "refusal": spec["refusal"]})
        if content:
            items.append(
                {
                    "id": self._id("msg_", "message"),
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": content,
                }
            )
        for position, call in enumerate(cast(list[JsonObject], spec.get("tool_calls", []))):
            items.append(
                {
                    "id": self._id("fc_", f"call {position}"),
                    "type": "function_call",
                    "status": "completed",
                    "arguments": call["arguments"],
                    "call_id": self._id("call_", f"call id {position}", 24),
                    "name": call["name"],
                }
            )
        # The recorded answer's fields, in its order, with what is this call's own set
        # afresh: the request's echoed settings, the ids, the output and its usage.
        body = cast(JsonObject, copy_value(self.template or _RESPONSE))
        body.update(cast(JsonObject, copy_value(_PER_REQUEST)))
        for key in _ECHOED:
            if key in self.request:
                body[key] = copy_value(self.request[key])
        body.update(
            id=self._id(_prefix(self.template.get("id"), "resp_"), "response"),
            object="response",
            status="completed",
            error=None,
            incomplete_details=None,
            model=self._model(),
            output=items,
            usage=self._usage(self.template.get("usage") or _RESPONSE["usage"], self.api),
        )
        return body

    def _chat(self) -> JsonObject:
        spec = self.spec
        message: JsonObject = {
            "role": "assistant",
            "content": spec.get("text"),
            "refusal": spec.get("refusal"),
            "annotations": [],
        }
        calls = cast(list[JsonObject], spec.get("tool_calls", []))
        if calls:
            message["tool_calls"] = [
                {
                    "id": self._id("call_", f"call id {position}", 24),
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
                for position, call in enumerate(calls)
            ]
        template = self.template
        return {
            "id": self._id(_prefix(template.get("id"), "chatcmpl-"), "completion", 29),
            "object": "chat.completion",
            "created": template.get("created", 0),
            "model": self._model(),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": self._usage(template.get("usage") or _CHAT_USAGE, self.api),
            "service_tier": template.get("service_tier", "default"),
            "system_fingerprint": template.get("system_fingerprint"),
        }


# A Responses answer when the source records none to follow.
_RESPONSE: JsonObject = {
    "id": "resp_",
    "object": "response",
    "created_at": 0,
    "status": "completed",
    "background": False,
    "error": None,
    "incomplete_details": None,
    "instructions": None,
    "max_output_tokens": None,
    "model": None,
    "output": [],
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "reasoning": {"effort": None, "summary": None},
    "service_tier": "default",
    "store": True,
    "temperature": 1.0,
    "text": {"format": {"type": "text"}},
    "tool_choice": "auto",
    "tools": [],
    "top_p": 1.0,
    "truncation": "disabled",
    "usage": {
        "input_tokens": 0,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 0,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 0,
    },
    "user": None,
    "metadata": {},
}
# Echoed request settings a recorded answer holds for its own request: reset to the
# API's defaults, then set from this request where it gives them.
_PER_REQUEST: JsonObject = {
    "instructions": None,
    "tools": [],
    "tool_choice": "auto",
    "previous_response_id": None,
    "text": {"format": {"type": "text"}},
    "max_output_tokens": None,
    "metadata": {},
}
_CHAT_USAGE: JsonObject = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def _prefix(recorded: JsonValue, default: str) -> str:
    """The kind prefix of a recorded id (`resp_`, `chatcmpl-`), or `default`."""
    if isinstance(recorded, str):
        for separator in ("_", "-"):
            head, found, _ = recorded.partition(separator)
            if found and head.isalpha():
                return head + separator
    return default


def _offered_tools(request: JsonObject, api: str) -> set[str]:
    names: set[str] = set()
    tools = request.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if api == "chat":
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else None
        else:
            name = tool.get("name")
        if isinstance(name, str):
            names.add(name)
    functions = request.get("functions")  # Chat Completions' older form
    for function in functions if isinstance(functions, list) else []:
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.add(cast(str, function["name"]))
    return names


def _wants_json(request: JsonObject, api: str) -> bool:
    if api == "chat":
        form = request.get("response_format")
        return isinstance(form, dict) and form.get("type") in ("json_schema", "json_object")
    text = request.get("text")
    form = text.get("format") if isinstance(text, dict) else None
    return isinstance(form, dict) and form.get("type") in ("json_schema", "json_object")


def _nearest_answer(call: RecipeCall, api: str) -> tuple[JsonObject, JsonObject] | None:
    """The final object and headers of the recorded answer of this endpoint nearest the
    call in the source (earlier first on a tie), or None when the source has none."""

    def answer(output: JsonObject) -> tuple[JsonObject, JsonObject] | None:
        status = output.get("status")
        headers = output.get("headers")
        final = final_response(output)
        if (
            type(status) is int
            and 200 <= status < 300
            and final is not None
            and response_kind(output) == api
        ):
            kept = cast(JsonObject, headers) if isinstance(headers, dict) else {}
            return final, {
                k: v for k, v in kept.items() if k not in ("content-type", "x-request-id")
            }
        return None

    return nearest_recorded(call, answer)
