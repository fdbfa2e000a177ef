"""`instrument(client, name=...)`: a copy of a plain httpx client, each request an effect."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeVar

from toolreplay.adapters.capture import (
    AsyncCaptureTransport,
    CaptureTransport,
    ProviderProfile,
    capturing_client,
    http_library,
    is_credential_header,
    register_profile,
)
from toolreplay.adapters.http.replies import HTTP_RECIPES
from toolreplay.adapters.http.routes import Routes
from toolreplay.errors import AdapterOptionError

__all__ = ["TRANSPORT_ERROR_ENVELOPE", "UNKEPT_HEADERS", "instrument"]

_Client = TypeVar("_Client")
"""An `httpx.Client`, `httpx.AsyncClient` or their `httpx2` twins (neither is imported)."""

TRANSPORT_ERROR_ENVELOPE = "http.transport_error"
"""The envelope of a recorded transport failure (`httpx.<Class>`) of this adapter."""

UNKEPT_HEADERS = frozenset(
    {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive", "date"}
)
"""Response headers never kept: the framing ones (replay serves the body decoded, whole,
on no connection) and `date` (it differs on every run, and a diff would show it).
`location` is kept only as a redirect's target below the base URL, and credential
headers never (`toolreplay.adapters.capture.is_credential_header`)."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# Namespaces other adapters name their calls in: an http client named so would mix
# its calls with theirs (and their replies and edits).
_TAKEN = frozenset({"openai", "mcp"})


def instrument(
    client: _Client,
    *,
    name: str,
    routes: Sequence[str] = (),
    request_headers: Sequence[str] = (),
    exclude_headers: Sequence[str] = (),
) -> _Client:
    """An instrumented copy of a plain `httpx` (or `httpx2`) `Client` or `AsyncClient`.

        github = instrument(httpx.Client(base_url="https://api.github.com"), name="github")
        github.get("/repos/octo/hello/issues/12")  # github.GET /repos/octo/hello/issues/{id}

    Inside `record()` each request of the copy is recorded as the effect
    `NAME.METHOD /path/template` (templates: `toolreplay.adapters.http.routes`;
    `routes=["/repos/{owner}/{repo}/issues/{number}"]` names endpoints yourself); its
    inputs are the method, the path relative to the client's base URL, the query
    (credential-like parameters as `<redacted>`) and the JSON body (other bodies by
    size and digest), and its output the status, the response headers (never
    credentials, cookies, `exclude_headers` or framing headers) and the body: JSON as
    JSON, server-sent events as events, other bodies as text or base64. Request
    headers are not inputs unless named in `request_headers` (never a credential).
    Inside `replay()`, `fork()` and case verification it is answered from the trace
    and nothing is sent. Outside sessions the copy behaves as `client` does; `client`
    is not changed, and closing the copy does not close it.

    Pass the copy to an SDK that takes an httpx client (`Groq(http_client=...)`,
    `Mistral(client=...)`) to capture that SDK's calls.
    """
    given: Any = client
    library = http_library(given, what="instrument()'s client")
    asynchronous = isinstance(given, library.AsyncClient)
    if not asynchronous and not isinstance(given, library.Client):
        raise TypeError(
            f"instrument() takes an httpx Client or AsyncClient, not {type(given).__qualname__}"
        )
    if isinstance(given._transport, CaptureTransport | AsyncCaptureTransport):
        raise TypeError("this client is already instrumented; instrument the original once")
    profile = _profile(name, routes, request_headers, exclude_headers)
    return capturing_client(
        given,
        asynchronous=asynchronous,
        base_path=str(given.base_url.path) or "/",
        profile=profile,
    )


def _names(option: str, given: Sequence[str]) -> frozenset[str]:
    if isinstance(given, str) or not all(isinstance(item, str) for item in given):  # pyright: ignore[reportUnnecessaryIsInstance]  # user input
        raise AdapterOptionError(
            f"{option}= takes a list of header names, got {given!r}; write {option}=['x-name']"
        )
    return frozenset(item.lower() for item in given)


def _profile(
    name: str,
    routes: Sequence[str],
    request_headers: Sequence[str],
    exclude_headers: Sequence[str],
) -> ProviderProfile:
    if not isinstance(name, str) or not _NAME.fullmatch(name):  # pyright: ignore[reportUnnecessaryIsInstance]  # user input
        raise AdapterOptionError(
            f"instrument(name={name!r}): the name is the namespace of the client's effects "
            "(name='github' gives github.GET /repos/{id}); use letters, digits, '_' and '-', "
            "starting with a letter or '_'"
        )
    if name in _TAKEN:
        raise AdapterOptionError(
            f"instrument(name={name!r}): {name}.* effects are another Tool Replay adapter's "
            f"(toolreplay.adapters.{name}); name this client otherwise"
        )
    kept = _names("request_headers", request_headers)
    credentials = sorted(header for header in kept if is_credential_header(header))
    if credentials:
        raise AdapterOptionError(
            f"request_headers={sorted(kept)}: {credentials} carry credentials, which are "
            "never recorded; leave them out"
        )
    excluded = _names("exclude_headers", exclude_headers) | UNKEPT_HEADERS | {"location"}
    parsed = Routes.of(routes)
    profile = ProviderProfile(
        namespace=name,
        provider="HTTP",
        effect_name=parsed.effect_name,
        keeps_response_header=lambda header: header not in excluded,
        transport_error_envelope=TRANSPORT_ERROR_ENVELOPE,
        request_headers=kept,
        recipes=HTTP_RECIPES,
    )
    register_profile(profile)
    return profile
