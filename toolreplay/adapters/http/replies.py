"""Answers for plain HTTP calls in a fork: `reply(...)` writes one, `edit(...)` changes one.

    toolreplay.supply_output(effect="github.GET /repos/{id}", value=reply({"id": 1}))
    toolreplay.replace_output(at=2, value=edit({"$.state": "closed"}))

A reply is a whole response: a JSON body (or a stream of JSON events) with a status
and headers, shaped like the nearest recorded answer of the same endpoint (its kept
headers). An edit sets values by JSON path in a recorded answer: in its JSON body
(`$` is the body), or in a stream's events (`$` is the list of the events' JSON
data: `$[2].delta`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from toolreplay.adapters.capture.profile import is_credential_header
from toolreplay.adapters.capture.recipes import (
    ModelRecipes,
    apply_edits,
    edit_recipe,
    nearest_recorded,
)
from toolreplay.errors import PatchError
from toolreplay.patches import OutputRecipe
from toolreplay.portable import JsonObject, JsonValue, copy_value, ensure_portable, preview
from toolreplay.runtime.recipes import RecipeCall

__all__ = ["HTTP_RECIPES", "edit", "edited_http_output", "reply"]

NAMESPACE = "*"
"""These recipes answer calls of any namespace a client was instrumented under (the fork
checks them with the resolver of the call's own namespace)."""

_REPLY_KEYS = ("body", "events", "status", "headers")
_WHERE = (
    "Paths run through the JSON body ($ is the body: $.items[0].state), or for a stream "
    "through the list of its events' JSON data ($[2].delta)"
)


def reply(
    body: object = None,
    *,
    events: Sequence[object] | None = None,
    status: int = 200,
    headers: Mapping[str, str] | None = None,
) -> OutputRecipe:
    """A whole response for `supply_output`/`replace_output` on a plain HTTP call.

        reply({"id": 8812, "state": "closed"})
        reply({"message": "Not Found"}, status=404)
        reply(events=[{"delta": "Hel"}, {"delta": "lo"}])

    `body` is the JSON body (served as `application/json`); `events` instead makes a
    server-sent event stream, one event per JSON value (`text/event-stream`).
    `status` is the HTTP status; `headers` are added to the recorded headers of the
    nearest recorded answer of the same endpoint (never credential headers).
    """
    spec: JsonObject = {}
    if events is not None:
        if body is not None:
            raise PatchError("reply(...): give body or events=, not both")
        spec["events"] = cast(
            list[JsonValue], ensure_portable(list(events), what="reply(...) events")
        )
    else:
        spec["body"] = ensure_portable(body, what="reply(...) body")
    spec["status"] = status
    if headers is not None:
        spec["headers"] = cast(JsonObject, ensure_portable(dict(headers), what="reply headers"))
    problem = _reply_problem(spec)
    if problem is not None:
        raise PatchError(f"reply(...): {problem}")
    return OutputRecipe("reply", NAMESPACE, spec)


def edit(edits: Mapping[str, object]) -> OutputRecipe:
    """Changes to a recorded answer by JSON path, for `replace_output`.

        replace_output(at=2, value=edit({"$.state": "closed", "$.labels[0].name": "bug"}))

    `$` is the recorded JSON body; for a recorded stream it is the list of the events'
    JSON data, and each changed item is written back into its event.
    """
    return edit_recipe(edits, NAMESPACE, "$.state")


def _reply_problem(spec: JsonValue) -> str | None:
    if not isinstance(spec, dict):
        return f"a reply is an object like {{'body': ...}}, got {preview(spec)}"
    unknown = sorted(spec.keys() - set(_REPLY_KEYS))
    if unknown:
        return f"unknown keys {', '.join(unknown)} (a reply has {', '.join(_REPLY_KEYS)})"
    if ("body" in spec) == ("events" in spec):
        return "give the answer: a body, or events="
    if "events" in spec and not isinstance(spec["events"], list):
        return f"events is a list of JSON values, got {preview(spec['events'])}"
    status = spec.get("status")
    if type(status) is not int or not 100 <= status <= 599:
        return f"status must be an HTTP status (an int from 100 to 599), got {preview(status)}"
    headers = spec.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        return f"headers map names to string values, got {preview(headers)}"
    credentials = sorted(name for name in headers if is_credential_header(name.lower()))
    if credentials:
        return f"headers {credentials} carry credentials, which are never recorded"
    return None


def edited_http_output(
    output: Mapping[str, JsonValue], edits: Mapping[str, JsonValue]
) -> JsonObject:
    """A recorded output with values set by JSON path in its JSON body, or in its
    stream's events' JSON data (see `edit`); `output` is not changed."""
    result = cast(JsonObject, copy_value(dict(output)))
    if "body" in result:
        result["body"] = apply_edits(result["body"], edits, _WHERE)
        return result
    events = result.get("events")
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise PatchError(
            "edit(...) changes a recorded JSON body or a stream's JSON events; this answer "
            "is text or binary. Give the output value itself instead"
        )
    stream = [cast(JsonObject, event) for event in events]
    before = [event.get("data") for event in stream]
    after = apply_edits(cast(JsonValue, before), edits, _WHERE)
    assert isinstance(after, list)
    for index, (event, old, new) in enumerate(zip(stream, before, after, strict=True)):
        if old == new:
            continue
        if "data" not in event:
            raise PatchError(
                f"edit at $[{index}]: event {index} of the stream carries no JSON data "
                "(it is text, or a comment), so there is nothing there to edit"
            )
        event["data"] = new
    return result


def _reply_output(call: RecipeCall, spec: JsonObject) -> JsonValue:
    """A checked reply's output: the status, headers and body or events it gives, with
    the headers of the nearest recorded answer of the endpoint."""
    recorded = nearest_recorded(call, lambda output: output.get("headers"))
    headers: JsonObject = {
        name: copy_value(value)
        for name, value in (recorded.items() if isinstance(recorded, dict) else ())
        if name not in ("content-type", "location")
    }
    streamed = "events" in spec
    headers["content-type"] = "text/event-stream" if streamed else "application/json"
    for name, value in cast(JsonObject, spec.get("headers", {})).items():
        headers[name.lower()] = value
    output: JsonObject = {"status": spec["status"], "headers": headers}
    if streamed:
        output["events"] = [
            {"data": copy_value(data)} for data in cast(list[JsonValue], spec["events"])
        ]
    else:
        output["body"] = copy_value(spec["body"])
    output["end"] = "complete"
    return output


HTTP_RECIPES = ModelRecipes(
    reply_effects=None,
    reply_problem=_reply_problem,
    reply_output=_reply_output,
    edited=edited_http_output,
)
"""`reply(...)` and `edit(...)` for the plain HTTP profile's calls (any endpoint)."""
