"""The closed request surface of `responses.create`: four semantic fields, no streaming.

Anything outside it is refused before any transport, in every mode, naming the
field: a recorded call must mean exactly what was sent, and nothing that could
carry credentials or transport settings (headers, `extra_*`, timeouts, clients)
is accepted, so none of it can reach a trace.
"""

from __future__ import annotations

from typing import Any, cast

import openai

from toolreplay.errors import UnsupportedRequestError
from toolreplay.portable import JsonValue

__all__ = ["SUPPORTED_EFFORTS", "SUPPORTED_FIELDS", "ResponsesRequest", "parse_request"]

SUPPORTED_EFFORTS = ("minimal", "low", "medium", "high")
SUPPORTED_FIELDS = ("model", "input", "reasoning", "max_output_tokens", "stream")

ResponsesRequest = tuple[str, str, dict[str, JsonValue] | None, int | None]
"""model, input, reasoning, max_output_tokens (None when not given)."""


def _refuse(field: str, problem: str) -> UnsupportedRequestError:
    return UnsupportedRequestError(
        f"responses.create({field}=...): {problem}. The Tool Replay OpenAI adapter records "
        "exactly model, a string input, reasoning={'effort': ...} and max_output_tokens, "
        "with stream omitted, None or False; call client.original_client for anything else"
    )


def _given(value: object) -> bool:
    return not isinstance(value, openai.NotGiven | openai.Omit)


def parse_request(args: tuple[Any, ...], kwargs: dict[str, Any]) -> ResponsesRequest:
    """Check a `responses.create` call against the closed surface; return its four fields."""
    if args:
        raise UnsupportedRequestError(
            "responses.create takes keyword arguments only (model=..., input=...)"
        )
    for field in sorted(kwargs):
        if field not in SUPPORTED_FIELDS:
            raise _refuse(field, "this field is not supported")
    present = {key: value for key, value in kwargs.items() if _given(value)}
    stream = present.get("stream")
    if stream is not None and stream is not False:  # None is the SDK's "not streaming" too
        raise _refuse("stream", f"streaming ({stream!r}) is not supported")
    model = present.get("model")
    if type(model) is not str or not model:
        raise _refuse("model", "a non-empty model name (str) is required")
    text = present.get("input")
    if type(text) is not str:
        raise _refuse("input", f"input must be a str, not {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse("input", "input holds a lone surrogate, which UTF-8 cannot send") from None
    given_reasoning: object = present.get("reasoning")
    reasoning: dict[str, JsonValue] | None = None
    if given_reasoning is not None:
        fields = cast(dict[str, object], given_reasoning) if type(given_reasoning) is dict else {}
        if set(fields) != {"effort"}:
            raise _refuse("reasoning", 'reasoning must be exactly {"effort": ...}')
        effort = fields["effort"]
        if not isinstance(effort, str) or effort not in SUPPORTED_EFFORTS:
            raise _refuse(
                "reasoning", f"effort {effort!r} is not one of {', '.join(SUPPORTED_EFFORTS)}"
            )
        reasoning = {"effort": effort}
    limit = present.get("max_output_tokens")
    if limit is not None and (type(limit) is not int or limit <= 0):
        raise _refuse("max_output_tokens", f"must be a positive int, not {limit!r}")
    return model, text, reasoning, limit
