"""Claude's answers written in one line: `reply(...)`, and edits of a recorded answer:
`edit(...)`.

    toolreplay.supply_output(
        effect="anthropic.messages.create",
        value=reply(tool_calls=[("issue_refund", {"order_id": 8812})]),
    )
    toolreplay.replace_output(at=3, value=edit({"$.content[0].text": "No."}))

Both are `OutputRecipe`s of the `anthropic` namespace, resolved by `ANTHROPIC_RECIPES`
(registered with the profile) against the call they answer. A reply becomes the whole
response the Messages API would send for that request: a message as a JSON body, or
the exact event stream the SDK reads when the request streams, with the model and the
usage shape of the nearest recorded answer of the same endpoint. An edit sets values
of the recorded message by JSON path and rewrites a stream's events to agree
(`messages.edited_output`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from toolreplay.adapters.anthropic.exchange import EFFECT_NAMESPACE
from toolreplay.adapters.anthropic.messages import edited_output, final_message, message_events
from toolreplay.adapters.anthropic_summary import requested_model, streams_by_path
from toolreplay.adapters.capture.recipes import (
    USAGE_KEYS,
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

__all__ = ["ANTHROPIC_RECIPES", "REPLY_EFFECT", "ToolCallSpec", "edit", "reply"]

REPLY_EFFECT = f"{EFFECT_NAMESPACE}.messages.create"
"""The effect a `reply(...)` answers: a Messages API call."""

ToolCallSpec = tuple[str, Mapping[str, object]] | Mapping[str, object]
"""One tool use of a reply: `(name, input)` or `{"name": ..., "input": ...}`, the input a
JSON object."""

_REPLY_KEYS = ("text", "tool_calls", "thinking", "stop_reason", "model", "usage")
_STOP_REASONS = ("end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal")


def reply(
    *,
    text: str | None = None,
    tool_calls: Sequence[ToolCallSpec] = (),
    thinking: str | None = None,
    stop_reason: str | None = None,
    model: str | None = None,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
) -> OutputRecipe:
    """A Claude answer for `supply_output`/`replace_output` on `anthropic.messages.create`.

        reply(text="Order 8812 was lost in transit; I have opened a claim.")
        reply(tool_calls=[("issue_refund", {"order_id": 8812})])
        reply(thinking="The order is lost, so...", text="I have opened a claim.")

    `text` is the assistant's text block; `tool_calls` the tools it uses, each
    `(name, input)` with the input a JSON object (a tool the request offers);
    `thinking` an extended-thinking block before them (the request must enable
    thinking). `stop_reason` defaults to `tool_use` with tool calls, else `end_turn`.
    `model` overrides the model the answer names (by default the nearest recorded
    answer's when it is the requested one, else the requested model);
    `input_tokens` and `output_tokens` the usage (by default the nearest recorded
    answer's input tokens, and about four characters per output token).

    The fork builds the message when the call comes: a JSON body, or the event stream
    the API sends (`message_start`, each block's deltas, `message_delta`,
    `message_stop`) when the request streams; ids and the thinking block's signature
    are made from the patch (a signature the real API would not accept back).
    """
    calls = [
        object_call(call, position, "tool_calls", "input")
        for position, call in enumerate(tool_calls)
    ]
    return reply_recipe(
        EFFECT_NAMESPACE,
        _reply_problem,
        (input_tokens, output_tokens),
        {
            "text": text,
            "tool_calls": cast(list[JsonValue], calls),
            "thinking": thinking,
            "stop_reason": stop_reason,
            "model": model,
        },
    )


def edit(edits: Mapping[str, object]) -> OutputRecipe:
    """Changes to a recorded Messages answer by JSON path, for `replace_output`.

        replace_output(at=3, value=edit({"$.content[0].text": "Refund held for review."}))

    Paths run through the message (for a stream, the one the SDK adds its events up to);
    a stream's events are rewritten to agree (`edited_output`).
    """
    return edit_recipe(edits, EFFECT_NAMESPACE, "$.content[0].text")


def _reply_problem(spec: JsonValue) -> str | None:
    """What is wrong with a reply's spec (as `reply` builds it, or a patch file holds it)."""
    problem = reply_keys_problem(
        spec, _REPLY_KEYS, ("text", "thinking", "stop_reason", "model"), ("text", "tool_calls")
    )
    if problem is not None:
        return problem
    spec = cast(JsonObject, spec)
    if "stop_reason" in spec and spec["stop_reason"] not in _STOP_REASONS:
        return (
            f"stop_reason is one of {', '.join(_STOP_REASONS)}, got {preview(spec['stop_reason'])}"
        )
    return calls_problem(spec, "tool_calls", "input") or usage_problem(spec)


ANTHROPIC_RECIPES = ModelRecipes(
    reply_effects=frozenset({REPLY_EFFECT}),
    answers=f"{REPLY_EFFECT} (a Messages API call)",
    reply_problem=_reply_problem,
    reply_output=lambda call, spec: _Reply(call, spec).output(),
    edited=edited_output,
)
"""`reply(...)` and `edit(...)` for the Anthropic profile's calls."""


class _Reply(ModelReply):
    """One reply resolved for one call."""

    def __init__(self, call: RecipeCall, spec: JsonObject) -> None:
        super().__init__(call, spec, nearest_answer(call, final_message))

    def _id(self, prefix: str, purpose: str, size: int = 24) -> str:
        return made_id(self.call, prefix, purpose, size)

    def output(self) -> JsonValue:
        self._check_request()
        message = self._message()
        path = self.call.inputs.get("path")
        on_bedrock = streams_by_path(path)  # Bedrock streams AWS event-stream frames
        streamed = self.request.get("stream") is True or on_bedrock
        media = "text/event-stream; charset=utf-8" if streamed else "application/json"
        headers: JsonObject = {
            "content-type": "application/vnd.amazon.eventstream" if on_bedrock else media,
            "request-id": self._id("req_", "request"),
        }
        for name, value in self.template_headers.items():
            headers.setdefault(name, copy_value(value))
        return served_answer(headers, message, message_events(message) if streamed else None)

    def _check_request(self) -> None:
        offered = [
            str(tool["name"]) for tool in json_objects(self.request.get("tools")) if "name" in tool
        ]
        for call in json_objects(self.spec.get("tool_calls")):
            if call["name"] not in offered:
                shown = ", ".join(sorted(offered)) or "none"
                raise PatchError(
                    f"the reply uses the tool {call['name']!r}, which this request does not "
                    f"offer (its tools: {shown}); name one of them"
                )
        thinking = json_object(self.request.get("thinking"))
        if "thinking" in self.spec and (thinking is None or thinking.get("type") == "disabled"):
            raise PatchError(
                "the reply has a thinking block, and this request does not enable extended "
                "thinking (its `thinking` parameter); leave thinking= out"
            )

    def _model(self) -> JsonValue:
        requested = requested_model(self.request, self.call.inputs.get("path"))
        return self.answer_model(requested, self.template.get("model"))

    def _usage(self) -> JsonObject:
        given = cast(JsonObject, self.spec.get("usage", {}))
        usage = self.recorded_usage("usage", USAGE_KEYS)
        written = len(str(self.spec.get("text", ""))) + len(str(self.spec.get("thinking", "")))
        written += sum(len(str(call)) for call in json_objects(self.spec.get("tool_calls")))
        usage["input_tokens"] = given.get("input_tokens", usage.get("input_tokens", 0))
        usage["output_tokens"] = given.get("output_tokens", max(1, -(-written // 4)))
        return usage

    def _message(self) -> JsonObject:
        spec = self.spec
        content: list[JsonValue] = []
        if "thinking" in spec:
            signature = self._id("", "signature", 64)
            content.append(
                {"type": "thinking", "thinking": spec["thinking"], "signature": signature}
            )
        if "text" in spec:
            content.append({"type": "text", "text": spec["text"]})
        for position, call in enumerate(json_objects(spec.get("tool_calls"))):
            content.append(
                {
                    "type": "tool_use",
                    "id": self._id("toolu_", f"tool use {position}"),
                    "name": call["name"],
                    "input": copy_value(call["input"]),
                }
            )
        stop = spec.get("stop_reason", "tool_use" if "tool_calls" in spec else "end_turn")
        # The recorded message's fields, in its order, with this answer's own set afresh.
        message = cast(JsonObject, copy_value(self.template))
        message.update(
            id=self._id("msg_", "message"),
            type="message",
            role="assistant",
            model=self._model(),
            content=content,
            stop_reason=stop,
            stop_sequence=None,
            usage=self._usage(),
        )
        if "stop_details" in message:
            message["stop_details"] = None
        return message
