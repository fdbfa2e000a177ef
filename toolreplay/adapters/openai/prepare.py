"""Build, once, what the SDK builds on its first parse of a replayed answer.

The SDK's models build their pydantic validators lazily, on the first response
of each type a process parses: about 0.2 s of CPU for a Responses API answer.
A process that forks a fresh child per run (the terminal UI's warm runner) pays
that in every child, unless the parent parsed the same types first.
`prepare_replay(trace)` does that for the trace's recorded answers of the
common endpoints, with the SDK's own parsing and no application code.
"""

from __future__ import annotations

import importlib
from typing import Any

from toolreplay.adapters.openai.exchange import EFFECT_NAMESPACE
from toolreplay.trace.model import Returned
from toolreplay.trace.reader import Trace

__all__ = ["prepare_replay"]

# The SDK type each endpoint's JSON answer parses into (module, class).
_ANSWER_TYPES = {
    "responses.create": ("openai.types.responses", "Response"),
    "responses.retrieve": ("openai.types.responses", "Response"),
    "chat.completions.create": ("openai.types.chat", "ChatCompletion"),
    "embeddings.create": ("openai.types", "CreateEmbeddingResponse"),
}


def prepare_replay(trace: Trace) -> int:
    """Parse each recorded JSON answer of a known endpoint as the SDK would; how many."""
    prepared = 0
    for operation in trace.operations:
        located = _ANSWER_TYPES.get(operation.identity.name)
        if operation.identity.namespace != EFFECT_NAMESPACE or located is None:
            continue
        outcome = operation.outcome
        if not isinstance(outcome, Returned) or not isinstance(outcome.value, dict):
            continue
        body = outcome.value.get("body")
        if not isinstance(body, dict):
            continue  # a stream or a non-JSON answer
        answer_type: Any = getattr(importlib.import_module(located[0]), located[1])
        answer_type.construct(**body)  # what the SDK's response parsing calls
        prepared += 1
    return prepared
