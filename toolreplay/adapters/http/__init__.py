"""Record and replay any HTTP API through a plain httpx client: `instrument(client, name=...)`.

    import httpx
    from toolreplay.adapters.http import instrument

    github = instrument(httpx.Client(base_url="https://api.github.com"), name="github")
    issue = github.get("/repos/octo/hello/issues/12").json()

Every request the instrumented copy sends is one effect named
`NAME.METHOD /path/template` (`github.GET /repos/octo/hello/issues/{id}`; see
`routes.py` for how a path becomes a template, and `routes=` to name endpoints
yourself), captured at the client's transport by the capture core
(`toolreplay.adapters.capture`, RFC 0006 §B): JSON bodies are inputs and outputs,
other bodies are recorded by size and digest, server-sent events as ordered events,
and credentials and cookies are never recorded. Works for `httpx` and `httpx2`
clients, sync and async, and for any SDK that takes such a client (Groq, Mistral,
Cohere, ...). In a fork, `reply(...)` writes an answer and `edit(...)` changes a
recorded one by JSON path.
"""

from __future__ import annotations

from toolreplay.adapters.http.client import TRANSPORT_ERROR_ENVELOPE, UNKEPT_HEADERS, instrument
from toolreplay.adapters.http.replies import edit, edited_http_output, reply
from toolreplay.adapters.http.routes import route_template
from toolreplay.errors import AdapterOptionError

__all__ = [
    "TRANSPORT_ERROR_ENVELOPE",
    "UNKEPT_HEADERS",
    "AdapterOptionError",
    "edit",
    "edited_http_output",
    "instrument",
    "reply",
    "route_template",
]
