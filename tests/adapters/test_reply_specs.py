"""Every model API's `reply(...)` reads its calls and its keys with one grammar
(`toolreplay.adapters.capture.recipes`): the same shapes are accepted and the same
mistakes refused with the same words, whichever provider's reply is written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolreplay import PatchError
from toolreplay.adapters.anthropic.replies import reply as claude_reply
from toolreplay.adapters.google_genai.replies import reply as gemini_reply
from toolreplay.adapters.openai.replies import reply as openai_reply

# Each provider's reply, the keyword of its calls and the name of a call's arguments.
PROVIDERS: dict[str, tuple[Callable[..., Any], str, str]] = {
    "openai": (openai_reply, "tool_calls", "arguments"),
    "claude": (claude_reply, "tool_calls", "input"),
    "gemini": (gemini_reply, "function_calls", "args"),
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_call_is_a_pair_or_a_mapping_of_its_two_keys(provider: str) -> None:
    reply, field, argument = PROVIDERS[provider]
    as_pair = reply(**{field: [("lookup", {"order": 7})]})
    as_mapping = reply(**{field: [{"name": "lookup", argument: {"order": 7}}]})
    assert as_pair == as_mapping
    assert as_pair.spec[field][0]["name"] == "lookup"

    with pytest.raises(PatchError) as wrong_keys:
        reply(**{field: [{"name": "lookup", "params": {}}]})
    assert str(wrong_keys.value) == (
        f"reply(...): {field}[0] is a mapping with exactly name and {argument}, "
        "got keys ['name', 'params']"
    )
    with pytest.raises(PatchError) as not_a_call:
        reply(**{field: [("lookup",)]})
    assert str(not_a_call.value) == (
        f"reply(...): {field}[0] is (name, {argument}) or "
        f'{{"name": ..., "{argument}": ...}}, got (\'lookup\',)'
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_reply_without_an_answer_or_with_a_wrong_type_is_refused_alike(provider: str) -> None:
    reply, field, _ = PROVIDERS[provider]
    answers = {"openai": f"text=, {field}= or refusal="}.get(provider, f"text= or {field}=")
    with pytest.raises(PatchError) as no_answer:
        reply()
    assert str(no_answer.value) == f"reply(...): give the answer: {answers}"
    with pytest.raises(PatchError) as not_text:
        reply(text=7)
    assert str(not_text.value) == "reply(...): text must be a string, got 7"
