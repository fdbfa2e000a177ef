"""A fork stopped at a model call the recording never made: the ways to answer it.

The call is a Responses or Chat Completions request of an instrumented OpenAI
client (`openai.responses.create`, `openai.chat.completions.create`) that no
recorded operation and no patch answers. Besides its full output (`s`) or an
error (`z`), the debugger offers, one key each:

- ask the model live: the fork runs again with the effect in `live=` (the
  adapter sends the request through the application's own client). Only the
  environment the fork runs with can be seen from here (`live_status`): whether
  `OPENAI_API_KEY` is set in it, never its value, and not whether the
  application gives its client a key or another server in code;
- answer with text, or call a tool the request offers (its arguments JSON): a
  `reply(...)` held by a supply patch that names no inputs, so it answers the
  next call of that effect the source does not hold (the call stopped at, and
  the same call again after an earlier patch is changed: the request then
  differs, the answer still fits);
- reuse the nearest recorded answer of the same endpoint (the `ReplayMiss`'s
  nearest candidate whose shape, streamed or not, fits the request), as the
  output of such a supply patch.

`preview` resolves a reply against the call exactly as the fork will (the
adapter's public resolver, `toolreplay.runtime.recipes`, with the same patch id,
identity, source and position), so what the screen shows before the fork runs
is what the application is sent. Nothing here imports the OpenAI SDK until a
reply is built (`toolreplay.adapters.openai` needs it); without it, `supported`
is False and only `s` and `z` are offered.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import urlsplit

from toolreplay import (
    JsonValue,
    OutputPatch,
    OutputRecipe,
    PatchError,
    ToolReplayError,
    supply_output,
)
from toolreplay.portable import json_objects
from toolreplay.runtime.recipes import RecipeCall, RecipeSource, recipe_resolver
from toolreplay_tui.model.jsontext import format_json, parse_portable
from toolreplay_tui.model.stops import RecordedAnswer, UnrecordedCall
from toolreplay_tui.model.trace_file import TraceFile
from toolreplay_tui.model.transcript import Transcript, transcript_of

__all__ = [
    "API_KEY_VARIABLE",
    "BASE_URL_VARIABLE",
    "MODEL_EFFECTS",
    "LiveStatus",
    "NewModelCall",
    "OfferedTool",
    "ReplyPreview",
    "live_status",
    "new_model_call",
    "position_in_source",
    "preview",
    "supported",
]

Api = Literal["responses", "chat"]

MODEL_EFFECTS: dict[str, Api] = {
    "openai.responses.create": "responses",
    "openai.chat.completions.create": "chat",
}
"""The model calls a reply can answer, and the API each is."""
API_KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
_ADAPTER = "toolreplay.adapters.openai"
PREVIEW_REQUEST_ENTRIES = 4
"""How many of the request's last entries the preview shows above the reply."""


def supported() -> bool:
    """Whether replies can be built here: the OpenAI adapter (and its SDK) imports."""
    try:
        importlib.import_module(_ADAPTER)
    except ImportError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class OfferedTool:
    """A function tool the request offers the model: what a reply may call."""

    name: str
    description: str
    parameters: JsonValue


@dataclass(frozen=True, slots=True)
class NewModelCall:
    """The unrecorded call seen as a model request: its API, whether it streams, and
    the function tools it offers."""

    call: UnrecordedCall
    api: Api
    streamed: bool
    tools: tuple[OfferedTool, ...]

    @property
    def effect(self) -> str:
        return self.call.effect

    def text_reply(self, text: str) -> OutputPatch:
        """The supply patch answering the next new call of this effect with `text`.

        Raises `PatchError` (empty text, or what `reply` refuses)."""
        if not text.strip():
            raise PatchError("type the answer's text (enter on an empty line sends nothing)")
        return supply_output(effect=self.effect, value=_adapter_reply(text=text))

    def tool_reply(self, name: str, arguments: str) -> OutputPatch:
        """The supply patch answering with a call of the tool `name`, its `arguments`
        the JSON text of an object. Raises `PatchError` naming what does not fit."""
        if name not in {tool.name for tool in self.tools}:
            offered = ", ".join(tool.name for tool in self.tools) or "none"
            raise PatchError(f"the request offers no tool {name!r} (its tools: {offered})")
        parsed = parse_portable(arguments, what=f"the arguments of {name}")
        if parsed.problem is not None:
            raise PatchError(f"the arguments are not JSON: {parsed.problem.describe()}")
        if not isinstance(parsed.value, dict):
            raise PatchError(
                f"the arguments of {name} are a JSON object ({{...}}), got "
                f"{format_json(parsed.value)}"
            )
        return supply_output(
            effect=self.effect, value=_adapter_reply(tool_calls=[(name, parsed.value)])
        )

    def recorded_answer(self) -> RecordedAnswer | None:
        """The nearest recorded answer of this endpoint that fits the request: a
        success, streamed exactly when the request streams."""
        for answer in self.call.answers:
            output = answer.output
            if not isinstance(output, dict):
                continue
            status = output.get("status")
            fits = ("events" in output) == self.streamed and ("body" in output) != self.streamed
            if type(status) is int and 200 <= status < 300 and fits:
                return answer
        return None

    def reuse_reply(self) -> OutputPatch | None:
        """The supply patch answering with the nearest recorded answer, or None."""
        answer = self.recorded_answer()
        if answer is None:
            return None
        return supply_output(effect=self.effect, value=answer.output)

    def tool(self, name: str) -> OfferedTool | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def arguments_template(self, name: str) -> str:
        """Where the arguments editor starts: the arguments a recorded answer gave this
        tool (the nearest first), else an object with the schema's properties."""
        for answer in self.call.answers:
            recorded = _recorded_arguments(answer.output, name)
            if recorded is not None:
                return format_json(recorded)
        tool = self.tool(name)
        schema = tool.parameters if tool is not None else None
        properties = schema.get("properties") if isinstance(schema, dict) else None
        skeleton: dict[str, JsonValue] = {}
        if isinstance(properties, dict):
            for key, spec in properties.items():
                kind = spec.get("type") if isinstance(spec, dict) else None
                skeleton[key] = _EMPTY.get(kind if isinstance(kind, str) else "")
        return format_json(skeleton)


_EMPTY: dict[str, JsonValue] = {
    "string": "",
    "integer": 0,
    "number": 0.0,
    "boolean": False,
    "array": [],
    "object": {},
}


def new_model_call(call: UnrecordedCall) -> NewModelCall | None:
    """`call` as a model request a reply can answer, or None (another effect, or a
    request that is not a POST with a JSON body)."""
    api = MODEL_EFFECTS.get(call.effect)
    body = call.inputs.get("body")
    if api is None or call.inputs.get("method") != "POST" or not isinstance(body, dict):
        return None
    return NewModelCall(call, api, body.get("stream") is True, _offered_tools(body, api))


def _offered_tools(request: Mapping[str, JsonValue], api: Api) -> tuple[OfferedTool, ...]:
    tools: list[OfferedTool] = []
    listed = request.get("tools")
    for entry in listed if isinstance(listed, list) else []:
        if not isinstance(entry, dict) or entry.get("type", "function") != "function":
            continue  # built-in tools (web search, files...) are not called by name
        spec = entry.get("function") if api == "chat" else entry
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            tools.append(_tool(spec))
    functions = request.get("functions")  # Chat Completions' older form
    for spec in functions if isinstance(functions, list) else []:
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            tools.append(_tool(spec))
    return tuple(tools)


def _tool(spec: Mapping[str, JsonValue]) -> OfferedTool:
    description = spec.get("description")
    return OfferedTool(
        str(spec["name"]),
        description if isinstance(description, str) else "",
        spec.get("parameters"),
    )


def _recorded_arguments(output: JsonValue, name: str) -> JsonValue:
    """The arguments (parsed) of the first call of tool `name` in a recorded answer."""
    from toolreplay.adapters.openai import final_response  # the SDK, on first use

    final = final_response(output) if isinstance(output, dict) else None
    if final is None:
        return None
    functions: list[JsonValue] = [
        item for item in json_objects(final.get("output")) if item.get("type") == "function_call"
    ]  # Responses
    for choice in json_objects(final.get("choices")):  # Chat Completions
        message = choice.get("message")
        calls = json_objects(message.get("tool_calls")) if isinstance(message, dict) else []
        functions += [call.get("function") for call in calls]
    for function in functions:
        if isinstance(function, dict) and function.get("name") == name:
            arguments = function.get("arguments")
            try:
                return _loads(arguments) if isinstance(arguments, str) else None
            except ValueError:
                return None
    return None


def _loads(text: str) -> JsonValue:
    return cast(JsonValue, json.loads(text))


def _adapter_reply(**fields: Any) -> OutputRecipe:
    """`toolreplay.adapters.openai.reply(**fields)`, imported on first use (the SDK)."""
    from toolreplay.adapters.openai import reply

    return reply(**fields)


# --- the preview -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplyPreview:
    """What the fork will answer the call with: the output, and it read as a transcript
    (the request's last entries, then the reply)."""

    output: JsonValue
    transcript: Transcript | None


def preview(
    new_call: NewModelCall, patch: OutputPatch, source: RecipeSource, near: int | None
) -> ReplyPreview:
    """The output `patch` gives the call, resolved as the fork resolves it: the same
    resolver, patch id, identity, source trace and position `near` (the last source
    operation the fork served before the call, `position_in_source`).

    Raises `PatchError` saying why the reply cannot answer this request (a tool it
    does not offer, text that is not the JSON a structured-output request asks for).
    """
    call = new_call.call
    if patch.recipe is None:
        output = patch.value
    else:
        resolver = recipe_resolver(call.identity.namespace)
        if resolver is None:
            raise PatchError(
                f"no adapter that builds replies for {call.identity.namespace}.* effects is "
                "imported in the debugger"
            )
        resolved = OutputRecipe(patch.recipe, call.identity.namespace, patch.value)
        resolver.check(resolved, call.effect)
        output = resolver.resolve(
            RecipeCall(resolved, patch.patch_id, call.identity, call.inputs, None, source, near)
        )
    transcript = transcript_of(call.effect, call.inputs, output)
    if transcript is not None:
        request = transcript.request[-PREVIEW_REQUEST_ENTRIES:]
        transcript = replace(transcript, entries=(*request, *transcript.response))
    return ReplyPreview(output, transcript)


def position_in_source(branch: Path) -> int | None:
    """The last source operation a stopped fork's branch served (where the call it
    stopped at stands in the source), or None when it served none. Read from the end
    of the branch: its operations keep the source operation they came from."""
    try:
        with TraceFile.open(branch) as trace:
            trace.index()
            for index in range(len(trace) - 1, -1, -1):
                try:
                    source_id = trace.operation(index).source_logical_operation_id
                except ToolReplayError:
                    continue
                if source_id is not None:
                    return source_id
    except (ToolReplayError, OSError):
        return None
    return None


# --- asking the model live ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LiveStatus:
    """What the debugger can know about a live call before it is made: only the
    environment the fork runs with (the application's code is not read)."""

    effect: str
    key_set: bool
    base_url: str | None

    def describe(self) -> str:
        if self.key_set:
            key = (
                f"{API_KEY_VARIABLE} is set in the environment forks run with (its value is "
                "not shown); the application's client uses it unless its code gives another "
                "key"
            )
        else:
            key = (
                f"{API_KEY_VARIABLE} is not set in the environment forks run with: the call "
                "is refused by the provider unless the application's code gives its client "
                "a key, or its server needs none (the debugger cannot see either)"
            )
        where = (
            f"; {BASE_URL_VARIABLE} sends it to {self.base_url}"
            if self.base_url is not None
            else ""
        )
        return key + where


def live_status(effect: str, env: Mapping[str, str]) -> LiveStatus:
    """Whether `OPENAI_API_KEY` is set in `env` (the fork's environment), and where
    `OPENAI_BASE_URL` points (scheme, host and port only: no user, password or path)."""
    base = env.get(BASE_URL_VARIABLE, "").strip()
    shown: str | None = None
    if base:
        parts = urlsplit(base)
        try:
            port = parts.port
        except ValueError:  # not a number: shown without it
            port = None
        shown = f"{parts.scheme or '?'}://{parts.hostname or '?'}" + (f":{port}" if port else "")
    return LiveStatus(effect, bool(env.get(API_KEY_VARIABLE, "").strip()), shown)
