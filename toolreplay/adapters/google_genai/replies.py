"""`reply(...)` and `edit(...)`: a Gemini answer for a fork in one line (RFC 0006 Part V).

`reply(...)` is a recipe (RFC 0004 §1.7) resolved when the fork reaches the call it
answers: a `GenerateContentResponse` holding the given thought summary, text and function
calls, as a JSON body for `models.generate_content` and as the chunks the API streams for
`models.stream_generate_content`, in the shape of the nearest recorded answer. `edit(...)`
changes a recorded answer by JSON path (`responses.edited_output`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import cast

from toolreplay.adapters.capture.recipes import (
    ModelRecipes,
    ModelReply,
    calls_problem,
    edit_recipe,
    made_id,
    nearest_answer,
    object_call,
    reply_keys_problem,
    reply_recipe,
    served_answer,
    usage_problem,
)
from toolreplay.adapters.google_genai.exchange import EFFECT_NAMESPACE
from toolreplay.adapters.google_genai.responses import (
    edited_output,
    final_response,
    response_chunks,
)
from toolreplay.errors import PatchError
from toolreplay.patches import OutputRecipe
from toolreplay.portable import (
    JsonObject,
    JsonValue,
    copy_value,
    json_object,
    json_objects,
    preview,
)
from toolreplay.runtime.recipes import RecipeCall

__all__ = ["GOOGLE_GENAI_RECIPES", "REPLY_EFFECTS", "FunctionCallSpec", "edit", "reply"]

REPLY_EFFECTS = (
    f"{EFFECT_NAMESPACE}.models.generate_content",
    f"{EFFECT_NAMESPACE}.models.stream_generate_content",
)
"""The effects a `reply(...)` answers: a `generateContent` call, streamed or not."""

FunctionCallSpec = tuple[str, Mapping[str, object]] | Mapping[str, object]
"""One function call of a reply: `(name, args)` or `{"name": ..., "args": ...}`, the args a
JSON object."""

_REPLY_KEYS = ("text", "function_calls", "thought", "finish_reason", "model", "usage")
_FINISH = re.compile(r"[A-Z][A-Z_]*")
_MODEL_IN_PATH = re.compile(r"/models/([^/:]+):")
_COUNTS = ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "totalTokenCount")


def reply(
    *,
    text: str | None = None,
    function_calls: Sequence[FunctionCallSpec] = (),
    thought: str | None = None,
    finish_reason: str | None = None,
    model: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
) -> OutputRecipe:
    """A Gemini answer for `supply_output`/`replace_output` on
    `google_genai.models.generate_content` (or `...stream_generate_content`).

        reply(text="Order 8812 was lost in transit; I have opened a claim.")
        reply(function_calls=[("issue_refund", {"order_id": 8812})])
        reply(thought="The order is lost, so...", text="I have opened a claim.")

    `text` is the model's text part; `function_calls` the functions it calls, each
    `(name, args)` with the args a JSON object (a function the request declares);
    `thought` a thought summary part before them (the request must ask for thoughts,
    `thinking_config=ThinkingConfig(include_thoughts=True)`). `finish_reason` defaults to
    `STOP`, as the API answers a function call too. `model` overrides the answer's
    `modelVersion` (by default the nearest recorded answer's when it names the requested
    model, else the requested model); `input_tokens` and `output_tokens` the usage's
    prompt and candidates counts (by default the nearest recorded answer's prompt count,
    and about four characters per output token).

    The fork builds the response when the call comes: a JSON body, or the chunks the API
    streams (each text in word-sized pieces, each function call whole, the finish reason
    and usage on the last) for a streamed call; the response id is made from the patch.
    """
    calls = [
        object_call(call, position, "function_calls", "args")
        for position, call in enumerate(function_calls)
    ]
    return reply_recipe(
        EFFECT_NAMESPACE,
        _reply_problem,
        (input_tokens, output_tokens),
        {
            "text": text,
            "function_calls": cast(list[JsonValue], calls),
            "thought": thought,
            "finish_reason": finish_reason,
            "model": model,
        },
    )


def edit(edits: Mapping[str, object]) -> OutputRecipe:
    """Changes to a recorded Gemini answer by JSON path, for `replace_output`.

        replace_output(at=3, value=edit({"$.candidates[0].content.parts[0].text": "Held."}))

    Paths run through the response (for a stream, the one its chunks add up to); a
    stream's chunks are rewritten to agree (`edited_output`).
    """
    return edit_recipe(edits, EFFECT_NAMESPACE, "$.candidates[0].content.parts[0].text")


def _reply_problem(spec: JsonValue) -> str | None:
    """What is wrong with a reply's spec (as `reply` builds it, or a patch file holds it)."""
    problem = reply_keys_problem(
        spec, _REPLY_KEYS, ("text", "thought", "finish_reason", "model"), ("text", "function_calls")
    )
    if problem is not None:
        return problem
    spec = cast(JsonObject, spec)
    reason = spec.get("finish_reason")
    if isinstance(reason, str) and not _FINISH.fullmatch(reason):
        return (
            "finish_reason is one of the API's FinishReason names in capitals (STOP, "
            f"MAX_TOKENS, SAFETY, ...), got {preview(reason)}"
        )
    return calls_problem(spec, "function_calls", "args") or usage_problem(spec)


GOOGLE_GENAI_RECIPES = ModelRecipes(
    reply_effects=frozenset(REPLY_EFFECTS),
    answers=" or ".join(REPLY_EFFECTS),
    reply_problem=_reply_problem,
    reply_output=lambda call, spec: _Reply(call, spec).output(),
    edited=edited_output,
)
"""`reply(...)` and `edit(...)` for the Google Gen AI profile's calls."""


class _Reply(ModelReply):
    """One reply resolved for one call."""

    def __init__(self, call: RecipeCall, spec: JsonObject) -> None:
        super().__init__(call, spec, nearest_answer(call, final_response))

    def output(self) -> JsonValue:
        self._check_request()
        response = self._response()
        streamed = self.call.identity.name.startswith("models.stream_")
        # The recorded answer's kept headers (the same endpoint: its content type too).
        headers = cast(JsonObject, copy_value(self.template_headers))
        headers.setdefault(
            "content-type", "text/event-stream" if streamed else "application/json; charset=UTF-8"
        )
        return served_answer(headers, response, response_chunks(response) if streamed else None)

    def _check_request(self) -> None:
        declared = [
            str(declaration["name"])
            for tool in json_objects(self.request.get("tools"))
            for declaration in json_objects(tool.get("functionDeclarations"))
            if "name" in declaration
        ]
        for call in json_objects(self.spec.get("function_calls")):
            if call["name"] not in declared:
                shown = ", ".join(sorted(declared)) or "none"
                raise PatchError(
                    f"the reply calls the function {call['name']!r}, which this request does "
                    f"not declare (its functions: {shown}); name one of them"
                )
        config = json_object(self.request.get("generationConfig")) or {}
        thinking = json_object(config.get("thinkingConfig")) or {}
        # Proto JSON: the API reads a field by its camelCase or its snake_case name.
        asked = thinking.get("includeThoughts", thinking.get("include_thoughts"))
        if "thought" in self.spec and asked is not True:
            raise PatchError(
                "the reply has a thought summary, and this request does not ask for thoughts "
                "(thinking_config=ThinkingConfig(include_thoughts=True)); leave thought= out"
            )

    def _model(self) -> JsonValue:
        found = _MODEL_IN_PATH.search(str(self.call.inputs.get("path", "")))
        requested = found.group(1) if found else None
        return self.answer_model(requested, self.template.get("modelVersion"))

    def _usage(self) -> JsonObject:
        given = cast(JsonObject, self.spec.get("usage", {}))
        usage = self.recorded_usage("usageMetadata", _COUNTS)
        usage.pop("candidatesTokensDetails", None)
        written = len(str(self.spec.get("text", "")))
        written += sum(len(str(call)) for call in json_objects(self.spec.get("function_calls")))
        prompt = given.get("input_tokens", usage.get("promptTokenCount", 0))
        answer = given.get("output_tokens", max(1, -(-written // 4)))
        usage["promptTokenCount"] = prompt
        usage["candidatesTokenCount"] = answer
        thoughts = -(-len(str(self.spec.get("thought", ""))) // 4)
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        else:
            usage.pop("thoughtsTokenCount", None)
        usage["totalTokenCount"] = sum(
            value
            for key, value in usage.items()
            if key in ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount")
            and type(value) is int
        )
        return usage

    def _response(self) -> JsonObject:
        spec = self.spec
        parts: list[JsonValue] = []
        if "thought" in spec:
            parts.append({"text": spec["thought"], "thought": True})
        if "text" in spec:
            parts.append({"text": spec["text"]})
        for call in json_objects(spec.get("function_calls")):
            parts.append({"functionCall": {"name": call["name"], "args": copy_value(call["args"])}})
        candidate: JsonObject = {
            "content": {"parts": parts, "role": "model"},
            "finishReason": spec.get("finish_reason", "STOP"),
            "index": 0,
        }
        # The recorded response's fields, in its order, with this answer's own set afresh.
        response = cast(JsonObject, copy_value(self.template))
        response.pop("promptFeedback", None)
        response.update(
            candidates=[candidate],
            usageMetadata=self._usage(),
            modelVersion=self._model(),
            responseId=made_id(self.call, "", "response", 22),
        )
        return response
